"""The first prompt can reach the MCP tools (issue 44 item 1), with the real MCP manager and real
knob servers made to start late on purpose (``--start-gate``: serving only once the test lets
them, so nothing here depends on timing).

A prompt does not wait for the servers starting with the host; ``tool_search`` is offered from the
first request all the same (also with ``deferMcpTools: false``, and before the host exists), and a
search waits for the servers it could be about, showing the wait as the call's progress, then
answers with the real tools, or with the reason a server failed meanwhile.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.events import Event, ToolCallFinished, ToolCallProgress
from agent_ls.agent.prompt import STARTING_MARK, deferred_catalogue
from agent_ls.agent.tool_runner import ToolCall, ToolRunner
from agent_ls.agent.tools.registry import TOOL_SEARCH, ToolRegistry
from agent_ls.mcp.manager import MCPManager
from agent_ls.mcp.status import State
from agent_ls.runtime.pending import PendingHost
from tests.mcp.conftest import HostEnv
from tests.servers.launch import knob_stdio_params

GUARD = 60.0
"""Only a guard against a hang (a gated server is released by the test, never by time)."""


@pytest.fixture
async def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[HostEnv]:
    monkeypatch.setenv("AGENT_LS_DATA_DIR", str(tmp_path / "data"))
    env = HostEnv(tmp_path)
    yield env
    for m in env.managers:
        await m.close()


def gated(gate: Path, *args: Any, connect_timeout: float = GUARD) -> dict[str, Any]:
    return {**knob_stdio_params("--start-gate", str(gate), *args), "connectTimeout": connect_timeout}


class Events:
    """The call's events; the gates named in ``release`` are opened when its progress arrives."""

    def __init__(self, *release: Path) -> None:
        self.events: list[Event] = []
        self.release = release

    def __call__(self, event: Event) -> None:
        self.events.append(event)
        if isinstance(event, ToolCallProgress):
            for gate in self.release:
                gate.touch()

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def progress(self) -> list[str]:
        return [e.message for e in self.events if isinstance(e, ToolCallProgress)]


async def search(registry: ToolRegistry, query: str, sink: Events) -> ToolCallFinished:
    runner = ToolRunner(None, resolve=registry.resolve, missing=registry.missing)
    await asyncio.wait_for(runner.run(ToolCall("c1", TOOL_SEARCH, {"query": query}), registry.get(TOOL_SEARCH), sink),
                           GUARD)
    finished = sink.events[-1]
    assert isinstance(finished, ToolCallFinished)
    return finished


def names(registry: ToolRegistry) -> list[str]:
    return [s.name for s in registry.visible_specs()]


@pytest.mark.parametrize("defer", [True, False])
async def test_tool_search_is_offered_while_a_server_starts(host: HostEnv, defer: bool) -> None:
    """No tool of the starting server is known, deferral or not: ``tool_search`` is offered and
    the deferred catalogue names the server as starting (on main: no tool_search, nothing listed)."""
    m = await host.manager({"k": gated(host.root / "gate")}, wait=0)
    registry = ToolRegistry([], m, defer=defer)
    await asyncio.wait_for(registry.before_prompt(), GUARD)  # a prompt does not wait for it
    assert m.connection("k").state is State.STARTING  # type: ignore[union-attr]
    assert names(registry) == [TOOL_SEARCH]
    assert registry.starting_servers() == ["k"]
    assert f"k: {STARTING_MARK}" in deferred_catalogue(registry.deferred_specs(), registry.starting_servers())


async def test_a_search_naming_the_starting_server_waits_for_it_and_finds_its_tool(host: HostEnv) -> None:
    gate = host.root / "gate"
    m = await host.manager({"k": gated(gate)}, wait=0)
    registry = ToolRegistry([], m)
    await registry.before_prompt()
    sink = Events(gate)  # the server starts once the wait has been shown
    done = await search(registry, "select:mcp__k__echo", sink)
    assert sink.types() == ["tool_call_started", "tool_call_progress", "tool_call_finished"]
    assert sink.progress() == ["waiting for the MCP server 'k' to start (at most its connectTimeout)"]
    assert not done.is_error and "mcp__k__echo" in done.content, done.content
    assert "mcp__k__echo" in names(registry)  # loaded: callable from the next step


