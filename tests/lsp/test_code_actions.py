"""Code actions over LSP: listed on a selection and on a diagnostic, executed with
workspace/executeCommand (agent turns, MCP prompts, tool actions with templates, an edit
applied through workspace/applyEdit)."""

from __future__ import annotations

from typing import Any

import pytest
from lsprotocol import types as lsp

from agent_ls.server import protocol as P
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


@pytest.fixture
async def coder(setup: Setup) -> Any:
    setup.user_settings["toolActions"] = TOOL_ACTIONS
    ed = await open_editor(setup)
    await ed.wait_state("knob", "connected")
    path = setup.ws / "main.py"
    path.write_text(SOURCE)
    ed.uri = ed.open_document(path, SOURCE)  # type: ignore[attr-defined]
    ed.path = path  # type: ignore[attr-defined]
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
