"""Subagents in the editor (issue 42), over stdio: two children run by one step each ask about
their ``bash`` call with ``agent/approve`` (the parent's session, the child's call id, the agent
and its task in the reason), one question at a time; each answer reaches its child only; the
children's events arrive as ``subagent`` events tied to their ``agent`` calls."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import respond, text, tool_calls
from tests.lsp.conftest import Editor, Setup
from tests.runtime.test_subagents import Router

pytestmark = pytest.mark.e2e


async def test_a_childs_bash_asks_the_editor_and_the_answer_reaches_that_child(editor: Editor, setup: Setup) -> None:
    session = await editor.request(P.SESSIONS_NEW, {})
    sid = session["sessionId"]
    router = Router()
    router.add("", tool_calls([("agent", {"prompt": "taskA", "description": "write one"}, "call_agent_a"),
                               ("agent", {"prompt": "taskB", "description": "write two"}, "call_agent_b")]),
               text("done"))
    router.add("taskA", tool_calls([("bash", {"command": "echo one > one.txt"}, "call_bash_a")]), text("A done"))
    router.add("taskB", tool_calls([("bash", {"command": "echo two > two.txt"}, "call_bash_b")]), text("B done"))
    setup.llm.script(*[respond(router) for _ in range(10)])
    open_now = [0]
    most = [0]

    async def answer(params: dict[str, Any]) -> str:
        open_now[0] += 1
        most[0] = max(most[0], open_now[0])
        await asyncio.sleep(0.1)
        open_now[0] -= 1
        return "allow_once" if "(write one)" in params["reason"] else "deny"

    editor.approval_answers = [answer, answer]
    result = await editor.request("agent/prompt", {"text": "write both", "sessionId": sid}, timeout=90)
    assert result["stopReason"] == "end" and result["text"] == "done"
    asked = editor.approvals
    assert len(asked) == 2 and most[0] == 1
    assert sorted(a["callId"] for a in asked) == ["call_bash_a", "call_bash_b"]
    assert all(a["sessionId"] == sid and a["reason"].startswith("subagent general (write ") for a in asked)
    assert (setup.ws / "one.txt").exists() and not (setup.ws / "two.txt").exists()
    events = editor.session_events(sid)
    children = [e for e in events if e["type"] == "subagent"]
    finished = {e["event"]["callId"]: e for e in children if e["event"]["type"] == "tool_call_finished"}
    assert finished["call_bash_a"]["callId"] == "call_agent_a" and not finished["call_bash_a"]["event"]["isError"]
    assert finished["call_bash_b"]["callId"] == "call_agent_b" and finished["call_bash_b"]["event"]["denied"]
    assert {e["description"] for e in children} == {"write one", "write two"}
    ends = [e["event"] for e in children if e["event"]["type"] == "turn_finished"]
    assert len(ends) == 2 and all(e["usage"]["inputTokens"] > 0 for e in ends)
    last = events[-1]
    assert last["type"] == "turn_finished" and last["subagents"]["inputTokens"] == sum(e["usage"]["inputTokens"]
                                                                                         for e in ends)
