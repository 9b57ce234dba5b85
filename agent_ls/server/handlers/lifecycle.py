"""LSP lifecycle and settings-file handlers: initialize, initialized, workspace folders, shutdown,
``agent/serverInfo``, and the notifications that reload the settings (watched files, saves).

Nothing slow happens on the ``initialize`` path (litellm and the MCP SDK are imported later);
``initialized`` starts the MCP host in the background (:mod:`agent_ls.server.host`).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.uris import to_fs_path

from agent_ls import __version__
from agent_ls.runtime import model_library
from agent_ls.server import preload
from agent_ls.server.client import offers
from agent_ls.server.config_files import (
    is_host_state,
    is_settings_file,
    watch_settings_files,
)
from agent_ls.server.host import shutdown_host
from agent_ls.server.protocol.codec import NoParams
from agent_ls.server.protocol.methods import APPS_CAPABILITY, SERVER_INFO
from agent_ls.server.protocol.sessions import ServerInfoResult
from agent_ls.server.server import AgentLanguageServer, request
from agent_ls.server.workspaces import editor_trust_from

if TYPE_CHECKING:
    from agent_ls.core.tasks import BackgroundTasks
    from agent_ls.runtime.lifecycle import HostLifecycle

log = logging.getLogger("agent_ls.server")


HEAVY_MODULES = ("litellm", "mcp")


def register(server: AgentLanguageServer) -> None:
    _register_lifecycle(server)
    _register_settings(server)


def _register_lifecycle(server: AgentLanguageServer) -> None:
    @server.feature(lsp.INITIALIZE)
    def initialize(ls: AgentLanguageServer, params: lsp.InitializeParams) -> None:
        # Evidence for the "initialize stays light" promise (reported by agent/serverInfo).
        ls.modules_at_initialize = {m: m in sys.modules for m in HEAVY_MODULES}
        ls.runtime.editor_trusted = editor_trust_from(params.initialization_options)
        ls.runtime.renders_apps = offers(params.capabilities, APPS_CAPABILITY)
        # Once the result is on its way (not before: an import thread started at process start
        # competes with this answer for the interpreter), start the host: first what answers the
        # first mcp/status (the settings and the kept catalogues, no MCP SDK), while the editor
        # reads the result and sends `initialized`; then the SDK and the servers.
        asyncio.get_running_loop().call_soon(after_initialize, ls.lifecycle, ls.tasks)

    @server.feature(lsp.INITIALIZED)
    async def initialized(ls: AgentLanguageServer, params: lsp.InitializedParams) -> None:
        ls.run_task(watch_settings_files(ls.client), "register file watchers")

    @server.feature(lsp.WORKSPACE_DID_CHANGE_WORKSPACE_FOLDERS)
    async def folders_changed(ls: AgentLanguageServer, params: lsp.DidChangeWorkspaceFoldersParams) -> None:
        # pygls has already applied the change to ls.workspace.folders.
        log.info("workspace folders: %s", ", ".join(map(str, ls.folders())) or "(none)")
        await ls.lifecycle.reload()

    @server.feature(lsp.SHUTDOWN)
    async def shutdown(ls: AgentLanguageServer, params: Any) -> None:
        ls.shutdown_requested = True
        await shutdown_host(ls.lifecycle, ls.conversations)

    @server.feature(lsp.EXIT)
    def exit_(ls: AgentLanguageServer, params: Any) -> None:
        # pygls now cancels what still runs and ends the process; if anything holds it, the
        # watchdog ends it (process_exit).
        ls.exit_watchdog.arm(0 if ls.shutdown_requested else 1)

    @request(server, SERVER_INFO, NoParams)
    async def server_info(ls: AgentLanguageServer, _: NoParams) -> ServerInfoResult:
        where, host_pid = model_library.state()
        return ServerInfoResult(
            name="agent-ls", version=__version__, pid=os.getpid(), python=sys.version.split()[0],
            loaded_modules={m: _imported(m) for m in HEAVY_MODULES},
            loaded_at_initialize=dict(ls.modules_at_initialize),
            workspace_folders=[str(f) for f in ls.folders()],
            model_library=where, model_host_pid=host_pid,
        )


def after_initialize(lifecycle: HostLifecycle, tasks: BackgroundTasks) -> None:
    """Run once the ``initialize`` result has been written (pygls writes it when the handler returns)."""
    preload.start()
    tasks.spawn(lifecycle.start(), "start MCP host")


def _imported(name: str) -> bool:
    """Fully imported (a module is in sys.modules while its import still runs)."""
    module = sys.modules.get(name)
    return module is not None and not getattr(getattr(module, "__spec__", None), "_initializing", False)


def _register_settings(server: AgentLanguageServer) -> None:
    @server.feature(lsp.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    async def watched(ls: AgentLanguageServer, params: lsp.DidChangeWatchedFilesParams) -> None:
        # a sandboxed command's placeholder coming and going (.mcp.json) is no change of the settings
        from agent_ls.core.sandbox.runner import placeholder_event  # lazy: not on the start-up path

        paths = [p for p in (to_fs_path(c.uri) for c in params.changes) if p is None or not placeholder_event(p)]
        if any(is_settings_file(p) for p in paths):
            await ls.lifecycle.reload()
        elif any(is_host_state(p) for p in paths):
            await ls.lifecycle.decisions_changed()

    @server.feature(lsp.TEXT_DOCUMENT_DID_SAVE)
    async def did_save(ls: AgentLanguageServer, params: lsp.DidSaveTextDocumentParams) -> None:
        if is_settings_file(to_fs_path(params.text_document.uri)):
            await ls.lifecycle.reload()

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    async def did_open(ls: AgentLanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
        if is_settings_file(to_fs_path(params.text_document.uri)):
            ls.settings_diagnostics.publish(force=True)
