"""agent/prompt over stdio: streamed events, cancellation, approvals through the editor."""

from __future__ import annotations

import asyncio
import json
import re

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcRequestCancelled

from tests.llm.scripted_server import Usage, slow_text, text, tool_calls
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor, wait_for

pytestmark = pytest.mark.e2e


def tool_messages(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def assert_history_consistent(messages: list[dict]) -> None:
    """Every assistant tool call is answered by a tool message before the next user turn."""
    pending: set[str] = set()
    for m in messages:
        if m["role"] == "assistant":
            assert not pending, f"unanswered tool calls {pending} before {m}"
            pending = {c["id"] for c in m.get("tool_calls") or []}
        elif m["role"] == "tool":
            assert m["tool_call_id"] in pending, f"tool result for an unknown call: {m}"
            pending.discard(m["tool_call_id"])
        elif m["role"] == "user":
            assert not pending, f"unanswered tool calls {pending} before a user message"
    assert not pending


async def test_streamed_event_order(editor: Editor, setup: Setup) -> None:
    """text deltas, usage, tool call started -> approval needed -> finished (args and result),
    more text, usage, turn finished; all events arrive before the prompt's response."""
    await editor.wait_state("knob", "connected")
    setup.llm.script(
        tool_calls([("mcp__knob__delete_item", {"id": "7"})], text="Deleting it.", usage=Usage(11, 3)),
        text("All done now", chunks=3, usage=Usage(20, 4)),
    )
    result = await editor.request("agent/prompt", {"text": "delete item 7"})
    sid = result["sessionId"]
    assert result["stopReason"] == "end" and result["text"] == "All done now"
    assert result["usage"]["inputTokens"] == 31 and result["usage"]["outputTokens"] == 7
    assert editor.event_types(sid) == [
        "turn_started", "usage", "text", "usage", "tool_call_started", "approval_requested", "tool_call_finished",
        "text", "usage", "turn_finished",
    ]
    events = editor.session_events(sid)
    texts = [e["text"] for e in events if e["type"] == "text"]
    assert "".join(texts) == "Deleting it.All done now" and len(texts) >= 4  # streamed, not one block
    started = next(e for e in events if e["type"] == "tool_call_started")
    assert started["name"] == "mcp__knob__delete_item" and started["arguments"] == {"id": "7"}
    assert started["server"] == "knob" and started["displayName"] == "delete_item"
    approval = next(e for e in events if e["type"] == "approval_requested")
    assert approval["callId"] == started["callId"] and "approval" in approval["reason"]
    finished = next(e for e in events if e["type"] == "tool_call_finished")
    assert finished["callId"] == started["callId"]
    assert finished["content"] == "deleted item 7" and finished["isError"] is False and not finished["denied"]
    estimate, *usage = [e for e in events if e["type"] == "usage"]
    assert (usage[0]["inputTokens"], usage[0]["outputTokens"]) == (11, 3)
    # the meter (issues 26, 44): our estimate before the first answer, then the provider's count
    assert estimate["contextSource"] == "estimate" and estimate["contextTokens"] > 100
    assert estimate["contextWindow"] == 32000 and estimate["inputTokens"] == 0
    assert [(u["contextTokens"], u["contextSource"]) for u in usage] == [(14, "provider"), (24, "provider")]
    assert events[-1]["stopReason"] == "end" and events[-1]["text"] == "All done now"
    total = dict(events[-1]["usage"])
    assert (total.pop("contextWindow"), total.pop("contextTokens"), total.pop("contextSource")) == (32000, 24, "provider")
    assert result["usage"]["contextTokens"] == 24 and result["usage"]["contextSource"] == "provider"
    assert events[-1]["steps"] == 2 and total == {
        "inputTokens": 31, "outputTokens": 7, "cacheReadTokens": 0, "cacheWriteTokens": 0}
    # The approval request named the same call and its arguments.
    assert len(editor.approvals) == 1
    ask = editor.approvals[0]
    assert ask["callId"] == started["callId"] and ask["sessionId"] == sid
    assert ask["tool"] == "mcp__knob__delete_item" and ask["arguments"] == {"id": "7"}
    assert ask["server"] == "knob" and ask["displayName"] == "delete_item"
    # The model saw the tool's result.
    assert tool_messages(setup.llm.requests[-1].body)[-1]["content"] == "deleted item 7"


async def test_thinking_arrives_as_its_own_events(editor: Editor, setup: Setup) -> None:
    """A model that streams its reasoning: ``thinking`` events before the ``text`` of the reply,
    and the reply alone is the answer."""
    setup.llm.script(text("Four.", reasoning="two and two make four"))
    result = await editor.request("agent/prompt", {"text": "2+2?"})
    sid = result["sessionId"]
    assert result["text"] == "Four."
    events = editor.session_events(sid)
    assert "".join(e["text"] for e in events if e["type"] == "thinking") == "two and two make four"
    kinds = editor.event_types(sid)
    assert kinds.index("text") > max(i for i, k in enumerate(kinds) if k == "thinking")


async def test_approval_allow_session_asks_once(editor: Editor, setup: Setup) -> None:
    await editor.wait_state("knob", "connected")
    editor.approval_answers = ["allow_session"]
    editor.default_approval = "deny"  # a second question would deny: it must not be asked
    setup.llm.script(
        tool_calls([("mcp__knob__delete_item", {"id": "1"})]),
        tool_calls([("mcp__knob__delete_item", {"id": "2"})]),
        text("ok"),
    )
    result = await editor.request("agent/prompt", {"text": "delete two"})
    assert result["stopReason"] == "end"
    assert len(editor.approvals) == 1
    finished = [e for e in editor.session_events() if e["type"] == "tool_call_finished"]
    assert [f["content"] for f in finished] == ["deleted item 1", "deleted item 2"]
    # Only the first call announced an approval.
    assert editor.event_types().count("approval_requested") == 1
    # Still allowed in the next prompt of the same session.
    setup.llm.script(tool_calls([("mcp__knob__delete_item", {"id": "3"})]), text("ok"))
    await editor.request("agent/prompt", {"text": "one more", "sessionId": result["sessionId"]})
    assert len(editor.approvals) == 1
    assert tool_messages(setup.llm.requests[-1].body)[-1]["content"] == "deleted item 3"


async def test_allow_for_the_session_outlives_a_settings_reload(editor: Editor, setup: Setup) -> None:
    """A settings change rebuilds the sessions (they pick up the new settings); what the user
    allowed for a session stays allowed in it."""
    await editor.wait_state("knob", "connected")
    editor.approval_answers = ["allow_session"]
    editor.default_approval = "deny"  # a second question would deny: it must not be asked
    setup.llm.script(tool_calls([("mcp__knob__delete_item", {"id": "1"})]), text("ok"))
    sid = (await editor.request("agent/prompt", {"text": "delete one"}))["sessionId"]
    assert len(editor.approvals) == 1
    # the user edits their settings (a typo the server reports once it has reloaded)
    setup.user_settings["agent"] = {**setup.user_settings["agent"], "maxStepz": 3}
    setup.user_file.write_text(json.dumps(setup.user_settings))
    editor.client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
        changes=[lsp.FileEvent(uri=setup.user_file.as_uri(), type=lsp.FileChangeType.Changed)]))
    uri = setup.user_file.as_uri()
    await wait_for(lambda: any("maxStepz" in d.message for d in editor.client.diagnostics.get(uri, [])),
                   what="the settings reloaded")
    setup.llm.script(tool_calls([("mcp__knob__delete_item", {"id": "2"})]), text("ok"))
    await editor.request("agent/prompt", {"text": "one more", "sessionId": sid})
    assert len(editor.approvals) == 1
    assert tool_messages(setup.llm.requests[-1].body)[-1]["content"] == "deleted item 2"


