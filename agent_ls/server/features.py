"""LSP handlers: lifecycle, settings files (live reload, diagnostics), the MCP methods.

Every handler is small: validate params, call the host or the agent, map the result.
Prompting and sessions live in :mod:`agent_ls.server.chat`, code actions in
:mod:`agent_ls.server.code_actions`.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import importlib
import logging
import os
import sys
import uuid
from pathlib import Path
from typing import Any

from lsprotocol import types as lsp
from pygls.uris import from_fs_path, to_fs_path

from agent_ls.server import protocol as P
from agent_ls.server.server import (
    AgentLanguageServer,
    LspLogHandler,
    guarded,
    in_daemon_thread,
    kill_children,
    status_payload,
)

log = logging.getLogger("agent_ls.server")

SETTINGS_GLOBS = ("**/.agent-ls/settings.json", "**/.mcp.json", "**/.vscode/mcp.json")


def is_settings_file(path: str | None) -> bool:
    if not path:
        return False
    p = Path(path)
    return (p.name == "settings.json" and p.parent.name == ".agent-ls") or p.name == ".mcp.json" or (
        p.name == "mcp.json" and p.parent.name == ".vscode") or _is_user_settings(p)


def _is_host_state(path: str | None) -> bool:
    """The user's remembered decisions (another window, or `agent-ls trust`, wrote them)."""
    from agent_ls.config.paths import host_state_path

    try:
        return path is not None and Path(path).resolve() == host_state_path().resolve()
    except OSError:
        return False


def _is_user_settings(p: Path) -> bool:
    from agent_ls.config.paths import user_settings_path

    try:
        return p.resolve() == user_settings_path().resolve()
    except OSError:
        return False


def register(server: AgentLanguageServer) -> None:
    handler = LspLogHandler(server)
    handler.setFormatter(logging.Formatter("%(levelname)s %(name)s: %(message)s"))
    from agent_ls.core.redact import RedactingFilter

    handler.addFilter(RedactingFilter())  # tokens seen at run time never reach the output channel
    pkg_logger = logging.getLogger("agent_ls")
    pkg_logger.addHandler(handler)
    pkg_logger.setLevel(logging.INFO)
    pkg_logger.propagate = False
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_expected_errors)

    _register_lifecycle(server)
    _register_settings(server)
    _register_mcp(server)

    from agent_ls.server import chat, code_actions, trust

    chat.register(server)
    code_actions.register(server)
    trust.register(server)


def _expected_errors(record: logging.LogRecord) -> bool:
    """pygls logs every error response with a traceback; the expected ones (bad params,
    impossible or cancelled requests) are answered to the client, not logged."""
    exc = record.exc_info[1] if record.exc_info else None
    code = getattr(exc, "code", None)
    return code not in (P.INVALID_PARAMS, P.REQUEST_FAILED, P.REQUEST_CANCELLED)


# lifecycle ---------------------------------------------------------------------------------------

HEAVY_MODULES = ("litellm", "mcp")


def _register_lifecycle(server: AgentLanguageServer) -> None:
    @server.feature(lsp.INITIALIZE)
    def initialize(ls: AgentLanguageServer, params: lsp.InitializeParams) -> None:
        from agent_ls.server.trust import editor_trust_from

        # Evidence for the "initialize stays light" promise (reported by agent/serverInfo).
        ls.modules_at_initialize = {m: m in sys.modules for m in HEAVY_MODULES}
        ls.editor_trusted = editor_trust_from(params.initialization_options)
        # Once the result is on its way: load what answers the first mcp/status (settings and
        # the kept catalogue, no MCP SDK) in the background.
        asyncio.get_running_loop().call_soon(lambda: ls.run_task(_preload(), "preload settings"))

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: AgentLanguageServer, params: lsp.InitializedParams) -> None:
        ls.run_task(start_host(ls), "start MCP host")
        ls.run_task(watch_settings_files(ls), "register file watchers")

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def folders_changed(ls: AgentLanguageServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
        # pygls has already applied the change to ls.workspace.folders.
        log.info("workspace folders: %s", ", ".join(map(str, ls.folders())) or "(none)")
        await reload_settings(ls)

    @server.feature(lsp.SHUTDOWN)
    async def shutdown(ls: AgentLanguageServer, params: Any) -> None:
        await shutdown_host(ls)

    @server.feature(P.SERVER_INFO)
    @guarded
    async def server_info(ls: AgentLanguageServer, raw: Any) -> Any:
        from agent_ls import __version__

        P.parse(P.NoParams, raw)
        return P.dump(P.ServerInfoResult(
            name="agent-ls", version=__version__, pid=os.getpid(), python=sys.version.split()[0],
            loaded_modules={m: _imported(m) for m in HEAVY_MODULES},
            loaded_at_initialize=dict(ls.modules_at_initialize),
            workspace_folders=[str(f) for f in ls.folders()],
        ))


async def _preload() -> None:
    def load() -> None:
        for name in ("agent_ls.config.settings", "agent_ls.mcp.preview"):
            importlib.import_module(name)

    await in_daemon_thread(load)


def _imported(name: str) -> bool:
    """Fully imported (a module is in sys.modules while its import still runs)."""
    module = sys.modules.get(name)
    return module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False)


