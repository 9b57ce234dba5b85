"""ACP permission requests carry their call (issue 29 item 3): two sessions of one agent ask
at once about calls with the same id, and the answers, given in the reverse order, reach
the right calls."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from acp import text_block

from tests.acp.conftest import Shared
from tests.llm.scripted_server import text, tool_calls

pytestmark = [pytest.mark.e2e, pytest.mark.asyncio(loop_scope="module")]


async def test_two_sessions_asking_at_once_each_get_their_answer(shared: Shared) -> None:
    setup, conn, client = shared.fresh()
    sids = [(await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id for _ in range(2)]
    asked: list[dict[str, Any]] = []
    all_open = asyncio.Event()
    turn = asyncio.Condition()
    answered = [0]

    async def answer(session_id: str, tool_call: Any) -> str:
        asked.append({"sessionId": session_id, "toolCall": tool_call})
        me = len(asked) - 1
        if len(asked) == 2:
            all_open.set()
        await asyncio.wait_for(all_open.wait(), 30)
        async with turn:  # the last to arrive answers first
            await asyncio.wait_for(turn.wait_for(lambda: answered[0] == 1 - me), 30)
            answered[0] += 1
            turn.notify_all()
        return "reject_once" if tool_call.raw_input["command"] == "echo from-A" else "allow_once"

    setup.llm.script(
        tool_calls([("bash", {"command": "echo from-A"}, "call_same")]),
        tool_calls([("bash", {"command": "echo from-B"}, "call_same")]),
        text("done"), text("done"))
    client.permission_answers = [answer, answer]
    results = await asyncio.wait_for(asyncio.gather(*(
        conn.prompt(session_id=sid, prompt=[text_block("run it")]) for sid in sids)), 90)
    assert [r.stop_reason for r in results] == ["end_turn", "end_turn"]
    assert sorted(a["sessionId"] for a in asked) == sorted(sids)
    for ask in asked:
        sid, call = ask["sessionId"], ask["toolCall"]
        assert call.tool_call_id == "call_same"
        updates = [u for u in client.of(sid) if getattr(u, "tool_call_id", None) == "call_same"]
        started = updates[0]
        assert started.session_update == "tool_call" and started.raw_input == call.raw_input  # this session's call
        final = updates[-1]
        if call.raw_input["command"] == "echo from-A":
            assert final.status == "failed"
        else:
            assert final.status == "completed" and "from-B" in str(final.content)
