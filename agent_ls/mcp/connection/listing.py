"""Fetching a server's lists: tools, prompts, resources and resource templates, every page.

Used for the first listing of a connection, for each refresh after a change was announced and
for the lists the host asks for itself (:func:`every_page`).
A list that fails is an error of the listing (the others still count); tools the SDK leaves out
of a 2026-07-28 listing (an invalid ``x-mcp-header``) become notes.
"""

from __future__ import annotations

import contextvars
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import TYPE_CHECKING, Any

import mcp_types as types
from mcp.shared.exceptions import MCPError

from agent_ls.mcp.apps import app_notes
from agent_ls.mcp.catalogue import Listing
from agent_ls.mcp.connection.failures import unwrap

if TYPE_CHECKING:
    from mcp import Client
    from mcp.client.caching import CacheMode

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


async def every_page(fetch: Callable[[str | None], Awaitable[Any]], attr: str, out: list[Any] | None = None) -> list[Any]:
    """Every item of a paginated list (``fetch`` gets the cursor; at most 1000 pages). The items
    go into ``out`` when given, so a caller keeps the pages fetched before a failure."""
    out = [] if out is None else out
    cursor: str | None = None
    for _ in range(1000):
        page = await fetch(cursor)
        out.extend(getattr(page, attr))
        cursor = page.next_cursor
        if not cursor:
            break
    return out


async def list_all(
    client: Client, protocol: str, lost: Callable[[BaseException], None], cache_mode: CacheMode = "use",
) -> Listing:
    """Every list the server's capabilities announce (``lost`` hears each failure, so a dead
    server is noticed)."""
    caps = client.server_capabilities
    listing = Listing()
    # "protocol": "2026-07-28" adopts the modern protocol without server/discover, so the
    # server's capabilities are unknown (all empty): probe every list, and read "method not
    # found" as "this server has none" rather than as a failure.
    probe = protocol == "2026-07-28" and caps.tools is None and caps.prompts is None \
        and caps.resources is None

    async def grab(kind: str, fetch: Callable[[str | None], Awaitable[Any]], attr: str) -> list[Any]:
        out: list[Any] = []
        try:
            await every_page(fetch, attr, out)
        except Exception as e:
            inner = unwrap(e)
            if probe and isinstance(inner, MCPError) and inner.error.code == types.METHOD_NOT_FOUND:
                return out
            listing.errors.append(f"{kind}/list failed: {type(inner).__name__}: {inner}")
            lost(inner)
        return out

    left_out: list[str] = []
    token = _LEFT_OUT.set(left_out)
    try:
        if caps.tools is not None or probe:
            listing.tools = await grab("tools", lambda c: client.list_tools(cursor=c, cache_mode=cache_mode),
                                       "tools")
    finally:
        _LEFT_OUT.reset(token)
    listing.notes = [f"{line} (the server's other tools work)" for line in left_out] + app_notes(listing.tools)
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


def listing_key(listing: Listing) -> tuple[Any, ...]:
    """What a listing holds, comparable: equal keys mean nothing changed."""
    def dump(items: Sequence[Any]) -> str:
        return json.dumps([i.model_dump(mode="json", by_alias=True, exclude_none=True) for i in items],
                          sort_keys=True)

    return (dump(listing.tools), dump(listing.prompts), dump(listing.resources), dump(listing.resource_templates))
