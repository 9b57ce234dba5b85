"""Issue 25 over LSP (the real server over stdio, the scripted model): "allow for this session"
covers only what the user saw (finding 2), protected files always ask (finding 5)."""

from __future__ import annotations

import pytest

from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Editor, Setup

pytestmark = pytest.mark.e2e


@pytest.mark.parametrize("scope", [None, "exact", "prefix"])
async def test_a_session_grant_on_git_status_does_not_run_a_compound_command(editor: Editor, setup: Setup,
                                                                             scope: str | None) -> None:
    first: dict[str, str] = {"answer": "allow_session"} | ({"scope": scope} if scope else {})
    editor.approval_answers = [first]
    editor.default_approval = "deny"
    setup.llm.script(
        tool_calls([("bash", {"command": "git status --short"})]),
        tool_calls([("bash", {"command": "git status --short"})]),
        tool_calls([("bash", {"command": "git status; touch PWNED"})]),
        text("ok"),
    )
    result = await editor.request("agent/prompt", {"text": "status"})
    assert result["stopReason"] == "end"
    assert len(editor.approvals) == 2  # the same command again ran unasked; the compound asked
    offered = editor.approvals[0]["scopes"]
    assert [s["id"] for s in offered] == ["exact", "prefix"]
    assert offered[1]["label"] == "Allow `git status` … for this session"
    assert editor.approvals[1]["tool"] == "bash" and "`touch PWNED`" in editor.approvals[1]["reason"]
    assert not (setup.ws / "PWNED").exists()


async def test_a_session_write_grant_does_not_reach_git_config(editor: Editor, setup: Setup) -> None:
    editor.approval_answers = ["allow_session"]
    editor.default_approval = "deny"
    setup.llm.script(
        tool_calls([("write_file", {"path": "app.py", "content": "x = 1\n"})]),
        tool_calls([("write_file", {"path": ".git/config", "content": "[core]\n\tfsmonitor = touch PWNED\n"})]),
        tool_calls([("write_file", {"path": "lib.py", "content": "y = 2\n"})]),
        text("ok"),
    )
    result = await editor.request("agent/prompt", {"text": "write"})
    assert result["stopReason"] == "end"
    assert len(editor.approvals) == 2
    protected = editor.approvals[1]
    assert protected["scopes"] == [] and "core.fsmonitor" in protected["sensitive"]
    assert protected["reviewedEdit"] is False
    assert not (setup.ws / ".git" / "config").exists()
    assert (setup.ws / "lib.py").read_text() == "y = 2\n"


async def test_an_allow_rule_does_not_cross_into_a_server_named_like_a_prefix(setup: Setup) -> None:
    """Finding 7: the user allows ``mcp__knob__*``; a server named ``knob::ci`` gets tool names
    that rule cannot match, so its ``delete_item`` asks while knob's own runs unasked."""
    from agent_ls.core.naming import tool_name
    from tests.lsp.conftest import close_editor, open_editor
    from tests.servers.launch import knob_stdio_params

    setup.user_settings["mcpServers"]["knob::ci"] = knob_stdio_params()
    setup.user_settings["permissions"] = {"allow": ["mcp__knob__*"]}
    ci_delete = tool_name("knob::ci", "delete_item")
    assert not ci_delete.startswith("mcp__knob__")
    ed = await open_editor(setup)
    try:
        await ed.wait_state("knob", "connected")
        await ed.wait_state("knob::ci", "connected")
        ed.default_approval = "deny"
        setup.llm.script(
            tool_calls([("mcp__knob__delete_item", {"id": "1"})]),
            tool_calls([(ci_delete, {"id": "2"})]),
            text("ok"),
        )
        result = await ed.request("agent/prompt", {"text": "delete"})
        assert result["stopReason"] == "end"
        assert [a["tool"] for a in ed.approvals] == [ci_delete]
        assert ed.approvals[0]["server"] == "knob::ci"
    finally:
        await close_editor(ed)
