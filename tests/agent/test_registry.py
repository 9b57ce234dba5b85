"""The tool registry: the before-prompt hook that swaps the MCP layer, deferral, tool_search.

The MCP layer comes from a small in-memory source that implements the registry's
MCPToolSource protocol (the real manager behind it is exercised in test_mcp_e2e.py).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.builtin_tools import builtin_tools
from agent_ls.agent.tools.registry import TOOL_SEARCH, ToolRegistry
from agent_ls.agent.workspace import Workspace
from agent_ls.core.tools import Capability, ToolResult, ToolSpec

BUILTINS = ["bash", "edit_file", "glob", "grep", "read_file", "read_output", "update_plan", "write_file"]


class FakeMCPTool:
    def __init__(self, server: str, name: str, description: str = "", cap: Capability = Capability.READ) -> None:
        self.spec = ToolSpec(name=f"mcp__{server}__{name}", description=description or f"{name} on {server}",
                             input_schema={"type": "object"}, capability=cap, source="mcp", server=server,
                             display_name=name)
        self.calls: list[dict[str, Any]] = []

    async def call(self, arguments: dict[str, Any]) -> ToolResult:
        self.calls.append(arguments)
        return ToolResult(content=f"{self.spec.name} ran")


class Source:
    """What the MCP manager offers the registry: tools, a dirty flag, refresh counts."""

    def __init__(self, tools: list[FakeMCPTool], instructions: str = "") -> None:
        self._tools = tools
        self.pending: list[FakeMCPTool] | None = None
        self.refreshes = 0
        self._instructions = instructions

    def change(self, tools: list[FakeMCPTool]) -> None:
        self.pending = tools  # list_changed: applied by the next refresh only

    async def refresh_if_dirty(self) -> bool:
        self.refreshes += 1
        if self.pending is None:
            return False
        self._tools, self.pending = self.pending, None
        return True

    def tools(self) -> list[FakeMCPTool]:
        return sorted(self._tools, key=lambda t: t.spec.name)

    def instructions(self) -> str:
        return self._instructions


def tools(*names: str, server: str = "s") -> list[FakeMCPTool]:
    return [FakeMCPTool(server, n) for n in names]


def registry(tmp_path: Path, source: Source | None, **kw: Any) -> ToolRegistry:
    return ToolRegistry(builtin_tools(Workspace([tmp_path])), source, **kw)


def names(reg: ToolRegistry) -> list[str]:
    return [s.name for s in reg.visible_specs()]


# --- the before-prompt hook -------------------------------------------------------------------


async def test_mirror_all_keeps_mirroring(tmp_path: Path) -> None:
    src = Source(tools("a", "b"))
    reg = registry(tmp_path, src, defer=False)
    assert names(reg) == [*BUILTINS, "mcp__s__a", "mcp__s__b"]
    assert await reg.before_prompt() is False and src.refreshes == 1
    src.change(tools("b", "c"))
    assert names(reg) == [*BUILTINS, "mcp__s__a", "mcp__s__b"]  # nothing changes before the hook
    assert await reg.before_prompt() is True
    assert names(reg) == [*BUILTINS, "mcp__s__b", "mcp__s__c"]
    assert reg.active is None
    assert reg.get("mcp__s__a") is None and reg.get("mcp__s__c") is not None


async def test_filtered_set_with_mcp_tools_swaps_them_in_place(tmp_path: Path) -> None:
    src = Source(tools("a", "b"))
    reg = registry(tmp_path, src, defer=False)
    reg.set_active(["read_file", "grep", "mcp__s__a"])
    assert names(reg) == ["grep", "read_file", "mcp__s__a"]
    assert reg.get("bash") is None and reg.get("mcp__s__b") is None  # not offered, not callable
    src.change(tools("a", "c", "d"))
    assert await reg.before_prompt() is True
    # the non-MCP part of the filter is untouched; the MCP part is the new layer
    assert reg.active == ["read_file", "grep", "mcp__s__a", "mcp__s__c", "mcp__s__d"]
    assert names(reg) == ["grep", "read_file", "mcp__s__a", "mcp__s__c", "mcp__s__d"]
    assert reg.get("bash") is None and reg.get("mcp__s__d") is not None


async def test_filtered_set_without_mcp_tools_is_left_alone(tmp_path: Path) -> None:
    src = Source(tools("a"))
    reg = registry(tmp_path, src, defer=True)
    reg.set_active(["read_file", "glob", "grep"])
    assert names(reg) == ["glob", "grep", "read_file"]  # no tool_search either: nothing to find
    assert reg.deferred_specs() == [] and not reg.deferring
    src.change(tools("a", "b", "c"))
    assert await reg.before_prompt() is True
    assert reg.active == ["read_file", "glob", "grep"]
    assert names(reg) == ["glob", "grep", "read_file"]
    assert reg.get("mcp__s__b") is None and reg.get(TOOL_SEARCH) is None
    assert reg.index().search("select:mcp__s__b").missing == ("mcp__s__b",)


async def test_builtin_tools_never_change(tmp_path: Path) -> None:
    src = Source(tools("a"))
    reg = registry(tmp_path, src)
    before = [reg.get(n) for n in BUILTINS]
    src.change([FakeMCPTool("s", "read_file"), FakeMCPTool("bash", "x")])
    await reg.before_prompt()
    assert [reg.get(n) for n in BUILTINS] == before
    assert reg.get("read_file") is before[BUILTINS.index("read_file")]


async def test_unchanged_refresh_keeps_the_same_objects(tmp_path: Path) -> None:
    src = Source(tools("a", "b"))
    reg = registry(tmp_path, src, defer=False)
    first = reg.visible()
    src.change(tools("a", "b"))  # list_changed with an identical tool set
    assert await reg.before_prompt() is False
    assert [s.to_openai() for s in reg.visible_specs()] == [t.spec.to_openai() for t in first]


# --- deferral ---------------------------------------------------------------------------------


@pytest.mark.parametrize(("defer", "count", "deferring"), [
    (True, 1, True), (True, 0, False), (False, 60, False), (3, 2, False), (3, 3, True), (0, 1, True)])
def test_deferral_setting_and_threshold(tmp_path: Path, defer: bool | int, count: int, deferring: bool) -> None:
    reg = registry(tmp_path, Source(tools(*(f"t{i}" for i in range(count)))), defer=defer)
    assert reg.deferring is deferring
    visible = names(reg)
    assert (TOOL_SEARCH in visible) is deferring
    mcp_visible = [n for n in visible if n.startswith("mcp__")]
    assert len(mcp_visible) == (0 if deferring else count)
    assert len(reg.deferred_specs()) == (count if deferring else 0)


async def test_tool_search_select_loads_exact_tools_from_the_next_call_on(tmp_path: Path) -> None:
    src = Source(tools("alpha", "beta", "gamma"))
    reg = registry(tmp_path, src)
    search = reg.get(TOOL_SEARCH)
    assert search is not None and search.spec.capability is Capability.READ
    r = await search.call({"query": "select:mcp__s__beta,s__gamma,nope"})
    assert not r.is_error
    assert "mcp__s__beta" in r.content and "mcp__s__gamma" in r.content and "Not found: nope" in r.content
    assert [n for n in names(reg) if n.startswith("mcp__")] == ["mcp__s__beta", "mcp__s__gamma"]
    assert [s.name for s in reg.deferred_specs()] == ["mcp__s__alpha"]
    # loaded tools survive refreshes, even one where the server briefly lost them
    src.change(tools("alpha"))
    await reg.before_prompt()
    src.change(tools("alpha", "beta", "gamma", "delta"))
    await reg.before_prompt()
    assert [n for n in names(reg) if n.startswith("mcp__")] == ["mcp__s__beta", "mcp__s__gamma"]
    assert [s.name for s in reg.deferred_specs()] == ["mcp__s__alpha", "mcp__s__delta"]


async def test_tool_search_keywords_rank_and_load(tmp_path: Path) -> None:
    src = Source([FakeMCPTool("github", "create_issue", "Create a new issue in a GitHub repository."),
                  FakeMCPTool("github", "list_commits", "List the commits of a branch."),
                  FakeMCPTool("db", "drop_table", "Delete a table from the database.", Capability.WRITE),
                  FakeMCPTool("db", "read_query", "Run a SELECT query against the database.")])
    reg = registry(tmp_path, src)
    search = reg.get(TOOL_SEARCH)
    assert search is not None
    r = await search.call({"query": "remove a database table", "limit": 1})
    assert not r.is_error and r.content.splitlines()[1].startswith("- mcp__db__drop_table (server db)")
    assert reg.loaded == {"mcp__db__drop_table"}
    r = await search.call({"query": "zebra unicorn"})
    assert r.is_error and "No MCP tool matches" in r.content
    r = await search.call({"query": "  "})
    assert r.is_error and "non-empty" in r.content
    r = await search.call({"query": "open a ticket on github"})
    assert r.content.splitlines()[1].startswith("- mcp__github__create_issue")
    assert "mcp__github__create_issue" in names(reg)


async def test_tool_search_only_sees_the_active_mcp_tools(tmp_path: Path) -> None:
    reg = registry(tmp_path, Source(tools("keep", "hidden")))
    reg.set_active([*BUILTINS, "mcp__s__keep"])
    assert [s.name for s in reg.deferred_specs()] == ["mcp__s__keep"]
    search = reg.get(TOOL_SEARCH)
    assert search is not None
    r = await search.call({"query": "select:mcp__s__hidden"})
    assert r.is_error and "mcp__s__hidden" not in reg.loaded
    reg.load(["mcp__s__hidden", "read_file"])  # neither can be loaded
    assert reg.loaded == set()


async def test_deferred_tools_can_still_be_called_by_name(tmp_path: Path) -> None:
    src = Source(tools("a"))
    reg = registry(tmp_path, src)
    tool = reg.get("mcp__s__a")
    assert tool is not None and "mcp__s__a" not in names(reg)
    assert (await tool.call({})).content == "mcp__s__a ran"