async def shutdown_host(ls: AgentLanguageServer) -> None:
    """Stop every background task, every MCP server and the session store."""
    for t in list(ls.tasks):
        t.cancel()
    manager, ls.manager = ls.manager, None
    ls.preview = None
    if manager is not None:
        await manager.close()
    if ls.store is not None:
        ls.store.close()
        ls.store = None
    if ls.display_store is not None:
        ls.display_store.close()
        ls.display_store = None
    kill_children()


# host -----------------------------------------------------------------------------------------------

async def ensure_manager(ls: AgentLanguageServer) -> Any:
    if ls.manager is None:
        await start_host(ls)
    if ls.manager is None:
        raise P.RequestFailed("the MCP host is shut down")
    return ls.manager


async def start_host(ls: AgentLanguageServer) -> None:
    """Load settings and start every MCP server in the background, with work-done progress."""
    async with ls.host_lock:
        if ls.manager is not None:
            return
        from agent_ls.config.settings import load_settings
        from agent_ls.server.trust import ask_pending_workspaces, ask_server_trust, host_state, policy

        folders = ls.folders()
        try:
            settings = await asyncio.to_thread(functools.partial(load_settings, folders, trust=policy(ls)))
            ls.settings = settings
            # Until the host is loaded, mcp/status answers with what it will report: every
            # server, and the tools kept from each one's last connection.
            ls.preview = await asyncio.to_thread(preview, settings, host_state(ls))
        finally:
            ls.preview_ready.set()
        ls.notify_status_soon()
        # Building the SDK's pydantic models holds the interpreter for long stretches: let the
        # editor's first mcp/status be answered (from the preview) before that starts.
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(ls.status_answered.wait(), 0.1)
        # The MCP SDK takes a while to import: do it off the event loop so the editor's
        # requests keep being answered meanwhile.
        host = await in_daemon_thread(lambda: importlib.import_module("agent_ls.mcp.host"))
        manager = host.create_manager(
            folders, settings,
            state=host_state(ls),
            trust_handler=lambda cfg: ask_server_trust(ls, cfg),
            elicitation_handler=lambda server, params: ask_elicit(ls, server, params),
            on_change=ls.notify_status_soon,
        )
        ls.manager = manager
        ls.preview = None
        from agent_ls.server.sampling import install_sampling

        install_sampling(ls, manager)  # MCP sampling: consent through mcp/sample
        if hasattr(manager, "set_auth_opener"):
            manager.set_auth_opener(lambda server, url: open_auth_url(ls, server, url))
        await manager.apply(settings)
        from agent_ls.server.chat import prewarm_llm

        prewarm_llm(ls)  # the servers start in their own processes meanwhile
        publish_config_diagnostics(ls)
        for d in settings.diagnostics:
            log.log(logging.INFO if d.severity == "information" else logging.WARNING, "settings: %s", d)
        ls.run_task(connect_progress(ls, manager), "MCP connect progress")
        ask_pending_workspaces(ls)


def preview(settings: Any, state: Any) -> Any:
    """The status the host will report once loaded (None when it cannot be told)."""
    from agent_ls.config.paths import catalogue_path
    from agent_ls.mcp.catalogue import CatalogueStore
    from agent_ls.mcp.preview import preview_status

    try:
        return preview_status(settings, state, CatalogueStore(catalogue_path()))
    except Exception as e:  # noqa: BLE001 - only a head start: the host reports the truth anyway
        log.info("no early MCP status: %s", e)
        return None


