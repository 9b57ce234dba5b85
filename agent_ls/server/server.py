"""The pygls language server: a thin adapter over the MCP host and the agent.

Nothing slow happens on the ``initialize`` path (litellm and the MCP SDK are imported later);
``initialized`` starts the MCP connections in the background with work-done progress.
Custom requests are defined in :mod:`agent_ls.server.protocol`.
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.uris import from_fs_path, to_fs_path

from agent_ls import __version__
from agent_ls.server import protocol as P

if TYPE_CHECKING:
    from agent_ls.agent.session import Session
    from agent_ls.config.settings import LoadedSettings
    from agent_ls.mcp.manager import MCPManager

log = logging.getLogger("agent_ls.server")


class AgentLsProtocol(LanguageServerProtocol):
    """Custom methods keep their params as plain JSON (validated by ``protocol.parse``), and a
    late client answer to a request we stopped waiting for is dropped instead of raising."""

    def get_message_type(self, method: str) -> Any:  # type: ignore[override]
        if method in P.CLIENT_REQUESTS:
            return P.RawRequest
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> Any:  # type: ignore[override]
        if method in P.SERVER_REQUESTS:
            return P.RawResponse
        return super().get_result_type(method)

    def _handle_response(self, msg_id: Any, result: Any | None = None, error: Any | None = None) -> None:
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            self._request_futures.pop(msg_id, None)
            log.debug("dropping a late answer to request %s", msg_id)
            return
        super()._handle_response(msg_id, result, error)


class LspLogHandler(logging.Handler):
    """Log records go to the editor's output channel (``window/logMessage``), never stdout."""

    LEVELS = {
        logging.ERROR: lsp.MessageType.Error,
        logging.WARNING: lsp.MessageType.Warning,
        logging.INFO: lsp.MessageType.Info,
    }

    def __init__(self, server: LanguageServer) -> None:
        super().__init__()
        self.server = server
        self._busy = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            kind = next((v for k, v in sorted(self.LEVELS.items(), reverse=True) if record.levelno >= k),
                        lsp.MessageType.Log)
            self.server.window_log_message(lsp.LogMessageParams(type=kind, message=self.format(record)))
        except Exception:
            pass
        finally:
            self._busy = False


class AgentLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("agent-ls", __version__, protocol_cls=AgentLsProtocol)
        self.manager: MCPManager | None = None
        self.settings: LoadedSettings | None = None
        self.sessions: dict[str, Session] = {}
        self.session_locks: dict[str, asyncio.Lock] = {}
        self.tasks: set[asyncio.Task[Any]] = set()
        self.store: Any = None
        self._status_pending = False
        self.config_diagnostics: dict[str, list[lsp.Diagnostic]] = {}

    # helpers ------------------------------------------------------------------------
    def run_task(self, coro: Any, name: str) -> asyncio.Task[Any]:
        """Start a background task; keep a strong reference and log its failure."""
        task = asyncio.ensure_future(coro)
        self.tasks.add(task)

        def done(t: asyncio.Task[Any]) -> None:
            self.tasks.discard(t)
            if not t.cancelled() and t.exception() is not None:
                log.error("background task %s failed: %r", name, t.exception())

        task.add_done_callback(done)
        return task

    def folders(self) -> list[Path]:
        out: list[Path] = []
        try:
            ws = self.workspace
        except RuntimeError:
            return out
        for f in ws.folders.values():
            p = to_fs_path(f.uri)
            if p:
                out.append(Path(p))
        if not out and ws.root_uri:
            p = to_fs_path(ws.root_uri)
            if p:
                out.append(Path(p))
        return out

    def notify_status_soon(self) -> None:
        """Coalesce status changes into one ``mcp/statusChanged`` per loop tick."""
        if self._status_pending or self.manager is None:
            return
        self._status_pending = True

        def send() -> None:
            self._status_pending = False
            if self.manager is not None:
                self.protocol.notify(P.MCP_STATUS_CHANGED, {"servers": status_payload(self.manager)})

        try:
            asyncio.get_running_loop().call_later(0.05, send)
        except RuntimeError:
            self._status_pending = False


def status_payload(manager: MCPManager) -> list[dict[str, Any]]:
    out = []
    for s in manager.status():
        out.append({
            "name": s.name, "state": s.state, "transport": s.transport, "scope": s.scope, "source": s.source,
            "toolCount": s.tool_count, "promptCount": s.prompt_count, "resourceCount": s.resource_count,
            "error": s.error, "stderrTail": list(s.stderr_tail), "serverInfo": s.server_info,
            "protocolVersion": s.protocol_version, "restarts": s.restarts, "pid": s.pid,
            "tools": [{"name": t.name, "original": t.original, "capability": t.capability,
                       "description": t.description} for t in s.tools],
        })
    return out


def invalid(e: Exception) -> JsonRpcInvalidParams:
    err = JsonRpcInvalidParams(str(e))
    return err


def create_server() -> AgentLanguageServer:
    from agent_ls.server import features

    server = AgentLanguageServer()
    features.register(server)
    return server


def uri_of(path: Path) -> str:
    return from_fs_path(str(path)) or path.as_uri()