async def test_approval_deny_gives_the_model_an_error(editor: Editor, setup: Setup) -> None:
    await editor.wait_state("knob", "connected")
    editor.default_approval = "deny"
    setup.llm.script(tool_calls([("mcp__knob__delete_item", {"id": "9"})]), text("understood"))
    result = await editor.request("agent/prompt", {"text": "delete 9"})
    assert result["stopReason"] == "end" and len(editor.approvals) == 1
    finished = next(e for e in editor.session_events() if e["type"] == "tool_call_finished")
    assert finished["isError"] is True and finished["denied"] is True
    sent = tool_messages(setup.llm.requests[-1].body)[-1]["content"]
    assert sent.startswith("Error") and "denied" in sent
    # A broken answer is a deny too, never an allow.
    editor.approval_answers = ["maybe"]
    setup.llm.script(tool_calls([("mcp__knob__delete_item", {"id": "10"})]), text("ok"))
    await editor.request("agent/prompt", {"text": "again", "sessionId": result["sessionId"]})
    assert "denied" in tool_messages(setup.llm.requests[-1].body)[-1]["content"]


async def test_cancel_mid_stream(editor: Editor, setup: Setup) -> None:
    """$/cancelRequest stops a streaming turn: -32800, turn_finished(cancelled), history kept
    consistent, and the next prompt in the same session works."""
    setup.llm.script(slow_text(200, delay=0.15))  # 30 s: the cancel always lands mid-stream, even under load
    msg_id, task = editor.start_request("agent/prompt", {"text": "tell me a long story"})
    await wait_for(lambda: "text" in editor.event_types(), 60, what="first text event")  # the first prompt may wait for the LLM warm-up
    sid = editor.events[0]["sessionId"]
    editor.cancel(msg_id)
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(task, 20)
    types = editor.event_types(sid)
    assert types[-1] == "turn_finished" and editor.session_events(sid)[-1]["stopReason"] == "cancelled"
    count = len(editor.session_events(sid))
    setup.llm.script(text("second answer"))
    result = await editor.request("agent/prompt", {"text": "short please", "sessionId": sid})
    assert result["stopReason"] == "end" and result["text"] == "second answer"
    # No stray text of the cancelled stream arrived after its turn_finished.
    later = editor.session_events(sid)[count:]
    assert later[0]["type"] == "turn_started" and not re.search(r"\bw\d+ ", "".join(e.get("text", "") for e in later))
    messages = setup.llm.requests[-1].body["messages"]
    users = [m["content"] for m in messages if m["role"] == "user"]
    assert users[-2:] == ["tell me a long story", "short please"]
    partial = [m for m in messages if m["role"] == "assistant"]
    assert partial and "interrupted" in partial[-1]["content"]
    assert_history_consistent(messages)


