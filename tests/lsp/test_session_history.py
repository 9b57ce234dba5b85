"""Sessions as the chat lists and resumes them (issue 17, item 4), over the real language
server: titled from the first user message as typed, empty sessions neither listed nor kept,
and a resumed history that carries how each tool call ran (server, duration, outcome)."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable

import pytest

from agent_ls.agent.store import SessionStore, session_title
from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import error, text, tool_calls
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor, wait_for

pytestmark = pytest.mark.e2e

LONG = ("Please refactor the configuration loader so that every settings scope is merged in one place "
        "and the diagnostics keep their locations")


async def test_title_from_the_first_message_and_empty_sessions_not_listed(setup: Setup) -> None:
    ed = await open_editor(setup)
    try:
        empty = (await ed.request(P.SESSIONS_NEW, {}))["sessionId"]
        assert (await ed.request(P.SESSIONS_LIST))["sessions"] == []  # nothing said yet: not listed
        setup.llm.script(text("ok"), text("ok again"))
        sid = (await ed.request(P.PROMPT, {"text": f"  {LONG}\nsecond line"}))["sessionId"]
        await ed.request(P.PROMPT, {"text": "a later message does not rename it", "sessionId": sid})
        (info,) = (await ed.request(P.SESSIONS_LIST))["sessions"]
        assert info["id"] == sid and info["id"] != empty
        assert info["title"] == session_title(LONG)
        assert info["title"].endswith("…") and len(info["title"]) <= 60
        assert LONG.startswith(info["title"][:-1])  # cut at a word boundary
        assert not info["title"].startswith("Session")
        # A slash command is titled as the user typed it, not by the prompt it expanded to.
        setup.llm.script(text("reviewed"))
        slash = (await ed.request(P.PROMPT, {"text": "Review the following code carefully ...",
                                              "displayText": "/review main.py"}))["sessionId"]
        titles = {s["id"]: s["title"] for s in (await ed.request(P.SESSIONS_LIST))["sessions"]}
        assert titles[slash] == "/review main.py"
    finally:
        await close_editor(ed)
    # The empty session was not kept (the server dropped it when it shut down).
    with SessionStore.for_workspace(setup.data, setup.ws) as store:
        assert store.get_session(empty) is None
        assert store.get_session(sid) is not None


async def test_resume_returns_tool_runs_with_server_and_duration(editor: Editor, setup: Setup) -> None:
    await editor.wait_state("knob", "connected")
    editor.approval_answers = ["allow_once", "deny"]
    setup.llm.script(
        tool_calls([("mcp__knob__echo", {"text": "hi"}, "call_echo")], text="Echoing."),
        tool_calls([("mcp__knob__delete_item", {"id": "1"}, "call_del")]),
        tool_calls([("mcp__knob__delete_item", {"id": "2"}, "call_denied")]),
        text("done"),
    )
    sid = (await editor.request(P.PROMPT, {"text": "echo then delete"}))["sessionId"]
    live = {e["callId"]: e for e in editor.session_events(sid) if e["type"] == "tool_call_finished"}
    resumed = (await editor.request(P.SESSIONS_RESUME, {"sessionId": sid}))["messages"]
    runs = {m["tool_call_id"]: m["run"] for m in resumed if m["role"] == "tool"}
    assert set(runs) == {"call_echo", "call_del", "call_denied"}
    for call_id, run in runs.items():
        assert run["server"] == "knob"
        assert isinstance(run["durationMs"], float) and run["durationMs"] >= 0
        assert abs(run["durationMs"] - live[call_id]["durationMs"]) < 1.0  # the live card's figure
    assert runs["call_echo"]["displayName"] and runs["call_echo"]["isError"] is False
    assert runs["call_del"]["isError"] is False and runs["call_del"]["denied"] is False
    assert runs["call_denied"]["isError"] is True and runs["call_denied"]["denied"] is True
    # The run records never reach the model.
    setup.llm.script(text("next"))
    await editor.request(P.PROMPT, {"text": "and now?", "sessionId": sid})
    sent = [m for m in setup.llm.requests[-1].body["messages"] if m["role"] == "tool"]
    assert sent and all("run" not in m for m in sent)


async def test_a_title_model_names_the_session_after_its_first_turn(setup: Setup) -> None:
    """``agent.titleModel``: once the first turn has ended, that model is asked for a short title
    in the background; it replaces the first-message title. Later turns do not ask again."""
    setup.user_settings["agent"] = {**setup.user_settings["agent"], "titleModel": "openai/scripted-titles"}
    ed = await open_editor(setup)
    try:
        setup.llm.script(text("Done."), text('Title: "Merge the settings scopes."'), text("ok again"))
        sid = (await ed.request(P.PROMPT, {"text": LONG}))["sessionId"]

        async def title() -> str:
            return next(s["title"] for s in (await ed.request(P.SESSIONS_LIST))["sessions"] if s["id"] == sid)

        await wait_for_async(lambda: title(), "Merge the settings scopes", what="the model-made title")
        asked = setup.llm.requests[1].body
        assert asked["model"] == "scripted-titles" and "tools" not in asked
        assert asked["messages"][-1]["content"] == LONG
        await ed.request(P.PROMPT, {"text": "a later message", "sessionId": sid})
        assert len(setup.llm.requests) == 3  # no second title request
        assert await title() == "Merge the settings scopes"
    finally:
        await close_editor(ed)


async def test_a_title_model_that_fails_leaves_the_first_message_title(setup: Setup) -> None:
    setup.user_settings["agent"] = {**setup.user_settings["agent"], "titleModel": "openai/scripted-titles"}
    ed = await open_editor(setup)
    try:
        setup.llm.script(text("Done."), error(500))
        sid = (await ed.request(P.PROMPT, {"text": LONG}))["sessionId"]
        await wait_for(lambda: len(setup.llm.requests) == 2, what="the title request")
        await asyncio.sleep(0.2)  # the failed answer is handled (nothing to wait on: nothing changes)
        (info,) = (await ed.request(P.SESSIONS_LIST))["sessions"]
        assert info["id"] == sid and info["title"] == session_title(LONG)
    finally:
        await close_editor(ed)


async def wait_for_async(probe: Callable[[], Awaitable[str]], expected: str, *, what: str, timeout: float = 20) -> None:
    end = asyncio.get_running_loop().time() + timeout
    seen = None
    while asyncio.get_running_loop().time() < end:
        seen = await probe()
        if seen == expected:
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"{what}: still {seen!r}, not {expected!r}")


async def test_plan_events_arrive_and_a_resumed_session_returns_the_plan(editor: Editor, setup: Setup) -> None:
    """The model's plan (issue 27 item 4): a ``plan`` event per change, in order, and
    ``agent/sessions/resume`` returns the plan as last updated."""
    first = [{"content": "Read the code", "status": "in_progress"}, {"content": "Fix the bug", "status": "pending"}]
    second = [{"content": "Read the code", "status": "completed"}, {"content": "Fix the bug", "status": "in_progress"}]
    setup.llm.script(tool_calls([("update_plan", {"steps": first})]),
                     tool_calls([("update_plan", {"steps": second})]),
                     text("working"))
    sid = (await editor.request(P.PROMPT, {"text": "fix it"}))["sessionId"]
    plans = [e["entries"] for e in editor.session_events(sid) if e["type"] == "plan"]
    assert [[(s["content"], s["status"]) for s in p] for p in plans] == [
        [("Read the code", "in_progress"), ("Fix the bug", "pending")],
        [("Read the code", "completed"), ("Fix the bug", "in_progress")],
    ]
    resumed = await editor.request(P.SESSIONS_RESUME, {"sessionId": sid})
    assert resumed["plan"] == [{"content": "Read the code", "status": "completed", "priority": "medium"},
                               {"content": "Fix the bug", "status": "in_progress", "priority": "medium"}]
