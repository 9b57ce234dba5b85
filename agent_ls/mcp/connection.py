"""One MCP server connection, owned by one task.

The mcp SDK's context managers (transport, session) must be entered and exited in the
same task, so each connection runs in its own owner task (``_run``). Inside it one
``anyio.CancelScope`` with a deadline covers spawn + handshake + first listing; once the
server is ready the deadline is lifted, so the handshake timeout never limits the
connection's lifetime. ``close()`` only sets an event; the owner task exits the context
managers itself, and the SDK's stdio shutdown terminates the server's process group.

A server that dies after it was ready is detected (EOF on its stderr pipe for stdio, a
``CONNECTION_CLOSED``/transport error on a call for HTTP), its calls fail fast with a clear
error, and it is restarted with exponential backoff, a bounded number of times.
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import errno as errno_mod
import logging
import math
import os
import shutil
import signal
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import anyio
import attrs
import mcp_types as types
from mcp import Client
from mcp.client.caching import CacheConfig, CacheMode
from mcp.client.session import ClientRequestContext
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client
from mcp.shared.dispatcher import ProgressFnT
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import FileUrl, ValidationError

from agent_ls.config.entries import ServerConfig
from agent_ls.core.redact import redact_live
from agent_ls.mcp.catalogue import CatalogueStore, Listing, catalogue_key
from agent_ls.mcp.result_kind import results_read_as_complete
from agent_ls.mcp.skills import SKILLS_CLIENT_EXTENSION
from agent_ls.mcp.status import Phase, ServerError, State

if TYPE_CHECKING:
    from agent_ls.mcp.oauth import OAuthSession

log = logging.getLogger(__name__)

CLIENT_INFO = types.Implementation(name="agent-ls", version="0.1.0")
STDERR_TAIL_LINES = 200
STDERR_LINE_MAX = 2000
CONNECTION_CLOSED = -32000
REQUEST_TIMEOUT = -32001


class ServerUnavailable(RuntimeError):
    """A call was made to a server that is not connected."""


# Host callbacks (the editor plugs in real ones) -------------------------------------------

class ElicitationHandler(Protocol):
    async def __call__(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult: ...


class SamplingHandler(Protocol):
    async def __call__(
        self, server: str, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData: ...


@attrs.define
class HostCallbacks:
    """What a connection needs from its host; handlers may be attached or replaced at any time."""

    roots: Callable[[], Sequence[Path]] = lambda: ()
    elicitation: ElicitationHandler | None = None
    sampling: SamplingHandler | None = None
    on_change: Callable[[str], None] = lambda _name: None
    """Called with the server name whenever its state or lists change."""
    on_dirty: Callable[[str], None] = lambda _name: None
    """Called with the server name on any list_changed notification."""
    eras: EraMemory | None = None
    """Where the protocol era each entry negotiated is remembered (``protocol: auto``)."""
    catalogue: CatalogueStore | None = None
    """Where each entry's last catalogue and response cache are kept (None: memory only)."""


class EraMemory(Protocol):
    """The protocol era an entry negotiated, by entry key (:class:`agent_ls.config.state.HostState`)."""

    def era(self, key: str) -> dict[str, Any] | None: ...

    def set_era(self, key: str, name: str, mode: str, discover: dict[str, Any] | None) -> None: ...

    def forget_era(self, key: str) -> None: ...


def fill_schema_defaults(content: dict[str, Any] | None, schema: dict[str, Any] | None) -> dict[str, Any]:
    """Accepted elicitation content with the requested schema's defaults for missing fields.

    The SDK does not do this; the spec (SEP-1034) wants the defaults applied.
    """
    out = dict(content or {})
    props = (schema or {}).get("properties") or {}
    for key, prop in props.items():
        if key not in out and isinstance(prop, dict) and "default" in prop:
            out[key] = prop["default"]
    return out


