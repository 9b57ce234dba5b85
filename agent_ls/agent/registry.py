"""The tool set the model sees: built-ins (always), MCP tools (deferred by default), tool_search.

The MCP layer comes from a :class:`MCPToolSource` (the MCP manager in practice; a protocol
here so the agent does not depend on the MCP package). ``before_prompt()`` is the single
writer: it lets the source refresh what ``list_changed`` marked dirty and swaps the MCP layer
in; built-in tools never change.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any, Protocol

from agent_ls.agent.tool_search import ToolIndex
from agent_ls.agent.tools import Capability, Tool, ToolResult, ToolSpec

TOOL_SEARCH = "tool_search"


class MCPToolSource(Protocol):
    async def refresh_if_dirty(self) -> bool: ...

    def tools(self) -> Sequence[Any]: ...

    def instructions(self) -> str: ...


class ToolRegistry:
    def __init__(
        self,
        builtins: Sequence[Tool],
        mcp: MCPToolSource | None = None,
        *,
        defer: bool | int = True,
        search_limit: int = 5,
    ) -> None:
        """``defer``: True (always defer MCP tools), False (never), or N (defer when there
        are at least N MCP tools)."""
        self._builtins: dict[str, Tool] = {t.spec.name: t for t in sorted(builtins, key=lambda t: t.spec.name)}
        self._mcp_source = mcp
        self._mcp: dict[str, Tool] = {}
        self._defer = defer
        self.loaded: set[str] = set()
        self.active: list[str] | None = None
        """None mirrors every tool; a list is a deliberate filter of model-facing names."""
        self.search_limit = search_limit
        self._index: ToolIndex | None = None
        self._search_tool = ToolSearchTool(self)
        if mcp is not None:
            self._set_mcp(mcp.tools())

    # the MCP layer ---------------------------------------------------------------------
    def _set_mcp(self, tools: Iterable[Any]) -> None:
        new = {t.spec.name: t for t in tools}
        old = self._mcp
        if self.active is not None and any(n in old for n in self.active):
            swapped: list[str] = []
            for n in self.active:
                if n in old:
                    if n in new:
                        swapped.append(n)
                else:
                    swapped.append(n)
            self.active = swapped
        self._mcp = new
        self._index = None

    async def before_prompt(self) -> bool:
        """Refresh what list_changed marked dirty and swap the MCP layer in; True if it changed."""
        if self._mcp_source is None:
            return False
        await self._mcp_source.refresh_if_dirty()
        tools = list(self._mcp_source.tools())
        if [t.spec for t in tools] == [t.spec for t in self._mcp.values()]:
            return False
        self._set_mcp(tools)
        return True

    def server_instructions(self) -> str:
        return self._mcp_source.instructions() if self._mcp_source is not None else ""

    # deferral ----------------------------------------------------------------------------
    @property
    def deferring(self) -> bool:
        if self._defer is True:
            return bool(self._mcp)
        if self._defer is False:
            return False
        return len(self._mcp) >= int(self._defer)

    def deferred_specs(self) -> list[ToolSpec]:
        if not self.deferring:
            return []
        return [t.spec for n, t in self._mcp.items() if n not in self.loaded]

    def load(self, names: Iterable[str]) -> None:
        self.loaded.update(n for n in names if n in self._mcp)

    def index(self) -> ToolIndex:
        if self._index is None:
            self._index = ToolIndex([t.spec for t in self._mcp.values()])
        return self._index

    # what the model sees -----------------------------------------------------------------
    def visible(self) -> list[Tool]:
        out: list[Tool] = list(self._builtins.values())
        if self.deferring:
            out.append(self._search_tool)
            out.extend(t for n, t in self._mcp.items() if n in self.loaded)
        else:
            out.extend(self._mcp.values())
        if self.active is not None:
            keep = set(self.active) | {TOOL_SEARCH}
            out = [t for t in out if t.spec.name in keep or t.spec.name in self._builtins]
        return out

    def visible_specs(self) -> list[ToolSpec]:
        return [t.spec for t in self.visible()]

    def get(self, name: str) -> Tool | None:
        if name == TOOL_SEARCH and self.deferring:
            return self._search_tool
        return self._builtins.get(name) or self._mcp.get(name)

    def mcp_specs(self) -> list[ToolSpec]:
        return [t.spec for t in self._mcp.values()]


class ToolSearchTool:
    """Loads deferred MCP tools: ``select:a,b`` by exact name, or a ranked keyword search."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self._spec = ToolSpec(
            name=TOOL_SEARCH,
            description=(
                "Load deferred MCP tools: \"select:<full name>,...\" by name, or keywords to search "
                "names, descriptions and servers. Loaded tools are callable from the next step on."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "query": {"type": "string", "description": "\"select:name1,name2\" or keywords"},
                    "limit": {"type": "integer", "description": "keyword results (default 5)"},
                },
                "required": ["query"],
            },
            capability=Capability.READ,
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, arguments: dict[str, Any]) -> ToolResult:
        query = arguments.get("query")
        if not isinstance(query, str) or not query.strip():
            return ToolResult.error("tool_search needs a non-empty \"query\" string")
        limit = arguments.get("limit", self._registry.search_limit)
        if not isinstance(limit, int) or isinstance(limit, bool) or limit < 1:
            limit = self._registry.search_limit
        result = self._registry.index().search(query, limit=min(limit, 20))
        found = list(result.found)
        self._registry.load(s.name for s in found)
        lines = []
        if found:
            lines.append(f"Loaded {len(found)} tool(s); call them from your next step:")
            for s in found:
                desc = (s.description or "").strip().splitlines()
                lines.append(f"- {s.name} (server {s.server}): {desc[0][:200] if desc else ''}")
        else:
            lines.append(f"No MCP tool matches {query!r}.")
        if result.missing:
            lines.append("Not found: " + ", ".join(result.missing))
        return ToolResult(content="\n".join(lines), is_error=not found)
