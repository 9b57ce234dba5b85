"""What a server connection is and says: its state, listing, waits, and whether calls may use it.

:class:`ConnectionState` holds everything the host reads from a connection without I/O (state,
error, listing, server info, stderr tail), the waits on its state changes, the catalogue kept
from its last connection, and the live-session checks calls go through (:meth:`_require`,
:meth:`_maybe_lost`). The owner task that changes it is :class:`agent_ls.mcp.connection.lifecycle.ServerConnection`.
"""

from __future__ import annotations

import asyncio
import contextlib
import signal
from typing import TYPE_CHECKING, Any

import anyio
from mcp.client.caching import CacheConfig
from mcp.shared.exceptions import MCPError

from agent_ls.config.entries import ServerConfig
from agent_ls.core.redact import redact_live
from agent_ls.mcp.catalogue import Listing, catalogue_key
from agent_ls.mcp.connection.client_handlers import HostCallbacks
from agent_ls.mcp.connection.failures import CONNECTION_CLOSED, RestartPolicy, ServerUnavailable, unwrap
from agent_ls.mcp.connection.transports import StderrTail
from agent_ls.mcp.status import Phase, ServerError, State

if TYPE_CHECKING:
    import mcp_types as types
    from mcp import Client

    from agent_ls.mcp.oauth.session import OAuthSession


class ConnectionState:
    """A single configured MCP server: its state and what it listed."""

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

    def redact(self, text: str) -> str:
        """Mask configured secrets and every token the host has seen."""
        return redact_live(text, self.config.secrets)

    def auth_problem(self) -> str | None:
        """Why this server's requests are refused for lack of sign-in, if that is the case."""
        return self.auth.needs_sign_in_reason() if self.auth is not None else None

    # the live session ---------------------------------------------------------------------
    def _require(self) -> Client:
        client = self._client
        if client is None or not self.connected:
            reason = f" ({self.error})" if self.error else ""
            raise ServerUnavailable(f"MCP server '{self.name}' is not connected: {self.state.value}{reason}")
        return client

    def _maybe_lost(self, exc: BaseException) -> None:
        exc = unwrap(exc)
        lost = (isinstance(exc, MCPError) and exc.error.code == CONNECTION_CLOSED) or isinstance(
            exc, (anyio.ClosedResourceError, anyio.BrokenResourceError, ConnectionError, OSError)
        ) or type(exc).__name__ in ("ConnectError", "RemoteProtocolError", "ReadError")
        if lost and not self._closing and not self._lost.is_set():
            self._lost.set()
            if self.state in (State.CONNECTED, State.LISTING_FAILED):
                self._set_state(State.RESTARTING)  # fail the next calls fast, before the owner task reacts

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

    def _mark_dirty(self) -> None:
        self.dirty = True
        self.callbacks.on_dirty(self.name)

