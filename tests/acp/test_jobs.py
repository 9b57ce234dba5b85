"""Background commands over ACP (issue 41) with the OS sandbox on (the default: ``bash`` runs in
agent-ls's own shell, confined): the model starts one, the turn ends at once, and its end reaches
the model's next request; the ACP agent's exit leaves no process behind."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path

import pytest
from acp import text_block

from tests.acp.conftest import AcpSetup, start_agent, wait_for
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.test_jobs import unique_seconds, with_token

pytestmark = pytest.mark.e2e

TASKS_SERVER = Path(__file__).resolve().parents[1] / "servers" / "tasks_server.py"


async def test_the_end_of_a_background_command_reaches_the_next_request(setup: AcpSetup) -> None:
    sleep = f"sleep {unique_seconds('3777')}"  # the leftover check below scans the whole machine
    async with start_agent(setup) as (conn, _proc, _client):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        setup.llm.script(
            tool_calls([("bash", {"command": "sleep 0.5; exit 4", "run_in_background": True}, "c1")]),
            tool_calls([("bash", {"command": f"exec {sleep}", "run_in_background": True}, "c2")]),
            text("started"), text("noted"))
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("start")]), 30)
        assert result.stop_reason == "end_turn"
        await wait_for(lambda: bool(with_token(sleep)), what="the second command running")
        await asyncio.sleep(1.5)
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("news?")]), 30)
        told = "\n".join(str(m.get("content")) for m in setup.llm.requests[-1].body["messages"])
        assert "background command bg-1 (`sleep 0.5; exit 4`) exited with 4" in told, told
        assert "background command bg-2" not in told  # still running: no notice
    for _ in range(100):
        if not with_token(sleep):
            break
        await asyncio.sleep(0.1)
    assert with_token(sleep) == [], "a background command outlived the ACP agent"


async def test_an_mcp_task_is_a_job_of_the_acp_session_whose_turn_started_it(setup: AcpSetup) -> None:
    """An MCP task (the tasks extension) a turn of an ACP session starts returns at once as a job
    of that session (the runtime host's task owner, wired by the ACP host), and its end reaches
    the session's next request."""
    setup.user_settings["mcpServers"] = {"tasks": {"command": sys.executable, "args": [str(TASKS_SERVER)]}}
    setup.user_settings["permissions"] = {"allow": ["mcp__tasks__*"]}
    setup.write()
    async with start_agent(setup) as (conn, _proc, _client):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        setup.llm.script(tool_calls([("mcp__tasks__slow", {"seconds": 1}, "c1")]), text("started"), text("noted"))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("run the long job")]), 60)
        result = [m for m in setup.llm.requests[-1].body["messages"] if m.get("tool_call_id") == "c1"][0]["content"]
        assert "started as bg-1 and the turn goes on" in str(result), result
        await asyncio.sleep(2.0)
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("news?")]), 30)
        told = "\n".join(str(m.get("content")) for m in setup.llm.requests[-1].body["messages"])
        assert "task bg-1 (tasks: slow) completed after" in told, told
