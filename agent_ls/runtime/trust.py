"""Trust for this process only, on top of the remembered decisions: what ACP's ``allow_once``
trusts (a folder, a workspace MCP server) holds until the process ends and is never written down.
The runtime host (:class:`agent_ls.runtime.host.RuntimeHost`) always uses these; a front end
that never answers "once" sees plain :class:`~agent_ls.config.trust.TrustPolicy` behaviour.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from agent_ls.config.state import HostState
from agent_ls.config.trust import TrustPolicy, TrustState, WorkspaceRequest, WorkspaceTrustInfo


class OnceTrustState(HostState):
    """The remembered decisions plus the entries the user trusted once (this process only)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.once: set[tuple[str, str]] = set()

    def trust_once(self, workspace: Path | None, key: str) -> None:
        self.once.add((self._ws(workspace), key))

    def trust(self, workspace: Path | None, key: str) -> bool | None:
        if (self._ws(workspace), key) in self.once:
            return True
        return super().trust(workspace, key)

    def set_trust(self, workspace: Path | None, key: str, trusted: bool, *, name: str | None = None,
                  entry: dict[str, Any] | None = None) -> None:
        if trusted and (self._ws(workspace), key) in self.once:
            return  # trusted once: not written down
        super().set_trust(workspace, key, trusted, name=name, entry=entry)


class OnceTrustPolicy(TrustPolicy):
    """:class:`TrustPolicy` plus folders the user trusted once (this process only)."""

    def __init__(self, store: HostState | None, once_folders: set[Path], *, editor_trusted: bool = True) -> None:
        super().__init__(store, editor_trusted=editor_trusted)
        self.once_folders = once_folders

    def explicit(self, folder: Path) -> bool:
        return folder.resolve() in self.once_folders or super().explicit(folder)

    def evaluate(self, request: WorkspaceRequest) -> WorkspaceTrustInfo:
        info = super().evaluate(request)
        if request.folder.resolve() in self.once_folders and not info.trusted:
            return attrs.evolve(info, state=TrustState.TRUSTED)
        return info