async def connect_progress(ls: AgentLanguageServer, manager: Any) -> None:
    """Work-done progress while servers connect; one log line per server outcome."""
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
        states = {s.name: (s.state, s.error) for s in manager.status()}
        finished = {n for n, (st, _) in states.items() if st not in waiting}
        for n in sorted(finished - done):
            done.add(n)
            st, err = states[n]
            if err and st == "failed":
                log.warning("MCP server %s: %s [%s] %s", n, st, err.get("phase"), err.get("message"))
            else:
                log.info("MCP server %s: %s", n, st)
            if progress is not None:
                pct = int(100 * len(done) / max(1, len(states)))
                progress.report(token, lsp.WorkDoneProgressReport(message=f"{n}: {st}", percentage=pct))

    try:
        for _ in range(1200):
            report()
            if all(s.state not in waiting for s in manager.status()):
                break
            await asyncio.sleep(0.1)
        report()
    finally:
        if progress is not None:
            connected = sum(1 for s in manager.status() if s.state == "connected")
            progress.end(token, lsp.WorkDoneProgressEnd(
                message=f"{connected}/{len(manager.server_names())} connected"))


async def open_auth_url(ls: AgentLanguageServer, server: str, url: str) -> None:
    """An OAuth authorization page: the editor opens it in the browser (``window/showDocument``
    with ``external``); an editor that cannot is shown the URL."""
    window = ls.client_capabilities.window
    if window is not None and window.show_document is not None and window.show_document.support:
        result = await ls.window_show_document_async(lsp.ShowDocumentParams(uri=url, external=True))
        if result.success:
            return
    log.warning("open this URL to sign in to the MCP server %s: %s", server, url)
    ls.show(lsp.MessageType.Info, f"agent-ls: open this URL to sign in to the MCP server '{server}': {url}")


async def ask_elicit(ls: AgentLanguageServer, server: str, params: Any) -> Any:
    """An MCP server asks the user for input: the form goes to the editor, the answer back."""
    import mcp_types as types

    schema = getattr(params, "requested_schema", None) or {}
    message = getattr(params, "message", "") or ""
    payload = P.ElicitParams(server=server, message=message, requested_schema=schema)
    try:
        raw = await ls.ask_client(P.ELICIT, P.dump(payload))
        answer = P.parse(P.ElicitResultPayload, raw)
    except asyncio.CancelledError:
        raise
    except Exception as e:
        log.info("elicitation from %s was not answered: %s", server, e)
        return types.ElicitResult(action="cancel")
    if answer.action not in P.ELICIT_ACTIONS:
        log.info("elicitation from %s: unknown action %r, sent as cancel", server, answer.action)
        return types.ElicitResult(action="cancel")
    content = answer.content if answer.action == "accept" else None
    return types.ElicitResult(action=answer.action, content=content)  # type: ignore[arg-type]


# settings files -----------------------------------------------------------------------------------------

