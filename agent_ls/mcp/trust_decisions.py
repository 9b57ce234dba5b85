"""Trust decisions for workspace-defined MCP servers: asking the user, remembering the answer
per workspace, and noticing a decision another process made (part of
:class:`agent_ls.mcp.manager.MCPManager`)."""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Protocol

from agent_ls.config.entries import ServerConfig
from agent_ls.config.state import HostState
from agent_ls.mcp.connection.connection import ServerConnection
from agent_ls.mcp.status import Phase, ServerError, State

log = logging.getLogger(__name__)


class TrustHandler(Protocol):
    async def __call__(self, config: ServerConfig) -> bool | None:
        """Ask the user whether a workspace-defined MCP server may run (None: no answer).
        :meth:`MCPManager.trust_changes` says what changed since the entry was last trusted."""
        ...


class TrustDecisions:
    """The trust part of the manager (mixed into ``MCPManager``)."""

    state_store: HostState | None
    trust_handler: TrustHandler | None
    dirty: bool
    _conns: dict[str, ServerConnection]

    if TYPE_CHECKING:
        def _get(self, name: str) -> ServerConnection: ...

        def _activate(self, conn: ServerConnection) -> None: ...

        def _changed(self, _name: str | None) -> None: ...

    async def _ask_trust(self, conn: ServerConnection) -> None:
        assert self.trust_handler is not None
        try:
            answer = await self.trust_handler(conn.config)
        except Exception as e:
            log.warning("trust prompt for %s failed: %s", conn.name, e)
            return
        if answer is None or self._conns.get(conn.name) is not conn:
            return
        await self.set_trust(conn.name, answer)

    def trust_changes(self, config: ServerConfig) -> list[str]:
        """What changed in a workspace server's entry since the user last trusted a version of it
        (empty: never trusted)."""
        if self.state_store is None:
            return []
        before = self.state_store.last_trusted_entry(config.source.workspace_folder, config.name)
        return config.view().changes_since(before)

    async def recheck_trust(self) -> None:
        """Servers waiting for a trust decision that another process has made since: start them
        (trusted) or mark them untrusted."""
        if self.state_store is None:
            return
        for conn in list(self._conns.values()):
            cfg = conn.config
            if conn.state is not State.AWAITING_TRUST or cfg.restricted or not cfg.needs_trust:
                continue
            decision = self.state_store.trust(cfg.source.workspace_folder, cfg.trust_key())
            if decision is not None:
                log.info("MCP server %s: trust decided in another process (%s)", cfg.name,
                         "trusted" if decision else "not trusted")
                self._activate(conn)
        self.dirty = True

    async def set_trust(self, name: str, trusted: bool) -> None:
        conn = self._get(name)
        cfg = conn.config
        if cfg.restricted and trusted:
            raise ValueError(f"MCP server {name!r} is defined by a workspace you have not trusted: trust the "
                             "workspace first (its settings and servers are decided together)")
        if self.state_store is not None:
            self.state_store.set_trust(cfg.source.workspace_folder, cfg.trust_key(), trusted, name=cfg.name,
                                       entry=cfg.view().snapshot())
        if trusted:
            if conn.state in (State.AWAITING_TRUST, State.UNTRUSTED):
                conn.error = None
                conn.start()
        else:
            await conn.close()
            conn.state = State.UNTRUSTED
            conn.error = ServerError(Phase.TRUST, "you did not trust this workspace server")
        self.dirty = True
        self._changed(name)

