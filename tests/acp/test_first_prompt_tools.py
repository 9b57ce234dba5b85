"""`agent-ls acp`: the first prompt can use the tools of an MCP server still starting (issue 44
item 1). The knob server serves only once the test creates its gate file (``--start-gate``), which
the test does when the client has been shown the wait: nothing depends on timing."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp import text_block

from tests.acp.conftest import AcpSetup, RecordingClient, start_agent
from tests.llm.scripted_server import text, tool_calls
from tests.servers.launch import knob_stdio_params

pytestmark = pytest.mark.e2e


class GateClient(RecordingClient):
    """Opens the server's gate when a tool call's update shows the wait for it."""

    def __init__(self, gate: Any) -> None:
        super().__init__()
        self.gate = gate

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        await super().session_update(session_id, update, **kwargs)
        for block in getattr(update, "content", None) or []:
            inner = getattr(block, "content", None)
            if "waiting for the MCP server 'knob'" in (getattr(inner, "text", None) or ""):
                self.gate.touch()


async def test_the_first_prompt_searches_waits_for_a_starting_server_and_uses_its_tool(setup: AcpSetup) -> None:
    gate = setup.root / "gate"
    setup.user_settings["mcpServers"] = {"knob": {**knob_stdio_params("--start-gate", gate), "connectTimeout": 120}}
    setup.write()
    setup.llm.script(
        tool_calls([("tool_search", {"query": "select:mcp__knob__add"}, "call_search")]),
        tool_calls([("mcp__knob__add", {"a": 2, "b": 3}, "call_add")]),
        text("It is 5."),
    )
    client = GateClient(gate)
    async with start_agent(setup, client) as (conn, _proc, client):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("add 2 and 3")]), 120)
        assert result.stop_reason == "end_turn"
        assert gate.exists()
        assert "tool_search" in [t["function"]["name"] for t in setup.llm.requests[0].body.get("tools") or []]
        search = [u for u in client.of(sid) if getattr(u, "tool_call_id", None) == "call_search"]
        statuses = [u.status for u in search]
        assert statuses[0] == "in_progress" and statuses[-1] == "completed", statuses
        waits = [u for u in search[1:-1] if u.content]
        assert waits and "waiting for the MCP server 'knob' to start" in waits[0].content[0].content.text
        add = [m for m in setup.llm.requests[2].body["messages"] if m.get("tool_call_id") == "call_add"]
        assert add and add[0]["content"] == "5", add
        assert client.text(sid) == "It is 5."