async def test_agent_cancel_stops_a_prompt_request(editor: Editor, setup: Setup) -> None:
    """agent/cancel also stops a turn run by an agent/prompt request (say, from another
    client): that request gets -32800, the cancel answers once the turn has ended."""
    setup.llm.script(slow_text(200, delay=0.15))  # 30 s: the cancel always lands mid-stream
    _msg_id, task = editor.start_request("agent/prompt", {"text": "tell me a long story"})
    await wait_for(lambda: "text" in editor.event_types(), 60, what="first text event")  # the first prompt may wait for the LLM warm-up
    sid = editor.events[0]["sessionId"]
    assert await editor.request("agent/cancel", {"sessionId": sid}) == {"cancelled": True}
    assert editor.session_events(sid)[-1]["stopReason"] == "cancelled"
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(task, 20)
    setup.llm.script(text("fine"))
    result = await editor.request("agent/prompt", {"text": "next", "sessionId": sid})
    assert result["text"] == "fine"
    assert_history_consistent(setup.llm.requests[-1].body["messages"])


async def test_cancel_mid_tool(editor: Editor, setup: Setup) -> None:
    """Cancelling while an MCP tool runs cancels the MCP call (the server records it) and
    gives the call a result in the history."""
    await editor.wait_state("knob", "connected")
    setup.llm.script(tool_calls([("mcp__knob__cancel_probe", {}, "call_probe")]))
    msg_id, task = editor.start_request("agent/prompt", {"text": "probe"})
    await wait_for(lambda: setup.cancel_file.exists() and "started" in setup.cancel_file.read_text(),
                   what="the MCP tool to start")
    sid = editor.events[0]["sessionId"]
    editor.cancel(msg_id)
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(task, 20)
    await wait_for(lambda: "cancelled" in setup.cancel_file.read_text(), what="the MCP server to see the cancel")
    events = editor.session_events(sid)
    finished = [e for e in events if e["type"] == "tool_call_finished"]
    assert finished and finished[-1]["callId"] == "call_probe" and finished[-1]["isError"]
    assert events[-1]["type"] == "turn_finished" and events[-1]["stopReason"] == "cancelled"
    setup.llm.script(text("fine"))
    result = await editor.request("agent/prompt", {"text": "next", "sessionId": sid})
    assert result["text"] == "fine"
    messages = setup.llm.requests[-1].body["messages"]
    assert_history_consistent(messages)
    probe = next(m for m in messages if m["role"] == "tool" and m["tool_call_id"] == "call_probe")
    assert "cancelled" in probe["content"]
    # The stored history is the same (resume shows it).
    resumed = await editor.request("agent/sessions/resume", {"sessionId": sid})
    assert_history_consistent(resumed["messages"])
    assert any(m.get("tool_call_id") == "call_probe" for m in resumed["messages"])


