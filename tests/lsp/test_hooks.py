"""Hooks (issue 43) over LSP: the real language server over stdio with the scripted LLM. A
PreToolUse hook blocks a `bash` call, a UserPromptSubmit hook blocks a prompt, a workspace's
hooks wait for its trust; every run is a `hook` event (the chat's hook line)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor, wait_for

pytestmark = pytest.mark.e2e


def hooks(**events: str) -> dict[str, Any]:
    """``{"PreToolUse": [...], ...}`` with one command per event (tool events match ``Bash``)."""
    out: dict[str, Any] = {}
    for event, command in events.items():
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": 30}]}
        if event == "PreToolUse":
            group["matcher"] = "Bash"
        out[event] = [group]
    return out


def hook_events(ed: Editor, sid: str) -> list[dict[str, Any]]:
    return [e for e in ed.session_events(sid) if e["type"] == "hook"]


async def test_a_pre_tool_use_hook_blocks_bash_and_the_chat_gets_its_line(setup: Setup) -> None:
    marker = setup.root / "ran"
    setup.user_settings["hooks"] = hooks(PreToolUse="echo 'no touching here' >&2; exit 2")
    ed = await open_editor(setup)
    try:
        setup.llm.script(tool_calls([("bash", {"command": f"touch {marker}"})]), text("I will not."))
        result = await ed.request(P.PROMPT, {"text": "make a file"})
        sid = result["sessionId"]
        assert result["stopReason"] == "end" and not marker.exists()
        assert ed.approvals == []  # blocked before anyone is asked
        types = ed.event_types(sid)
        assert types.index("tool_call_started") < types.index("hook") < types.index("tool_call_finished"), types
        (shown,) = hook_events(ed, sid)
        started = next(e for e in ed.session_events(sid) if e["type"] == "tool_call_started")
        assert shown["event"] == "PreToolUse" and shown["outcome"] == "blocked"
        assert shown["callId"] == started["callId"] and shown["tool"] == "bash"
        assert shown["command"] == "echo 'no touching here' …" and shown["message"] == "no touching here"
        assert shown["output"] == "no touching here" and shown["durationMs"] > 0 and shown["decision"] is None
        finished = next(e for e in ed.session_events(sid) if e["type"] == "tool_call_finished")
        assert finished["denied"] and "no touching here" in finished["content"]
    finally:
        await close_editor(ed)


async def test_a_user_prompt_submit_hook_blocks_the_prompt(setup: Setup) -> None:
    setup.user_settings["hooks"] = hooks(UserPromptSubmit="echo 'no secrets in prompts' >&2; exit 2")
    ed = await open_editor(setup)
    try:
        result = await ed.request(P.PROMPT, {"text": "my key is sk-123"})
        sid = result["sessionId"]
        assert result["stopReason"] == "error" and result["error"]["kind"] == "hook_blocked"
        assert "no secrets in prompts" in result["error"]["message"]
        assert setup.llm.requests == []  # never sent
        assert ed.event_types(sid) == ["hook", "error", "turn_finished"]
        (shown,) = hook_events(ed, sid)
        assert (shown["event"], shown["outcome"], shown["callId"]) == ("UserPromptSubmit", "blocked", None)
    finally:
        await close_editor(ed)


async def test_a_workspace_hook_does_not_run_before_trust(setup: Setup, tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    setup.pretrusted = []
    (setup.ws / ".claude").mkdir()
    touch = f"touch {canary}"
    (setup.ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks(
        SessionStart=touch, UserPromptSubmit=touch, PreToolUse=touch)}))
    ed = await open_editor(setup, configure=lambda e: setattr(e, "workspace_trust_answer", False))
    try:
        await wait_for(lambda: ed.workspace_trust_requests, what="the workspace trust prompt")
        asked = ed.workspace_trust_requests[0]
        # the prompt lists every hook with its command in full
        listed = [json.loads(s["value"]) if isinstance(s["value"], str) else s["value"] for s in asked["settings"]]
        assert sorted(v["event"] for v in listed) == ["PreToolUse", "SessionStart", "UserPromptSubmit"]
        assert all(v["command"] == touch for v in listed), listed
        setup.llm.script(tool_calls([("bash", {"command": "true"})]), text("done"))
        result = await ed.request(P.PROMPT, {"text": "hello"})
        assert result["stopReason"] == "end"
        assert not canary.exists() and hook_events(ed, result["sessionId"]) == []
        # trusted: the same hooks run, each shown
        await ed.request(P.SET_WORKSPACE_TRUST, {"trusted": True})
        setup.llm.script(tool_calls([("bash", {"command": "true"})]), text("done"))
        result = await ed.request(P.PROMPT, {"text": "again"})
        assert canary.exists()
        shown = [(e["event"], e["outcome"]) for e in hook_events(ed, result["sessionId"])]
        assert shown == [("SessionStart", "ran"), ("UserPromptSubmit", "ran"), ("PreToolUse", "ran")], shown
    finally:
        await close_editor(ed)
