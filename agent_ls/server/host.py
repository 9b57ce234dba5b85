"""The MCP host's life in the language server: start it, stop it, follow its servers connecting.

``initialized`` starts the host in the background: settings first (so ``mcp/status`` answers
from a preview of what the host will report), then, when a model is configured, the model
library (see :func:`model_first`), then the MCP SDK off the event loop, then every server, with
work-done progress while they connect. Every handler that needs the host waits for it through
:func:`ensure_manager`, which also ends the wait for the model library; a prompt does not wait
for the host (:func:`session_host`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from agent_ls.core.imports import import_quietly
from agent_ls.core.process import kill_children
from agent_ls.mcp.status import State
from agent_ls.runtime.pending import PendingHost
from agent_ls.server.config_files import publish_config_diagnostics
from agent_ls.server.progress import start_progress
from agent_ls.server.protocol.codec import RequestFailed
from agent_ls.server.reload import ask_pending_workspaces
from agent_ls.server.server import AgentLanguageServer, in_daemon_thread
from agent_ls.server.warmup import prewarm_llm

if TYPE_CHECKING:
    from agent_ls.config.settings import LoadedSettings
    from agent_ls.config.state import HostState
    from agent_ls.mcp.manager import MCPManager
    from agent_ls.mcp.status import ServerStatus

log = logging.getLogger("agent_ls.server")

MODEL_FIRST_LIMIT = 3.0
"""Seconds the MCP host's start waits at most for the model library to load (:func:`model_first`;
``AGENT_LS_MODEL_FIRST_LIMIT`` seconds if set)."""

SHUTDOWN_LIMIT = 20.0
"""Seconds ``shutdown`` waits for the MCP servers to stop before it kills what is left."""


async def shutdown_host(ls: AgentLanguageServer) -> None:
    """Stop every background task, every MCP server and the session store."""
    ls.tasks.cancel()
    ls.status.preview = None
    # Bounded: the editor waits for the answer to `shutdown` (each server gets its own grace
    # inside; whatever is still there afterwards is killed below).
    await ls.runtime.close(SHUTDOWN_LIMIT)
    ls.conversations.close_now()
    kill_children()


async def ensure_manager(ls: AgentLanguageServer) -> MCPManager:
    """The MCP manager, once the host has started (started now if nothing has yet)."""
    if ls.runtime.manager is None:
        ls.host_wanted.set()
        await start_host(ls)
    if ls.runtime.manager is None:
        raise RequestFailed("the MCP host is shut down")
    return ls.runtime.manager


def _starting(ls: AgentLanguageServer) -> bool:
    """The host's start is under way and has not ended yet."""
    return ls.runtime.manager is None and ls.host_lock.locked() and not ls.host_started.is_set()


def host_starting(ls: AgentLanguageServer) -> list[ServerStatus] | None:
    """The status the host will report (the preview) while it is starting and nothing has asked
    for it: its start may be waiting for the model library (:func:`model_first`); None once it
    runs, or when something waits for it anyway."""
    return ls.status.preview if _starting(ls) and not ls.host_wanted.is_set() else None


async def session_host(ls: AgentLanguageServer) -> MCPManager | PendingHost:
    """The MCP host for a session being built: the manager, or while the host is still
    starting (the model library first), a :class:`PendingHost` that forwards to it once it has
    started: a prompt sent right after the editor opened does not wait for the MCP SDK's
    import. The host is started now if nothing has started it."""
    await settings_loaded(ls)
    if _starting(ls):
        preview = ls.status.preview or []
        return PendingHost(lambda: ls.runtime.manager, ls.host_started, ls.host_wanted.set,
                           starting=[s.name for s in preview if s.state == State.STARTING],
                           kept=any(s.state == State.STARTING and s.tools for s in preview))
    return await ensure_manager(ls)


def model_first_limit() -> float:
    try:
        return float(os.environ.get("AGENT_LS_MODEL_FIRST_LIMIT", MODEL_FIRST_LIMIT))
    except ValueError:
        return MODEL_FIRST_LIMIT


