"""Hooks (issue 43) with real processes: tool hooks through a session's turn against the scripted
LLM on loopback, and the conversation events' functions.

Each hook is a small shell script written into the workspace; what it received on stdin is kept
in a file next to it."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.hooks import Hooks
from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, PermissionGate, PermissionRules
from agent_ls.config.hooks import HookSpec
from tests.agent.conftest import Recorder, make_session
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls


def hook(event: str, command: str, matcher: str | None = None, timeout: float = 60.0) -> HookSpec:
    return HookSpec(event, command, matcher, timeout)


def script(ws: Path, name: str, body: str) -> str:
    """A hook script in the workspace that first keeps its stdin in ``<name>.json``."""
    path = ws / f"{name}.sh"
    path.write_text(f"#!/bin/bash\ncat > {ws / name}.json\n{body}\n")
    path.chmod(0o755)
    return str(path)


def received(ws: Path, name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((ws / f"{name}.json").read_text())
    return data


def tool_message(llm: ScriptedLLM) -> str:
    content: str = [m for m in llm.requests[-1].body["messages"] if m["role"] == "tool"][0]["content"]
    return content


class Approver:
    def __init__(self, answer: ApprovalAnswer = ApprovalAnswer.ALLOW_ONCE) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return self.answer


async def turn(llm: ScriptedLLM, ws: Path, specs: list[HookSpec], call: tuple[str, dict[str, Any]],
               rules: PermissionRules | None = None, approver: Approver | None = None) -> Recorder:
    llm.script(tool_calls([call]), text("done"))
    session = make_session(llm, ws, gate=PermissionGate(rules or PermissionRules(), approver or Approver(), [ws]))
    session.hooks = Hooks(specs, ws, session.session_id)
    rec = Recorder()
    await session.prompt("go", rec)
    return rec


async def test_pre_tool_use_exit_2_stops_bash_and_the_model_gets_its_stderr(llm: ScriptedLLM, ws: Path) -> None:
    check = script(ws, "check", 'echo "no rm in this repository" >&2; exit 2')
    approver = Approver()
    rec = await turn(llm, ws, [hook("PreToolUse", check, "Bash")], ("bash", {"command": "touch ran"}),
                     approver=approver)
    fin = rec.of("tool_call_finished")[0]
    assert fin.denied and not (ws / "ran").exists()
    assert "no rm in this repository" in tool_message(llm)
    assert approver.requests == []  # blocked before anyone is asked
    data = received(ws, "check")
    assert data["hook_event_name"] == "PreToolUse" and data["tool_name"] == "bash"
    assert data["tool_input"] == {"command": "touch ran"} and data["workspace_folder"] == str(ws)
    (shown,) = rec.of("hook")  # the typed hook line, tied to its call
    assert (shown.event, shown.outcome, shown.call_id, shown.tool) == ("PreToolUse", "blocked", fin.call_id, "bash")
    assert "no rm in this repository" in shown.message and shown.duration_ms > 0
    assert rec.of("tool_call_progress") == []


async def test_a_deny_decision_stops_write_file(llm: ScriptedLLM, ws: Path) -> None:
    decide = script(ws, "decide", """echo '{"hookSpecificOutput": {"hookEventName": "PreToolUse",
      "permissionDecision": "deny", "permissionDecisionReason": "generated files are read-only"}}'""")
    rec = await turn(llm, ws, [hook("PreToolUse", decide, "Edit|Write")],
                     ("write_file", {"path": "gen.txt", "content": "x"}), rules=PermissionRules(allow=("write_file",)))
    assert rec.of("tool_call_finished")[0].denied and not (ws / "gen.txt").exists()
    assert "generated files are read-only" in tool_message(llm)


async def test_allow_skips_the_question(llm: ScriptedLLM, ws: Path) -> None:
    allow = script(ws, "allow", """echo '{"decision": "allow"}'""")
    approver = Approver(ApprovalAnswer.DENY)
    rec = await turn(llm, ws, [hook("PreToolUse", allow)], ("write_file", {"path": "a.txt", "content": "x"}),
                     approver=approver)
    assert approver.requests == [] and (ws / "a.txt").read_text() == "x"
    assert not rec.of("tool_call_finished")[0].denied