def _register_settings(server: AgentLanguageServer) -> None:
    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched(ls: AgentLanguageServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        paths = [to_fs_path(c.uri) for c in params.changes]
        if any(is_settings_file(p) for p in paths):
            await reload_settings(ls)
        elif any(_is_host_state(p) for p in paths):
            from agent_ls.server.trust import decisions_changed

            await decisions_changed(ls)

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: AgentLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
        if is_settings_file(to_fs_path(params.text_document.uri)):
            await reload_settings(ls)

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: AgentLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
        if is_settings_file(to_fs_path(params.text_document.uri)):
            publish_config_diagnostics(ls, force=True)


def _unparsable_files(settings: Any) -> set[Path]:
    """Files that could not be read as JSON at all (their diagnostic has no JSON path)."""
    return {d.file for d in settings.diagnostics if d.severity == "error" and d.json_path == ()}


async def reload_settings(ls: AgentLanguageServer) -> None:
    """Re-read every scope and reconfigure live (unchanged servers keep running).

    The last valid configuration stays in force: while a file does not parse, everything it
    defined before is kept; an entry that became invalid keeps its last valid version running.
    Diagnostics always show the current problems.
    """
    from agent_ls.config.settings import load_settings
    from agent_ls.server.trust import ask_pending_workspaces, policy

    if ls.manager is None:
        return
    async with ls.reload_lock:
        manager = ls.manager
        if manager is None:
            return
        folders = ls.folders()
        new = await asyncio.to_thread(functools.partial(load_settings, folders, trust=policy(ls)))
        old = ls.settings
        broken = sorted(_unparsable_files(new) - (_unparsable_files(old) if old is not None else set()))
        if old is not None:
            _keep_last_valid(old, new)
        for file in broken:
            ls.show(lsp.MessageType.Error, f"agent-ls: {file} is not valid JSON; the last valid configuration "
                                           "stays in force until it is fixed (see the diagnostics)")
        ls.settings = new
        ls.direct_gate = None
        await manager.set_roots(folders)
        await manager.apply(new)
        publish_config_diagnostics(ls)
        ls.sessions.clear()  # new sessions pick up model and permission changes
        ls.notify_status_soon()  # the workspaces' trust may have changed with no server changing
        log.info("settings reloaded: %d servers, %d problems", len(new.servers), len(new.diagnostics))
        ask_pending_workspaces(ls)


def _keep_last_valid(old: Any, new: Any) -> None:
    broken = _unparsable_files(new)
    if broken:
        # The file's previous content stays in force: its servers, and its other settings.
        for name, cfg in old.servers.items():
            if cfg.source.file in broken and (name not in new.servers or new.servers[name].source.file != cfg.source.file):
                new.servers[name] = cfg
                new.failed.pop(name, None)
        old_layers = {file: (scope, root) for scope, file, root in old.layers}
        for file in broken:
            if file in old_layers:
                scope, root = old_layers[file]
                new.layers.append((scope, file, root))
                for k, v in root.items():
                    if k != "mcpServers":
                        new.other.setdefault(k, v)
    for name, failed in list(new.failed.items()):
        prev = old.servers.get(name)
        if prev is not None and prev.source.file == failed.source.file:
            new.servers[name] = prev  # the entry is broken now: its last valid version keeps running
            del new.failed[name]
    from agent_ls.config.reload import keep_last_valid_sections

    keep_last_valid_sections(old, new)  # the same per settings section (model, agent, toolActions...)


def publish_config_diagnostics(ls: AgentLanguageServer, force: bool = False) -> None:
    from agent_ls.config.jsonc import format_path

    settings = ls.settings
    if settings is None:
        return
    by_file: dict[str, list[lsp.Diagnostic]] = {}
    for f in settings.files:
        uri = from_fs_path(str(f))
        if uri:
            by_file[uri] = []
    lines_of: dict[Path, list[str]] = {}
    codec = ls.workspace.position_codec

    def client_pos(file: Path, line: int, column: int) -> lsp.Position:
        # The settings parser counts code points; the editor counts UTF-16 units (usually).
        if file not in lines_of:
            try:
                lines_of[file] = file.read_text(encoding="utf-8").splitlines(keepends=True)
            except (OSError, UnicodeDecodeError):
                lines_of[file] = []
        lines = lines_of[file]
        if line >= len(lines):
            return lsp.Position(line, column)
        return codec.position_to_client_units(lines, lsp.Position(line, column))

    for d in settings.diagnostics:
        uri = from_fs_path(str(d.file))
        if not uri:
            continue
        if d.span is not None:
            rng = lsp.Range(client_pos(d.file, d.span.start.line, d.span.start.column),
                            client_pos(d.file, d.span.end.line, d.span.end.column))
        else:
            rng = lsp.Range(lsp.Position(0, 0), lsp.Position(0, 0))
        sev = {"error": lsp.DiagnosticSeverity.Error, "information": lsp.DiagnosticSeverity.Information}.get(
            d.severity, lsp.DiagnosticSeverity.Warning)
        message = f"{format_path(d.json_path)}: {d.message}" if d.json_path else d.message
        by_file.setdefault(uri, []).append(lsp.Diagnostic(range=rng, message=message, severity=sev,
                                                          source="agent-ls"))
    for uri, diags in by_file.items():
        if diags or ls.config_diagnostics.get(uri) or (force and uri in ls.config_diagnostics):
            ls.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diags))
        ls.config_diagnostics[uri] = diags