class StderrTail:
    """A bounded tail of a process's stderr, fed from a pipe without ever blocking the child."""

    def __init__(self, max_lines: int = STDERR_TAIL_LINES) -> None:
        self.lines: deque[str] = deque(maxlen=max_lines)
        self.total_lines = 0
        self._partial = ""
        self._read_fd: int | None = None
        self._write_fd: int | None = None
        self.eof = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    def open(self) -> int:
        """Create the pipe; returns the write end for the child."""
        r, w = os.pipe()
        os.set_blocking(r, False)
        self._read_fd, self._write_fd = r, w
        self.eof = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(r, self._on_readable)
        return w

    def close_write_end(self) -> None:
        """After the spawn: the child holds its own copy, so EOF now means the child is gone."""
        if self._write_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._write_fd)
            self._write_fd = None

    def _on_readable(self) -> None:
        assert self._read_fd is not None
        try:
            data = os.read(self._read_fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._finish()
            return
        text = self._partial + data.decode("utf-8", errors="replace")
        parts = text.split("\n")
        self._partial = parts.pop()
        if len(self._partial) > STDERR_LINE_MAX:
            parts.append(self._partial)
            self._partial = ""
        for line in parts:
            self._add(line)

    def _add(self, line: str) -> None:
        line = line.rstrip("\r")
        if len(line) > STDERR_LINE_MAX:
            line = line[:STDERR_LINE_MAX] + f" [... {len(line) - STDERR_LINE_MAX} characters cut]"
        self.lines.append(line)
        self.total_lines += 1

    def _finish(self) -> None:
        if self._partial:
            self._add(self._partial)
            self._partial = ""
        if self._read_fd is not None and self._loop is not None:
            self._loop.remove_reader(self._read_fd)
            with contextlib.suppress(OSError):
                os.close(self._read_fd)
            self._read_fd = None
        self.eof.set()

    def close(self) -> None:
        self.close_write_end()
        if self._read_fd is not None:
            # Drain what is already there, then stop.
            with contextlib.suppress(Exception):
                self._on_readable()
            if self._read_fd is not None:
                self._finish()

    def tail(self, n: int = 40) -> list[str]:
        return list(self.lines)[-n:]


@attrs.define
class RestartPolicy:
    max_restarts: int = 5
    """Restarts in a row before the server is left failed."""
    base_delay: float = 0.5
    max_delay: float = 30.0
    stable_after: float = 60.0
    """A connection that stayed up this long resets the restart count."""

    def delay(self, attempt: int) -> float:
        return min(self.max_delay, self.base_delay * (2 ** max(0, attempt - 1)))


def resolve_command(config: ServerConfig) -> tuple[str | None, str]:
    """PATH lookup of a stdio command as the child will see it; returns (path, PATH used)."""
    path_var = config.env.get("PATH") or os.environ.get("PATH", os.defpath)
    command = config.command or ""
    if os.sep in command:
        cwd = config.cwd or os.getcwd()
        full = command if os.path.isabs(command) else os.path.join(cwd, command)
        return (full if os.access(full, os.X_OK) and os.path.isfile(full) else None), path_var
    return shutil.which(command, path=path_var), path_var


def child_environment(config: ServerConfig) -> dict[str, str]:
    return get_default_environment() | dict(config.env)



_LEFT_OUT: contextvars.ContextVar[list[str] | None] = contextvars.ContextVar("agent_ls_left_out", default=None)


class _LeftOutTools(logging.Filter):
    """The mcp SDK drops a 2026-07-28 tool whose ``x-mcp-header`` declaration is invalid and only
    logs why; this collects those lines for the listing under way in the current task."""

    def filter(self, record: logging.LogRecord) -> bool:
        sink = _LEFT_OUT.get()
        if sink is not None and str(record.msg).startswith("dropping tool"):
            sink.append(record.getMessage())
        return True


logging.getLogger("client").addFilter(_LeftOutTools())  # the logger mcp.client.session logs to


def _unwrap(exc: BaseException) -> BaseException:
    while isinstance(exc, BaseExceptionGroup) and exc.exceptions:
        exc = exc.exceptions[0]
    return exc


class ServerConnection:
    """A single configured MCP server and its owner task."""

    def __init__(
        self,
        config: ServerConfig,
        callbacks: HostCallbacks,
        *,
        restart_policy: RestartPolicy | None = None,
        auth: OAuthSession | None = None,
    ) -> None:
        self.config = config
        self.callbacks = callbacks
        self.auth = auth
        """OAuth state for an HTTP server that uses it (shared across reconnects)."""
        self.restart_policy = restart_policy or RestartPolicy()
        self._state_changed = asyncio.Event()
        self._state = State.STOPPED
        self.error: ServerError | None = None
        self.listing = Listing()
        self.instructions: str | None = None
        self.server_info: types.Implementation | None = None
        self.protocol_version: str | None = None
        self.capabilities: types.ServerCapabilities | None = None
        self.restarts = 0
        self.connected_at: float | None = None
        self.stderr = StderrTail()
        self.dirty = False
        self.list_version = 0
        self.from_catalogue = False
        """The listing is the one kept from the server's last connection (it is still starting)."""
        self._client: Client | None = None
        self._process: Any = None
        self._task: asyncio.Task[None] | None = None
        self._ready = asyncio.Event()
        self._close = asyncio.Event()
        self._lost = asyncio.Event()
        self._closing = False
        self._deadline_scope: anyio.CancelScope | None = None
        self._got_ready = False
        self._probe_again = False

    # public ---------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.config.name

    def start(self) -> None:
        """Start the owner task; returns at once."""
        if self._task is not None and not self._task.done():
            return
        self._closing = False
        self._close = asyncio.Event()
        self._ready = asyncio.Event()
        self._load_catalogue()
        self._set_state(State.STARTING)
        self._task = asyncio.create_task(self._run(), name=f"mcp:{self.name}")

    @property
    def catalogue_key(self) -> str:
        cfg = self.config
        return catalogue_key(cfg.source.workspace_folder, cfg.name, cfg.fingerprint())

    def _load_catalogue(self) -> None:
        """Serve the catalogue kept from this entry's last connection until it connects."""
        store = self.callbacks.catalogue
        if store is None or self.connected:
            return
        kept = store.load(self.catalogue_key)
        if kept is None or kept.empty:
            return
        self.listing = kept
        self.from_catalogue = True
        self.list_version += 1

    def _keep_catalogue(self, listing: Listing) -> None:
        store = self.callbacks.catalogue
        if store is None or listing.errors:
            return
        store.save(self.catalogue_key, listing)

    def _cache_config(self) -> CacheConfig:
        """The SDK's response cache (``ttlMs`` / ``cacheScope``): kept with the catalogue, so a
        list the server declared fresh is not asked for again within its TTL after a restart.
        An OAuth server's cache stays in memory (the signed-in principal may change)."""
        store = self.callbacks.catalogue
        if store is None or self.config.oauth is not None:
            return CacheConfig()
        key = self.catalogue_key
        return CacheConfig(store=store.responses(key), partition=key, target_id=key)

    @property
    def serving(self) -> bool:
        """Its tools are offered: connected, or starting with the catalogue of its last connection."""
        return self.connected or (self.from_catalogue and self.state is State.STARTING)

    @property
    def state(self) -> State:
        return self._state

    @state.setter
    def state(self, value: State) -> None:
        self._state = value
        changed, self._state_changed = self._state_changed, asyncio.Event()
        changed.set()  # wakes whoever waits for the next change

    @property
    def settling(self) -> bool:
        """Starting (first start, or a deliberate restart: a settings change, a trust decision,
        restart): it will be connected or failed shortly. A server that crashed and waits for its
        automatic restart is not settling: calls to it fail fast."""
        return self.state is State.STARTING

    async def wait_settled(self, timeout: float) -> bool:
        """Wait (at most ``timeout`` s) while the server is starting; True when it is connected
        afterwards."""
        loop = asyncio.get_running_loop()
        end = loop.time() + timeout
        while self.settling:
            remaining = end - loop.time()
            if remaining <= 0:
                break
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._state_changed.wait(), remaining)
        return self.connected

    async def wait_ready(self, timeout: float | None = None) -> bool:
        """Wait until the first attempt has finished (connected or failed)."""
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except TimeoutError:
            return False
        return True

    @property
    def pid(self) -> int | None:
        proc = self._process
        return getattr(proc, "pid", None) if proc is not None and self.connected else None

    def exit_code(self) -> int | None:
        """The stdio server's own exit status, when it exited by itself (not killed by us)."""
        code = getattr(self._process, "returncode", None) if self._process is not None else None
        if code is None or code in (-signal.SIGTERM, -signal.SIGKILL):
            return None
        return int(code)

    @property
    def connected(self) -> bool:
        return self.state in (State.CONNECTED, State.LISTING_FAILED) and self._client is not None

    async def close(self) -> None:
        """Stop the server; the owner task exits the SDK context managers itself."""
        self._closing = True
        self._close.set()
        task = self._task
        if task is not None and not task.done():
            if not self._ready.is_set():
                # Still spawning or in the handshake: nothing waits on the close event yet, so
                # cancel the owner task (the SDK context managers unwind inside it).
                task.cancel()
            try:
                await asyncio.wait_for(asyncio.shield(task), timeout=10)
            except TimeoutError:
                task.cancel()
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise
            if not task.done():
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(task, timeout=5)
        self._client = None
        self.stderr.close()
        if self.state not in (State.DISABLED, State.AWAITING_TRUST, State.UNTRUSTED, State.NEEDS_SIGN_IN):
            self._set_state(State.STOPPED)

    def redact(self, text: str) -> str:
        """Mask configured secrets and every token the host has seen."""
        return redact_live(text, self.config.secrets)

    def auth_problem(self) -> str | None:
        """Why this server's requests are refused for lack of sign-in, if that is the case."""
        return self.auth.needs_sign_in_reason() if self.auth is not None else None

    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, timeout: float | None = None,
        progress: ProgressFnT | None = None,
    ) -> types.CallToolResult:
        if self.settling:  # a tool of a server that is (re)connecting waits for it, bounded
            await self.wait_settled(self.config.connect_timeout)
        client = self._require()
        try:
            return await client.call_tool(
                name, arguments, read_timeout_seconds=timeout or self.config.call_timeout,
                progress_callback=progress,
            )
        except MCPError as e:
            self._maybe_lost(e)
            raise
        except Exception as e:
            self._maybe_lost(e)
            raise

    async def list_resources(self) -> list[types.Resource]:
        return await self._paged(lambda c, cur: c.list_resources(cursor=cur), "resources")

    async def list_resource_templates(self) -> list[types.ResourceTemplate]:
        return await self._paged(lambda c, cur: c.list_resource_templates(cursor=cur), "resource_templates")

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        if self.settling:  # offered from the kept catalogue while it starts: wait for it, bounded
            await self.wait_settled(self.config.connect_timeout)
        client = self._require()
        try:
            return await client.read_resource(uri)
        except Exception as e:
            self._maybe_lost(e)
            raise

    async def send_request(self, request: Any, result_type: Any) -> Any:
        """A request the SDK has no method for (an extension's, e.g. ``skills/list``), typed
        by ``result_type``, on the live session."""
        if self.settling:
            await self.wait_settled(self.config.connect_timeout)
        client = self._require()
        try:
            return await client.session.send_request(request, result_type)
        except Exception as e:
            self._maybe_lost(e)
            raise

    async def list_prompts(self) -> list[types.Prompt]:
        return await self._paged(lambda c, cur: c.list_prompts(cursor=cur), "prompts")

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> types.GetPromptResult:
        if self.settling:  # offered from the kept catalogue while it starts: wait for it, bounded
            await self.wait_settled(self.config.connect_timeout)
        client = self._require()
        try:
            return await client.get_prompt(name, arguments or {})
        except Exception as e:
            self._maybe_lost(e)
            raise

    async def send_roots_changed(self) -> None:
        client = self._client
        if client is None or not self.connected:
            return
        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return  # 2026-07-28 has no roots/list_changed: a server asks for the roots each time it needs them
        try:
            await client.send_roots_list_changed()
        except Exception as e:  # a dead server: noted, never raised to the caller
            self._maybe_lost(e)

    async def refresh(self) -> bool:
        """Re-list tools/prompts/resources; returns True when anything changed."""
        client = self._client
        if client is None or not self.connected:
            self.dirty = False
            return False
        self.dirty = False
        listing = await self._list_all(client, "refresh")  # a change was announced: ask the server
        changed = _listing_key(listing) != _listing_key(self.listing)
        self.listing = listing
        if changed:
            self._keep_catalogue(listing)
        if listing.errors:
            self._set_state(State.LISTING_FAILED, ServerError(Phase.LISTING, self.redact("; ".join(listing.errors))))
        elif self.state is State.LISTING_FAILED:
            self.error = self._listing_note(listing)
            self._set_state(State.CONNECTED)
        else:
            self.error = self._listing_note(listing)
        if changed:
            self.list_version += 1
            self.callbacks.on_change(self.name)
        return changed

    # internals ------------------------------------------------------------------------
    def _require(self) -> Client:
        client = self._client
        if client is None or not self.connected:
            reason = f" ({self.error})" if self.error else ""
            raise ServerUnavailable(f"MCP server '{self.name}' is not connected: {self.state.value}{reason}")
        return client

    def _maybe_lost(self, exc: BaseException) -> None:
        exc = _unwrap(exc)
        lost = (isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED) or isinstance(
            exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError, OSError)
        ) or type(exc).__name__ in ("ConnectError", "RemoteProtocolError", "ReadError")
        if lost and not self._closing and not self._lost.is_set():
            self._lost.set()
            if self.state in (State.CONNECTED, State.LISTING_FAILED):
                self._set_state(State.RESTARTING)  # fail the next calls fast, before the owner task reacts

    async def _paged(self, fetch: Callable[[Client, str | None], Awaitable[Any]], attr: str) -> list[Any]:
        client = self._require()
        out: list[Any] = []
        cursor: str | None = None
        for _ in range(1000):
            try:
                page = await fetch(client, cursor)
            except Exception as e:
                self._maybe_lost(e)
                raise
            out.extend(getattr(page, attr))
            cursor = page.next_cursor
            if not cursor:
                break
        return out

    async def _list_all(self, client: Client, cache_mode: CacheMode = "use") -> Listing:
        caps = client.server_capabilities
        listing = Listing()
        # "protocol": "2026-07-28" adopts the modern protocol without server/discover, so the
        # server's capabilities are unknown (all empty): probe every list, and read "method not
        # found" as "this server has none" rather than as a failure.
        probe = self.config.protocol == "2026-07-28" and caps.tools is None and caps.prompts is None \
            and caps.resources is None

        async def grab(kind: str, fetch: Callable[[str | None], Awaitable[Any]], attr: str) -> list[Any]:
            out: list[Any] = []
            cursor: str | None = None
            try:
                for _ in range(1000):
                    page = await fetch(cursor)
                    out.extend(getattr(page, attr))
                    cursor = page.next_cursor
                    if not cursor:
                        break
            except Exception as e:
                inner = _unwrap(e)
                if probe and isinstance(inner, MCPError) and inner.error.code == types.METHOD_NOT_FOUND:
                    return out
                listing.errors.append(f"{kind}/list failed: {type(inner).__name__}: {inner}")
                self._maybe_lost(inner)
            return out

        left_out: list[str] = []
        token = _LEFT_OUT.set(left_out)
        try:
            if caps.tools is not None or probe:
                listing.tools = await grab("tools", lambda c: client.list_tools(cursor=c, cache_mode=cache_mode),
                                           "tools")
        finally:
            _LEFT_OUT.reset(token)
        listing.notes = [f"{line} (the server's other tools work)" for line in left_out]
        if caps.prompts is not None or probe:
            listing.prompts = await grab("prompts", lambda c: client.list_prompts(cursor=c, cache_mode=cache_mode),
                                   "prompts")
        if caps.resources is not None or probe:
            listing.resources = await grab("resources", lambda c: client.list_resources(cursor=c, cache_mode=cache_mode),
                                     "resources")
            listing.resource_templates = await grab(
                "resources/templates", lambda c: client.list_resource_templates(cursor=c, cache_mode=cache_mode),
                "resource_templates"
            )
        listing.tools.sort(key=lambda t: t.name)
        listing.prompts.sort(key=lambda p: p.name)
        listing.resources.sort(key=lambda r: str(r.uri))
        return listing

    def _listing_note(self, listing: Listing) -> ServerError | None:
        """What a connected server's status says about tools left out of its listing."""
        return ServerError(Phase.LISTING, self.redact("; ".join(listing.notes))) if listing.notes else None

    def _set_state(self, state: State, error: ServerError | None = None) -> None:
        self.state = state
        if error is not None:
            self.error = error
        self.callbacks.on_change(self.name)

    def _mark_ready(self) -> None:
        self._ready.set()

    # callbacks given to the SDK -------------------------------------------------------
    async def _list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        roots = [types.Root(uri=FileUrl(p.resolve().as_uri()), name=p.name or str(p)) for p in self.callbacks.roots()]
        return types.ListRootsResult(roots=roots)

    async def _elicit(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        handler = self.callbacks.elicitation
        if handler is None:
            log.info("MCP server %s asked for input but no elicitation handler is attached: declined", self.name)
            return types.ElicitResult(action="decline")
        result = await handler(self.name, params)
        if result.action == "accept" and isinstance(params, types.ElicitRequestFormParams):
            result = types.ElicitResult(
                action="accept", content=fill_schema_defaults(result.content, params.requested_schema)
            )
        return result

    async def _sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        handler = self.callbacks.sampling
        if handler is None:
            return types.ErrorData(
                code=-1, message="agent-ls: sampling is not available (no sampling handler is attached)"
            )
        return await handler(self.name, params)

    async def _on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            log.debug("MCP server %s: transport message error: %s", self.name, message)
            return
        if isinstance(
            message,
            (types.ToolListChangedNotification, types.PromptListChangedNotification,
             types.ResourceListChangedNotification),
        ):
            self._mark_dirty()

    async def _on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.stderr._add(f"[log {params.level}] {params.data}")

    # the owner task ---------------------------------------------------------------------
    async def _run(self) -> None:
        attempt = 0
        while not self._closing:
            started = time.monotonic()
            was_ready = await self._connect_once()
            if not was_ready and self._probe_again and not self._closing:
                self._probe_again = False  # a remembered era no longer holds: negotiate afresh, once
                continue
            self._mark_ready()
            if self._closing:
                break
            if not was_ready:
                break  # spawn/handshake failures are not retried automatically: they would fail again
            if time.monotonic() - started > self.restart_policy.stable_after:
                attempt = 0
            attempt += 1
            if attempt > self.restart_policy.max_restarts:
                msg = f"the server died {attempt - 1} times in a row; not restarting (use restart to try again)"
                prev = f" Last: {self.error.message}" if self.error else ""
                self._set_state(State.FAILED, ServerError(Phase.RUNNING, msg + prev))
                break
            delay = self.restart_policy.delay(attempt)
            self._set_state(State.RESTARTING)
            log.warning("MCP server %s died; restart %d in %.1fs", self.name, attempt, delay)
            self.restarts += 1
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self._close.wait(), delay)

    @contextlib.asynccontextmanager
    async def _stdio_transport(self) -> AsyncIterator[Any]:
        cfg = self.config
        resolved, path_var = resolve_command(cfg)
        if resolved is None:
            raise _SpawnError(
                f"command {cfg.command!r} not found on PATH (PATH={path_var})"
                if os.sep not in (cfg.command or "")
                else f"command {cfg.command!r} does not exist or is not executable",
                errno_mod.ENOENT,
            )
        if cfg.cwd is not None and not os.path.isdir(cfg.cwd):
            raise _SpawnError(f"working directory {cfg.cwd!r} does not exist", errno_mod.ENOENT)
        params = StdioServerParameters(command=resolved, args=list(cfg.args), env=dict(cfg.env), cwd=cfg.cwd)
        self.stderr = StderrTail()
        wfd = self.stderr.open()
        errfile = os.fdopen(wfd, "w", closefd=False)
        try:
            try:
                cm = stdio_client(params, errlog=errfile)
                streams = await cm.__aenter__()
            except OSError as e:
                raise _SpawnError(f"cannot start {resolved!r}: {e.strerror or e}", e.errno) from e
            self.stderr.close_write_end()
            self._process = _process_of(cm)
            try:
                yield streams
            except BaseException as e:
                if not await cm.__aexit__(type(e), e, e.__traceback__):
                    raise
            else:
                await cm.__aexit__(None, None, None)
        finally:
            errfile.close()
            self.stderr.close_write_end()

    @contextlib.asynccontextmanager
    async def _http_transport(self) -> AsyncIterator[Any]:
        import httpx2
        from mcp.client.streamable_http import streamable_http_client
        from mcp.shared._httpx_utils import create_mcp_http_client

        cfg = self.config
        assert cfg.url is not None
        auth = self._httpx_auth()
        if cfg.transport == "sse":
            from mcp.client.sse import sse_client

            async with sse_client(cfg.url, headers=dict(cfg.headers), timeout=cfg.connect_timeout,
                                  auth=auth) as streams:
                yield streams
            return
        http = create_mcp_http_client(
            headers=dict(cfg.headers) or None,
            timeout=httpx2.Timeout(cfg.connect_timeout, read=max(cfg.call_timeout, 300.0)),
            auth=auth,
        )
        async with http, streamable_http_client(cfg.url, http_client=http) as streams:
            yield streams

    def _httpx_auth(self) -> Any:
        if self.auth is None:
            return None
        from agent_ls.mcp.oauth import AuthHooks

        return self.auth.httpx_auth(AuthHooks(pause_deadline=self._person_wait, ready=lambda: self._got_ready))

    @contextlib.contextmanager
    def _person_wait(self) -> Iterator[None]:
        """Stop the handshake deadline while a person signs in (the SDK stops its request clock
        the same way); the rest of the handshake gets the time that was left."""
        scope = self._deadline_scope
        if scope is None or self._got_ready or math.isinf(scope.deadline):
            yield
            return
        remaining = max(1.0, scope.deadline - anyio.current_time())
        scope.deadline = math.inf
        try:
            yield
        finally:
            if self._deadline_scope is scope and not self._got_ready:
                scope.deadline = anyio.current_time() + remaining

    def _era_for_attempt(self) -> tuple[str, types.DiscoverResult | None, bool]:
        """``(mode, prior discover result, recalled)``: with ``protocol: auto`` an era this entry
        negotiated before is used directly (no ``server/discover`` probe for a legacy server, no
        round trip for a modern one); otherwise the configured mode."""
        cfg = self.config
        eras = self.callbacks.eras
        if cfg.protocol != "auto" or eras is None:
            return cfg.protocol, None, False
        record = eras.era(cfg.fingerprint())
        mode = record.get("mode") if record else None
        if mode == "legacy":
            return "legacy", None, True
        if mode in MODERN_PROTOCOL_VERSIONS and record is not None and isinstance(record.get("discover"), dict):
            try:
                return str(mode), types.DiscoverResult.model_validate(record["discover"]), True
            except ValidationError:
                pass
        return "auto", None, False

    def _remember_era(self, client: Client) -> None:
        cfg = self.config
        eras = self.callbacks.eras
        if cfg.protocol != "auto" or eras is None:
            return
        version = client.protocol_version
        discover = client.session.discover_result if version in MODERN_PROTOCOL_VERSIONS else None
        mode = version if discover is not None else "legacy"
        dumped = discover.model_dump(mode="json", by_alias=True, exclude_none=True) if discover is not None else None
        key = cfg.fingerprint()
        known = eras.era(key)
        if known is None or known.get("mode") != mode or known.get("discover") != dumped:
            try:
                eras.set_era(key, cfg.name, mode, dumped)
            except Exception as e:  # remembering is an optimisation: never a reason to fail
                log.info("MCP server %s: could not remember its protocol era: %s", cfg.name, e)

    async def _connect_once(self) -> bool:
        """One connection attempt and, if it succeeds, its whole life. Returns whether it got ready."""
        cfg = self.config
        mode, prior_discover, recalled = self._era_for_attempt()
        self._lost = asyncio.Event()
        phase = Phase.SPAWN if cfg.transport == "stdio" else Phase.HANDSHAKE
        got_ready = False
        transport = results_read_as_complete(
            self._stdio_transport() if cfg.transport == "stdio" else self._http_transport())
        client = Client(
            transport,
            mode=mode,  # type: ignore[arg-type]
            prior_discover=prior_discover,
            client_info=CLIENT_INFO,
            list_roots_callback=self._list_roots,
            elicitation_callback=self._elicit,
            sampling_callback=self._sample,
            message_handler=self._on_message,
            logging_callback=self._on_log,
            log_level="info",  # 2026-07-28 servers send log messages only when asked in each request
            # Tool calls pass callTimeout themselves; the handshake is bounded by connectTimeout,
            # so a short callTimeout must not cut off a slow server's initialize.
            read_timeout_seconds=max(cfg.call_timeout, cfg.connect_timeout),
            cache=self._cache_config(),
            extensions=[SKILLS_CLIENT_EXTENSION],  # the host implements the skills extension (skills.py)
        )
        deadline_scope = anyio.CancelScope(deadline=anyio.current_time() + cfg.connect_timeout)
        self._deadline_scope = deadline_scope
        self._got_ready = False
        if self.auth is not None:
            self.auth.begin_attempt()
        try:
            with deadline_scope:
                phase = Phase.HANDSHAKE if cfg.transport != "stdio" else Phase.SPAWN
                async with client:
                    phase = Phase.LISTING
                    self.instructions = client.instructions
                    self.server_info = client.server_info
                    self.protocol_version = client.protocol_version
                    self.capabilities = client.server_capabilities
                    self._remember_era(client)
                    self._client = client
                    self.dirty = False
                    listing = await self._list_all(client)
                    if self.auth is not None and self.auth.challenge_pending:
                        raise _AuthRequired()
                    if recalled and listing.errors and not (listing.tools or listing.prompts or listing.resources):
                        # nothing listed in the era it negotiated before: the server changed era
                        raise MCPError(types.INVALID_REQUEST, "; ".join(listing.errors))
                    deadline_scope.deadline = math.inf
                    phase = Phase.RUNNING
                    if not self.from_catalogue or _listing_key(listing) != _listing_key(self.listing):
                        self.list_version += 1  # a kept catalogue that still holds is not rebuilt
                        self._keep_catalogue(listing)
                    self.listing = listing
                    self.from_catalogue = False
                    self.connected_at = time.time()
                    got_ready = True
                    self._got_ready = True
                    if listing.errors:
                        self._set_state(
                            State.LISTING_FAILED, ServerError(Phase.LISTING, self.redact("; ".join(listing.errors)))
                        )
                    else:
                        self.error = self._listing_note(listing)
                        self._set_state(State.CONNECTED)
                    self._mark_ready()
                    async with anyio.create_task_group() as listeners:
                        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                            listeners.start_soon(self._listen_for_changes, client)
                        await self._wait_close_or_lost()
                        listeners.cancel_scope.cancel()
                    self._client = None
                    if not self._closing:
                        self._set_state(State.RESTARTING)
                        raise _Lost()
        except _Lost:
            self._client = None
            await self._record_death()
            return True
        except BaseException as e:  # noqa: BLE001 - everything becomes a recorded failure
            self._client = None
            if isinstance(e, asyncio.CancelledError) and not deadline_scope.cancel_called:
                raise
            if self._closing:
                return got_ready
            if got_ready:
                await self._record_death(e)
                return True
            if recalled and self.callbacks.eras is not None:
                log.info("MCP server %s: the %s protocol it negotiated before failed (%s); negotiating again",
                         cfg.name, mode, type(_unwrap(e)).__name__)
                self.callbacks.eras.forget_era(cfg.fingerprint())
                self._probe_again = True
                return False
            if self.auth is not None and self.auth.challenge_pending:
                reason = self.auth.needs_sign_in_reason() or "sign-in required"
                self._set_state(State.NEEDS_SIGN_IN, ServerError(
                    Phase.AUTH, self.redact(f"{reason}: sign in to connect (no browser opens by itself)"),
                    http_status=None))
                return False
            self._set_state(State.FAILED, self._describe_failure(e, phase, deadline_scope.cancelled_caught))
            return False
        self._client = None
        if deadline_scope.cancelled_caught and not got_ready and not self._closing:
            # The deadline fired and the scope swallowed the cancellation.
            self._set_state(State.FAILED, self._describe_failure(TimeoutError(), phase, True))
        return got_ready

    async def _listen_for_changes(self, client: Client) -> None:
        """2026-07-28 sessions: list changes arrive on a ``subscriptions/listen`` stream (there are
        no list_changed notifications); each one marks the server dirty, like a legacy
        notification. A dropped stream is opened again (and the lists refetched)."""
        from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost

        caps = client.server_capabilities
        tools = bool(caps.tools and caps.tools.list_changed)
        prompts = bool(caps.prompts and caps.prompts.list_changed)
        resources = bool(caps.resources and caps.resources.list_changed)
        if not (tools or prompts or resources):
            return
        delay = 0.5
        while not self._closing:
            try:
                async with client.listen(tools_list_changed=tools, prompts_list_changed=prompts,
                                         resources_list_changed=resources) as subscription:
                    delay = 0.5
                    async for _event in subscription:
                        self._mark_dirty()
                return  # the server closed the stream gracefully
            except (SubscriptionLost, TimeoutError) as e:
                log.info("MCP server %s: the change subscription dropped (%s); listening again", self.name, e)
                self._mark_dirty()  # no replay: refetch what may have changed meanwhile
            except (ListenNotSupportedError, MCPError) as e:
                log.info("MCP server %s: no change subscription (%s); lists refresh on restart only",
                         self.name, self.redact(str(e)))
                return
            await anyio.sleep(delay)
            delay = min(delay * 2, 30.0)

    def _mark_dirty(self) -> None:
        self.dirty = True
        self.callbacks.on_dirty(self.name)

    async def _wait_close_or_lost(self) -> None:
        waits = [asyncio.ensure_future(self._close.wait()), asyncio.ensure_future(self._lost.wait())]
        if self.config.transport == "stdio":
            waits.append(asyncio.ensure_future(self.stderr.eof.wait()))
        try:
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for w in waits:
                w.cancel()

    async def _record_death(self, exc: BaseException | None = None) -> None:
        detail = ""
        if exc is not None:
            inner = _unwrap(exc)
            detail = f": {type(inner).__name__}: {inner}"
        tail = self.stderr.tail(5)
        msg = f"the server stopped responding (connection lost{detail})"
        code: int | None = None
        if self.config.transport == "stdio":
            await asyncio.sleep(0)  # let the SDK's shutdown reap the process first
            code = self.exit_code()
            how = f" with exit code {code}" if code is not None and code >= 0 else (
                f" on signal {-code}" if code is not None else "")
            msg = f"the server process exited{how}{detail}"
        if tail:
            msg += " | stderr: " + " / ".join(tail)
        self.error = ServerError(Phase.RUNNING, self.redact(msg), exit_code=code)
        self._set_state(State.RESTARTING, self.error)

    def _describe_failure(self, exc: BaseException, phase: Phase, timed_out: bool) -> ServerError:
        cfg = self.config
        inner = _unwrap(exc)
        tail = self.stderr.tail(8)
        tail_txt = (" | stderr: " + " / ".join(tail)) if tail else ""
        if isinstance(inner, _SpawnError):
            return ServerError(Phase.SPAWN, self.redact(str(inner) + tail_txt), errno=inner.errno)
        from agent_ls.mcp.oauth import describe_auth_error, is_auth_error

        if is_auth_error(inner):
            return ServerError(Phase.AUTH, self.redact(f"sign-in failed: {describe_auth_error(inner)}"))
        if timed_out:
            what = "the handshake" if phase in (Phase.SPAWN, Phase.HANDSHAKE) else "the first listing"
            return ServerError(
                Phase.HANDSHAKE if phase is not Phase.LISTING else Phase.LISTING,
                self.redact(f"{what} did not finish within {cfg.connect_timeout:g}s (connectTimeout){tail_txt}"),
            )
        status = _http_status(inner)
        if status is not None:
            hint = " (authentication required: check the headers or sign in)" if status in (401, 403) else ""
            return ServerError(
                Phase.HANDSHAKE, self.redact(f"HTTP {status} from {cfg.url}{hint}"), http_status=status
            )
        if isinstance(inner, MCPError) and inner.error.code == CONNECTION_CLOSED and cfg.transport == "stdio":
            code = self.exit_code()
            how = f" with exit code {code}" if code is not None and code >= 0 else (
                f" on signal {-code}" if code is not None else "")
            return ServerError(
                Phase.HANDSHAKE, self.redact(f"the server process exited during the handshake{how}{tail_txt}"),
                exit_code=code,
            )
        if type(inner).__name__ == "ConnectError":
            return ServerError(Phase.HANDSHAKE, self.redact(f"cannot connect to {cfg.url}: {inner}"))
        if isinstance(inner, MCPError) and inner.error.code == types.UNSUPPORTED_PROTOCOL_VERSION \
                and phase in (Phase.SPAWN, Phase.HANDSHAKE):
            # -32022 ends the handshake only when no era worked: a modern-only server whose
            # server/discover answer was unusable (malformed, or naming no version we speak)
            from mcp_types.version import HANDSHAKE_PROTOCOL_VERSIONS

            data = inner.error.data
            theirs = data.get("supported") if isinstance(data, dict) else None
            says = f"the server says: {inner.error.message}" + (
                f"; it supports {', '.join(map(str, theirs))}" if isinstance(theirs, list) and theirs else "")
            ours = ", ".join([*MODERN_PROTOCOL_VERSIONS, *reversed(HANDSHAKE_PROTOCOL_VERSIONS)])
            why = (
                "the server refuses the initialize handshake (a 2026-era server), and its "
                "server/discover answer was unusable: malformed, or naming no protocol version agent-ls "
                f"speaks ({ours})" if cfg.protocol != "legacy" else
                'the server refuses the initialize handshake (it speaks only a newer protocol era); '
                'try "protocol": "auto"'
            )
            return ServerError(Phase.HANDSHAKE, self.redact(f"no protocol version in common: {why} ({says}){tail_txt}"))
        ph = Phase.HANDSHAKE if phase is Phase.SPAWN else phase
        return ServerError(ph, self.redact(f"{type(inner).__name__}: {inner}{tail_txt}"))


def _process_of(cm: Any) -> Any:
    """The server process held by the SDK's stdio_client generator (read-only, for its pid and
    exit status: the SDK does not expose it). None if the SDK's layout ever changes."""
    frame = getattr(getattr(cm, "gen", None), "ag_frame", None)
    proc = frame.f_locals.get("process") if frame is not None else None
    return proc if hasattr(proc, "returncode") else None


class _SpawnError(Exception):
    def __init__(self, message: str, errno: int | None) -> None:
        super().__init__(message)
        self.errno = errno


class _Lost(Exception):
    pass


class _AuthRequired(Exception):
    """The server refused a request for lack of sign-in during the handshake or first listing."""


def _http_status(exc: BaseException) -> int | None:
    resp = getattr(exc, "response", None)
    code = getattr(resp, "status_code", None)
    if isinstance(code, int):
        return code
    return None


def _listing_key(listing: Listing) -> tuple[Any, ...]:
    def dump(items: Sequence[Any]) -> str:
        import json

        return json.dumps([i.model_dump(mode="json", by_alias=True, exclude_none=True) for i in items],
                          sort_keys=True)

    return (dump(listing.tools), dump(listing.prompts), dump(listing.resources), dump(listing.resource_templates))
