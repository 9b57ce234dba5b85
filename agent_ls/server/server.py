"""The pygls language server object and its plumbing: a thin adapter over the MCP host and the agent.

Here: the protocol fixes (:class:`AgentLsProtocol`), logging to the editor, the server's state,
background tasks, the editor as a typed service (:class:`agent_ls.server.client.EditorClient`), coalesced ``mcp/statusChanged`` notifications, and the mapping
of exceptions to JSON-RPC errors (:func:`guarded`). The features are registered by
:mod:`agent_ls.server.app`; custom requests are defined in :mod:`agent_ls.server.protocol`.
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

import cattrs
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException, JsonRpcInvalidParams
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol, default_converter
from pygls.uris import to_fs_path

from agent_ls import __version__
from agent_ls.core.process import ExitWatchdog, kill_children
from agent_ls.core.tasks import BackgroundTasks
from agent_ls.runtime.conversations import BadChoice, ConversationError
from agent_ls.runtime.front import FrontEnd
from agent_ls.runtime.host import RuntimeHost
from agent_ls.runtime.lifecycle import HostLifecycle, HostUnavailable, LogListener
from agent_ls.server.client import EditorClient
from agent_ls.server.config_files import SettingsDiagnostics
from agent_ls.server.direct_tools import DirectTools
from agent_ls.server.editor_questions import LspQuestions, TrustPrompts
from agent_ls.server.host import EditorHostListener
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
from agent_ls.server.turns import EditorTurns
from agent_ls.server.workspaces import workspaces_payload

if TYPE_CHECKING:
    import cattrs

T = TypeVar("T")
P = TypeVar("P")
A = TypeVar("A")

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
        # The server's typed services, each given only the services it uses (none is given the server).
        self.client = EditorClient(self, self.folders)
        """The editor, as the server's parts talk to it (:class:`agent_ls.server.client.EditorClient`)."""
        self.runtime = RuntimeHost(self.folders)
        """Settings, trust and the MCP manager."""
        self.tasks = BackgroundTasks("language server", log, level=logging.ERROR)
        """Every background task of the server (cancelled together at shutdown)."""
        self.trust_prompts = TrustPrompts()
        """The server trust questions now open."""
        self.questions = LspQuestions(self.client, self.runtime, self.trust_prompts)
        """Every question of the runtime, asked of the editor (:mod:`.editor_questions`)."""
        self.runtime.questions = self.questions
        self.lifecycle = HostLifecycle(self.runtime, LogListener(), self.tasks)
        """The host's start, reloads and stop (:class:`agent_ls.runtime.lifecycle.HostLifecycle`)."""
        self.status = StatusNotices(self.runtime, self.client.notify,
                                    lambda text: self.client.show(lsp.MessageType.Warning, text),
                                    lambda: self.lifecycle.preview)
        """The MCP status shown to the editor: the preview while the host loads,
        ``mcp/statusChanged`` (:mod:`.status`)."""
        self.status.workspaces = functools.partial(workspaces_payload, self.runtime)
        self.settings_diagnostics = SettingsDiagnostics(self.client, self.runtime)
        """The settings files' problems, published on the files (:mod:`.config_files`)."""
        self.lifecycle.listener = EditorHostListener(self.client, self.status, self.settings_diagnostics)
        self.conversations = self.lifecycle.conversations(
            settings=self.runtime.agent_settings, front=editor_front(self.client, self.runtime),
            prepare=lambda: self.lifecycle.models.ready(self.lifecycle.listener.progress))
        """The chat's conversations (:class:`agent_ls.runtime.conversations.Conversations`), wired
        to the host as the terminal's and ACP's are; the model library loads with the editor's
        progress."""
        self.lifecycle.settled.append(self.conversations.warm_checkpoints)
        self.turns = EditorTurns(self.client, self.conversations, self.lifecycle, self.tasks)
        """Prompts from the editor as turns of the conversations (:mod:`.turns`)."""
        self.direct_tools = DirectTools(self.client, self.lifecycle, self.conversations)
        """MCP tool calls the editor asks for itself (:mod:`.direct_tools`)."""
        self.modules_at_initialize: dict[str, bool] = {}
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


def editor_front(client: EditorClient, runtime: RuntimeHost) -> Callable[[], FrontEnd]:
    """The editor's side of a chat session: its files, language intelligence and questions."""

    def front() -> FrontEnd:
        # lazy: the editor's file and intelligence adapters (sqlite3, difflib), ~40 ms at start-up
        from agent_ls.server.editor.editor_files import LspEditorFiles
        from agent_ls.server.editor.intelligence import lsp_intelligence

        return FrontEnd(questions=runtime.questions, editor=LspEditorFiles(client),
                        intelligence=lsp_intelligence(client))

    return front


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


def command(server: AgentLanguageServer, name: str, args: Callable[[Sequence[Any]], A]) -> Callable[
        [Callable[[AgentLanguageServer, A], Awaitable[Any]]], Callable[[AgentLanguageServer, A], Awaitable[Any]]]:
    """Register a typed handler of the ``workspace/executeCommand`` command ``name``, like
    :func:`request`: its arguments are structured by ``args`` (a bad shape is ``InvalidParams``),
    the handler returns a payload class instance (sent camelCase), errors are mapped by
    :func:`guarded`."""

    def register(fn: Callable[[AgentLanguageServer, A], Awaitable[Any]]) -> Callable[
            [AgentLanguageServer, A], Awaitable[Any]]:
        async def handler(ls: AgentLanguageServer, *raw: Any) -> Any:
            return dump(await fn(ls, args(raw)))

        # Not functools.wraps: pygls reads the handler's signature (through ``__wrapped__``) to
        # structure the arguments itself; this one takes them raw (``*raw``) and structures them
        # with ``args``.
        handler.__name__, handler.__qualname__, handler.__doc__ = fn.__name__, fn.__qualname__, fn.__doc__
        server.command(name)(guarded(handler))
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