async def test_cancel_while_waiting_for_approval(editor: Editor, setup: Setup) -> None:
    """Cancelling a turn that waits for the user's approval withdraws the approval request
    ($/cancelRequest to the editor) and the next prompt still works."""
    await editor.wait_state("knob", "connected")
    editor.hold_approvals = True
    setup.llm.script(tool_calls([("mcp__knob__delete_item", {"id": "5"}, "call_del")]))
    msg_id, task = editor.start_request("agent/prompt", {"text": "delete 5"})
    await wait_for(lambda: editor.approvals, what="the approval request")
    sid = editor.events[0]["sessionId"]
    editor.cancel(msg_id)
    with pytest.raises(JsonRpcRequestCancelled):
        await asyncio.wait_for(task, 20)
    await wait_for(lambda: editor.cancelled_approvals, what="the approval request to be withdrawn")
    assert editor.cancelled_approvals[0]["callId"] == "call_del"
    editor.hold_approvals = False
    setup.llm.script(text("ok then"))
    result = await editor.request("agent/prompt", {"text": "never mind", "sessionId": sid})
    assert result["text"] == "ok then"
    messages = setup.llm.requests[-1].body["messages"]
    assert_history_consistent(messages)
    assert "deleted item 5" not in json.dumps(messages)


async def test_deferred_mcp_tool_found_by_search(setup: Setup) -> None:
    """The default deferral: the model searches, loads and calls an MCP tool."""
    setup.user_settings["agent"]["deferMcpTools"] = True
    ed = await open_editor(setup)
    try:
        await ed.wait_state("knob", "connected")
        setup.llm.script(tool_calls([("tool_search", {"query": "select:mcp__knob__echo"})]),
                         tool_calls([("mcp__knob__echo", {"text": "ping"})]), text("pong done"))
        result = await ed.request("agent/prompt", {"text": "echo ping"})
        assert result["stopReason"] == "end" and result["text"] == "pong done"
        first = setup.llm.requests[0].body
        assert "mcp__knob__echo" not in [t["function"]["name"] for t in first.get("tools", [])]
        finished = [e for e in ed.session_events() if e["type"] == "tool_call_finished"]
        assert finished[-1]["content"] == "ping"
    finally:
        await close_editor(ed)


async def test_prompt_errors_are_reported(editor: Editor, setup: Setup) -> None:
    """A provider error ends the turn with an error event and stopReason error; a prompt to a
    session that is already answering is refused; an unknown session is an error."""
    from tests.llm.scripted_server import auth_error

    setup.llm.script(auth_error())
    result = await editor.request("agent/prompt", {"text": "hi"})
    assert result["stopReason"] == "error" and result["error"]["kind"] == "auth"
    assert editor.event_types()[-2:] == ["error", "turn_finished"]
    from pygls.exceptions import JsonRpcException

    with pytest.raises(JsonRpcException, match="no session"):
        await editor.request("agent/prompt", {"text": "hi", "sessionId": "does-not-exist"})
    setup.llm.script(slow_text(20, delay=0.1))
    sid = result["sessionId"]
    _, first = editor.start_request("agent/prompt", {"text": "long", "sessionId": sid})
    await wait_for(lambda: editor.event_types(sid).count("turn_started") == 2, what="second turn start")
    with pytest.raises(JsonRpcException, match="already answering"):
        await editor.request("agent/prompt", {"text": "again", "sessionId": sid})
    await asyncio.wait_for(first, 30)