async def test_a_keyword_search_waits_for_every_starting_server_and_a_select_only_for_its_own(
        host: HostEnv) -> None:
    """A keyword could match any starting server's tools: the search waits for them all (each
    bounded by its connectTimeout). ``select:`` of a tool of ``j`` waits for ``j`` only, while
    ``k`` is still starting."""
    gate_k, gate_j = host.root / "gate-k", host.root / "gate-j"
    m = await host.manager({"k": gated(gate_k), "j": gated(gate_j)}, wait=0)
    registry = ToolRegistry([], m)
    done = await search(registry, "select:j__echo", Events(gate_j))
    assert not done.is_error and "mcp__j__echo" in done.content
    assert registry.starting_servers() == ["k"]
    sink = Events(gate_k)
    done = await search(registry, "echo", sink)
    assert sink.progress() == ["waiting for the MCP server 'k' to start (at most its connectTimeout)"]
    assert "mcp__k__echo" in done.content and "mcp__j__echo" in done.content, done.content
    assert registry.starting_servers() == []


async def test_a_server_that_fails_meanwhile_is_reported_with_its_reason(host: HostEnv) -> None:
    """The search waits, the server fails: the result names the server and its status error, not
    just "no tool" (a call of one of its tools says the same)."""
    gate = host.root / "gate"
    m = await host.manager({"broken": gated(gate, "--exit-during-handshake", "3")}, wait=0)
    registry = ToolRegistry([], m)
    done = await search(registry, "select:mcp__broken__echo", Events(gate))
    status = next(s for s in m.status() if s.name == "broken")
    assert status.state == "failed" and status.error is not None
    assert done.is_error
    assert f"The MCP server 'broken' failed ({status.error['phase']}: {status.error['message']})" in done.content, \
        done.content
    runner = ToolRunner(None, resolve=registry.resolve, missing=registry.missing)
    call = await runner.run(ToolCall("c2", "mcp__broken__echo", {}), registry.get("mcp__broken__echo"))
    assert call.result.is_error and "'broken' failed (" in call.result.content, call.result.content


async def test_before_the_host_exists_a_search_starts_it_and_waits_for_the_server(host: HostEnv) -> None:
    """The session was built while the host's start waits for the model library (a
    :class:`PendingHost`): tool_search is offered all the same, and a search starts the host at
    once (without waiting for the model library), waits for the server, and finds its tool."""
    gate = host.root / "gate"
    host.write_user({"k": gated(gate)})
    ready = asyncio.Event()
    managers: list[MCPManager] = []
    wanted: list[asyncio.Task[None]] = []

    async def start() -> None:
        managers.append(await host.manager(wait=0))
        ready.set()

    def want() -> None:
        if not wanted:
            wanted.append(asyncio.ensure_future(start()))

    pending = PendingHost(lambda: managers[0] if managers else None, ready, want, starting=["k"])
    registry = ToolRegistry([], pending)
    await asyncio.wait_for(registry.before_prompt(), GUARD)
    assert not wanted, "a prompt started the host"
    assert names(registry) == [TOOL_SEARCH] and registry.starting_servers() == ["k"]
    sink = Events(gate)
    done = await search(registry, "add two numbers", sink)
    assert wanted and sink.progress(), sink.types()
    assert not done.is_error and "mcp__k__" in done.content, done.content


async def test_a_call_of_a_tool_of_a_starting_server_starts_its_card_then_names_its_server(host: HostEnv) -> None:
    """The model calls ``mcp__k__echo`` while ``k`` starts: the call starts at once (its card),
    shows the wait, then starts again with its server and own name once found, and runs."""
    gate = host.root / "gate"
    m = await host.manager({"k": gated(gate)}, wait=0)
    registry = ToolRegistry([], m)
    sink = Events(gate)
    runner = ToolRunner(None, resolve=registry.resolve, missing=registry.missing)
    out = await asyncio.wait_for(runner.run(ToolCall("c3", "mcp__k__echo", {"text": "hi"}),
                                            registry.get("mcp__k__echo"), sink), GUARD)
    assert sink.types() == ["tool_call_started", "tool_call_progress", "tool_call_started", "tool_call_finished"]
    first, again = (e for e in sink.events if e.type == "tool_call_started")
    assert (first.server, again.server, again.display_name) == (None, "k", "echo")  # type: ignore[union-attr]
    assert not out.result.is_error and out.result.content == "hi"