@pytest.mark.parametrize(("rules", "args", "asked"), [
    (PermissionRules(deny=("write_file",)), {"path": "a.txt", "content": "x"}, False),
    (PermissionRules(ask=("write_file",)), {"path": "a.txt", "content": "x"}, True),
    (PermissionRules(), {"path": ".vscode/settings.json", "content": "{}"}, True),
], ids=["deny-rule", "ask-rule", "protected-path"])
async def test_allow_never_overrides_a_deny_rule_an_ask_rule_or_a_protected_path(
        llm: ScriptedLLM, ws: Path, rules: PermissionRules, args: dict[str, Any], asked: bool) -> None:
    allow = script(ws, "allow", """echo '{"hookSpecificOutput": {"permissionDecision": "allow"}}'""")
    approver = Approver(ApprovalAnswer.DENY)
    rec = await turn(llm, ws, [hook("PreToolUse", allow)], ("write_file", args), rules=rules, approver=approver)
    assert rec.of("tool_call_finished")[0].denied and not (ws / args["path"]).exists()
    assert len(approver.requests) == (1 if asked else 0)


async def test_ask_asks_even_when_a_rule_allows(llm: ScriptedLLM, ws: Path) -> None:
    ask = script(ws, "ask", """echo '{"decision": "ask", "reason": "touches the release branch"}'""")
    approver = Approver(ApprovalAnswer.DENY)
    rec = await turn(llm, ws, [hook("PreToolUse", ask)], ("bash", {"command": "touch ran"}),
                     rules=PermissionRules(allow=("bash",)), approver=approver)
    assert len(approver.requests) == 1 and "touches the release branch" in approver.requests[0].reason
    assert rec.of("tool_call_finished")[0].denied and not (ws / "ran").exists()


async def test_post_tool_use_receives_the_input_and_the_result(llm: ScriptedLLM, ws: Path) -> None:
    post = script(ws, "post", """echo '{"additionalContext": "formatted by the hook"}'""")
    await turn(llm, ws, [hook("PostToolUse", post, "Bash")], ("bash", {"command": "echo hello-hooks"}),
               rules=PermissionRules(allow=("bash",)))
    data = received(ws, "post")
    assert data["tool_input"] == {"command": "echo hello-hooks"}
    assert "hello-hooks" in data["tool_response"]["content"] and data["tool_response"]["is_error"] is False
    assert "formatted by the hook" in tool_message(llm)


async def test_post_tool_use_failure_gets_the_error(llm: ScriptedLLM, ws: Path) -> None:
    failed = script(ws, "failed", "exit 0")
    await turn(llm, ws, [hook("PostToolUseFailure", failed)], ("read_file", {"path": "missing.txt"}))
    data = received(ws, "failed")
    assert data["hook_event_name"] == "PostToolUseFailure" and "missing.txt" in data["error"]


async def test_permission_request_answers_for_the_user(llm: ScriptedLLM, ws: Path) -> None:
    answer = script(ws, "answer", """echo '{"hookSpecificOutput": {"hookEventName": "PermissionRequest",
      "decision": {"behavior": "deny", "message": "not on fridays"}}}'""")
    approver = Approver(ApprovalAnswer.ALLOW_ONCE)
    rec = await turn(llm, ws, [hook("PermissionRequest", answer)], ("bash", {"command": "touch ran"}),
                     approver=approver)
    assert approver.requests == [] and rec.of("tool_call_finished")[0].denied
    assert "not on fridays" in tool_message(llm) and received(ws, "answer")["tool_name"] == "bash"


async def test_a_hung_hook_is_stopped_at_its_timeout_and_the_call_goes_on(llm: ScriptedLLM, ws: Path) -> None:
    hang = script(ws, "hang", "sleep 30 & sleep 30")
    started = time.perf_counter()
    rec = await turn(llm, ws, [hook("PreToolUse", hang, timeout=0.5)], ("bash", {"command": "touch ran"}),
                     rules=PermissionRules(allow=("bash",)))
    assert time.perf_counter() - started < 10
    assert (ws / "ran").exists() and not rec.of("tool_call_finished")[0].is_error
    (shown,) = rec.of("hook")
    assert shown.outcome == "error" and "timeout of 0.5 s" in shown.message


