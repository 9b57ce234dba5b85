"""Requests on a server's live session: tool calls, resources, prompts, extension requests,
roots changes and the re-listing after a change was announced.

A call to a server that is (re)connecting waits for it, bounded by ``connectTimeout``; a call
that finds the connection gone marks it lost, so the owner task restarts it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from agent_ls.mcp.connection.listing import list_all, listing_key
from agent_ls.mcp.connection.state import ConnectionState
from agent_ls.mcp.status import Phase, ServerError, State

if TYPE_CHECKING:
    from mcp import Client
    from mcp.shared.dispatcher import ProgressFnT


class ServerCalls(ConnectionState):
    """What the host asks of a connected server."""

    async def settle(self) -> bool:
        """Wait while the server is (re)connecting, bounded by ``connectTimeout``; True when it
        was (the caller looks again at what it serves)."""
        if not self.settling:
            return False
        await self.wait_settled(self.config.connect_timeout)
        return True

    async def call_tool(
        self, name: str, arguments: dict[str, Any], *, timeout: float | None = None,
        progress: ProgressFnT | None = None,
    ) -> types.CallToolResult:
        await self.settle()
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
        await self.settle()
        client = self._require()
        try:
            return await client.read_resource(uri)
        except Exception as e:
            self._maybe_lost(e)
            raise

    async def send_request(self, request: Any, result_type: Any) -> Any:
        """A request the SDK has no method for (an extension's, e.g. ``skills/list``), typed
        by ``result_type``, on the live session."""
        await self.settle()
        client = self._require()
        try:
            return await client.session.send_request(request, result_type)
        except Exception as e:
            self._maybe_lost(e)
            raise

    async def list_prompts(self) -> list[types.Prompt]:
        return await self._paged(lambda c, cur: c.list_prompts(cursor=cur), "prompts")

    async def get_prompt(self, name: str, arguments: dict[str, str] | None = None) -> types.GetPromptResult:
        await self.settle()
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
        # a change was announced: ask the server (not the response cache)
        listing = await list_all(client, self.config.protocol, self._maybe_lost, "refresh")
        changed = listing_key(listing) != listing_key(self.listing)
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

