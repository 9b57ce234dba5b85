"""LSP handlers: lifecycle, custom protocol, settings diagnostics and live reload.

Every handler is small: validate params, call the host or the agent, map the result.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types as lsp
from pygls.uris import to_fs_path

from agent_ls.server import protocol as P
from agent_ls.server.server import AgentLanguageServer, LspLogHandler, status_payload

log = logging.getLogger("agent_ls.server")


def _params(cls: type[Any], raw: Any) -> Any:
    from pygls.exceptions import JsonRpcInvalidParams

    try:
        return P.parse(cls, raw)
    except P.InvalidParams as e:
        raise JsonRpcInvalidParams(str(e)) from None


def _is_settings_file(path: str | None) -> bool:
    if not path:
        return False
    p = Path(path)
    return (p.name == "settings.json" and p.parent.name == ".agent-ls") or p.name == ".mcp.json" or (
        p.name == "mcp.json" and p.parent.name == ".vscode") or _is_user_settings(p)


def _is_user_settings(p: Path) -> bool:
    from agent_ls.config.settings import user_settings_path

    try:
        return p.resolve() == user_settings_path().resolve()
    except OSError:
        return False


def register(server: AgentLanguageServer) -> None:  # noqa: C901 - one registration list
    handler = LspLogHandler(server)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    pkg_logger = logging.getLogger("agent_ls")
    pkg_logger.addHandler(handler)
    pkg_logger.setLevel(logging.INFO)
    pkg_logger.propagate = False

    # lifecycle ----------------------------------------------------------------------------
    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: AgentLanguageServer, params: lsp.InitializedParams) -> None:
        ls.run_task(start_host(ls), "start MCP host")
        ls.run_task(watch_settings_files(ls), "register file watchers")

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def folders_changed(ls: AgentLanguageServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
        if ls.manager is None:
            return
        await ls.manager.set_roots(ls.folders())
        await reload_settings(ls)

    @server.feature(lsp.SHUTDOWN)
    async def shutdown(ls: AgentLanguageServer, params: Any) -> None:
        for t in list(ls.tasks):
            t.cancel()
        if ls.manager is not None:
            await ls.manager.close()
        if ls.store is not None:
            ls.store.close()

    # settings files: live reload and diagnostics ------------------------------------------------
    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched(ls: AgentLanguageServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        if any(_is_settings_file(to_fs_path(c.uri)) for c in params.changes):
            await reload_settings(ls)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: AgentLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
        if _is_settings_file(to_fs_path(params.text_document.uri)):
            await reload_settings(ls)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: AgentLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
        if _is_settings_file(to_fs_path(params.text_document.uri)):
            publish_config_diagnostics(ls)

    # chat -------------------------------------------------------------------------------------------
    @server.feature(P.PROMPT)
    async def prompt(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        from agent_ls.server import chat

        return await chat.prompt(ls, _params(P.PromptParams, raw))

    @server.feature(P.SESSIONS_LIST)
    async def sessions_list(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        store = await ensure_store(ls)
        infos = await asyncio.to_thread(store.list_sessions)
        return {"sessions": [P.snake_to_camel_dict(attrs.asdict(i)) for i in infos]}

    @server.feature(P.SESSIONS_NEW)
    async def sessions_new(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        p = _params(P.NewSessionParams, raw)
        store = await ensure_store(ls)
        info = await asyncio.to_thread(store.create_session, p.title)
        return {"sessionId": info.id}

    @server.feature(P.SESSIONS_RESUME)
    async def sessions_resume(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        p = _params(P.SessionParams, raw)
        store = await ensure_store(ls)
        if await asyncio.to_thread(store.get_session, p.session_id) is None:
            raise ValueError(f"no session {p.session_id!r}")
        messages = await asyncio.to_thread(store.load_messages, p.session_id)
        return {"sessionId": p.session_id, "messages": messages}

    @server.feature(P.SESSIONS_DELETE)
    async def sessions_delete(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        p = _params(P.SessionParams, raw)
        store = await ensure_store(ls)
        ls.sessions.pop(p.session_id, None)
        return {"deleted": await asyncio.to_thread(store.delete_session, p.session_id)}

    # MCP ---------------------------------------------------------------------------------------------
    @server.feature(P.MCP_STATUS)
    async def mcp_status(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        manager = await ensure_manager(ls)
        return {"servers": status_payload(manager),
                "diagnostics": [str(d) for d in (ls.settings.diagnostics if ls.settings else [])]}

    @server.feature(P.MCP_RESTART)
    async def mcp_restart(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        p = _params(P.ServerParams, raw)
        manager = await ensure_manager(ls)
        if p.server is not None and p.server not in manager.server_names():
            raise ValueError(f"no MCP server named {p.server!r}")
        await manager.restart(p.server)
        await manager.wait_ready(60)
        return {"servers": status_payload(manager)}

    @server.feature(P.MCP_SET_ENABLED)
    async def mcp_set_enabled(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        p = _params(P.SetEnabledParams, raw)
        manager = await ensure_manager(ls)
        await manager.set_enabled(p.server, p.enabled)
        return {"servers": status_payload(manager)}

    @server.feature(P.MCP_TRUST)
    async def mcp_trust(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        p = _params(P.TrustParams, raw)
        manager = await ensure_manager(ls)
        await manager.set_trust(p.server, p.trusted)
        await manager.wait_ready(60)
        return {"servers": status_payload(manager)}

    @server.feature(P.MCP_RESOURCES_LIST)
    async def resources_list(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        manager = await ensure_manager(ls)
        return {"resources": [
            {"server": s, "uri": str(r.uri), "name": r.name, "mimeType": r.mime_type, "description": r.description}
            for s, r in manager.resources()
        ]}

    @server.feature(P.MCP_RESOURCES_READ)
    async def resources_read(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        p = _params(P.ReadResourceParams, raw)
        manager = await ensure_manager(ls)
        result = await manager.read_resource(p.server, p.uri)
        return {"contents": [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.contents]}

    @server.feature(P.MCP_PROMPTS_LIST)
    async def prompts_list(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        manager = await ensure_manager(ls)
        return {"prompts": [
            {"server": s, "name": p.name, "description": p.description,
             "arguments": [a.model_dump(mode="json", by_alias=True, exclude_none=True) for a in (p.arguments or [])]}
            for s, p in manager.prompts()
        ]}

    @server.feature(P.MCP_PROMPTS_GET)
    async def prompts_get(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        p = _params(P.GetPromptParams, raw)
        manager = await ensure_manager(ls)
        result = await manager.get_prompt(p.server, p.name, p.arguments)
        return {"description": result.description, "messages": [prompt_message(m) for m in result.messages]}

    @server.feature(P.MCP_CALL_TOOL)
    async def call_tool(ls: AgentLanguageServer, raw: Any) -> dict[str, Any]:
        from agent_ls.server import chat

        p = _params(P.CallToolParams, raw)
        return await chat.call_tool_direct(ls, p.server, p.tool, p.arguments)

    from agent_ls.server import code_actions

    code_actions.register(server)


def prompt_message(m: Any) -> dict[str, Any]:
    content = m.content
    text = getattr(content, "text", None)
    if text is None:
        text = f"[{getattr(content, 'type', 'content')}]"
    return {"role": m.role, "text": text}


async def ensure_store(ls: AgentLanguageServer) -> Any:
    if ls.store is None:
        from agent_ls.agent.store import SessionStore
        from agent_ls.config.settings import user_data_dir

        folders = ls.folders()
        root = folders[0] if folders else Path.cwd()
        ls.store = await asyncio.to_thread(SessionStore.for_workspace, user_data_dir(), root)
    return ls.store


async def ensure_manager(ls: AgentLanguageServer) -> Any:
    if ls.manager is None:
        await start_host(ls)
    assert ls.manager is not None
    return ls.manager


_start_lock: asyncio.Lock | None = None


async def start_host(ls: AgentLanguageServer) -> None:
    """Load settings and start every MCP server in the background, with work-done progress."""
    global _start_lock
    if _start_lock is None:
        _start_lock = asyncio.Lock()
    async with _start_lock:
        if ls.manager is not None:
            return
        from agent_ls.config.settings import load_settings
        from agent_ls.mcp.host import create_manager

        folders = ls.folders()
        settings = await asyncio.to_thread(load_settings, folders)
        ls.settings = settings
        manager = create_manager(folders, settings, trust_handler=lambda cfg: ask_trust(ls, cfg),
                                 elicitation_handler=lambda server, params: ask_elicit(ls, server, params),
                                 on_change=ls.notify_status_soon)
        ls.manager = manager
        await manager.apply(settings)
        publish_config_diagnostics(ls)
        ls.run_task(connect_progress(ls, manager), "MCP connect progress")


async def connect_progress(ls: AgentLanguageServer, manager: Any) -> None:
    token = f"agent-ls-mcp-{uuid.uuid4().hex[:8]}"
    progress = None
    try:
        caps = ls.client_capabilities
        if caps.window is not None and caps.window.work_done_progress:
            await ls.work_done_progress.create_async(token)
            progress = ls.work_done_progress
    except Exception as e:
        log.debug("no work-done progress: %s", e)
    names = manager.server_names()
    if progress is not None:
        progress.begin(token, lsp.WorkDoneProgressBegin(title="Connecting MCP servers",
                                                        message=f"{len(names)} servers", percentage=0))
    done: set[str] = set()
    waiting = {"starting", "restarting"}

    def report() -> None:
        states = {s.name: s.state for s in manager.status()}
        finished = {n for n, st in states.items() if st not in waiting}
        for n in sorted(finished - done):
            done.add(n)
            st = states[n]
            log.info("MCP server %s: %s", n, st)
            if progress is not None:
                pct = int(100 * len(done) / max(1, len(states)))
                progress.report(token, lsp.WorkDoneProgressReport(message=f"{n}: {st}", percentage=pct))

    for _ in range(1200):
        report()
        if all(s.state not in waiting for s in manager.status()):
            break
        await asyncio.sleep(0.1)
    report()
    connected = sum(1 for s in manager.status() if s.state == "connected")
    if progress is not None:
        progress.end(token, lsp.WorkDoneProgressEnd(message=f"{connected}/{len(manager.server_names())} connected"))


async def ask_trust(ls: AgentLanguageServer, cfg: Any) -> bool | None:
    params = P.TrustServerParams(server=cfg.name, command=cfg.command or "", args=list(cfg.args),
                                 source=str(cfg.source.file))
    try:
        raw = await ls.protocol.send_request_async(P.TRUST_SERVER, P.dump(params))
    except Exception as e:
        log.info("the editor did not answer the trust request for %s: %s", cfg.name, e)
        return None
    try:
        return P.parse(P.TrustServerResult, _result(raw)).trusted
    except P.InvalidParams:
        return None


async def ask_elicit(ls: AgentLanguageServer, server: str, params: Any) -> Any:
    import mcp_types as types

    schema = getattr(params, "requested_schema", None) or {}
    payload = P.ElicitParams(server=server, message=params.message, requested_schema=schema)
    try:
        raw = await ls.protocol.send_request_async(P.ELICIT, P.dump(payload))
        answer = P.parse(P.ElicitResultPayload, _result(raw))
    except Exception as e:
        log.info("elicitation from %s was not answered: %s", server, e)
        return types.ElicitResult(action="cancel")
    if answer.action not in ("accept", "decline", "cancel"):
        return types.ElicitResult(action="cancel")
    return types.ElicitResult(action=answer.action, content=answer.content if answer.action == "accept" else None)  # type: ignore[arg-type]


def _result(raw: Any) -> Any:
    """A client answer as plain JSON (RawResponse gives it untouched)."""
    if isinstance(raw, P.RawResponse):
        return raw.result
    return raw


async def reload_settings(ls: AgentLanguageServer) -> None:
    """Re-read every scope; keep the last valid entries of a broken file (they stay running)."""
    from agent_ls.config.settings import load_settings

    if ls.manager is None:
        return
    folders = ls.folders()
    new = await asyncio.to_thread(load_settings, folders)
    old = ls.settings
    broken_files = {d.file for d in new.diagnostics if d.severity == "error" and d.json_path == ()}
    if old is not None and broken_files:
        # A file that does not parse: keep the servers it defined before.
        for name, cfg in old.servers.items():
            if cfg.source.file in broken_files and name not in new.servers:
                new.servers[name] = cfg
                new.failed.pop(name, None)
    ls.settings = new
    await ls.manager.set_roots(folders)
    await ls.manager.apply(new)
    publish_config_diagnostics(ls)
    ls.sessions.clear()  # new sessions pick up model and permission changes


def publish_config_diagnostics(ls: AgentLanguageServer) -> None:
    from pygls.uris import from_fs_path

    settings = ls.settings
    if settings is None:
        return
    by_file: dict[str, list[lsp.Diagnostic]] = {}
    for f in settings.files:
        uri = from_fs_path(str(f))
        if uri:
            by_file[uri] = []
    for d in settings.diagnostics:
        uri = from_fs_path(str(d.file))
        if not uri:
            continue
        if d.span is not None:
            rng = lsp.Range(lsp.Position(d.span.start.line, d.span.start.column),
                            lsp.Position(d.span.end.line, d.span.end.column))
        else:
            rng = lsp.Range(lsp.Position(0, 0), lsp.Position(0, 1))
        sev = lsp.DiagnosticSeverity.Error if d.severity == "error" else lsp.DiagnosticSeverity.Warning
        from agent_ls.config.jsonc import format_path

        by_file.setdefault(uri, []).append(lsp.Diagnostic(
            range=rng, message=f"{format_path(d.json_path)}: {d.message}" if d.json_path else d.message,
            severity=sev, source="agent-ls"))
    for uri, diags in by_file.items():
        if diags or ls.config_diagnostics.get(uri):
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diags))
        ls.config_diagnostics[uri] = diags


async def watch_settings_files(ls: AgentLanguageServer) -> None:
    caps = ls.client_capabilities
    ws = caps.workspace
    if ws is None or ws.did_change_watched_files is None or not ws.did_change_watched_files.dynamic_registration:
        return
    globs = ["**/.agent-ls/settings.json", "**/.mcp.json", "**/.vscode/mcp.json"]
    from agent_ls.config.settings import user_settings_path

    watchers = [lsp.FileSystemWatcher(glob_pattern=g) for g in globs]
    user = user_settings_path()
    watchers.append(lsp.FileSystemWatcher(glob_pattern=lsp.RelativePattern(
        base_uri=user.parent.as_uri(), pattern=user.name)))
    try:
        await ls.client_register_capability_async(lsp.RegistrationParams(registrations=[lsp.Registration(
            id="agent-ls-settings", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))
    except Exception as e:
        log.info("could not register settings file watchers: %s", e)