@pytest.mark.parametrize(("command", "says"), [
    ("/nonexistent/hook-command", "command not found"),
    ("head -c 10000000 /dev/zero | tr '\\0' x", "printed more than 256 KiB"),
    ("echo '{not json'", "printed invalid JSON"),
], ids=["missing", "10MB", "invalid-json"])
async def test_bad_hooks_are_reported_and_the_call_runs(llm: ScriptedLLM, ws: Path, command: str, says: str) -> None:
    rec = await turn(llm, ws, [hook("PreToolUse", command)], ("bash", {"command": "touch ran"}),
                     rules=PermissionRules(allow=("bash",)))
    assert (ws / "ran").exists() and not rec.of("tool_call_finished")[0].denied
    (shown,) = rec.of("hook")
    assert shown.outcome == "error" and says in shown.message, shown
    assert len(shown.output) < 8200  # what it printed, cut for the chat (10 MB never reaches it)


def test_hooks_run_without_the_provider_keys(ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", "sk-hook-must-not-see")
    env = script(ws, "env", "env > " + str(ws / "env.txt"))
    outcome = asyncio.run(Hooks([hook("SessionStart", env)], ws).session_start())
    assert outcome.runs[0].process.exit_code == 0
    seen = (ws / "env.txt").read_text()
    assert "sk-hook-must-not-see" not in seen and f"CLAUDE_PROJECT_DIR={ws}" in seen
    assert received(ws, "env")["cwd"] == str(ws)


async def test_cancel_kills_the_hook(ws: Path) -> None:
    marker = ws / "late"
    hang = script(ws, "hang", f"sleep 2; touch {marker}")
    task = asyncio.create_task(Hooks([hook("Stop", hang)], ws).stop())
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.sleep(2.5)
    assert not marker.exists()


# -- the conversation events (the runtime's conversation service calls these) ----------------------

EVENTS = ["SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SessionEnd"]


async def _each(hooks: Hooks) -> dict[str, Any]:
    return {
        "SessionStart": await hooks.session_start("startup"),
        "UserPromptSubmit": await hooks.user_prompt_submit("fix the bug"),
        "PreCompact": await hooks.pre_compact("auto"),
        "Stop": await hooks.stop(stop_hook_active=False, last_message="done"),
        "SessionEnd": await hooks.session_end("exit"),
    }


async def test_exit_2_on_every_event(ws: Path) -> None:
    """A hook that exits 2 on every event: each blockable event is blocked with its stderr, the
    others report it; nothing raises."""
    always = script(ws, "always", 'echo "blocked by policy" >&2; exit 2')
    specs = [hook(e, always) for e in EVENTS]
    outcomes = await _each(Hooks(specs, ws, "s1"))
    for event in ("UserPromptSubmit", "PreCompact", "Stop"):
        assert outcomes[event].blocked and outcomes[event].message == "blocked by policy", event
    for event in ("SessionStart", "SessionEnd"):
        assert not outcomes[event].blocked and "blocked by policy" in outcomes[event].notices[0], event


async def test_conversation_events_get_their_data_and_add_context(ws: Path) -> None:
    ctx = script(ws, "ctx", 'echo "the build uses make"')
    outcomes = await _each(Hooks([hook(e, ctx) for e in EVENTS], ws, "s1"))
    assert outcomes["SessionStart"].context == "the build uses make"
    assert outcomes["UserPromptSubmit"].context == "the build uses make"
    assert outcomes["Stop"].context == ""  # plain text is context only for SessionStart and UserPromptSubmit
    data = received(ws, "ctx")  # the last run: SessionEnd
    assert data == {"session_id": "s1", "workspace_folder": str(ws), "cwd": str(ws), "hook_event_name": "SessionEnd",
                    "reason": "exit"}


async def test_stop_block_with_a_reason_and_matchers(ws: Path) -> None:
    stop = script(ws, "stop", """echo '{"decision": "block", "reason": "run the tests first"}'""")
    hooks = Hooks([hook("Stop", stop), hook("SessionStart", "exit 2", "resume"),
                   hook("PreCompact", "exit 2", "manual")], ws)
    outcome = await hooks.stop()
    assert outcome.blocked and outcome.message == "run the tests first"
    assert received(ws, "stop")["stop_hook_active"] is False
    assert (await hooks.session_start("startup")).runs == ()  # matcher "resume" does not match
    assert (await hooks.pre_compact("auto")).runs == () and (await hooks.pre_compact("manual")).blocked


# -- a turn with its conversation hooks (agent_ls.agent.hooks.turns) -------------------------------


def _user_messages(llm: ScriptedLLM) -> list[str]:
    return [m["content"] for m in llm.requests[-1].body["messages"] if m["role"] == "user"]


async def test_user_prompt_submit_context_reaches_the_models_request(llm: ScriptedLLM, ws: Path) -> None:
    from agent_ls.agent.hooks.turns import prompt_with_hooks

    ctx = script(ws, "ctx", 'echo "ticket ABC-123 is about the parser"')
    llm.script(text("ok"))
    session = make_session(llm, ws)
    turn_ = await prompt_with_hooks(session, Hooks([hook("UserPromptSubmit", ctx)], ws, session.session_id), "fix it")
    assert turn_.result is not None and turn_.result.text == "ok"
    assert "ticket ABC-123 is about the parser" in _user_messages(llm)[-1]
    assert received(ws, "ctx")["prompt"] == "fix it"


async def test_a_blocked_prompt_never_reaches_the_model(llm: ScriptedLLM, ws: Path) -> None:
    from agent_ls.agent.hooks.turns import prompt_with_hooks

    session = make_session(llm, ws)
    block = script(ws, "block", 'echo "no secrets in prompts" >&2; exit 2')
    turn_ = await prompt_with_hooks(session, Hooks([hook("UserPromptSubmit", block)], ws), "my key is sk-123")
    assert turn_.result is None and turn_.blocked is not None and turn_.blocked.message == "no secrets in prompts"
    assert llm.requests == [] and session.history == []


async def test_a_stop_hook_sends_the_model_back_a_bounded_number_of_times(llm: ScriptedLLM, ws: Path) -> None:
    from agent_ls.agent.hooks.turns import MAX_STOP_CONTINUES, prompt_with_hooks

    stop = script(ws, "stop", """echo '{"decision": "block", "reason": "run the tests first"}'""")
    llm.script(*(text(f"answer {i}") for i in range(MAX_STOP_CONTINUES + 1)))
    session = make_session(llm, ws)
    turn_ = await prompt_with_hooks(session, Hooks([hook("Stop", stop)], ws), "go")
    assert turn_.result is not None and turn_.result.text == f"answer {MAX_STOP_CONTINUES}"
    assert len(llm.requests) == MAX_STOP_CONTINUES + 1 and _user_messages(llm)[-1] == "run the tests first"
    assert received(ws, "stop")["stop_hook_active"] is True


async def test_session_start_context_is_in_every_request(llm: ScriptedLLM, ws: Path) -> None:
    from agent_ls.agent.hooks.turns import start_context

    start = script(ws, "start", 'echo "this repository uses tabs"')
    session = make_session(llm, ws)
    await start_context(session, Hooks([hook("SessionStart", start, "startup")], ws))
    llm.script(text("a"), text("b"))
    await session.prompt("one")
    await session.prompt("two")
    for request in llm.requests:
        assert "this repository uses tabs" in json.dumps(request.body["messages"][:2])


@pytest.mark.parametrize(("event", "blocks"), [("SessionStart", False), ("SessionEnd", False), ("Stop", True)])
async def test_continue_false_blocks_only_what_can_be_blocked(ws: Path, event: str, blocks: bool) -> None:
    halt = script(ws, "halt", """echo '{"continue": false, "stopReason": "maintenance window"}'""")
    outcome = await Hooks([hook(event, halt)], ws).run(event, {})
    assert outcome.blocked is blocks
    assert "maintenance window" in (outcome.message if blocks else outcome.notices[0])


async def test_several_hooks_deny_beats_ask_beats_allow(ws: Path) -> None:
    allow = script(ws, "allow", """echo '{"decision": "approve"}'""")
    ask = script(ws, "ask", """echo '{"hookSpecificOutput": {"permissionDecision": "ask"}}'""")
    deny = script(ws, "deny", """echo '{"decision": "block", "reason": "frozen"}'""")
    two = await Hooks([hook("PreToolUse", allow), hook("PreToolUse", ask)], ws).pre_tool_use("bash", {}, "c")
    assert two.decision == "ask"
    three = await Hooks([hook("PreToolUse", c) for c in (allow, ask, deny)], ws).pre_tool_use("bash", {}, "c")
    assert three.decision == "deny" and three.reason == "frozen"
    same = await Hooks([hook("PreToolUse", allow), hook("PreToolUse", allow, "Bash")], ws).pre_tool_use("bash", {}, "c")
    assert len(same.runs) == 1  # the same command once


async def test_a_background_child_holding_the_output_does_not_hold_the_call(ws: Path) -> None:
    """The hook exits at once but leaves a child with its stdout open: the hook's run ends within
    a second (the child is killed with the hook's process group), far before its timeout."""
    started = time.perf_counter()
    outcome = await Hooks([hook("Stop", "sleep 20 & echo started", timeout=30)], ws).stop()
    assert time.perf_counter() - started < 5
    assert outcome.runs[0].process.exit_code == 0 and not outcome.runs[0].process.timed_out


# -- PreCompact before the session's own compaction (trigger auto) ---------------------------------
async def _compacting_turns(llm: ScriptedLLM, ws: Path, body: str, turns: int = 6,
                            compact_at: float | None = None) -> tuple[Recorder, ScriptedLLM]:
    from tests.agent.test_context import WINDOW, scripted, session, write_files

    write_files(ws, turns)
    llm.window = WINDOW
    s = session(llm, ws, None, compact_at=compact_at)
    pre = script(ws, "pre", body)
    s.hooks = Hooks([hook("PreCompact", pre, "auto"), hook("PreCompact", "touch manual-ran", "manual")], ws,
                    s.session_id)
    rec = Recorder()
    scripted(llm, 5 * turns)
    for i in range(turns):
        result = await s.prompt(f"read f{i}", rec)
        assert result.stop_reason == "end", result.error
    assert not [r for r in llm.requests if r.rejected]
    return rec, llm


async def test_pre_compact_runs_with_trigger_auto_before_the_sessions_own_compaction(
        llm: ScriptedLLM, ws: Path) -> None:
    rec, _ = await _compacting_turns(llm, ws, 'echo "notes saved"')
    kinds = [e.type for e in rec.events if e.type in ("hook", "compaction")]
    assert "compaction" in kinds, "the session never compacted: the test proves nothing"
    # each compaction of its own comes right after its PreCompact hook ran (and only the "auto" one)
    assert kinds[:2] == ["hook", "compaction"] and kinds.count("hook") == kinds.count("compaction"), kinds
    shown = rec.of("hook")[0]
    assert (shown.event, shown.outcome, shown.call_id) == ("PreCompact", "ran", None)
    data = received(ws, "pre")
    assert data["hook_event_name"] == "PreCompact" and data["trigger"] == "auto"
    assert not (ws / "manual-ran").exists()


async def test_a_blocking_pre_compact_defers_the_compaction_while_the_request_fits(llm: ScriptedLLM, ws: Path) -> None:
    # compactAt 0.5: far from the window's limit, so a blocked compaction can wait a few requests
    rec, _ = await _compacting_turns(llm, ws, 'echo "not now" >&2; exit 2', turns=8, compact_at=0.5)
    hooks, done = rec.of("hook"), rec.of("compaction")
    assert hooks and all(h.outcome == "blocked" and h.message == "not now" for h in hooks)
    # honoured while the request fits the window; past it the session compacts anyway and says why
    assert len(hooks) > len(done), (len(hooks), len(done))
    assert all("PreCompact hook asked not to compact" in c.note for c in done)
