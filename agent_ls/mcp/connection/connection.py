"""The connection to one MCP server: its owner task, its state and the requests on its session.

The mcp SDK's context managers (transport, session) must be entered and exited in the
same task, so each connection runs in its own owner task (``_run``). Inside it one
``anyio.CancelScope`` with a deadline covers spawn + handshake + first listing; once the
server is ready the deadline is lifted, so the handshake timeout never limits the
connection's lifetime. ``close()`` only sets an event; the owner task exits the context
managers itself, and the SDK's stdio shutdown terminates the server's process group.

A server that dies after it was ready is detected (EOF on its stderr pipe for stdio, a
``CONNECTION_CLOSED``/transport error on a request for HTTP), its requests fail fast with a
clear error, and it is restarted with exponential backoff, a bounded number of times. A request
to a server that is (re)connecting waits for it, bounded by ``connectTimeout``.

What the host reads without I/O (state, error, listing, :class:`Handshake`, stderr tail) are
fields of :class:`ServerConnection`; what it is built from lives beside it as functions and
small collaborators: the transports (:mod:`.transports`), the lists (:mod:`.listing`), the
protocol era (:mod:`.eras`), what a server may ask of the client (:mod:`.client_handlers`) and
the failure messages and restart policy (:mod:`.failures`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import math
import signal
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import AbstractAsyncContextManager
from typing import TYPE_CHECKING, Any

import anyio
import attrs
import mcp_types as types
from mcp import Client
from mcp.client.caching import CacheConfig
from mcp.client.subscriptions import ListenNotSupportedError, SubscriptionLost
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agent_ls.config.entries import ServerConfig
from agent_ls.core.process import kill_process_tree
from agent_ls.core.redact import redact_live
from agent_ls.mcp.apps import APPS_CLIENT_EXTENSION
from agent_ls.mcp.catalogue import Listing, catalogue_key
from agent_ls.mcp.connection.client_handlers import ClientHandlers, HostCallbacks
from agent_ls.mcp.connection.eras import era_for_attempt, remember_era
from agent_ls.mcp.connection.failures import (
    CONNECTION_CLOSED,
    AuthRequired,
    Lost,
    RestartPolicy,
    ServerUnavailable,
    death_message,
    describe_failure,
    unwrap,
)
from agent_ls.mcp.connection.listing import every_page, list_all, listing_key
from agent_ls.mcp.connection.transports import StderrTail, http_transport, stdio_transport
from agent_ls.mcp.legacy_tasks import LegacyTasks, legacy_task_results, task_tool
from agent_ls.mcp.oauth.providers import AuthHooks
from agent_ls.mcp.result_kind import results_read_as_complete
from agent_ls.mcp.skill_entries import SKILLS_CLIENT_EXTENSION
from agent_ls.mcp.status import Phase, ServerError, State
from agent_ls.mcp.tasks import TasksExtension

if TYPE_CHECKING:
    from mcp.shared.dispatcher import ProgressFnT

    from agent_ls.mcp.oauth.session import OAuthSession

log = logging.getLogger(__name__)

CLIENT_INFO = types.Implementation(name="agent-ls", version="0.1.0")

CLOSE_GRACE = 10.0
"""Seconds a closing connection gets to wind down by itself before its processes are killed."""


@attrs.frozen
class Handshake:
    """What a server said about itself when the connection was made (kept after it ends)."""

    instructions: str | None = None
    server_info: types.Implementation | None = None
    protocol_version: str | None = None
    capabilities: types.ServerCapabilities | None = None

    @classmethod
    def of(cls, client: Client) -> Handshake:
        return cls(client.instructions, client.server_info, client.protocol_version, client.server_capabilities)


class ServerConnection:
    """A single configured MCP server: its owner task, its state and what it listed, and the
    requests the host makes of it."""

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
        # what the host reads
        self._state = State.STOPPED
        self._state_changed = asyncio.Event()
        self.error: ServerError | None = None
        self.listing = Listing()
        self.list_version = 0
        self.from_catalogue = False
        """The listing is the one kept from the server's last connection (it is still starting)."""
        self.dirty = False
        """A list changed on the server and was not fetched again yet."""
        self.handshake = Handshake()
        self.connected_at: float | None = None
        self.restarts = 0
        self.stderr = StderrTail()
        # the owner task and the current attempt
        self._task: asyncio.Task[None] | None = None
        self._client: Client | None = None
        self._process: Any = None
        self._ready = asyncio.Event()
        self._close = asyncio.Event()
        self._lost = asyncio.Event()
        self._closing = False
        self._deadline_scope: anyio.CancelScope | None = None
        self._got_ready = False
        self._probe_again = False
        self._legacy_tasks: LegacyTasks | None = None

    # what it is and says ------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.config.name

    @property
    def catalogue_key(self) -> str:
        cfg = self.config
        return catalogue_key(cfg.source.workspace_folder, cfg.name, cfg.fingerprint())

    @property
    def state(self) -> State:
        return self._state

    @state.setter
    def state(self, value: State) -> None:
        self._state = value
        changed, self._state_changed = self._state_changed, asyncio.Event()
        changed.set()  # wakes whoever waits for the next change

    @property
    def connected(self) -> bool:
        return self.state in (State.CONNECTED, State.LISTING_FAILED) and self._client is not None

    @property
    def serving(self) -> bool:
        """Its tools are offered: connected, or starting with the catalogue of its last connection."""
        return self.connected or (self.from_catalogue and self.state is State.STARTING)

    @property
    def settling(self) -> bool:
        """Starting (first start, or a deliberate restart: a settings change, a trust decision,
        restart): it will be connected or failed shortly. A server that crashed and waits for its
        automatic restart is not settling: calls to it fail fast."""
        return self.state is State.STARTING

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

    def redact(self, text: str) -> str:
        """Mask configured secrets and every token the host has seen."""
        return redact_live(text, self.config.secrets)

    def auth_problem(self) -> str | None:
        """Why this server's requests are refused for lack of sign-in, if that is the case."""
        return self.auth.needs_sign_in_reason() if self.auth is not None else None

    # waits ------------------------------------------------------------------------------
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

    async def settle(self) -> bool:
        """Wait while the server is (re)connecting, bounded by ``connectTimeout``; True when it
        was (the caller looks again at what it serves)."""
        if not self.settling:
            return False
        await self.wait_settled(self.config.connect_timeout)
        return True

    # start and stop ---------------------------------------------------------------------
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
                await asyncio.wait_for(asyncio.shield(task), timeout=CLOSE_GRACE)
            except TimeoutError:
                # It did not wind down: end the server's processes first, so that the SDK's
                # shutdown (which waits for the process to exit) can finish; then cancel.
                kill_process_tree(self._process)
                task.cancel()
            except asyncio.CancelledError:
                if not task.cancelled():
                    raise
            if not task.done():
                # asyncio.wait, not wait_for: wait_for waits without a bound for a cancelled
                # task to end, and a task that swallows its cancellation would hold close().
                await asyncio.wait({task}, timeout=5)
                if not task.done():
                    log.warning("MCP server %s: its connection did not end after the cancel; left behind",
                                self.name)
        self._client = None
        self.stderr.close()
        if self.state not in (State.DISABLED, State.AWAITING_TRUST, State.UNTRUSTED, State.NEEDS_SIGN_IN):
            self._set_state(State.STOPPED)

    # requests on the live session -------------------------------------------------------
    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, timeout: float | None = None,
        progress: ProgressFnT | None = None,
    ) -> types.CallToolResult:
        async with self._session() as client:
            if task_tool(client, self.listing.tools, name):  # a legacy server runs it as a task (legacy_tasks.py)
                if self._legacy_tasks is None or self._legacy_tasks.session is not client.session:
                    self._legacy_tasks = LegacyTasks(self.name, client.session)
                return await self._legacy_tasks.call(name, arguments, timeout=timeout or self.config.call_timeout,
                                                     hook=self.callbacks.task_started, progress=progress)
            return await client.call_tool(
                name, arguments, read_timeout_seconds=timeout or self.config.call_timeout,
                progress_callback=progress,
            )

    async def read_resource(self, uri: str) -> types.ReadResourceResult:
        async with self._session() as client:
            return await client.read_resource(uri)

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> types.GetPromptResult:
        async with self._session() as client:
            return await client.get_prompt(name, arguments or {})

    async def send_request(self, request: Any, result_type: Any) -> Any:
        """A request the SDK has no method for (an extension's, e.g. ``skills/list``), typed
        by ``result_type``, on the live session."""
        async with self._session() as client:
            return await client.session.send_request(request, result_type)

    async def list_resources(self) -> list[types.Resource]:
        async with self._session(settle=False) as client:
            return await every_page(lambda cursor: client.list_resources(cursor=cursor), "resources")

    async def list_resource_templates(self) -> list[types.ResourceTemplate]:
        async with self._session(settle=False) as client:
            return await every_page(lambda cursor: client.list_resource_templates(cursor=cursor),
                                    "resource_templates")

    async def list_prompts(self) -> list[types.Prompt]:
        async with self._session(settle=False) as client:
            return await every_page(lambda cursor: client.list_prompts(cursor=cursor), "prompts")

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
        self.dirty = False
        if client is None or not self.connected:
            return False
        # a change was announced: ask the server (not the response cache)
        listing = await list_all(client, self.config.protocol, self._maybe_lost, "refresh")
        changed = listing_key(listing) != listing_key(self.listing)
        self.listing = listing
        if changed:
            self._keep_catalogue(listing)
        self._report_listing(listing, connecting=False)
        if changed:
            self.list_version += 1
            self.callbacks.on_change(self.name)
        return changed

    @contextlib.asynccontextmanager
    async def _session(self, *, settle: bool = True) -> AsyncIterator[Client]:
        """The live session for one request: waits while the server is (re)connecting (when
        ``settle``), fails fast when it is not connected, and marks the connection lost when the
        request finds it gone (the owner task then restarts it)."""
        if settle:
            await self.settle()
        client = self._client
        if client is None or not self.connected:
            reason = f" ({self.error})" if self.error else ""
            raise ServerUnavailable(f"MCP server '{self.name}' is not connected: {self.state.value}{reason}")
        try:
            yield client
        except Exception as e:
            self._maybe_lost(e)
            raise

    def _maybe_lost(self, exc: BaseException) -> None:
        exc = unwrap(exc)
        lost = (isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED) or isinstance(
            exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError, OSError)
        ) or type(exc).__name__ in ("ConnectError", "RemoteProtocolError", "ReadError")
        if lost and not self._closing and not self._lost.is_set():
            self._lost.set()
            if self.state in (State.CONNECTED, State.LISTING_FAILED):
                self._set_state(State.RESTARTING)  # fail the next calls fast, before the owner task reacts

    # the owner task ---------------------------------------------------------------------
    async def _run(self) -> None:
        attempt = 0
        while not self._closing:
            started = time.monotonic()
            was_ready = await self._connect_once()
            if not was_ready and self._probe_again and not self._closing:
                self._probe_again = False  # a remembered era no longer holds: negotiate afresh, once
                continue
            self._ready.set()
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

    async def _connect_once(self) -> bool:
        """One connection attempt and, if it succeeds, its whole life. Returns whether it got ready."""
        cfg = self.config
        mode, prior_discover, recalled = era_for_attempt(cfg, self.callbacks.eras)
        self._lost = asyncio.Event()
        phase = Phase.SPAWN if cfg.transport == "stdio" else Phase.HANDSHAKE
        got_ready = False
        transport = legacy_task_results(results_read_as_complete(self._transport()))
        handlers = ClientHandlers(self.name, self.callbacks, self._mark_dirty, lambda line: self.stderr.add(line))
        client = Client(
            transport,
            mode=mode,  # type: ignore[arg-type]
            prior_discover=prior_discover,
            client_info=CLIENT_INFO,
            list_roots_callback=handlers.list_roots,
            elicitation_callback=handlers.elicit,
            sampling_callback=handlers.sample,
            message_handler=handlers.on_message,
            logging_callback=handlers.on_log,
            log_level="info",  # 2026-07-28 servers send log messages only when asked in each request
            # Tool calls pass callTimeout themselves; the handshake is bounded by connectTimeout,
            # so a short callTimeout must not cut off a slow server's initialize.
            read_timeout_seconds=max(cfg.call_timeout, cfg.connect_timeout),
            cache=self._cache_config(),
            # the host implements the skills extension (skills.py) and tasks (tasks.py)
            extensions=[SKILLS_CLIENT_EXTENSION, TasksExtension(self.name, lambda: self.callbacks.task_started), APPS_CLIENT_EXTENSION],
        )
        deadline_scope = anyio.CancelScope(deadline=anyio.current_time() + cfg.connect_timeout)
        self._deadline_scope = deadline_scope
        self._got_ready = False
        if self.auth is not None:
            self.auth.begin_attempt()
        try:
            with deadline_scope:
                async with client:
                    phase = Phase.LISTING
                    self.handshake = Handshake.of(client)
                    remember_era(cfg, self.callbacks.eras, client)
                    self._client = client
                    self.dirty = False
                    listing = await list_all(client, cfg.protocol, self._maybe_lost)
                    if self.auth is not None and self.auth.challenge_pending:
                        raise AuthRequired()
                    if recalled and listing.errors and not (listing.tools or listing.prompts or listing.resources):
                        # nothing listed in the era it negotiated before: the server changed era
                        raise MCPError(types.INVALID_REQUEST, "; ".join(listing.errors))
                    deadline_scope.deadline = math.inf
                    phase = Phase.RUNNING
                    if not self.from_catalogue or listing_key(listing) != listing_key(self.listing):
                        self.list_version += 1  # a kept catalogue that still holds is not rebuilt
                        self._keep_catalogue(listing)
                    self.listing = listing
                    self.from_catalogue = False
                    self.connected_at = time.time()
                    got_ready = True
                    self._got_ready = True
                    self._report_listing(listing, connecting=True)
                    self._ready.set()
                    async with anyio.create_task_group() as listeners:
                        if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
                            listeners.start_soon(self._listen_for_changes, client)
                        await self._wait_close_or_lost()
                        listeners.cancel_scope.cancel()
                    self._client = None
                    if not self._closing:
                        self._set_state(State.RESTARTING)
                        raise Lost()
        except Lost:
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
                         cfg.name, mode, type(unwrap(e)).__name__)
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
        tail = self.stderr.tail(5)
        stdio = self.config.transport == "stdio"
        code: int | None = None
        if stdio:
            await asyncio.sleep(0)  # let the SDK's shutdown reap the process first
            code = self.exit_code()
        msg = death_message(exc, stdio, code, tail)
        self.error = ServerError(Phase.RUNNING, self.redact(msg), exit_code=code)
        self._set_state(State.RESTARTING, self.error)

    def _describe_failure(self, exc: BaseException, phase: Phase, timed_out: bool) -> ServerError:
        return describe_failure(exc, phase, timed_out, config=self.config, tail=self.stderr.tail(8),
                                exit_code=self.exit_code, redact=self.redact)

    # the transport of an attempt --------------------------------------------------------
    def _transport(self) -> AbstractAsyncContextManager[Any]:
        if self.config.transport == "stdio":
            return stdio_transport(self.config, new_stderr=self._new_stderr, on_process=self._set_process)
        return http_transport(self.config, self._httpx_auth)

    def _new_stderr(self) -> StderrTail:
        self.stderr = StderrTail()
        return self.stderr

    def _set_process(self, process: Any) -> None:
        self._process = process

    def _httpx_auth(self) -> Any:
        if self.auth is None:
            return None
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

    # the kept catalogue -----------------------------------------------------------------
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

    # state changes ----------------------------------------------------------------------
    def _report_listing(self, listing: Listing, *, connecting: bool) -> None:
        """The state a listing puts the server in: listing failed, or connected (with a note on
        tools left out). A refresh announces a change of state only when it recovers."""
        if listing.errors:
            self._set_state(State.LISTING_FAILED, ServerError(Phase.LISTING, self.redact("; ".join(listing.errors))))
            return
        self.error = ServerError(Phase.LISTING, self.redact("; ".join(listing.notes))) if listing.notes else None
        if connecting or self.state is State.LISTING_FAILED:
            self._set_state(State.CONNECTED)

    def _set_state(self, state: State, error: ServerError | None = None) -> None:
        self.state = state
        if error is not None:
            self.error = error
        self.callbacks.on_change(self.name)

    def _mark_dirty(self) -> None:
        self.dirty = True
        self.callbacks.on_dirty(self.name)
