"""The tool set the model sees: built-ins, MCP tools (deferred by default), tool_search, and
``load_skill`` while MCP servers serve skills (agent_ls/agent/skills_tool.py).

The MCP layer comes from a :class:`MCPToolSource` (the MCP manager in practice; a protocol
here so the agent does not depend on the MCP package). ``before_prompt()`` is the single
writer: it lets the source refresh what ``list_changed`` marked dirty and replaces the MCP
layer; built-in tools never change.

The *active set* (:meth:`ToolRegistry.set_active`) filters what the model is offered, e.g.
a read-only mode. When the MCP layer changes: an active set that mirrors every tool (None)
keeps mirroring; a filtered set that had MCP tools gets its MCP tools swapped in place (the
old ones out, the new layer in, its other tools untouched); a filtered set without MCP tools
deliberately excludes them and is left alone. Everything follows the active set: the tool
list, the deferred catalogue, what ``tool_search`` finds and loads, and what can be called.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Sequence
from typing import Any, Protocol, runtime_checkable

from agent_ls.agent.events import report_progress
from agent_ls.agent.skills_tool import LOAD_SKILL, LoadSkillTool, SkillSource, skills_catalogue
from agent_ls.agent.tools.tool_search import SELECT_PREFIX, ToolIndex
from agent_ls.core import naming
from agent_ls.core.naming import PREFIX, SEP
from agent_ls.core.tools import Capability, Tool, ToolResult, ToolSpec

TOOL_SEARCH = "tool_search"
MCP_PREFIX = "mcp__"
LOADED_PREFIX = "Loaded "
"""How a tool_search result that loaded tools starts (a resumed session reloads them)."""


class MCPToolSource(Protocol):
    async def refresh_if_dirty(self) -> bool: ...

    def tools(self) -> Sequence[Any]: ...

    def instructions(self) -> str: ...


@runtime_checkable
class SettlingSource(Protocol):
    """A tool source whose servers may be (re)connecting (the MCP manager)."""

    async def settle(self, timeout: float) -> None:
        """Wait for the servers the user (re)started (a prompt sees their tools)."""
        ...

    async def settle_tool(self, name: str, timeout: float) -> None:
        """Wait for the starting servers that could own the MCP tool name ``name``."""
        ...

    def starting(self) -> Sequence[str]:
        """The servers in their first start whose tools are not known yet, sorted (a prompt does
        not wait for them: ``tool_search`` does, :meth:`settle_servers`)."""
        ...

    async def settle_servers(self, names: Sequence[str], timeout: float) -> None:
        """Wait for the servers ``names`` while they start, each at most its ``connectTimeout``
        and all at most ``timeout``."""
        ...

    def server_problem(self, name: str) -> str | None:
        """Why the server ``name`` offers no tools (failed: its error; still starting), None when
        it serves them."""
        ...

    def server_names(self) -> Sequence[str]:
        """Every configured server, sorted."""
        ...


SETTLE_SECONDS = 10.0
"""How long a prompt waits for MCP servers that are starting or restarting (a settings change, a
trust decision) before it runs with what is connected (``AGENT_LS_SETTLE_LIMIT`` seconds if set:
the tests that must see a wait as a hang)."""


def settle_limit() -> float:
    try:
        return float(os.environ.get("AGENT_LS_SETTLE_LIMIT", SETTLE_SECONDS))
    except ValueError:
        return SETTLE_SECONDS

SEARCH_WAIT_SECONDS = 120.0
"""The most a ``tool_search`` (or a call of an MCP tool not known yet) waits for the servers that
are starting with the host; each of them is waited for at most its own ``connectTimeout``."""


def waiting_text(servers: Sequence[str]) -> str:
    """The progress a call shows while it waits for starting servers."""
    names = ", ".join(repr(s) for s in servers)
    if len(servers) == 1:
        return f"waiting for the MCP server {names} to start (at most its connectTimeout)"
    return f"waiting for the MCP servers {names} to start (each at most its connectTimeout)"


class ToolRegistry:
    def __init__(
        self,
        builtins: Sequence[Tool],
        mcp: MCPToolSource | None = None,
        *,
        defer: bool | int = True,
        search_limit: int = 5,
        skills: SkillSource | None = None,
    ) -> None:
        """``defer``: True (always defer MCP tools), False (never), or N (defer when there
        are at least N MCP tools). ``skills``: skills served by MCP servers, offered through
        ``load_skill`` and listed in the prompt (:meth:`skill_catalogue`) while there are any."""
        self._skills = skills
        self._skill_tool = LoadSkillTool(skills) if skills is not None else None
        self._builtins: dict[str, Tool] = {t.spec.name: t for t in sorted(builtins, key=lambda t: t.spec.name)}
        self._mcp_source = mcp
        self._mcp: dict[str, Tool] = {}
        self._defer = defer
        self.loaded: set[str] = set()
        self.active: list[str] | None = None
        """None mirrors every tool; a list is a deliberate filter of model-facing names."""
        self.admit: Callable[[ToolSpec], bool] | None = None
        """Which tools this registry may offer at all, whatever the MCP servers add later (a
        subagent's narrowed tool set, :mod:`agent_ls.runtime.subagents`); None: every tool."""
        self.search_limit = search_limit
        self._index: ToolIndex | None = None
        self._search_tool = ToolSearchTool(self)
        if mcp is not None:
            self._set_mcp(mcp.tools())

    def add_builtin(self, tool: Tool) -> None:
        """Offer one more tool that is always visible (the runtime's ``agent`` tool)."""
        self._builtins = dict(sorted({**self._builtins, tool.spec.name: tool}.items()))
        self._index = None

    # the active set ----------------------------------------------------------------------
    def set_active(self, names: Iterable[str] | None) -> None:
        """Offer only the named tools (model-facing names), or every tool with None."""
        self.active = None if names is None else list(dict.fromkeys(names))
        self._index = None

    def _is_mcp(self, name: str, layer: dict[str, Tool] | None = None) -> bool:
        return name in (self._mcp if layer is None else layer) or name.startswith(MCP_PREFIX)

    def _allowed_mcp(self) -> dict[str, Tool]:
        return self._admitted(self._mcp)

    def _allowed_builtins(self) -> dict[str, Tool]:
        return self._admitted(self._builtins)

    def _admitted(self, layer: dict[str, Tool]) -> dict[str, Tool]:
        if self.active is None and self.admit is None:
            return layer
        keep = set(self.active) if self.active is not None else None
        admit = self.admit
        return {n: t for n, t in layer.items()
                if (keep is None or n in keep) and (admit is None or admit(t.spec))}

    # the MCP layer ---------------------------------------------------------------------
    def _set_mcp(self, tools: Iterable[Any]) -> None:
        new = {t.spec.name: t for t in tools}
        old = self._mcp
        if self.active is not None and any(self._is_mcp(n, old) for n in self.active):
            # a filtered set that had MCP tools: swap its MCP layer in place
            self.active = [n for n in self.active if not self._is_mcp(n, old)] + list(new)
        self._mcp = new  # loaded names stay loaded: a server that restarts gets them back
        self._index = None

    async def before_prompt(self) -> bool:
        """Refresh what list_changed marked dirty and swap the MCP layer in; True if it changed."""
        if self._mcp_source is None:
            return await self._refresh_skills()
        if isinstance(self._mcp_source, SettlingSource):
            await self._mcp_source.settle(settle_limit())
        await self._mcp_source.refresh_if_dirty()
        skills_changed = await self._refresh_skills()
        tools = list(self._mcp_source.tools())
        if [t.spec for t in tools] == [t.spec for t in self._mcp.values()]:
            return skills_changed
        self._set_mcp(tools)
        return True

    async def resolve(self, name: str) -> Tool | None:
        """:meth:`get`, or for an MCP tool name not known yet while a server that could own it is
        still starting (a prompt does not wait for the servers that start with the host), the tool
        once that server has connected (bounded by its ``connectTimeout``; the wait is reported as
        the call's progress, :data:`agent_ls.agent.events.tool_progress`): the model may call a
        tool it knows of. A name no starting server could own is looked up again at once."""
        tool = self.get(name)
        source = self._mcp_source
        if tool is not None or not name.startswith(f"{PREFIX}{SEP}") or not isinstance(source, SettlingSource):
            return tool
        waiting = [s for s in source.starting() if naming.could_name(s, name)]
        if waiting:
            await report_progress(waiting_text(waiting))
        await source.settle_tool(name, SEARCH_WAIT_SECONDS)
        await self._take_mcp_layer(source)
        return self.get(name)

    def missing(self, name: str) -> str:
        """Why there is no tool ``name`` to call: the reason of the server that would own it when
        it failed or is still starting (its status error), else that there is no such tool."""
        source = self._mcp_source
        if name.startswith(f"{PREFIX}{SEP}") and isinstance(source, SettlingSource):
            for server in source.server_names():
                if naming.could_name(server, name) and (why := source.server_problem(server)):
                    return f"there is no tool named {name!r} yet: the MCP server {server!r} {why}"
        return f"there is no tool named {name!r}"

    async def _take_mcp_layer(self, source: MCPToolSource) -> None:
        await source.refresh_if_dirty()
        tools = list(source.tools())
        if [t.spec for t in tools] != [t.spec for t in self._mcp.values()]:
            self._set_mcp(tools)

    # servers still starting ------------------------------------------------------------------
    def _admits_mcp(self) -> bool:
        """The active set admits MCP tools (every tool, or a filter that has some or tool_search)."""
        return self.active is None or any(self._is_mcp(n) or n == TOOL_SEARCH for n in self.active)

    def starting_servers(self) -> list[str]:
        """The MCP servers in their first start whose tools are not known yet (``tool_search``
        waits for them; empty when the active set admits no MCP tool)."""
        source = self._mcp_source
        if not isinstance(source, SettlingSource) or not self._admits_mcp():
            return []
        return list(source.starting())

    async def settle_for_search(self, query: str) -> list[str]:
        """Before ``tool_search`` answers ``query``: wait for the starting servers it could be
        about (bounded, each by its ``connectTimeout``), reporting the wait as the call's progress,
        then take their tools in. A ``select:`` query waits for the servers that could own the names
        it gives (every starting server for a name without its server); a keyword query waits for
        every starting server, as any of them could serve a match. Returns the servers waited for."""
        source = self._mcp_source
        starting = self.starting_servers()
        if not starting or not isinstance(source, SettlingSource):
            return []
        waiting = starting
        stripped = query.strip()
        if stripped[: len(SELECT_PREFIX)].lower() == SELECT_PREFIX:
            names = [n.strip() for n in stripped[len(SELECT_PREFIX):].split(",") if n.strip()]
            unknown = [n for n in names if self.index().select([n]).missing]
            full = [n if n.lower().startswith(MCP_PREFIX) else f"{MCP_PREFIX}{n}" for n in unknown]
            owned = {s for s in starting for n in full if naming.could_name(s, n)}
            anyone = any(not any(naming.could_name(s, n) for s in starting) and n.count(SEP) < 2 for n in full)
            waiting = starting if anyone else sorted(owned)
        if not waiting:
            return []
        await report_progress(waiting_text(waiting))
        await source.settle_servers(waiting, SEARCH_WAIT_SECONDS)
        await self._take_mcp_layer(source)
        return waiting

    def problems(self, servers: Iterable[str]) -> dict[str, str]:
        """Why each of ``servers`` offers no tools (failed: its status error; still starting),
        for those that do not."""
        source = self._mcp_source
        if not isinstance(source, SettlingSource):
            return {}
        return {s: why for s in servers if (why := source.server_problem(s))}

    async def _refresh_skills(self) -> bool:
        return await self._skills.refresh() if self._skills is not None else False

    # skills ------------------------------------------------------------------------------
    def _offered_skills(self) -> list[Any]:
        if self._skills is None or (self.active is not None and LOAD_SKILL not in self.active):
            return []
        return list(self._skills.skills())

    def skill_catalogue(self) -> str:
        """The skills the model may load (for the dynamic prompt; empty when none)."""
        return skills_catalogue(self._offered_skills())

    def server_instructions(self) -> str:
        return self._mcp_source.instructions() if self._mcp_source is not None else ""

    # deferral ----------------------------------------------------------------------------
    @property
    def deferring(self) -> bool:
        """``tool_search`` is offered: the known MCP tools are deferred (:attr:`defers_known`), or
        servers are still starting (their tools are not known yet: the search is how the model
        reaches them from the first request on, and it waits for them)."""
        return self.defers_known or bool(self.starting_servers())

    @property
    def defers_known(self) -> bool:
        """The settings defer the MCP tools known now (``deferMcpTools``): else they are offered."""
        allowed = self._allowed_mcp()
        if self._defer is True:
            return bool(allowed)
        if self._defer is False:
            return False
        return len(allowed) >= int(self._defer)

    def deferred_specs(self) -> list[ToolSpec]:
        if not self.defers_known:
            return []
        return [t.spec for n, t in self._allowed_mcp().items() if n not in self.loaded]

    def load(self, names: Iterable[str]) -> None:
        allowed = self._allowed_mcp()
        self.loaded.update(n for n in names if n in allowed)

    def index(self) -> ToolIndex:
        if self._index is None:
            self._index = ToolIndex([t.spec for t in self._allowed_mcp().values()])
        return self._index

    # what the model sees -----------------------------------------------------------------
    def visible(self) -> list[Tool]:
        out: list[Tool] = list(self._allowed_builtins().values())
        if self._skill_tool is not None and self._offered_skills():
            out.append(self._skill_tool)
        mcp = self._allowed_mcp()
        if self.deferring:
            out.append(self._search_tool)
            known = self.defers_known
            out.extend(t for n, t in mcp.items() if n in self.loaded or not known)
        else:
            out.extend(mcp.values())
        return out

    def visible_specs(self) -> list[ToolSpec]:
        return [t.spec for t in self.visible()]

    def get(self, name: str) -> Tool | None:
        """The tool to run for a call: anything the active set admits (deferred MCP tools too)."""
        if name == TOOL_SEARCH:
            return self._search_tool if self.deferring else None
        if name == LOAD_SKILL and self._skill_tool is not None and self._offered_skills():
            return self._skill_tool
        return self._allowed_builtins().get(name) or self._allowed_mcp().get(name)


class ToolSearchTool:
    """Loads deferred MCP tools: ``select:a,b`` by exact name, or a ranked keyword search."""

    def __init__(self, registry: ToolRegistry) -> None:
        self._registry = registry
        self._spec = ToolSpec(
            name=TOOL_SEARCH,
            description=(
                "Load deferred MCP tools: \"select:<full name>,...\" by name, or keywords to search "
                "names, descriptions and servers. Loaded tools are callable from the next step on. A search "
                "waits for the MCP servers still starting that it could be about."
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
        waited = await self._registry.settle_for_search(query)
        result = self._registry.index().search(query, limit=min(limit, 20))
        found = list(result.found)
        self._registry.load(s.name for s in found)
        lines = []
        if found:
            lines.append(f"{LOADED_PREFIX}{len(found)} tool(s); call them from your next step:")
            for s in found:
                desc = (s.description or "").strip().splitlines()
                lines.append(f"- {s.name} (server {s.server}): {desc[0][:200] if desc else ''}")
        else:
            lines.append(f"No MCP tool matches {query!r}.")
        if result.missing:
            lines.append("Not found: " + ", ".join(result.missing))
        for server, why in self._registry.problems(waited).items():
            lines.append(f"The MCP server {server!r} {why}.")
        return ToolResult(content="\n".join(lines), is_error=not found)
