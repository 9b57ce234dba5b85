"""The pygls language server object and its plumbing: a thin adapter over the MCP host and the agent.

Here: the protocol fixes (:class:`AgentLsProtocol`), logging to the editor, the server's state,
background tasks, server -> client requests (:meth:`AgentLanguageServer.ask_client`, used by
:func:`agent_ls.server.ask.ask`), coalesced ``mcp/statusChanged`` notifications, and the mapping
of exceptions to JSON-RPC errors (:func:`guarded`). The features are registered by
:mod:`agent_ls.server.app`; custom requests are defined in :mod:`agent_ls.server.protocol`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import attrs
import cattrs
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter
from pygls.uris import to_fs_path

from agent_ls import __version__
from agent_ls.core.process import ExitWatchdog, kill_children
from agent_ls.core.tasks import BackgroundTasks
from agent_ls.runtime.conversations import BadChoice, ConversationError, Conversations
from agent_ls.runtime.host import RuntimeHost
from agent_ls.runtime.lifecycle import HostLifecycle, HostUnavailable, LogListener
from agent_ls.server.protocol.codec import (
    InvalidParams,
    RawNotification,
    RawRequest,
    RawResponse,
    RequestFailed,
    dump,
    parse,
)
from agent_ls.server.protocol.methods import (
    CLIENT_NOTIFICATIONS,
    CLIENT_REQUESTS,
    INTERNAL_ERROR,
    REQUEST_FAILED,
    SERVER_REQUESTS,
)
from agent_ls.server.status import StatusNotices

if TYPE_CHECKING:
    import cattrs

T = TypeVar("T")
P = TypeVar("P")

log = logging.getLogger("agent_ls.server")


class _Malformed:
    """A request whose envelope or params could not be structured: answered with an error."""

    def __init__(self, msg_id: Any, method: str, error: JsonRpcException) -> None:
        self.id = msg_id
        self.method = method
        self.error = error


class AgentLsProtocol(LanguageServerProtocol):
    """pygls' protocol with three fixes for a server that must never leave a client hanging:

    - custom methods keep their params as plain JSON (validated by ``protocol.parse``);
    - a request whose params fail to structure (any method) gets an ``InvalidParams`` error
      response instead of no response at all;
    - a late client answer to a server request we stopped waiting for is dropped.
    """

    def get_message_type(self, method: str) -> Any:  # type: ignore[override]
        if method in CLIENT_REQUESTS:
            return RawRequest
        if method in CLIENT_NOTIFICATIONS:
            return RawNotification
        return super().get_message_type(method)

    def get_result_type(self, method: str) -> Any:  # type: ignore[override]
        if method in SERVER_REQUESTS:
            return RawResponse
        return super().get_result_type(method)

    def structure_message(self, data: dict[str, Any]) -> Any:
        try:
            return super().structure_message(data)
        except JsonRpcException as e:
            if isinstance(data, dict) and "id" in data and isinstance(data.get("method"), str):
                cause = e.__cause__
                detail = _structure_error_text(cause) if cause is not None else str(e)
                return _Malformed(data["id"], data["method"],
                                  JsonRpcInvalidParams(f"invalid params for {data['method']}: {detail}"))
            raise

    def handle_message(self, message: Any) -> None:
        if isinstance(message, _Malformed):
            log.warning("%s", message.error.message)
            self._send_response(message.id, error=message.error.to_response_error())
            return
        super().handle_message(message)

    def _handle_response(self, msg_id: Any, result: Any | None = None, error: Any | None = None) -> None:
        future = self._request_futures.get(msg_id)
        if future is not None and future.done():
            self._request_futures.pop(msg_id, None)
            log.debug("dropping a late answer to request %s", msg_id)
            return
        super()._handle_response(msg_id, result, error)


def _structure_error_text(exc: BaseException) -> str:
    if isinstance(exc, cattrs.BaseValidationError):
        return "; ".join(cattrs.transform_error(exc))
    return f"{type(exc).__name__}: {exc}"


def lenient_converter() -> cattrs.Converter:
    """pygls' converter, with a ``workspace/didChangeWorkspaceFolders`` event that keeps
    its valid folders.

    Neovim 0.7 sends ``removed: [{}]`` (and an empty Lua table, ``{}``, for an empty list) when
    a folder is added; structured strictly, the whole notification would be dropped as Invalid
    Params and the folder never added. Here each entry stands alone: a folder with a ``uri``
    is kept (named after its last path segment when it has no ``name``), anything else is
    logged and ignored.
    """
    converter = default_converter()

    def folder(item: Any) -> lsp.WorkspaceFolder | None:
        if not isinstance(item, dict) or not isinstance(item.get("uri"), str) or not item["uri"]:
            return None
        name = item.get("name")
        if not isinstance(name, str):
            name = Path(to_fs_path(item["uri"]) or item["uri"]).name or item["uri"]
        return lsp.WorkspaceFolder(uri=item["uri"], name=name)

    def event(obj: Any, _: type) -> lsp.WorkspaceFoldersChangeEvent:
        if not isinstance(obj, dict):
            raise TypeError(f"a workspace folders change event is an object, not {type(obj).__name__}")
        kept: dict[str, list[lsp.WorkspaceFolder]] = {"added": [], "removed": []}
        ignored: list[str] = []
        for key, out in kept.items():
            items = obj.get(key)
            if items is None or items == {}:  # absent, or an empty Lua table
                continue
            if not isinstance(items, list):
                ignored.append(f"{key}: {str(items)[:80]}")
                continue
            for item in items:
                found = folder(item)
                if found is None:
                    ignored.append(f"{key}: {str(item)[:80]}")
                else:
                    out.append(found)
        if ignored:
            log.warning("workspace/didChangeWorkspaceFolders: ignored what is not a workspace folder "
                        "(one needs a uri): %s", "; ".join(ignored))
        return lsp.WorkspaceFoldersChangeEvent(added=kept["added"], removed=kept["removed"])

    converter.register_structure_hook(lsp.WorkspaceFoldersChangeEvent, event)
    return converter


@attrs.define
class TrustPrompts:
    """The trust questions open now (``ls.trust_prompts``; the workspace questions are the
    lifecycle's: :attr:`agent_ls.runtime.lifecycle.HostLifecycle.workspace_prompts`)."""

    unsupported: set[str] = attrs.field(factory=set)
    """The questions (``agent/trustWorkspace``, ``mcp/trustServer``) the client answered with
    method-not-found: it is asked with ``window/showMessageRequest`` instead."""
    servers: set[str] = attrs.field(factory=set)
    """The workspace MCP servers whose trust question waits for an answer now."""


class LspLogHandler(logging.Handler):
    """Log records go to the editor's output channel (``window/logMessage``), never stdout."""

    LEVELS = (
        (logging.ERROR, lsp.MessageType.Error),
        (logging.WARNING, lsp.MessageType.Warning),
        (logging.INFO, lsp.MessageType.Info),
    )

    def __init__(self, server: LanguageServer) -> None:
        super().__init__()
        self.server = server
        self._busy = False

    def emit(self, record: logging.LogRecord) -> None:
        if self._busy:
            return
        self._busy = True
        try:
            kind = next((v for k, v in self.LEVELS if record.levelno >= k), lsp.MessageType.Log)
            self.server.window_log_message(lsp.LogMessageParams(type=kind, message=self.format(record)))
        except Exception:
            pass
        finally:
            self._busy = False


class AgentLanguageServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__("agent-ls", __version__, protocol_cls=AgentLsProtocol, converter_factory=lenient_converter)
        self.runtime = RuntimeHost(self.folders)
        """Settings, trust and the MCP manager; its questions go to the editor
        (:class:`agent_ls.server.editor_questions.LspQuestions`, set by :mod:`.app`)."""
        self.tasks = BackgroundTasks("language server", log, level=logging.ERROR)
        """Every background task of the server (cancelled together at shutdown)."""
        self.lifecycle = HostLifecycle(self.runtime, LogListener(), self.tasks)
        """The host's start, reloads and stop (:class:`agent_ls.runtime.lifecycle.HostLifecycle`);
        its listener tells the editor (:class:`agent_ls.server.host.EditorHostListener`, set by :mod:`.app`)."""
        self.status = StatusNotices(self.runtime, self.protocol.notify,
                                    lambda text: self.show(lsp.MessageType.Warning, text),
                                    lambda: self.lifecycle.preview)
        """The MCP status shown to the editor: the preview while the host loads,
        ``mcp/statusChanged`` (:mod:`.status`)."""
        self.conversations: Conversations = Conversations(folders=self.folders, settings=self.runtime.agent_settings,
                                                          host=_no_host)
        """The chat's conversations (:class:`agent_ls.runtime.conversations.Conversations`), wired to
        the editor's files, questions and the MCP host by :mod:`.app`."""
        self.config_diagnostics: dict[str, list[lsp.Diagnostic]] = {}
        self._request_counter = 0
        self.modules_at_initialize: dict[str, bool] = {}
        self.trust_prompts = TrustPrompts()
        """The server trust questions now open, and the questions the editor does not know."""
        self.shutdown_requested = False
        """``shutdown`` came: the exit code is 0 (the LSP specification's rule)."""
        self.exit_watchdog = ExitWatchdog()
        """Ends the process if it is still there a few seconds after the connection ended."""

    def shutdown(self) -> None:
        """pygls calls this when the connection ends (exit, or the editor went away)."""
        try:
            super().shutdown()
        finally:
            kill_children()

    # helpers ------------------------------------------------------------------------
    def run_task(self, coro: Awaitable[T], name: str) -> asyncio.Task[T]:
        """Start a background task (:attr:`tasks`: kept, its failure logged, cancelled at shutdown)."""
        return self.tasks.spawn(coro, name)

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

    async def ask_client(self, method: str, params: Any) -> Any:
        """A server -> client request. Cancelling the caller withdraws the request
        (``$/cancelRequest`` to the client); the answer comes back as plain JSON."""
        self._request_counter += 1
        msg_id = f"agent-ls-{self._request_counter}-{uuid.uuid4().hex[:6]}"
        future = self.protocol.send_request_async(method, params, msg_id=msg_id)
        try:
            raw = await future
        except asyncio.CancelledError:
            self.protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
            raise
        return raw.result if isinstance(raw, RawResponse) else raw

    def show(self, kind: lsp.MessageType, message: str) -> None:
        self.window_show_message(lsp.ShowMessageParams(type=kind, message=message))


async def _no_host() -> None:
    return None


Handler = Callable[..., Awaitable[Any]]


def request(server: AgentLanguageServer, method: str, params: type[P]) -> Callable[
        [Callable[[AgentLanguageServer, P], Awaitable[Any]]], Callable[[AgentLanguageServer, P], Awaitable[Any]]]:
    """Register a typed handler of the custom request ``method``: its raw params are structured
    into ``params`` (a bad shape is ``InvalidParams``), the handler returns a payload class
    instance (sent camelCase: :func:`agent_ls.server.protocol.codec.dump`), and the project's
    errors are mapped as :func:`guarded` maps them. The handler stays callable as written (tests,
    other handlers)."""

    def register(fn: Callable[[AgentLanguageServer, P], Awaitable[Any]]) -> Callable[
            [AgentLanguageServer, P], Awaitable[Any]]:
        @server.feature(method)
        @guarded
        @functools.wraps(fn)
        async def handler(ls: AgentLanguageServer, raw: Any) -> Any:
            return dump(await fn(ls, parse(params, raw)))

        return fn

    return register


def guarded(fn: Handler) -> Handler:
    """Map the project's exceptions to JSON-RPC errors with clear messages:
    bad params -> ``INVALID_PARAMS``, impossible requests -> ``REQUEST_FAILED``."""

    @functools.wraps(fn)
    async def wrapper(*args: Any, **kwargs: Any) -> Any:
        try:
            return await fn(*args, **kwargs)
        except JsonRpcException:
            raise
        except (InvalidParams, BadChoice) as e:
            raise JsonRpcInvalidParams(str(e)) from None
        except (RequestFailed, ConversationError, HostUnavailable) as e:
            raise JsonRpcException(str(e), code=REQUEST_FAILED) from None
        except asyncio.CancelledError:
            raise
        except Exception as e:
            failed = _request_failure(e)
            if failed is not None:
                raise JsonRpcException(failed, code=REQUEST_FAILED) from None
            log.exception("%s failed", fn.__name__)
            raise JsonRpcException(f"{type(e).__name__}: {e}", code=INTERNAL_ERROR) from None

    return wrapper


def _request_failure(e: Exception) -> str | None:
    """Errors of the MCP layer that mean "cannot be done" rather than "bug"."""
    # lazy: the MCP SDK, +429 modules, ~0.6 s at start-up
    from agent_ls.mcp.connection.failures import ServerUnavailable

    if isinstance(e, ServerUnavailable):
        return str(e)
    try:
        from mcp.shared.exceptions import MCPError
    except ImportError:  # pragma: no cover
        return None
    if isinstance(e, MCPError):
        return f"the MCP server answered with an error: {e}"
    return None
