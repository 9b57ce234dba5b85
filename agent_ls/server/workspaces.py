"""Workspace trust as the server sees it: the policy, the remembered decisions, the payloads.

What the status (``workspaces``), the trust prompts and the trust handlers share: the editor's
own trust from the initialization options, the :class:`~agent_ls.config.trust.TrustPolicy` of
this window, the user's remembered decisions (``host-state.json``), a workspace folder and its
MCP server entries as the editor is shown them, and recording a decision.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_ls.server.protocol.mcp import WorkspaceStatusPayload
from agent_ls.server.protocol.questions import (
    TrustServerParams,
    TrustWorkspaceParams,
    WorkspaceSettingPayload,
)

if TYPE_CHECKING:
    from agent_ls.config.trust import EntryView, TrustPolicy, WorkspaceRequest, WorkspaceTrustInfo
    from agent_ls.server.server import AgentLanguageServer

log = logging.getLogger("agent_ls.server")


def editor_trust_from(options: Any) -> bool:
    """The editor's trust from the initialization options (absent: the editor has no such notion)."""
    if isinstance(options, dict):
        return options.get("workspaceTrusted") is not False
    value = getattr(options, "workspaceTrusted", None)
    return value is not False


def policy(ls: AgentLanguageServer) -> TrustPolicy:
    from agent_ls.config.trust import TrustPolicy

    return TrustPolicy(host_state(ls), editor_trusted=ls.editor_trusted)


def host_state(ls: AgentLanguageServer) -> Any:
    if ls.host_state is None:
        from agent_ls.config.paths import host_state_path
        from agent_ls.config.state import HostState

        ls.host_state = HostState(host_state_path())
    return ls.host_state


def entry_payload(view: EntryView, changes: list[str]) -> TrustServerParams:
    return TrustServerParams(
        server=view.name, command=view.command or "", args=list(view.args), source=str(view.source), cwd=view.cwd,
        transport=view.transport, env=dict(view.env), url=view.url, headers=dict(view.headers),
        variables=list(view.variables), changes=changes, oauth=dict(view.oauth), options=dict(view.options),
        refused=list(view.refused))


def _setting(item: Any) -> WorkspaceSettingPayload:
    return WorkspaceSettingPayload(source=str(item.source), key=item.key, value=item.value_text, why=item.why)


def _entry_changes(ls: AgentLanguageServer, folder: Path, view: EntryView) -> list[str]:
    return view.changes_since(host_state(ls).last_trusted_entry(folder, view.name))


def workspaces_payload(ls: AgentLanguageServer) -> list[WorkspaceStatusPayload]:
    settings = ls.settings
    if settings is None:
        return []
    out = []
    for folder, info in settings.workspaces.items():
        servers = [] if info.trusted else [entry_payload(v, _entry_changes(ls, folder, v)) for v in info.request.servers]
        out.append(WorkspaceStatusPayload(folder=str(folder), state=info.state.value, message=info.message,
                                          ignored=[_setting(i) for i in info.ignored], servers=servers))
    return out


def trust_workspace_params(ls: AgentLanguageServer, info: WorkspaceTrustInfo) -> TrustWorkspaceParams:
    folder = info.request.folder
    return TrustWorkspaceParams(
        folder=str(folder),
        servers=[entry_payload(v, _entry_changes(ls, folder, v)) for v in info.request.servers],
        settings=[_setting(i) for i in info.request.settings],
        changes=info.changes(),
        previously_trusted=info.previous_settings is not None,
    )


async def record(ls: AgentLanguageServer, requests: list[WorkspaceRequest], trusted: bool) -> None:
    """Remember the decision on each folder (the caller reloads the settings)."""
    trust = policy(ls)
    for request in requests:
        await asyncio.to_thread(trust.record, request, trusted)
        log.info("workspace %s: %s", request.folder, "trusted" if trusted else "kept restricted")
