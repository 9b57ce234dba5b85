"""Subagents over ACP (issue 42): a child's tool calls are tool calls of the session, titled with
the agent's name (``_meta.agentLs.subagent`` names the agent call they belong to); a child's
``bash`` asks the client (``session/request_permission``, the reason naming the agent and its
task), one question at a time, and each answer reaches its child only."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp import text_block

from tests.acp.conftest import Shared
from tests.llm.scripted_server import respond, text, tool_calls
from tests.runtime.test_subagents import Router

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


async def test_a_childs_bash_asks_the_client_and_the_answer_reaches_that_child(shared: Shared) -> None:
    setup, conn, client = shared.fresh()
    sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
    router = Router()
    router.add("", tool_calls([("agent", {"prompt": "taskA", "description": "write one"}, "call_agent_a"),
                               ("agent", {"prompt": "taskB", "description": "write two"}, "call_agent_b")]),
               text("done"))
    router.add("taskA", tool_calls([("bash", {"command": "echo one > one.txt"}, "call_bash_a")]), text("A done"))
    router.add("taskB", tool_calls([("bash", {"command": "echo two > two.txt"}, "call_bash_b")]), text("B done"))
    setup.llm.script(*[respond(router) for _ in range(10)])
    open_now = [0]
    most = [0]

    async def answer(session_id: str, tool_call: Any) -> str:
        open_now[0] += 1
        most[0] = max(most[0], open_now[0])
        await asyncio.sleep(0.1)
        open_now[0] -= 1
        return "allow_once" if "write one" in str(tool_call.content) else "reject_once"

    client.permission_answers = [answer, answer]
    result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("write both")]), 90)
    assert result.stop_reason == "end_turn"
    asked = client.permission_requests
    assert len(asked) == 2 and most[0] == 1
    assert sorted(a["toolCall"].tool_call_id for a in asked) == ["call_bash_a", "call_bash_b"]
    assert all("subagent general (write " in str(a["toolCall"].content) for a in asked)
    assert (setup.ws / "one.txt").exists() and not (setup.ws / "two.txt").exists()
    updates = client.of(sid)
    started = {u.tool_call_id: u for u in updates if u.session_update == "tool_call"}
    child = started["call_bash_a"]
    assert child.title.startswith("general: ")
    assert child.field_meta["agentLs"]["subagent"] == {"agent": "general", "description": "write one",
                                                       "parentToolCallId": "call_agent_a"}
    ends = {u.tool_call_id: u.status for u in updates if u.session_update == "tool_call_update" and u.status}
    assert ends["call_bash_a"] == "completed" and ends["call_bash_b"] == "failed"
    assert ends["call_agent_a"] == "completed" and ends["call_agent_b"] == "completed"
    # the children's own text is not the session's message: their answers are the agent calls' results
    assert client.text(sid) == "done"
