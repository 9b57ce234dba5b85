"""Approvals carry their call (issue 29 item 3) and one tool runner serves the agent and the
editor's direct calls (item 4), over stdio.

Questions that are open at the same time are answered in the reverse order of their arrival,
one denied and one allowed: each answer must reach the call it names, and each question must
name the card (call id and session) the editor shows it next to.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from typing import Any

import pytest
from lsprotocol import types as lsp

from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor, plain

pytestmark = pytest.mark.e2e

DELETE = "mcp__knob__delete_item"


def answer_together(n: int, decide: Callable[[dict[str, Any]], str]) -> list[Callable[[dict[str, Any]], Awaitable[str]]]:
    """``n`` approval answers that wait until all ``n`` questions are open, then answer them
    last-come first, each with ``decide(question)``."""
    arrived: list[dict[str, Any]] = []
    all_open = asyncio.Event()
    turn = asyncio.Condition()

    async def answer(params: dict[str, Any]) -> str:
        arrived.append(params)
        me = len(arrived) - 1
        if len(arrived) == n:
            all_open.set()
        await asyncio.wait_for(all_open.wait(), 30)
        async with turn:  # the last to arrive answers first
            await asyncio.wait_for(turn.wait_for(lambda: answered[0] == n - 1 - me), 30)
            answered[0] += 1
            turn.notify_all()
        return decide(params)

    answered = [0]
    return [answer] * n


def by_id(params: dict[str, Any]) -> str:
    return "deny" if params["arguments"]["id"] == "A" else "allow_once"


async def test_two_sessions_asking_at_once_each_get_their_answer(editor: Editor, setup: Setup) -> None:
    """Two chat sessions ask about the same call id at once (a provider's ids repeat across
    sessions): each question names its session and call; the deny reaches session A's call
    and the allow session B's, though they were answered in the reverse order."""
    await editor.wait_state("knob", "connected")
    sessions = [await editor.request(P.SESSIONS_NEW, {}) for _ in range(2)]
    sids = [s["sessionId"] for s in sessions]
    editor.approval_answers = answer_together(2, by_id)
    setup.llm.script(
        tool_calls([(DELETE, {"id": "A"}, "call_same")]), tool_calls([(DELETE, {"id": "B"}, "call_same")]),
        text("done"), text("done"))
    results = await asyncio.gather(*(editor.request("agent/prompt", {"text": "delete", "sessionId": sid})
                                     for sid in sids))
    assert [r["stopReason"] for r in results] == ["end", "end"]
    assert len(editor.approvals) == 2 and {a["sessionId"] for a in editor.approvals} == set(sids)
    for ask in editor.approvals:
        events = editor.session_events(ask["sessionId"])
        started = next(e for e in events if e["type"] == "tool_call_started")
        finished = next(e for e in events if e["type"] == "tool_call_finished")
        announced = next(e for e in events if e["type"] == "approval_requested")
        assert ask["callId"] == started["callId"] == announced["callId"] == finished["callId"] == "call_same"
        assert ask["arguments"] == started["arguments"]  # the question is about this session's call
        if ask["arguments"]["id"] == "A":
            assert finished["denied"] and finished["isError"]
        else:
            assert not finished["denied"] and finished["content"] == "deleted item B"


async def test_parallel_direct_calls_asking_at_once_each_get_their_answer(editor: Editor, setup: Setup) -> None:
    """Two ``mcp/callTool`` requests ask at once through the one gate of direct calls: each
    question names its own call (``direct-<request id>``, no session) and gets its own answer."""
    await editor.wait_state("knob", "connected")
    editor.approval_answers = answer_together(2, by_id)
    params = [{"server": "knob", "tool": "delete_item", "arguments": {"id": x}} for x in ("A", "B")]
    ids_tasks = [editor.start_request(P.MCP_CALL_TOOL, p) for p in params]
    results = [plain(await asyncio.wait_for(task, 60)) for _, task in ids_tasks]
    assert results[0]["denied"] and results[0]["isError"]
    assert not results[1]["denied"] and results[1]["content"] == "deleted item B"
    asks = {a["arguments"]["id"]: a for a in editor.approvals}
    assert asks["A"]["callId"] == f"direct-{ids_tasks[0][0]}" and asks["B"]["callId"] == f"direct-{ids_tasks[1][0]}"
    assert asks["A"]["sessionId"] is None and asks["B"]["sessionId"] is None


CHAT_DELETE = {"title": "Delete in chat", "server": "knob", "tool": "delete_item", "arguments": {"id": "L${line}"}}


@pytest.fixture
async def coder(setup: Setup) -> Any:
    setup.user_settings["toolActions"] = [CHAT_DELETE]
    ed = await open_editor(setup)
    await ed.wait_state("knob", "connected")
    yield ed
    await close_editor(ed)


async def test_direct_and_agent_calls_run_the_same_sequence(coder: Editor, setup: Setup) -> None:
    """The same tool called by the agent and by a tool action: the same events (started,
    approval requested, finished with a duration) and the same question, tied to the card."""
    path = setup.ws / "main.py"
    path.write_text("x = 1\n")
    uri = coder.open_document(path, "x = 1\n")
    setup.llm.script(tool_calls([(DELETE, {"id": "L1"})]), text("done"))
    sid = (await coder.request("agent/prompt", {"text": "delete item L1"}))["sessionId"]
    agent_events = [e for e in coder.session_events(sid) if e["type"].startswith(("tool_", "approval_"))]
    rng = lsp.Range(lsp.Position(0, 0), lsp.Position(0, 5))
    listed = await coder.client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri), range=rng, context=lsp.CodeActionContext(diagnostics=[])))
    action = next(plain(a) for a in listed or [] if plain(a)["title"] == "Delete in chat")
    out = plain(await coder.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command=action["command"]["command"], arguments=action["command"]["arguments"])))
    assert out["content"] == "deleted item L1" and not out["isError"]
    direct_events = [e["event"] for e in coder.events if e["sessionId"] is None]
    assert [e["type"] for e in direct_events] == [e["type"] for e in agent_events] == [
        "tool_call_started", "approval_requested", "tool_call_finished"]
    for events in (agent_events, direct_events):
        started, announced, finished = events
        assert started["name"] == announced["name"] == finished["name"] == DELETE
        assert started["server"] == "knob" and started["displayName"] == "delete_item"
        assert started["callId"] == announced["callId"] == finished["callId"]
        assert finished["content"] == "deleted item L1" and finished["durationMs"] > 0 and not finished["denied"]
    agent_ask, direct_ask = coder.approvals
    assert (agent_ask["callId"], agent_ask["sessionId"]) == (agent_events[0]["callId"], sid)
    assert (direct_ask["callId"], direct_ask["sessionId"]) == (direct_events[0]["callId"], None)
    assert {k: v for k, v in agent_ask.items() if k not in ("callId", "sessionId")} == {
        k: v for k, v in direct_ask.items() if k not in ("callId", "sessionId")}
