"""Hooks (issue 43) over ACP: `agent-ls acp` as a real process with the ACP SDK's client and the
scripted LLM. A PreToolUse hook blocks a `bash` call, a UserPromptSubmit hook blocks a prompt, a
workspace's hooks wait for its trust; every run is a finished tool call of its own."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import pytest
from acp import text_block

from tests.acp.conftest import AcpSetup, start_agent
from tests.llm.scripted_server import text, tool_calls

pytestmark = [pytest.mark.e2e]


def hooks(**events: str) -> dict[str, Any]:
    """``{"PreToolUse": [...], ...}`` with one command per event (tool events match ``Bash``)."""
    out: dict[str, Any] = {}
    for event, command in events.items():
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": 30}]}
        if event == "PreToolUse":
            group["matcher"] = "Bash"
        out[event] = [group]
    return out


def hook_calls(client: Any, sid: str) -> list[Any]:
    return [u for u in client.of(sid, "tool_call") if u.title.startswith("Hook ")]


async def test_a_pre_tool_use_hook_blocks_bash(setup: AcpSetup) -> None:
    marker = setup.root / "ran"
    setup.user_settings["hooks"] = hooks(PreToolUse="echo 'no touching here' >&2; exit 2")
    setup.write()
    async with start_agent(setup) as (conn, _proc, client):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        setup.llm.script(tool_calls([("bash", {"command": f"touch {marker}"}, "call_bash")]), text("I will not."))
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("make a file")]), 60)
        assert result.stop_reason == "end_turn" and not marker.exists()
        assert client.permission_requests == []  # blocked before anyone is asked
        (shown,) = hook_calls(client, sid)
        assert shown.title.startswith("Hook PreToolUse `echo 'no touching here' …`: blocked (")
        assert shown.status == "failed" and shown.kind == "other"
        assert shown.raw_input["toolCallId"] == "call_bash" and shown.raw_input["outcome"] == "blocked"
        assert "no touching here" in shown.content[0].content.text
        bash = [u for u in client.of(sid) if getattr(u, "tool_call_id", None) == "call_bash"]
        assert bash[-1].status == "failed" and shown.tool_call_id != "call_bash"


async def test_a_user_prompt_submit_hook_blocks_the_prompt(setup: AcpSetup) -> None:
    setup.user_settings["hooks"] = hooks(UserPromptSubmit="echo 'no secrets in prompts' >&2; exit 2")
    setup.write()
    async with start_agent(setup) as (conn, _proc, client):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        with pytest.raises(Exception, match="no secrets in prompts"):
            await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("my key is sk-123")]), 60)
        assert setup.llm.requests == []  # never sent
        (shown,) = hook_calls(client, sid)
        assert shown.title.startswith("Hook UserPromptSubmit `echo 'no secrets in …`: blocked (")
        assert shown.status == "failed" and "toolCallId" not in shown.raw_input


async def test_a_workspace_hook_does_not_run_before_trust(setup: AcpSetup) -> None:
    canary = setup.root / "canary"
    touch = f"touch {canary}"
    (setup.ws / ".claude").mkdir()
    (setup.ws / ".claude" / "settings.json").write_text(json.dumps({"hooks": hooks(
        SessionStart=touch, UserPromptSubmit=touch, PreToolUse=touch)}))
    setup.write()
    async with start_agent(setup) as (conn, _proc, client):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        client.permission_answers = ["reject_once"]  # the folder's trust question at the first prompt
        setup.llm.script(tool_calls([("bash", {"command": "true"}, "call_1")]), text("done"))
        client.default_answer = "allow_once"
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("hello")]), 60)
        question = client.permission_requests[0]["toolCall"]
        assert "Trust" in question.title
        listed = question.content[0].content.text
        assert listed.count(f"runs: {touch}") == 3, listed  # every hook, its command in full
        assert not canary.exists() and hook_calls(client, sid) == []
        # trusted (in a new session): the same hooks run, each shown
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        client.permission_answers = ["allow_once"]
        setup.llm.script(tool_calls([("bash", {"command": "true"}, "call_2")]), text("done"))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("again")]), 60)
        assert canary.exists()
        events = [u.raw_input["event"] for u in hook_calls(client, sid)]
        assert "UserPromptSubmit" in events and "PreToolUse" in events, events