async def model_first(ls: AgentLanguageServer) -> None:
    """When a model is configured, load the model library (litellm: seconds of CPU) before the
    MCP host starts: the MCP SDK's import and the servers' own start-up (processes of their own,
    on the same cores) would otherwise slow that load down, and a prompt sent meanwhile waits for
    it (issue 30 item 2). The servers start when it has loaded, after :data:`MODEL_FIRST_LIMIT`
    seconds at the most, or at once when something needs the host (:func:`ensure_manager`, a
    workspace trust decision: :func:`agent_ls.server.reload.reload_settings`). A workspace that
    asks to be trusted is asked before this wait."""
    if ls.host_wanted.is_set() or (warming := prewarm_llm(ls)) is None:
        return
    wanted = asyncio.ensure_future(ls.host_wanted.wait())
    try:
        await asyncio.wait({warming, wanted}, timeout=model_first_limit(), return_when=asyncio.FIRST_COMPLETED)
    finally:
        wanted.cancel()


async def settings_loaded(ls: AgentLanguageServer) -> None:
    """Wait until the settings are loaded (the host's first step: milliseconds), starting the
    host if nothing has yet; a request that reads the settings right after ``initialize`` would
    otherwise see none."""
    if ls.runtime.settings is None:
        if ls.runtime.manager is None and not ls.host_lock.locked():
            ls.run_task(start_host(ls), "start MCP host")
        await ls.status.preview_ready.wait()


async def start_host(ls: AgentLanguageServer) -> None:
    """Load settings and start every MCP server in the background, with work-done progress."""
    async with ls.host_lock:
        if ls.runtime.manager is not None:
            return
        try:
            await _start_host(ls)
        finally:
            ls.host_started.set()


async def _start_host(ls: AgentLanguageServer) -> None:
    try:
        log.debug("MCP host: loading the settings")
        settings = await ls.runtime.load()
        # Until the host is loaded, mcp/status answers with what it will report: every
        # server, and the tools kept from each one's last connection.
        ls.status.preview = await asyncio.to_thread(preview, settings, ls.runtime.state)
    finally:
        ls.status.preview_ready.set()
    ls.status.notify_soon()
    # Building the SDK's pydantic models holds the interpreter for long stretches: let the
    # editor's first mcp/status be answered (from the preview) before that starts.
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(ls.status.answered.wait(), 0.1)
    publish_config_diagnostics(ls)
    for d in settings.diagnostics:
        log.log(logging.INFO if d.severity == "information" else logging.WARNING, "settings: %s", d)
    ask_pending_workspaces(ls)  # the questions need no host: asked now, not after the model library
    await model_first(ls)
    log.debug("MCP host: starting (model library loaded, or the host is wanted)")
    # The MCP SDK takes a while to import: do it off the event loop (in a daemon thread, so
    # that an import still running at shutdown does not hold the process) so the editor's
    # requests keep being answered meanwhile. Questions (trust, forms, sampling consent) go
    # to the editor (LspQuestions).
    manager = await ls.runtime.start_manager(
        import_host=lambda: in_daemon_thread(lambda: import_quietly("agent_ls.mcp.host")),
        on_change=ls.status.notify_soon)
    log.debug("MCP host: the SDK imported, the manager started")
    ls.status.preview = None
    if hasattr(manager, "set_auth_opener"):
        manager.set_auth_opener(lambda server, url: open_auth_url(ls, server, url))
    await ls.runtime.apply()
    prewarm_llm(ls)  # unless model_first started it: the servers start in their own processes meanwhile
    ls.run_task(connect_progress(ls, manager), "MCP connect progress")


def preview(settings: LoadedSettings, state: HostState) -> list[ServerStatus] | None:
    """The status the host will report once loaded (None when it cannot be told)."""
    # lazy: platformdirs, tempfile, bz2, lzma: +14 modules, ~17 ms at start-up
    from agent_ls.config.paths import catalogue_path
    from agent_ls.mcp.catalogue import CatalogueStore
    from agent_ls.mcp.preview import preview_status

    try:
        return preview_status(settings, state, CatalogueStore(catalogue_path()))
    except Exception as e:  # noqa: BLE001 - only a head start: the host reports the truth anyway
        log.info("no early MCP status: %s", e)
        return None


async def connect_progress(ls: AgentLanguageServer, manager: MCPManager) -> None:
    """Work-done progress while servers connect; one log line per server outcome."""
    names = manager.server_names()
    progress = await start_progress(ls, "mcp", "Connecting MCP servers", f"{len(names)} servers", percentage=0)
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
                progress.report(f"{n}: {st}", pct)

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
            progress.end(f"{connected}/{len(manager.server_names())} connected")


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
