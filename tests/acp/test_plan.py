"""`agent-ls acp`: the model's plan as ``plan`` session updates (issue 28 item 4), after each
change and again on session/load in a new process."""

from __future__ import annotations

import asyncio

import pytest
from acp import text_block

from tests.acp.conftest import AcpSetup, start_agent
from tests.llm.scripted_server import text, tool_calls

pytestmark = pytest.mark.e2e


async def test_plan_updates_after_each_change_and_on_load(setup: AcpSetup) -> None:
    first = [{"content": "Read the code", "status": "in_progress", "priority": "high"},
             {"content": "Fix the bug", "status": "pending"}]
    second = [{"content": "Read the code", "status": "completed", "priority": "high"},
              {"content": "Fix the bug", "status": "in_progress"}]
    setup.llm.script(tool_calls([("update_plan", {"steps": first})]),
                     tool_calls([("update_plan", {"steps": second})]),
                     text("On it."))
    async with start_agent(setup) as (conn, _proc, client):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("fix it")]), 60)
        assert result.stop_reason == "end_turn"
        plans = client.of(sid, "plan")
        assert [[(e.content, e.status, e.priority) for e in p.entries] for p in plans] == [
            [("Read the code", "in_progress", "high"), ("Fix the bug", "pending", "medium")],
            [("Read the code", "completed", "high"), ("Fix the bug", "in_progress", "medium")],
        ]
        assert {u.kind for u in client.of(sid, "tool_call")} == {"think"}  # the plan tool's calls
        # the raw wire carries the spec's field names and values
        wire = [m["params"]["update"] for m in client.messages
                if m.get("method") == "session/update" and m["params"]["update"].get("sessionUpdate") == "plan"]
        assert wire[-1]["entries"][0] == {"content": "Read the code", "status": "completed", "priority": "high"}

    async with start_agent(setup) as (conn, _proc, client):
        await asyncio.wait_for(conn.load_session(cwd=str(setup.ws), session_id=sid, mcp_servers=[]), 30)
        loaded = client.of(sid, "plan")
        assert len(loaded) == 1
        assert [(e.content, e.status) for e in loaded[0].entries] == [("Read the code", "completed"),
                                                                      ("Fix the bug", "in_progress")]
