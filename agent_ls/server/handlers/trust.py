"""Workspace trust requests: the editor's own trust (``agent/editorTrust``) and the user's
decision from a command (``agent/setWorkspaceTrust``).

- The editor says whether it trusts the workspace (``initializationOptions.workspaceTrusted``,
  then ``agent/editorTrust``); while it does not, every folder is ``editor-restricted`` and
  nothing is asked.
- A folder whose settings files ask for something that needs trust is asked about once per
  digest (``agent/trustWorkspace``, :class:`agent_ls.runtime.lifecycle.HostLifecycle`); the answer is remembered
  (:mod:`agent_ls.config.state`) and the settings reload with it. A newer digest withdraws an
  older, unanswered prompt.
- ``agent/setWorkspaceTrust`` trusts or restricts folders from a command.
- A workspace MCP server whose entry changed or is new asks on its own (``mcp/trustServer``,
  :mod:`.editor_questions`), with the whole entry and what changed.
- An editor without ``agent/trustWorkspace`` (it answers "method not found": Neovim, eglot,
  any plain LSP client) is asked with the standard ``window/showMessageRequest``: Trust /
  Keep restricted / Show what it wants (the whole text, as ``window/showMessage`` and in the
  log, then the question again); the ``agent-ls.trustWorkspace`` command
  (``workspace/executeCommand``) asks again at any time.
- Likewise an editor without ``mcp/trustServer`` is asked about a workspace MCP server of a
  trusted folder with ``window/showMessageRequest`` (Trust / Don't run it / Show what it wants);
  the same command asks again about such servers that are undecided or not trusted.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_ls.server.editor_questions import TrustPrompts, ask_server_trust
from agent_ls.server.protocol.codec import InvalidParams, RequestFailed, parse
from agent_ls.server.protocol.commands import (
    FolderDecision,
    ServerDecision,
    TrustWorkspaceArgs,
    TrustWorkspaceCommandResult,
    trust_workspace_args,
)
from agent_ls.server.protocol.mcp import StatusResult
from agent_ls.server.protocol.methods import (
    CMD_TRUST_WORKSPACE,
    EDITOR_TRUST,
    SET_WORKSPACE_TRUST,
)
from agent_ls.server.protocol.questions import (
    EditorTrustParams,
    SetWorkspaceTrustParams,
)
from agent_ls.server.server import AgentLanguageServer, command, request
from agent_ls.server.status import status_result
from agent_ls.server.workspaces import decide, record, workspaces_payload

if TYPE_CHECKING:
    from agent_ls.config.entries import ServerConfig
    from agent_ls.mcp.manager import MCPManager
    from agent_ls.runtime.host import RuntimeHost

log = logging.getLogger("agent_ls.server")

def register(server: AgentLanguageServer) -> None:
    @server.feature(EDITOR_TRUST)
    async def editor_trust(ls: AgentLanguageServer, raw: Any) -> None:
        try:
            p = parse(EditorTrustParams, raw)
        except InvalidParams as e:
            log.warning("%s: %s", EDITOR_TRUST, e)
            return
        if p.trusted == ls.runtime.editor_trusted:
            return
        ls.runtime.editor_trusted = p.trusted
        log.info("the editor %s this workspace", "trusts" if p.trusted else "no longer trusts")
        await ls.lifecycle.reload()

    @request(server, SET_WORKSPACE_TRUST, SetWorkspaceTrustParams)
    async def set_workspace_trust(ls: AgentLanguageServer, p: SetWorkspaceTrustParams) -> StatusResult:
        manager = await ls.lifecycle.ensure_manager()
        settings = ls.runtime.settings
        infos = dict(settings.workspaces) if settings is not None else {}
        if p.folder is not None:
            wanted = Path(p.folder).resolve()
            infos = {f: i for f, i in infos.items() if f.resolve() == wanted}
            if not infos:
                raise RequestFailed(f"{p.folder} is not a workspace folder of this editor")
        if not infos:
            raise RequestFailed("no workspace folder is open")
        if p.trusted and not ls.runtime.editor_trusted:
            raise RequestFailed("the editor has not trusted this workspace: trust it in the editor first "
                                "(VS Code: Manage Workspace Trust)")
        for folder in infos:
            ls.lifecycle.withdraw_workspace_prompt(folder)
        await record(ls.runtime, [i.request for i in infos.values()], p.trusted)
        await ls.lifecycle.reload()
        await manager.wait_ready(60)
        return status_result(manager, ls.runtime, workspaces_payload(ls.runtime))

    @command(server, CMD_TRUST_WORKSPACE, trust_workspace_args)
    async def trust_workspace_command(ls: AgentLanguageServer,
                                      chosen: TrustWorkspaceArgs | None) -> TrustWorkspaceCommandResult:
        """Ask again about the folders that wait for trust (restricted or kept restricted), then
        about the workspace MCP servers of trusted folders that wait for their own decision
        (undecided or not trusted); an optional argument (``{"folder": path}`` or the path)
        names one folder."""
        # lazy: +6 modules, ~17 ms at start-up
        from agent_ls.config.trust import TrustState

        wanted = chosen.folder if chosen is not None else None
        manager = await ls.lifecycle.ensure_manager()
        if not ls.runtime.editor_trusted:
            raise RequestFailed("the editor has not trusted this workspace: trust it in the editor first")

        def matches(folder: Path | None) -> bool:
            return wanted is None or (folder is not None and folder.resolve() == Path(wanted).resolve())

        settings = ls.runtime.settings
        infos = [i for f, i in (settings.workspaces.items() if settings is not None else ())
                 if i.state in (TrustState.RESTRICTED, TrustState.DECLINED) and matches(f)]
        servers = _waiting_servers(ls.runtime, ls.trust_prompts, manager, matches)
        if not infos and not servers:
            raise RequestFailed(f"{wanted} does not wait for trust" if wanted else
                                "no workspace folder waits for trust, nor a workspace MCP server")
        decided: list[FolderDecision] = []
        for info in infos:
            ls.lifecycle.withdraw_workspace_prompt(info.request.folder)
            trusted = await decide(ls.client, ls.runtime, info)
            if trusted is not None:
                await record(ls.runtime, [info.request], trusted)
            decided.append(FolderDecision(folder=str(info.request.folder), trusted=trusted))
        if any(d.trusted is not None for d in decided):
            await ls.lifecycle.reload()
        asked: list[ServerDecision] = []
        # the folders just trusted started theirs
        for cfg in _waiting_servers(ls.runtime, ls.trust_prompts, manager, matches):
            answer = await ask_server_trust(ls.client, ls.runtime, ls.trust_prompts, cfg)
            if answer is not None:
                await manager.set_trust(cfg.name, answer)
            asked.append(ServerDecision(server=cfg.name, folder=str(cfg.source.workspace_folder), trusted=answer))
        return TrustWorkspaceCommandResult(folders=decided, servers=asked)


def _waiting_servers(runtime: RuntimeHost, prompts: TrustPrompts, manager: MCPManager,
                     matches: Callable[[Path | None], bool]) -> list[ServerConfig]:
    """The workspace MCP servers of trusted folders that wait for their own decision (undecided,
    or not trusted), and are not being asked about now."""
    settings = runtime.settings
    if settings is None:
        return []
    out = []
    for status in manager.status():
        cfg = settings.servers.get(status.name)
        if (status.state in ("awaiting-trust", "untrusted") and cfg is not None and cfg.needs_trust
                and not cfg.restricted and cfg.name not in prompts.servers
                and matches(cfg.source.workspace_folder)):
            out.append(cfg)
    return out
