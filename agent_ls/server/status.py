"""The MCP host's status as the editor is shown it (``mcp/status``, ``mcp/statusChanged``):
the payloads, and :class:`StatusNotices` (``ls.status``), which owns the preview shown while the
host loads and coalesces changes into ``mcp/statusChanged`` notifications."""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from agent_ls.server.protocol.codec import dump, payload_from
from agent_ls.server.protocol.mcp import (
    ServerStatusPayload,
    StatusChangedParams,
    StatusResult,
    WorkspaceStatusPayload,
)
from agent_ls.server.protocol.methods import MCP_STATUS_CHANGED

if TYPE_CHECKING:
    from agent_ls.mcp.manager import MCPManager
    from agent_ls.mcp.status import ServerStatus
    from agent_ls.runtime.host import RuntimeHost


def status_payload(source: MCPManager | list[ServerStatus]) -> list[ServerStatusPayload]:
    return [payload_from(s, ServerStatusPayload) for s in (source if isinstance(source, list) else source.status())]


def status_result(manager: MCPManager | list[ServerStatus], runtime: RuntimeHost,
                  workspaces: list[WorkspaceStatusPayload]) -> StatusResult:
    """The ``mcp/status`` result of the manager, or of the preview while it loads."""
    diags = [str(d) for d in (runtime.settings.diagnostics if runtime.settings else [])]
    state = runtime.loaded_state
    if state is not None and state.problem:
        diags.append(state.problem)
    return StatusResult(servers=status_payload(manager), diagnostics=diags, workspaces=workspaces)


class StatusNotices:
    """The status the editor is shown: the preview while the host loads, coalesced
    ``mcp/statusChanged`` notifications, a failure shown once (``show``, ``window/showMessage``).
    ``workspaces``: the workspaces' trust payloads (set by :mod:`agent_ls.server.app`)."""

    def __init__(self, runtime: RuntimeHost, notify: Callable[[str, Any], None], show: Callable[[str], None],
                 preview: Callable[[], list[ServerStatus] | None]) -> None:
        self.runtime = runtime
        self._notify = notify
        self._show = show
        self._preview = preview
        """The status the host will have, shown while it loads (the lifecycle's preview)."""
        self.workspaces: Callable[[], list[WorkspaceStatusPayload]] = list
        self._pending = False
        self._last_states: dict[str, str] = {}

    def notify_soon(self) -> None:
        """Coalesce status changes into one ``mcp/statusChanged`` per 50 ms."""
        if self._pending or (self.runtime.manager is None and self._preview() is None):
            return
        self._pending = True

        def send() -> None:
            self._pending = False
            source = self.runtime.manager if self.runtime.manager is not None else self._preview()
            if source is not None:
                servers = status_payload(source)
                self._notify(MCP_STATUS_CHANGED, dump(StatusChangedParams(servers=servers,
                                                                          workspaces=self.workspaces())))
                self._announce_failures(servers)

        try:
            asyncio.get_running_loop().call_later(0.05, send)
        except RuntimeError:
            self._pending = False

    def _announce_failures(self, servers: list[ServerStatusPayload]) -> None:
        """A server that just failed is shown to the user (``window/showMessage``), once."""
        for s in servers:
            before = self._last_states.get(s.name)
            if s.state == "failed" and before != "failed":
                err = s.error or {}
                self._show(f"agent-ls: MCP server '{s.name}' failed ({err.get('phase', '?')}): "
                           f"{err.get('message', '')}")
        self._last_states = {s.name: s.state for s in servers}