async def watch_settings_files(ls: AgentLanguageServer) -> None:
    """Ask the editor to watch the settings files (dynamic registration)."""
    caps = ls.client_capabilities
    ws = caps.workspace
    if ws is None or ws.did_change_watched_files is None or not ws.did_change_watched_files.dynamic_registration:
        return
    from agent_ls.config.paths import user_settings_path

    watchers = [lsp.FileSystemWatcher(glob_pattern=g) for g in SETTINGS_GLOBS]
    from agent_ls.config.paths import host_state_path

    for file in (user_settings_path(), host_state_path()):
        watchers.append(lsp.FileSystemWatcher(glob_pattern=lsp.RelativePattern(
            base_uri=file.parent.as_uri(), pattern=file.name)))
    try:
        await ls.client_register_capability_async(lsp.RegistrationParams(registrations=[lsp.Registration(
            id="agent-ls-settings", method=lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES,
            register_options=lsp.DidChangeWatchedFilesRegistrationOptions(watchers=watchers))]))
    except Exception as e:
        log.info("could not register settings file watchers: %s", e)


# MCP methods -------------------------------------------------------------------------------------------------

def status_result(ls: AgentLanguageServer, manager: Any) -> Any:
    from agent_ls.server.trust import workspaces_payload

    diags = [str(d) for d in (ls.settings.diagnostics if ls.settings else [])]
    if ls.host_state is not None and ls.host_state.problem:
        diags.append(ls.host_state.problem)
    return P.dump(P.StatusResult(servers=status_payload(manager), diagnostics=diags,
                                 workspaces=workspaces_payload(ls)))


def _one_status(manager: Any, name: str) -> P.ServerStatusPayload:
    return next(s for s in status_payload(manager) if s.name == name)


def _known(manager: Any, server: str) -> None:
    if server not in manager.server_names():
        raise P.RequestFailed(f"no MCP server named {server!r} is configured")


def _connected(manager: Any, server: str) -> None:
    _known(manager, server)
    conn = manager.connection(server)
    if conn is None or not conn.connected:
        state = conn.state.value if conn is not None else "failed"
        raise P.RequestFailed(f"MCP server {server!r} is not connected ({state})")


