"""Tools ready before the servers connect, through the real language server: the second time
the editor opens, a slow server's tools are in the servers view and in the model's tool list
right after ``initialize`` (from the catalogue kept in the data folder), and the agent's call
to one of them waits for the server instead of failing."""

from __future__ import annotations

import pytest

from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Setup, close_editor, open_editor
from tests.servers.launch import knob_stdio_params

pytestmark = pytest.mark.e2e


async def test_a_slow_servers_tools_are_ready_right_after_initialize(setup: Setup) -> None:
    slow = setup.root / "slow-start"
    setup.user_settings["mcpServers"]["knob"] = knob_stdio_params("--slow-start-file", str(slow))
    ed = await open_editor(setup)
    try:
        first = await ed.wait_state("knob", "connected")
        tools = sorted(t["name"] for t in first["tools"])
        assert "mcp__knob__echo" in tools
    finally:
        await close_editor(ed)
    assert (setup.data / "mcp-catalogue").is_dir()

    slow.write_text("5")  # from now on the server takes 5 s before it answers anything
    ed = await open_editor(setup)
    try:
        # The very first answer, while the host may still be loading the MCP SDK, already has
        # every tool kept from the last connection (agent_ls.mcp.preview).
        early = (await ed.status())["knob"]
        assert early["state"] == "starting"
        assert sorted(t["name"] for t in early["tools"]) == tools
        status = await ed.wait_state("knob", ("starting", "connected"))  # once the host is up
        assert status["state"] == "starting"
        assert sorted(t["name"] for t in status["tools"]) == tools
        assert status["toolCount"] == len(tools)

        setup.llm.script(tool_calls([("mcp__knob__echo", {"text": "from the kept catalogue"})]), text("done"))
        result = await ed.request(P.PROMPT, {"text": "echo something"})
        assert result["text"] == "done"
        offered = [t["function"]["name"] for t in setup.llm.requests[0].body["tools"]]
        assert "mcp__knob__echo" in offered
        finished = next(e for e in ed.session_events() if e["type"] == "tool_call_finished")
        assert finished["content"] == "from the kept catalogue" and not finished["isError"]
        assert (await ed.status())["knob"]["state"] == "connected"
    finally:
        await close_editor(ed)
