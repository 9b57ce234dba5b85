"""`agent-ls acp` and MCP Apps: ACP cannot show an app, so a tool with one ends with its text
result and a line saying it has an app this client cannot show (tests/servers/apps_server.py)."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from acp import text_block

from tests.acp.conftest import AcpSetup, RecordingClient, start_agent
from tests.llm.scripted_server import text, tool_calls
from tests.servers import apps_server

pytestmark = pytest.mark.e2e


async def test_a_tool_with_an_app_shows_its_text_and_says_it_has_an_app(setup: AcpSetup) -> None:
    setup.user_settings["mcpServers"] = {"apps": {"command": sys.executable, "args": [str(Path(apps_server.__file__))],
                                                  "connectTimeout": 60}}
    setup.write()
    setup.llm.script(tool_calls([("mcp__apps__show_board", {"title": "q3"}, "call_board")]), text("Shown."))
    async with start_agent(setup, RecordingClient()) as (conn, _proc, client):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("show the board")]), 120)
        assert result.stop_reason == "end_turn"
        done = [u for u in client.of(sid) if getattr(u, "tool_call_id", None) == "call_board"][-1]
        texts = [b.content.text for b in done.content or [] if getattr(b.content, "text", None)]
        assert any("board for q3" in t for t in texts), texts
        assert any("has an interactive app (ui://apps/board.html) that this client cannot show" in t
                   for t in texts), texts
