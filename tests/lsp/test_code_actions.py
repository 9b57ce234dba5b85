"""Code actions over LSP: listed on a selection and on a diagnostic, executed with
workspace/executeCommand (agent turns, MCP prompts, tool actions with templates, an edit
applied through workspace/applyEdit)."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types as lsp

from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor, plain, wait_for

pytestmark = pytest.mark.e2e

SOURCE = "def f(x):\n    return x + 1\n\nprint(g(2))\n"

TOOL_ACTIONS = [
    {"title": "Echo selection", "server": "knob", "tool": "echo",
     "arguments": {"text": "${selection}|${file}|${languageId}|${line}|${fileUri}"}},
    {"title": "Line plus 100", "server": "knob", "tool": "add", "arguments": {"a": "${line}", "b": 100}},
    {"title": "Replace with echo", "server": "knob", "tool": "echo",
     "arguments": {"text": "REPLACED(${selection})"}, "apply": "replaceSelection"},
    {"title": "Delete via tool", "server": "knob", "tool": "delete_item", "arguments": {"id": "L${line}"},
     "apply": "replaceSelection"},
]


async def open_coder(setup: Setup) -> Editor:
    setup.user_settings["toolActions"] = TOOL_ACTIONS
    ed = await open_editor(setup)
    await ed.wait_state("knob", "connected")
    path = setup.ws / "main.py"
    path.write_text(SOURCE)
    ed.uri = ed.open_document(path, SOURCE)  # type: ignore[attr-defined]
    ed.path = path  # type: ignore[attr-defined]
    return ed


@pytest.fixture
async def coder(setup: Setup) -> Any:
    ed = await open_coder(setup)
    yield ed
    await close_editor(ed)


SELECTION = lsp.Range(lsp.Position(1, 4), lsp.Position(1, 16))  # "return x + 1"


async def actions(ed: Editor, rng: lsp.Range, diagnostics: list[lsp.Diagnostic] | None = None
                  ) -> dict[str, lsp.CodeAction]:
    result = await ed.client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=ed.uri),  # type: ignore[attr-defined]
        range=rng, context=lsp.CodeActionContext(diagnostics=diagnostics or [])))
    return {a.title: a for a in map(structure_action, result or [])}


def structure_action(raw: dict[str, Any]) -> lsp.CodeAction:
    from lsprotocol.converters import get_converter

    assert not isinstance(raw.get("command"), str), f"a bare Command, not a CodeAction: {raw}"
    return get_converter().structure(raw, lsp.CodeAction)


async def execute(ed: Editor, action: lsp.CodeAction) -> Any:
    assert action.command is not None
    result = await ed.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command=action.command.command, arguments=action.command.arguments))
    return plain(result)


async def turn_of(ed: Editor, session_id: str) -> list[dict[str, Any]]:
    await wait_for(lambda: "turn_finished" in ed.event_types(session_id), what="the turn to finish")
    return ed.session_events(session_id)


async def test_actions_on_a_selection(coder: Editor, setup: Setup) -> None:
    found = await actions(coder, SELECTION)
    assert set(found) == {
        "Ask agent", "Fix with agent", "Explain with agent", "MCP prompt: knob/review", "MCP prompt: knob/greet",
        "Echo selection", "Line plus 100", "Replace with echo", "Delete via tool",
    }
    assert found["Replace with echo"].kind == lsp.CodeActionKind.RefactorRewrite
    assert found["Ask agent"].command.command == P.CMD_ASK  # type: ignore[union-attr]
    # A plain cursor (no selection, no diagnostic) offers nothing.
    cursor = lsp.Range(lsp.Position(1, 4), lsp.Position(1, 4))
    assert await actions(coder, cursor) == {}
    # context.only filters by kind.
    result = await coder.client.text_document_code_action_async(lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=coder.uri),  # type: ignore[attr-defined]
        range=SELECTION, context=lsp.CodeActionContext(diagnostics=[], only=[lsp.CodeActionKind.RefactorRewrite])))
    assert {a["title"] for a in result or []} == {"Fix with agent", "Replace with echo", "Delete via tool"}


async def test_actions_on_a_diagnostic(coder: Editor, setup: Setup) -> None:
    diag = lsp.Diagnostic(range=lsp.Range(lsp.Position(3, 6), lsp.Position(3, 7)),
                          message="undefined name 'g'", severity=lsp.DiagnosticSeverity.Error, source="pyflakes")
    cursor = lsp.Range(lsp.Position(3, 6), lsp.Position(3, 6))
    found = await actions(coder, cursor, [diag])
    fix = found["Fix with agent"]
    assert fix.kind == lsp.CodeActionKind.QuickFix and fix.diagnostics and fix.diagnostics[0].message == diag.message
    assert "Explain with agent" in found and "Echo selection" in found
    setup.llm.script(text("Use f instead of g."))
    started = await execute(coder, fix)
    assert started["started"] is True
    sid = started["sessionId"]
    events = await turn_of(coder, sid)
    assert events[-1]["stopReason"] == "end" and events[-1]["text"] == "Use f instead of g."
    user = setup.llm.requests[-1].body["messages"][-1]["content"]
    assert "undefined name 'g'" in user and "print(g(2))" in user and str(coder.path) in user  # type: ignore[attr-defined]
    assert "lines 4-4" in user
    # The tool action with ${line} on the diagnostic's line.
    out = await execute(coder, found["Line plus 100"])
    assert out["content"] == "104"


async def test_ask_and_explain_start_chat_turns(coder: Editor, setup: Setup) -> None:
    found = await actions(coder, SELECTION)
    setup.llm.script(text("It adds one."))
    started = await execute(coder, found["Explain with agent"])
    events = await turn_of(coder, started["sessionId"])
    assert events[0]["type"] == "turn_started" and events[-1]["text"] == "It adds one."
    user = setup.llm.requests[-1].body["messages"][-1]["content"]
    assert "Explain" in user and "return x + 1" in user and "```python" in user
    # Ask continues a session when the argument names one.
    setup.llm.script(text("Sure."))
    args = dict(found["Ask agent"].command.arguments[0])  # type: ignore[index,union-attr]
    args.update(sessionId=started["sessionId"], question="Is this pure?")
    out = plain(await coder.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
        command=P.CMD_ASK, arguments=[args])))
    assert out["sessionId"] == started["sessionId"]
    await wait_for(lambda: coder.event_types(started["sessionId"]).count("turn_finished") == 2, what="second turn")
    messages = setup.llm.requests[-1].body["messages"]
    assert "Is this pure?" in messages[-1]["content"] and any(m.get("content") == "It adds one." for m in messages)


async def test_mcp_prompt_action(coder: Editor, setup: Setup) -> None:
    found = await actions(coder, SELECTION)
    setup.llm.script(text("Looks fine."))
    started = await execute(coder, found["MCP prompt: knob/review"])
    await turn_of(coder, started["sessionId"])
    user = setup.llm.requests[-1].body["messages"][-1]["content"]
    assert "return x + 1" in user and user == started["text"]


async def test_tool_actions_fill_templates_and_show_in_chat(coder: Editor, setup: Setup) -> None:
    found = await actions(coder, SELECTION)
    out = await execute(coder, found["Echo selection"])
    path = coder.path  # type: ignore[attr-defined]
    assert out["content"] == f"return x + 1|{path}|python|2|{path.as_uri()}"
    assert out["title"] == "Echo selection" and not out["isError"] and out["applied"] is None
    # Shown in chat: started/finished events outside any session.
    events = [e["event"] for e in coder.events if e["sessionId"] is None]
    assert [e["type"] for e in events] == ["tool_call_started", "tool_call_finished"]
    assert events[0]["name"] == "mcp__knob__echo" and events[0]["arguments"]["text"].startswith("return x + 1|")
    assert events[1]["content"] == out["content"] and events[1]["callId"] == events[0]["callId"]
    # ${line} alone keeps its number type.
    assert (await execute(coder, found["Line plus 100"]))["content"] == "102"


async def test_tool_action_applied_as_an_edit(coder: Editor, setup: Setup) -> None:
    found = await actions(coder, SELECTION)
    out = await execute(coder, found["Replace with echo"])
    assert out["applied"] is True and out["content"] == "REPLACED(return x + 1)"
    assert len(coder.applied_edits) == 1
    edit = coder.applied_edits[0]
    assert edit.label == "Replace with echo"
    changes = edit.edit.changes[coder.uri]  # type: ignore[attr-defined]
    assert len(changes) == 1 and changes[0].new_text == "REPLACED(return x + 1)"
    assert changes[0].range == SELECTION
    # Through the approval gate: a denied write tool applies nothing.
    coder.approval_answers = ["deny"]
    out = await execute(coder, found["Delete via tool"])
    assert out["denied"] and out["isError"] and out["applied"] is None
    assert len(coder.applied_edits) == 1 and coder.approvals[-1]["tool"] == "mcp__knob__delete_item"
    coder.approval_answers = ["allow_once"]
    out = await execute(coder, found["Delete via tool"])
    assert out["applied"] is True and coder.applied_edits[-1].edit.changes[coder.uri][0].new_text == "deleted item L2"  # type: ignore[attr-defined]


NUMBER_ACTIONS = [
    {"title": "Plus 100", "server": "knob", "tool": "add", "arguments": {"a": "${selection}", "b": 100},
     "apply": "replaceSelection"},
    {"title": "That many characters", "server": "knob", "tool": "huge", "arguments": {"chars": "${selection}"}},
    {"title": "Echo the number", "server": "knob", "tool": "echo", "arguments": {"text": "${selection}"}},
]


async def test_tool_action_on_a_selected_number(setup: Setup) -> None:
    """Issue 30 item 6: a whole-value ``${selection}`` takes the schema's type (``add`` takes
    numbers, ``huge`` an integer, ``echo`` a string); a selection that does not fit stops the
    action before the call, with an error naming the argument and the type wanted."""
    from pygls.exceptions import JsonRpcException

    setup.user_settings["toolActions"] = NUMBER_ACTIONS
    ed = await open_editor(setup)
    try:
        await ed.wait_state("knob", "connected")
        source = "width = 21\nratio = 2.5\nname = abc\n"
        path = setup.ws / "n.py"
        path.write_text(source)
        uri = ed.open_document(path, source)
        ed.uri = uri  # type: ignore[attr-defined]
        number = lsp.Range(lsp.Position(0, 8), lsp.Position(0, 10))  # "21"
        found = await actions(ed, number)
        out = await execute(ed, found["Plus 100"])
        assert out["applied"] is True and out["content"] == "121" and not out["isError"]
        assert ed.applied_edits[-1].edit.changes[uri][0].new_text == "121"  # type: ignore[index]
        assert (await execute(ed, found["That many characters"]))["content"] == "huge output line: 012"
        assert (await execute(ed, found["Echo the number"]))["content"] == "21"
        ratio = await actions(ed, lsp.Range(lsp.Position(1, 8), lsp.Position(1, 11)))  # "2.5"
        assert (await execute(ed, ratio["Plus 100"]))["content"] == "102.5"
        with pytest.raises(JsonRpcException, match=r"'That many characters' was not run: knob/huge argument "
                                                   r"'chars' needs an integer, and the selection '2.5' is not one"):
            await execute(ed, ratio["That many characters"])
        word = await actions(ed, lsp.Range(lsp.Position(2, 7), lsp.Position(2, 10)))  # "abc"
        calls = len([e for e in ed.events if e["sessionId"] is None])
        with pytest.raises(JsonRpcException, match="argument 'a' needs a number, and the selection 'abc'") as err:
            await execute(ed, word["Plus 100"])
        assert err.value.code == P.REQUEST_FAILED
        assert len([e for e in ed.events if e["sessionId"] is None]) == calls  # nothing was called
        assert len(ed.applied_edits) == 2  # "21" and "2.5"; nothing for "abc"
    finally:
        await close_editor(ed)


async def test_code_actions_without_a_connected_server(setup: Setup) -> None:
    """A tool action whose server is down fails with a clear error, never a hang."""
    from pygls.exceptions import JsonRpcException

    setup.user_settings["toolActions"] = [{"title": "Ghost", "server": "ghost", "tool": "x", "arguments": {}}]
    ed = await open_editor(setup)
    try:
        path = setup.ws / "a.txt"
        path.write_text("hello world\n")
        ed.uri = ed.open_document(path, "hello world\n", "plaintext")  # type: ignore[attr-defined]
        found = await actions(ed, lsp.Range(lsp.Position(0, 0), lsp.Position(0, 5)))
        with pytest.raises(JsonRpcException, match="no MCP server named 'ghost'") as err:
            await execute(ed, found["Ghost"])
        assert err.value.code == P.REQUEST_FAILED
    finally:
        await close_editor(ed)


async def test_agent_cancel_stops_a_code_action_turn(coder: Editor, setup: Setup) -> None:
    """A turn started by a code action runs in the background on the server: the client has no
    request of its own to cancel, so agent/cancel {sessionId} stops it. The turn ends with
    stopReason cancelled before the answer, the history stays consistent, the next prompt
    in that session works."""
    from tests.llm.scripted_server import slow_text
    from tests.lsp.test_prompt import assert_history_consistent

    found = await actions(coder, SELECTION)
    setup.llm.script(slow_text(60, delay=0.15))
    started = await execute(coder, found["Explain with agent"])
    sid = started["sessionId"]
    await wait_for(lambda: "text" in coder.event_types(sid), what="the code action's turn to stream")
    # Another code action in that session while it answers: a clear error, nothing started.
    from pygls.exceptions import JsonRpcException

    busy_args = {**found["Ask agent"].command.arguments[0], "sessionId": sid}  # type: ignore[index,union-attr]
    with pytest.raises(JsonRpcException, match="already answering") as err:
        await coder.client.workspace_execute_command_async(lsp.ExecuteCommandParams(
            command=P.CMD_ASK, arguments=[busy_args]))
    assert err.value.code == P.REQUEST_FAILED
    out = await coder.request(P.CANCEL, {"sessionId": sid})
    assert out == {"cancelled": True}
    # Its turn_finished arrived before the answer.
    events = coder.session_events(sid)
    assert events[-1]["type"] == "turn_finished" and events[-1]["stopReason"] == "cancelled"
    streamed = "".join(e.get("text", "") for e in events)
    assert "w0" in streamed and "w59" not in streamed
    count = len(events)
    # Nothing runs any more: a second cancel is a no-op, and no stray text follows.
    assert await coder.request(P.CANCEL, {"sessionId": sid}) == {"cancelled": False}
    assert await coder.request(P.CANCEL, {"sessionId": "no-such-session"}) == {"cancelled": False}
    setup.llm.script(text("second answer"))
    result = await coder.request(P.PROMPT, {"text": "short please", "sessionId": sid})
    assert result["stopReason"] == "end" and result["text"] == "second answer"
    later = coder.session_events(sid)[count:]
    assert later[0]["type"] == "turn_started" and "w59" not in "".join(e.get("text", "") for e in later)
    messages = setup.llm.requests[-1].body["messages"]
    assert_history_consistent(messages)
    assistant = [m for m in messages if m["role"] == "assistant"]
    assert assistant and "interrupted" in assistant[-1]["content"]
    assert messages[-1] == {"role": "user", "content": "short please"}


async def test_agent_cancel_withdraws_a_code_action_turns_approval(coder: Editor, setup: Setup) -> None:
    """Cancelling a background turn that waits for an approval withdraws the agent/approve
    request ($/cancelRequest to the editor); the tool never runs."""
    from tests.llm.scripted_server import tool_calls
    from tests.lsp.test_prompt import assert_history_consistent

    coder.hold_approvals = True
    found = await actions(coder, SELECTION)
    setup.llm.script(tool_calls([("mcp__knob__delete_item", {"id": "8"}, "call_held")]))
    started = await execute(coder, found["Ask agent"])
    sid = started["sessionId"]
    await wait_for(lambda: coder.approvals, what="the approval request")
    assert coder.approvals[0]["sessionId"] == sid and coder.approvals[0]["callId"] == "call_held"
    assert await coder.request(P.CANCEL, {"sessionId": sid}) == {"cancelled": True}
    await wait_for(lambda: coder.cancelled_approvals, what="the approval request to be withdrawn")
    events = coder.session_events(sid)
    assert events[-1]["type"] == "turn_finished" and events[-1]["stopReason"] == "cancelled"
    finished = [e for e in events if e["type"] == "tool_call_finished"]
    assert finished and finished[-1]["callId"] == "call_held" and finished[-1]["isError"]
    coder.hold_approvals = False
    setup.llm.script(text("ok"))
    await coder.request(P.PROMPT, {"text": "never mind", "sessionId": sid})
    messages = setup.llm.requests[-1].body["messages"]
    assert_history_consistent(messages)
    assert "deleted item 8" not in str(messages)


async def test_resume_shows_the_typed_text_and_attachment_chips(setup: Setup) -> None:
    """The model gets the attachments rendered into the user message; a resumed session
    returns, next to that stored text, what the user typed and the attachments (no content)."""
    import sqlite3

    coder = await open_coder(setup)
    try:
        sid, msgs = await _display_scenario(coder, setup)
    finally:
        await close_editor(coder)
    # It survives a restart of the server, and goes away with its session.
    ed = await open_editor(setup)
    try:
        msgs2 = [m for m in (await ed.request(P.SESSIONS_RESUME, {"sessionId": sid}))["messages"] if m["role"] == "user"]
        assert msgs2[:4] == msgs
        assert (await ed.request(P.SESSIONS_DELETE, {"sessionId": sid}))["deleted"] is True
    finally:
        await close_editor(ed)
    (db,) = (setup.data / "sessions").glob("*.sqlite3")
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT COUNT(*) FROM message_display WHERE session_id = ?", (sid,)).fetchone() == (0,)


async def _display_scenario(coder: Editor, setup: Setup) -> tuple[str, list[dict[str, Any]]]:
    setup.llm.script(text("It adds one."))
    selection = {"kind": "selection", "uri": coder.uri, "text": "return x + 1",  # type: ignore[attr-defined]
                 "languageId": "python",
                 "range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 16}}}
    first = await coder.request(P.PROMPT, {"text": "Why?", "attachments": [selection]})
    sid = first["sessionId"]
    sent = setup.llm.requests[-1].body["messages"][-1]["content"]
    assert sent.startswith("Selection from ") and sent.endswith("\n\nWhy?")  # the model-facing text is unchanged
    setup.llm.script(text("Hello Ada."))
    await coder.request(P.PROMPT, {"text": "Write a friendly greeting for Ada.", "displayText": "/knob:greet Ada",
                                   "sessionId": sid})
    setup.llm.script(text("Plain."))
    await coder.request(P.PROMPT, {"text": "plain question", "sessionId": sid})
    found = await actions(coder, SELECTION)
    setup.llm.script(text("Fixed."))
    args = dict(found["Ask agent"].command.arguments[0])  # type: ignore[index,union-attr]
    args.update(sessionId=sid, question="Is this pure?")
    await coder.client.workspace_execute_command_async(lsp.ExecuteCommandParams(command=P.CMD_ASK, arguments=[args]))
    await wait_for(lambda: coder.event_types(sid).count("turn_finished") == 4, what="the code action's turn")

    async def users() -> list[dict[str, Any]]:
        resumed = await coder.request(P.SESSIONS_RESUME, {"sessionId": sid})
        return [m for m in resumed["messages"] if m["role"] == "user"]

    msgs = await users()
    assert len(msgs) == 4
    assert msgs[0]["content"] == sent
    assert msgs[0]["display"] == {"text": "Why?", "attachments": [{
        "kind": "selection", "uri": coder.uri, "server": None, "range": selection["range"],  # type: ignore[attr-defined]
        "languageId": "python"}]}
    assert msgs[1]["content"] == "Write a friendly greeting for Ada."
    assert msgs[1]["display"] == {"text": "/knob:greet Ada", "attachments": []}
    assert msgs[2] == {"role": "user", "content": "plain question"}  # nothing to add
    assert msgs[3]["display"]["text"] == "Is this pure?"
    assert [a["kind"] for a in msgs[3]["display"]["attachments"]] == ["selection"]
    assert "return x + 1" not in str(msgs[3]["display"])  # chips, not content
    # The model never sees the display metadata.
    setup.llm.script(text("ok"))
    await coder.request(P.PROMPT, {"text": "again", "sessionId": sid})
    assert "display" not in str(setup.llm.requests[-1].body["messages"])
    return sid, msgs