def _register_mcp(server: AgentLanguageServer) -> None:  # noqa: C901 - one registration list
    @server.feature(P.MCP_STATUS)
    @guarded
    async def mcp_status(ls: AgentLanguageServer, raw: Any) -> Any:
        P.parse(P.NoParams, raw)
        if ls.manager is None:  # the host is loading: answer with what it will report
            if not ls.host_lock.locked():
                ls.run_task(start_host(ls), "start MCP host")
            await ls.preview_ready.wait()  # settings and the kept catalogues: milliseconds
            if ls.manager is None and ls.preview is not None:
                # set once this answer is on its way (pygls writes it when the handler returns)
                asyncio.get_running_loop().call_soon(ls.status_answered.set)
                return status_result(ls, ls.preview)
        return status_result(ls, await ensure_manager(ls))

    @server.feature(P.MCP_RESTART)
    @guarded
    async def mcp_restart(ls: AgentLanguageServer, raw: Any) -> Any:
        p = P.parse(P.ServerParams, raw)
        manager = await ensure_manager(ls)
        if p.server is not None:
            _known(manager, p.server)
            if manager.connection(p.server) is None:
                raise P.RequestFailed(f"MCP server {p.server!r} has a configuration error; fix the settings file")
        await manager.restart(p.server)
        await manager.wait_ready(60)
        return status_result(ls, manager)

    @server.feature(P.MCP_SET_ENABLED)
    @guarded
    async def mcp_set_enabled(ls: AgentLanguageServer, raw: Any) -> Any:
        p = P.parse(P.SetEnabledParams, raw)
        manager = await ensure_manager(ls)
        _known(manager, p.server)
        if manager.connection(p.server) is None:
            raise P.RequestFailed(f"MCP server {p.server!r} has a configuration error; fix the settings file")
        await manager.set_enabled(p.server, p.enabled)
        await manager.wait_ready(60)
        return status_result(ls, manager)

    @server.feature(P.MCP_TRUST)
    @guarded
    async def mcp_trust(ls: AgentLanguageServer, raw: Any) -> Any:
        p = P.parse(P.TrustParams, raw)
        manager = await ensure_manager(ls)
        _known(manager, p.server)
        conn = manager.connection(p.server)
        if conn is None or not conn.config.needs_trust:
            raise P.RequestFailed(f"MCP server {p.server!r} is not defined by a workspace file: it needs no trust")
        try:
            await manager.set_trust(p.server, p.trusted)
        except ValueError as e:
            raise P.RequestFailed(str(e)) from None
        await manager.wait_ready(60)
        return status_result(ls, manager)

    async def auth_action(ls: AgentLanguageServer, raw: Any, sign_in: bool) -> Any:
        p = P.parse(P.SignInParams, raw)
        manager = await ensure_manager(ls)
        _known(manager, p.server)
        try:
            status = await (manager.sign_in(p.server) if sign_in else manager.sign_out(p.server))
        except ValueError as e:
            raise P.RequestFailed(str(e)) from None
        return P.dump(_one_status(manager, status.name))

    @server.feature(P.MCP_SIGN_IN)
    @guarded
    async def mcp_sign_in(ls: AgentLanguageServer, raw: Any) -> Any:
        return await auth_action(ls, raw, sign_in=True)

    @server.feature(P.MCP_SIGN_OUT)
    @guarded
    async def mcp_sign_out(ls: AgentLanguageServer, raw: Any) -> Any:
        return await auth_action(ls, raw, sign_in=False)

    @server.feature(P.MCP_RESOURCES_LIST)
    @guarded
    async def resources_list(ls: AgentLanguageServer, raw: Any) -> Any:
        p = P.parse(P.ResourcesListParams, raw)
        manager = await ensure_manager(ls)
        if p.server is not None:
            _known(manager, p.server)
        await manager.refresh_if_dirty()
        resources = [P.ResourcePayload(server=s, uri=str(r.uri), name=r.name, mime_type=r.mime_type,
                                       description=r.description)
                     for s, r in manager.resources() if p.server in (None, s)]
        templates = [{"server": s, "uriTemplate": str(t.uri_template), "name": t.name, "mimeType": t.mime_type,
                      "description": t.description}
                     for s, t in manager.resource_templates() if p.server in (None, s)]
        return P.dump(P.ResourcesListResult(resources=resources, templates=templates))

    @server.feature(P.MCP_RESOURCES_READ)
    @guarded
    async def resources_read(ls: AgentLanguageServer, raw: Any) -> Any:
        p = P.parse(P.ReadResourceParams, raw)
        manager = await ensure_manager(ls)
        _connected(manager, p.server)
        result = await manager.read_resource(p.server, p.uri)
        contents = [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.contents]
        return P.dump(P.ReadResourceResult(contents=contents))

    @server.feature(P.MCP_PROMPTS_LIST)
    @guarded
    async def prompts_list(ls: AgentLanguageServer, raw: Any) -> Any:
        p = P.parse(P.PromptsListParams, raw)
        manager = await ensure_manager(ls)
        if p.server is not None:
            _known(manager, p.server)
        await manager.refresh_if_dirty()
        prompts = [P.PromptPayload(server=s, name=pr.name, description=pr.description, arguments=[
            P.PromptArgumentPayload(name=a.name, description=a.description, required=bool(a.required))
            for a in (pr.arguments or [])]) for s, pr in manager.prompts() if p.server in (None, s)]
        return P.dump(P.PromptsListResult(prompts=prompts))

    @server.feature(P.MCP_PROMPTS_GET)
    @guarded
    async def prompts_get(ls: AgentLanguageServer, raw: Any) -> Any:
        p = P.parse(P.GetPromptParams, raw)
        manager = await ensure_manager(ls)
        _connected(manager, p.server)
        result = await manager.get_prompt(p.server, p.name, p.arguments)
        return P.dump(P.GetPromptResult(description=result.description,
                                        messages=[prompt_message(m) for m in result.messages]))

    @server.feature(P.MCP_CALL_TOOL)
    @guarded
    async def call_tool(ls: AgentLanguageServer, raw: Any) -> Any:
        from agent_ls.server import chat

        p = P.parse(P.CallToolParams, raw)
        return P.dump(await chat.call_tool_direct(ls, p.server, p.tool, p.arguments))


def prompt_message(m: Any) -> P.PromptMessagePayload:
    content = m.content
    text = getattr(content, "text", None)
    if text is None:
        resource = getattr(content, "resource", None)
        text = getattr(resource, "text", None)
    if text is None:
        kind = getattr(content, "type", "content")
        mime = getattr(content, "mime_type", None) or getattr(getattr(content, "resource", None), "mime_type", None)
        text = f"[{kind}{' ' + mime if mime else ''}]"
    return P.PromptMessagePayload(role=str(m.role), text=text)
