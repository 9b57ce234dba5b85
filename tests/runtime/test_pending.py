"""The MCP host a session sees before the host has started (runtime/pending.py; issue 30 item 2):
nothing offered and the starting servers named until the manager exists, then everything
forwarded to it; it asks for the host at once only when the model names a tool not known yet that
a starting server could own, or kept tools wait to be offered."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_ls.mcp.status import STILL_STARTING
from agent_ls.runtime.pending import PendingHost


class Manager:
    """What the pending host forwards to (the MCP manager's side of the registry's protocols)."""

    def __init__(self) -> None:
        self.settled: list[tuple[str | None, float]] = []

    async def settle(self, timeout: float) -> None:
        self.settled.append((None, timeout))

    async def settle_tool(self, name: str, timeout: float) -> None:
        self.settled.append((name, timeout))

    async def refresh_if_dirty(self) -> bool:
        return True

    def tools(self) -> list[Any]:
        return ["tool"]

    def instructions(self) -> str:
        return "## knob\nconnected\n"


class Host:
    def __init__(self, *, kept: bool = False) -> None:
        self.manager: Manager | None = None
        self.ready = asyncio.Event()
        self.wanted = 0
        self.pending = PendingHost(lambda: self.manager, self.ready, self.want,  # type: ignore[arg-type, return-value]
                                   starting=["slow", "knob"], kept=kept)

    def want(self) -> None:
        self.wanted += 1

    def start(self) -> Manager:
        self.manager = Manager()
        self.ready.set()
        return self.manager


async def test_before_the_host_nothing_is_offered_and_the_starting_servers_are_named() -> None:
    host = Host()
    pending = host.pending
    assert list(pending.tools()) == [] and await pending.refresh_if_dirty() is False
    assert pending.instructions() == f"## knob\n{STILL_STARTING}\n\n## slow\n{STILL_STARTING}\n"
    assert list(pending.skills()) == [] and await pending.refresh() is False
    with pytest.raises(LookupError, match="still starting"):
        await pending.load("knob", "review")
    await asyncio.wait_for(pending.settle(10.0), 1)  # a prompt does not wait for the servers
    await asyncio.wait_for(pending.settle_tool("mcp__typo__x", 10.0), 1)  # nobody's tool: no wait
    assert host.wanted == 0


async def test_a_tool_a_starting_server_could_own_wants_the_host_and_waits_for_it() -> None:
    host = Host()
    settling = asyncio.ensure_future(host.pending.settle_tool("mcp__knob__echo", 10.0))
    await asyncio.sleep(0.05)
    assert host.wanted == 1 and not settling.done()
    manager = host.start()
    await asyncio.wait_for(settling, 5)
    (name, timeout), = manager.settled
    assert name == "mcp__knob__echo" and 0 < timeout <= 10.0  # what is left of the caller's bound


async def test_kept_tools_want_the_host_for_a_prompt() -> None:
    host = Host(kept=True)
    settling = asyncio.ensure_future(host.pending.settle(10.0))
    await asyncio.sleep(0.05)
    assert host.wanted == 1
    manager = host.start()
    await asyncio.wait_for(settling, 5)
    (name, timeout), = manager.settled
    assert name is None and 0 < timeout <= 10.0


async def test_a_host_that_never_starts_bounds_the_wait() -> None:
    host = Host()
    await asyncio.wait_for(host.pending.settle_tool("mcp__slow__x", 0.2), 5)
    host.ready.set()  # its start ended without a manager (it failed)
    await asyncio.wait_for(host.pending.settle_tool("mcp__slow__x", 10.0), 5)
    assert list(host.pending.tools()) == []


async def test_once_the_host_runs_everything_is_forwarded() -> None:
    host = Host()
    manager = host.start()
    pending = host.pending
    assert list(pending.tools()) == ["tool"] and await pending.refresh_if_dirty() is True
    assert pending.instructions() == "## knob\nconnected\n"
    await pending.settle(3.0)
    await pending.settle_tool("mcp__typo__x", 2.0)  # the manager decides: it knows its servers
    assert manager.settled == [(None, 3.0), ("mcp__typo__x", 2.0)] and host.wanted == 0
