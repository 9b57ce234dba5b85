"""What a prompt waits for (issue 30 item 2): not for the servers starting with the host (the
editor just opened, one of them may take 12 s: the first prompt goes to the model at once, with
tool_search to reach their tools, issue 44), but for a server the user started again (a restart, a
trust decision, a settings change: issue 15's race) before it offers its tools."""

from __future__ import annotations

import asyncio

import pytest

from agent_ls.agent.tools import registry as registry_module
from agent_ls.agent.tools.registry import ToolRegistry
from agent_ls.mcp.status import STILL_STARTING, State
from tests.mcp.conftest import HostEnv
from tests.servers.launch import knob_stdio_params

HANG_GUARD = 60.0
"""Only a guard against a hang: a prompt that waits for the server waits (the patched) hour."""


async def test_a_prompt_does_not_wait_for_the_hosts_first_start_but_for_a_restart(
        host: HostEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(registry_module, "SETTLE_SECONDS", 3600.0)  # a wait would be seen as a hang
    slow = host.root / "slow"
    slow.write_text("3600")  # starting until the test lets it go
    m = await host.manager({"k": knob_stdio_params("--slow-start-file", str(slow))}, wait=0)
    conn = m.connection("k")
    assert conn is not None and conn.state is State.STARTING
    registry = ToolRegistry([], m, defer=False)

    await asyncio.wait_for(registry.before_prompt(), HANG_GUARD)
    assert conn.state is State.STARTING, "the prompt went ahead while the server starts"
    # no tool of it yet: tool_search is how the model reaches it (it waits for it; issue 44)
    assert [s.name for s in registry.visible_specs()] == ["tool_search"]
    assert f"## k\n{STILL_STARTING}" in registry.server_instructions()  # the model is told why

    slow.write_text("1")
    await m.restart("k")  # the user's doing: the next prompt waits for it and sees its tools
    await asyncio.wait_for(registry.before_prompt(), HANG_GUARD)
    assert conn.state is State.CONNECTED
    assert "mcp__k__echo" in [s.name for s in registry.visible_specs()]
    assert "tool_search" not in [s.name for s in registry.visible_specs()]  # deferMcpTools false
    assert STILL_STARTING not in registry.server_instructions()


async def test_a_call_of_an_unknown_tool_waits_only_for_the_server_that_could_own_it(
        host: HostEnv, monkeypatch: pytest.MonkeyPatch) -> None:
    """The model calls an MCP tool not known yet while servers start with the host: a name no
    starting server could own (``mcp__typo__echo``) is "no tool" at once, a tool of a starting
    server waits for that server only."""
    monkeypatch.setattr(registry_module, "SETTLE_SECONDS", 3600.0)  # a wait for "k" would be seen as a hang
    slow = host.root / "slow"
    slow.write_text("3600")  # "k" is starting until the end of the test
    m = await host.manager({"k": knob_stdio_params("--slow-start-file", str(slow)),
                            "j": knob_stdio_params("--slow-start", "1")}, wait=0)
    k, j = m.connection("k"), m.connection("j")
    assert k is not None and j is not None and k.state is State.STARTING
    registry = ToolRegistry([], m, defer=False)

    assert await asyncio.wait_for(registry.resolve("mcp__typo__echo"), HANG_GUARD) is None
    assert k.state is State.STARTING

    tool = await asyncio.wait_for(registry.resolve("mcp__j__echo"), HANG_GUARD)
    assert tool is not None and tool.spec.server == "j"
    assert j.state is State.CONNECTED and k.state is State.STARTING


async def test_a_call_while_a_changed_server_is_replaced_waits_for_the_new_one(host: HostEnv) -> None:
    """A settings change (a workspace trust decision, say) replaces a server: its new connection
    is starting, not stopped, while the old one closes, so a call of one of its tools made in that
    window waits for it instead of answering "no tool" (the e2e's first prompt met this once the
    prompt no longer waited for the model library)."""
    m = await host.manager({"k": knob_stdio_params()})
    old = m.connection("k")
    assert old is not None and old.state is State.CONNECTED
    host.write_user({"k": {**knob_stdio_params(), "env": {"KNOB_CHANGED": "1"}}})
    applying = asyncio.ensure_future(m.apply(host.load()))
    for _ in range(10_000):  # until the new connection is in place (the old one is closing)
        if m.connection("k") is not old:
            break
        await asyncio.sleep(0)
    new = m.connection("k")
    assert new is not None and new is not old and not applying.done()
    assert new.settling, f"the replacing connection is {new.state.value} while the old one closes"
    registry = ToolRegistry([], m, defer=False)
    tool = await asyncio.wait_for(registry.resolve("mcp__k__echo"), HANG_GUARD)
    assert tool is not None and tool.spec.server == "k"
    await applying
