"""Signing in to the host's OAuth servers: one :class:`agent_ls.mcp.oauth.session.OAuthSession` per
HTTP server that uses OAuth (kept across reconfigures while name and URL stay), and the
sign-in and sign-out the user asks for (part of :class:`agent_ls.mcp.manager.MCPManager`).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import TYPE_CHECKING

from agent_ls.config.entries import ServerConfig
from agent_ls.config.paths import user_data_dir
from agent_ls.mcp.connection.connection import ServerConnection
from agent_ls.mcp.oauth.redirect import AuthOpener
from agent_ls.mcp.oauth.session import OAuthSession
from agent_ls.mcp.oauth.store import OAuthStore
from agent_ls.mcp.status import ServerStatus, State

log = logging.getLogger(__name__)


class SignIns:
    """The OAuth part of the manager (mixed into ``MCPManager``)."""

    auth_opener: AuthOpener | None
    sign_in_timeout: float | None
    dirty: bool
    _oauth_store: OAuthStore | None
    _auth: dict[str, OAuthSession]
    _sign_ins: dict[str, asyncio.Task[None]]

    if TYPE_CHECKING:
        def _get(self, name: str) -> ServerConnection: ...

        def _activate(self, conn: ServerConnection) -> None: ...

        def _changed(self, _name: str | None) -> None: ...

        def _status_of(self, name: str) -> ServerStatus: ...

    @property
    def oauth_store(self) -> OAuthStore:
        if self._oauth_store is None:
            self._oauth_store = OAuthStore(user_data_dir() / "oauth")
        return self._oauth_store

    def _auth_session(self, cfg: ServerConfig) -> OAuthSession | None:
        """The OAuth session of an HTTP server (kept across reconfigures while name and URL stay)."""
        if cfg.oauth is None or cfg.transport not in ("http", "sse") or cfg.url is None:
            return None
        session = self._auth.get(cfg.name)
        if session is None or session.url != cfg.url:
            session = OAuthSession(cfg, self.oauth_store, opener=lambda: self.auth_opener,
                                   on_change=lambda: self._changed(cfg.name), sign_in_timeout=self.sign_in_timeout)
            self._auth[cfg.name] = session
        else:
            session.update_config(cfg)
        return session

    # OAuth ----------------------------------------------------------------------------------
    async def sign_in(self, name: str) -> ServerStatus:
        """Sign in to an OAuth server now (the user asked): reconnect it with authorization
        allowed, the URL going to the opener, and wait until it is connected or failed.

        Raises ``ServerUnavailable`` for an unknown server and ``ValueError`` for one that
        does not use OAuth or is disabled/untrusted. A sign-in already under way is joined.
        """
        conn = self._get(name)
        session = conn.auth
        if session is None:
            raise ValueError(f"MCP server {name!r} does not use OAuth (only HTTP servers without an "
                             "Authorization header, or with \"oauth\" set, do)")
        if conn.state in (State.DISABLED, State.AWAITING_TRUST, State.UNTRUSTED):
            raise ValueError(f"MCP server {name!r} is {conn.state.value}")
        task = self._sign_ins.get(name)
        if task is None or task.done():
            task = asyncio.ensure_future(self._sign_in(conn, session))
            self._sign_ins[name] = task
        await asyncio.shield(task)
        return self._status_of(name)

    async def _sign_in(self, conn: ServerConnection, session: OAuthSession) -> None:
        for attempt in range(2):
            session.begin_sign_in()
            await conn.close()
            conn.restarts = 0
            conn.error = None
            session.begin_sign_in()
            conn.start()
            await conn.wait_ready(timeout=session.sign_in_timeout + conn.config.connect_timeout + 10)
            if conn.connected:
                session.sign_in_finished(True, None)
                break
            if session.registration_rejected and attempt == 0:
                log.info("MCP server %s: signing in again with a new registration", conn.name)
                continue
            session.sign_in_finished(False, conn.error.message if conn.error else None)
            break
        self.dirty = True
        self._changed(conn.name)

    async def sign_out(self, name: str) -> ServerStatus:
        """Forget the server's tokens and client registration (revoking the tokens where the
        server supports it), then reconnect without them (it will show needs-sign-in)."""
        conn = self._get(name)
        session = conn.auth
        if session is None:
            raise ValueError(f"MCP server {name!r} does not use OAuth")
        pending = self._sign_ins.pop(name, None)
        await conn.close()
        if pending is not None and not pending.done():
            pending.cancel()
            with contextlib.suppress(BaseException):
                await pending
        await session.sign_out()
        conn.restarts = 0
        conn.error = None
        self._activate(conn)
        if conn.state is State.STARTING:
            await conn.wait_ready(timeout=min(conn.config.connect_timeout, 10.0))
        self.dirty = True
        self._changed(name)
        return self._status_of(name)

