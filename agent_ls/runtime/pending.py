"""The MCP host as a session sees it while the host has not started yet.

The language server loads the model library (litellm, seconds of CPU) before it starts the MCP
host when a model is configured, so that a prompt sent right after the editor opened goes to the
model at once rather than after the MCP SDK's import and the servers' start-up compete with that
load (issue 30 item 2). A session built in that window gets a :class:`PendingHost`: it offers no
MCP tools and says which servers are still starting until the manager exists, then forwards
everything to it, so the session's tools join at its next step like those of any server that
connects late.

Three cases want the host at once rather than after the model library (:attr:`PendingHost.want`):
the model searches for tools while servers start, it names an MCP tool not known yet that a starting server could own, and servers whose
tools were kept from their last connection (a prompt offers those before the server has connected, as it does once the host
runs).
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from agent_ls.core import naming
from agent_ls.mcp.status import STILL_STARTING

if TYPE_CHECKING:
    from agent_ls.mcp.manager import MCPManager
    from agent_ls.mcp.skills import SkillCatalog


class PendingHost:
    """The registry's MCP tool source and skill source for a session built before the MCP
    manager exists (``manager()``: the manager once it does; ``ready``: set when the host's
    start has ended, whether it started or failed)."""

    def __init__(self, manager: Callable[[], MCPManager | None], ready: asyncio.Event, want: Callable[[], None], *,
                 starting: Sequence[str] = (), kept: bool = False) -> None:
        """``want``: start the host now (without waiting for the model library); ``starting``:
        the servers that will start with it; ``kept``: some of them have tools kept from their
        last connection (a prompt waits for the host to offer them)."""
        self._manager = manager
        self._ready = ready
        self.want = want
        self._starting = tuple(starting)
        self._kept = kept
        self._skills: SkillCatalog | None = None

    # the registry's MCPToolSource and SettlingSource -------------------------------------------
    async def settle(self, timeout: float) -> None:
        """Before the host: nothing to wait for (a prompt does not wait for the servers that start
        with it) unless kept tools are waiting to be offered; then start the host now and wait
        for it (within ``timeout``). Afterwards: the manager's :meth:`settle`."""
        manager, left = await self._host(timeout) if self._kept else (self._manager(), timeout)
        if manager is not None:
            await manager.settle(left)

    async def settle_tool(self, name: str, timeout: float) -> None:
        """The model called the MCP tool ``name``, not known yet: when a server that starts with
        the host could own it, start the host now and wait for that server (within
        ``timeout``); else there is nothing to wait for."""
        manager, left = self._manager(), timeout
        if manager is None and any(naming.could_name(server, name) for server in self._starting):
            manager, left = await self._host(timeout)
        if manager is not None:
            await manager.settle_tool(name, left)

    def starting(self) -> list[str]:
        """The servers starting with the host, whose tools are not known yet (``tool_search`` is
        offered for them from the first request and waits for them)."""
        manager = self._manager()
        return manager.starting() if manager is not None else sorted(self._starting)

    async def settle_servers(self, names: Sequence[str], timeout: float) -> None:
        """``tool_search`` asks for servers still starting: start the host now (without waiting
        for the model library) and wait for them (within ``timeout``)."""
        manager, left = await self._host(timeout)
        if manager is not None:
            await manager.settle_servers(names, left)

    def server_problem(self, name: str) -> str | None:
        manager = self._manager()
        if manager is not None:
            return manager.server_problem(name)
        return "is still starting (the MCP host is starting)" if name in self._starting else "is not configured"

    def server_names(self) -> list[str]:
        manager = self._manager()
        return manager.server_names() if manager is not None else sorted(self._starting)

    async def _host(self, timeout: float) -> tuple[MCPManager | None, float]:
        """The manager, asking for the host and waiting for its start (at most ``timeout``),
        and what is left of ``timeout``."""
        if (manager := self._manager()) is not None:
            return manager, timeout
        self.want()
        began = time.monotonic()
        try:
            await asyncio.wait_for(self._ready.wait(), timeout)
        except TimeoutError:
            return None, 0.0
        return self._manager(), max(0.0, timeout - (time.monotonic() - began))

    async def refresh_if_dirty(self) -> bool:
        manager = self._manager()
        return await manager.refresh_if_dirty() if manager is not None else False

    async def app_tool(self, server: str, tool: str) -> Any:
        """The manager's :meth:`~agent_ls.mcp.manager.MCPManager.app_tool` (an app exists only
        once its server answered a call: the host is running)."""
        manager = self._manager()
        if manager is None:
            raise LookupError("the MCP host is still starting")
        return await manager.app_tool(server, tool)

    async def app_resource(self, server: str, tool: str, timeout: float = 10.0) -> Any:
        """The manager's :meth:`~agent_ls.mcp.manager.MCPManager.app_resource` (a resumed chat asks:
        the host is started now and waited for, at most ``timeout``)."""
        manager, left = await self._host(timeout)
        if manager is None:
            raise LookupError("the MCP host is still starting")
        return await manager.app_resource(server, tool, left)

    def tools(self) -> Sequence[Any]:
        manager = self._manager()
        return manager.tools() if manager is not None else ()

    def instructions(self) -> str:
        manager = self._manager()
        if manager is not None:
            return manager.instructions()
        return "\n".join(f"## {name}\n{STILL_STARTING}\n" for name in sorted(self._starting))

    # the registry's SkillSource ------------------------------------------------------------------
    def _catalog(self) -> SkillCatalog | None:
        if self._skills is None and (manager := self._manager()) is not None:
            # the MCP SDK's types: loaded with the host, which exists now
            from agent_ls.mcp.skills import SkillCatalog

            self._skills = SkillCatalog(manager)
        return self._skills

    async def refresh(self) -> bool:
        catalog = self._catalog()
        return await catalog.refresh() if catalog is not None else False

    def skills(self) -> Sequence[Any]:
        catalog = self._catalog()
        return catalog.skills() if catalog is not None else ()

    async def load(self, server: str, ref: str) -> Any:
        catalog = self._catalog()
        if catalog is None:
            raise LookupError(f"the MCP servers are still starting: skill {ref!r} of {server!r} is not available yet")
        return await catalog.load(server, ref)

    async def read_file(self, loaded: Any, path: str) -> bytes:
        catalog = self._catalog()
        if catalog is None:
            raise LookupError("the MCP servers are still starting")
        return await catalog.read_file(loaded, path)
