"""Workspace trust over LSP: the editor's own trust, the folder prompt, the per-server prompt.

- The editor says whether it trusts the workspace (``initializationOptions.workspaceTrusted``,
  then ``agent/editorTrust``); while it does not, every folder is ``editor-restricted`` and
  nothing is asked.
- A folder whose settings files ask for something that needs trust is asked about once per
  digest (``agent/trustWorkspace``); the answer is remembered (:mod:`agent_ls.config.state`)
  and the settings reload with it. A newer digest withdraws an older, unanswered prompt.
- ``agent/setWorkspaceTrust`` trusts or restricts folders from a command.
- A workspace MCP server whose entry changed or is new asks on its own (``mcp/trustServer``),
  with the whole entry and what changed.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pygls.exceptions import JsonRpcMethodNotFound

from agent_ls.server import protocol as P
from agent_ls.server.server import AgentLanguageServer, guarded

if TYPE_CHECKING:
    from agent_ls.config.entries import ServerConfig
    from agent_ls.config.trust import EntryView, TrustPolicy, WorkspaceRequest, WorkspaceTrustInfo

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


def entry_payload(view: EntryView, changes: list[str]) -> P.TrustServerParams:
    return P.TrustServerParams(
        server=view.name, command=view.command or "", args=list(view.args), source=str(view.source), cwd=view.cwd,
        transport=view.transport, env=dict(view.env), url=view.url, headers=dict(view.headers),
        variables=list(view.variables), changes=changes)


def _setting(item: Any) -> P.WorkspaceSettingPayload:
    return P.WorkspaceSettingPayload(source=str(item.source), key=item.key, value=item.value_text, why=item.why)


def _entry_changes(ls: AgentLanguageServer, folder: Path, view: EntryView) -> list[str]:
    return view.changes_since(host_state(ls).last_trusted_entry(folder, view.name))


def workspaces_payload(ls: AgentLanguageServer) -> list[P.WorkspaceStatusPayload]:
    settings = ls.settings
    if settings is None:
        return []
    out = []
    for folder, info in settings.workspaces.items():
        servers = [] if info.trusted else [entry_payload(v, _entry_changes(ls, folder, v)) for v in info.request.servers]
        out.append(P.WorkspaceStatusPayload(folder=str(folder), state=info.state.value, message=info.message,
                                            ignored=[_setting(i) for i in info.ignored], servers=servers))
    return out


def trust_workspace_params(ls: AgentLanguageServer, info: WorkspaceTrustInfo) -> P.TrustWorkspaceParams:
    folder = info.request.folder
    return P.TrustWorkspaceParams(
        folder=str(folder),
        servers=[entry_payload(v, _entry_changes(ls, folder, v)) for v in info.request.servers],
        settings=[_setting(i) for i in info.request.settings],
        changes=info.changes(),
        previously_trusted=info.previous_settings is not None,
    )


def ask_pending_workspaces(ls: AgentLanguageServer) -> None:
    """Ask about every folder that needs a decision now (one prompt per folder and digest);
    withdraw prompts that no longer match what the folder asks for."""
    settings = ls.settings
    if settings is None:
        return
    for folder, (digest, task) in list(ls.workspace_prompts.items()):
        info = settings.workspaces.get(folder)
        if info is None or not info.asks or info.request.digest != digest:
            task.cancel()
            ls.workspace_prompts.pop(folder, None)
    for folder, info in settings.workspaces.items():
        if not info.asks or folder in ls.workspace_prompts:
            continue
        if ls.workspace_prompt_unsupported:
            continue
        log.info("workspace %s asks for trust: %s", folder, info.message)
        task = ls.run_task(_ask_workspace(ls, info), f"trust prompt for {folder}")
        ls.workspace_prompts[folder] = (info.request.digest, task)


async def _ask_workspace(ls: AgentLanguageServer, info: WorkspaceTrustInfo) -> None:
    folder = info.request.folder
    try:
        raw = await ls.ask_client(P.TRUST_WORKSPACE, P.dump(trust_workspace_params(ls, info)))
        trusted = P.parse(P.TrustWorkspaceResult, raw).trusted
        if trusted is not None:
            await record(ls, [info.request], trusted)
    except asyncio.CancelledError:
        raise
    except Exception as e:
        if isinstance(e, JsonRpcMethodNotFound) or getattr(e, "code", None) == JsonRpcMethodNotFound.CODE:
            ls.workspace_prompt_unsupported = True
        log.info("no trust decision for %s from the editor (%s); it stays restricted. Trust it with the "
                 "agent/setWorkspaceTrust request or `agent-ls trust --workspace %s`", folder, e, folder)
        return
    finally:
        current = ls.workspace_prompts.get(folder)
        if current is not None and current[0] == info.request.digest:
            ls.workspace_prompts.pop(folder, None)
    if trusted is not None:
        from agent_ls.server.features import reload_settings

        await reload_settings(ls)


async def record(ls: AgentLanguageServer, requests: list[WorkspaceRequest], trusted: bool) -> None:
    """Remember the decision on each folder (the caller reloads the settings)."""
    trust = policy(ls)
    for request in requests:
        await asyncio.to_thread(trust.record, request, trusted)
        log.info("workspace %s: %s", request.folder, "trusted" if trusted else "kept restricted")


def register(server: AgentLanguageServer) -> None:
    @server.feature(P.EDITOR_TRUST)
    async def editor_trust(ls: AgentLanguageServer, raw: Any) -> None:
        from agent_ls.server.features import reload_settings

        try:
            p = P.parse(P.EditorTrustParams, raw)
        except P.InvalidParams as e:
            log.warning("%s: %s", P.EDITOR_TRUST, e)
            return
        if p.trusted == ls.editor_trusted:
            return
        ls.editor_trusted = p.trusted
        log.info("the editor %s this workspace", "trusts" if p.trusted else "no longer trusts")
        await reload_settings(ls)

    @server.feature(P.SET_WORKSPACE_TRUST)
    @guarded
    async def set_workspace_trust(ls: AgentLanguageServer, raw: Any) -> Any:
        from agent_ls.server.features import ensure_manager, reload_settings, status_result

        p = P.parse(P.SetWorkspaceTrustParams, raw)
        manager = await ensure_manager(ls)
        settings = ls.settings
        infos = dict(settings.workspaces) if settings is not None else {}
        if p.folder is not None:
            wanted = Path(p.folder).resolve()
            infos = {f: i for f, i in infos.items() if f.resolve() == wanted}
            if not infos:
                raise P.RequestFailed(f"{p.folder} is not a workspace folder of this editor")
        if not infos:
            raise P.RequestFailed("no workspace folder is open")
        if p.trusted and not ls.editor_trusted:
            raise P.RequestFailed("the editor has not trusted this workspace: trust it in the editor first "
                                  "(VS Code: Manage Workspace Trust)")
        for folder in infos:
            pending = ls.workspace_prompts.pop(folder, None)
            if pending is not None:
                pending[1].cancel()
        await record(ls, [i.request for i in infos.values()], p.trusted)
        await reload_settings(ls)
        await manager.wait_ready(60)
        return status_result(ls, manager)


async def decisions_changed(ls: AgentLanguageServer) -> None:
    """``host-state.json`` changed (another window, or the terminal, decided something): a
    folder whose trust state differs now reloads the settings; servers that waited for a
    decision another process made start (or stay stopped) without a reload."""
    from agent_ls.config.settings import load_settings
    from agent_ls.server.features import reload_settings

    if ls.settings is None or ls.manager is None:
        return
    fresh = await asyncio.to_thread(functools.partial(load_settings, ls.folders(), trust=policy(ls)))
    before = {f: i.state for f, i in ls.settings.workspaces.items()}
    if {f: i.state for f, i in fresh.workspaces.items()} != before:
        log.info("workspace trust changed in another process: reloading the settings")
        await reload_settings(ls)
        return
    await ls.manager.recheck_trust()


async def ask_server_trust(ls: AgentLanguageServer, cfg: ServerConfig) -> bool | None:
    """``mcp/trustServer``: may this workspace-defined server run (its whole entry, what changed)?"""
    manager = ls.manager
    changes = manager.trust_changes(cfg) if manager is not None else []
    params = entry_payload(cfg.view(), changes)
    try:
        raw = await ls.ask_client(P.TRUST_SERVER, P.dump(params))
        return P.parse(P.TrustServerResult, raw).trusted
    except asyncio.CancelledError:
        raise
    except Exception as e:
        log.info("no trust decision for %s from the editor (%s); it stays awaiting-trust", cfg.name, e)
        return None
