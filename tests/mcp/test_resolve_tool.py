"""``MCPManager.resolve_tool`` (issue 29 item 4): the one place that finds a tool to call,
waiting for a server that is (re)connecting, or says clearly why there is none."""

from __future__ import annotations

import asyncio

import pytest

from agent_ls.mcp.manager import ToolUnavailable
from tests.mcp.conftest import HostEnv
from tests.servers.launch import knob_stdio_params


async def test_resolve_tool_waits_for_a_restarting_server_and_explains_failures(host: HostEnv) -> None:
    m = await host.manager({
        "k": knob_stdio_params(),
        "badvar": {"command": "x", "env": {"T": "${NOPE_NOT_SET_123}"}},
        "slow": {**knob_stdio_params("--slow-handshake", "30"), "connectTimeout": 1.5},
    }, wait=20)
    await m.restart("k")  # a settings change or a trust decision: the server is starting again
    conn = m.connection("k")
    assert conn is not None and conn.settling
    tool = await m.resolve_tool("k", "echo")  # waited for it, then found it
    assert conn.connected and tool.spec.name == "mcp__k__echo"
    res = await tool.call({"text": "after the restart"})
    assert not res.is_error and res.content == "after the restart"
    await m.restart("k")
    assert (await m.resolve_tool("k", "mcp__k__echo")).spec.display_name == "echo"  # the model-facing name too

    with pytest.raises(ToolUnavailable, match="has no tool named 'nope'"):
        await m.resolve_tool("k", "nope")
    with pytest.raises(ToolUnavailable, match="no MCP server named 'ghost' is configured"):
        await m.resolve_tool("ghost", "echo")
    with pytest.raises(ToolUnavailable, match=r"'badvar' is not connected \(failed: .*NOPE_NOT_SET_123"):
        await m.resolve_tool("badvar", "echo")
    with pytest.raises(ToolUnavailable, match=r"'slow' is not connected \(failed; handshake: .*1\.5s"):
        await m.resolve_tool("slow", "echo")


async def test_resolve_tool_waits_at_most_the_connect_timeout(host: HostEnv) -> None:
    """A server whose restart hangs in the handshake: the wait ends with its connect timeout,
    and the answer says it is not connected."""
    m = await host.manager({"k": {**knob_stdio_params(), "connectTimeout": 1.0}}, wait=20)
    host.write_user({"k": {**knob_stdio_params("--slow-handshake", "30"), "connectTimeout": 1.0}})
    await m.apply(host.load())  # changed: restarted, and its handshake now hangs
    with pytest.raises(ToolUnavailable, match=r"'k' is not connected \(still starting after 1s, its connectTimeout"):
        await asyncio.wait_for(m.resolve_tool("k", "echo"), 30)  # never waits past its connect timeout
