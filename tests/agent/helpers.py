"""Helpers shared by the agent tests.

For the built-in tool and workspace tests: a temporary workspace root (``root``), the
root-escaping layout of the confinement tests (``layout``), and direct calls to the tools. For
the turn loop tests: a timed MCP-like tool, a tool source serving it, and the history check."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.builtin_tools import builtin_tools
from agent_ls.agent.workspace import Workspace
from agent_ls.core.tools import Capability, Tool, ToolResult, ToolSpec

SECRET = "TOP-SECRET-CONTENT"


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "ws"
    r.mkdir()
    return r


def tools_for(root: Path, **kw: Any) -> dict[str, Tool]:
    return {t.spec.name: t for t in builtin_tools(Workspace([root]), **kw)}


async def call(root: Path, name: str, **args: Any) -> ToolResult:
    return await tools_for(root)[name].call(args)


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """<tmp>/ws (the root), <tmp>/outside/secret.txt, <tmp>/ws2 (a sibling sharing the prefix)."""
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    sibling = tmp_path / "ws2"
    for d in (ws, outside, sibling):
        d.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    (sibling / "secret.txt").write_text(SECRET + "\n")
    (ws / "inside.txt").write_text("inside\n")
    (ws / "sub").mkdir()
    return {"ws": ws, "outside": outside, "sibling": sibling, "tmp": tmp_path}


def tools(*roots: Path) -> dict[str, Tool]:
    return {t.spec.name: t for t in builtin_tools(Workspace(list(roots)))}


async def run(ts: dict[str, Tool], name: str, **args: Any) -> ToolResult:
    return await ts[name].call(args)


def assert_refused(r: ToolResult) -> None:
    assert r.is_error, r.content
    assert "outside the workspace" in r.content, r.content
    assert SECRET not in r.content


class Timed:
    """An MCP-like tool that records when each call started and ended."""

    def __init__(self, name: str, cap: Capability, log: list[tuple[str, str, float]], delay: float = 0.25) -> None:
        self.spec = ToolSpec(name=name, description=f"{cap.value} tool", input_schema={"type": "object"},
                             capability=cap, source="mcp", server="s", display_name=name.rsplit("__", 1)[-1])
        self.log = log
        self.delay = delay

    async def call(self, arguments: dict[str, Any]) -> ToolResult:
        self.log.append((self.spec.name, "start", time.perf_counter()))
        await asyncio.sleep(self.delay)
        self.log.append((self.spec.name, "end", time.perf_counter()))
        return ToolResult(content=f"{self.spec.name} done")


class Source:
    def __init__(self, tools: list[Any]) -> None:
        self._tools = tools

    async def refresh_if_dirty(self) -> bool:
        return False

    def tools(self) -> list[Any]:
        return self._tools

    def instructions(self) -> str:
        return ""


def assert_history_consistent(messages: list[dict[str, Any]]) -> None:
    """Every tool call is answered, right after its assistant message, in order."""
    i = 0
    while i < len(messages):
        m = messages[i]
        ids = [c["id"] for c in m.get("tool_calls") or []]
        if ids:
            answers = [x["tool_call_id"] for x in messages[i + 1 : i + 1 + len(ids)]]
            assert answers == ids, (ids, answers)
            i += len(ids)
        elif m.get("role") == "tool":
            raise AssertionError(f"tool result without a call: {m}")
        i += 1
