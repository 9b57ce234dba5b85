"""More of the turn loop against the scripted LLM through litellm's real HTTP path: ordering of
tool calls, usage, the step limit, cancellation while asking for approval or streaming, and the
bytes sent. Provider errors, crash safety and resume are in test_turn_failures.py."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_ls.agent.events import TextDelta, ThinkingDelta, to_dict
from agent_ls.agent.llm import LLMConfig
from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, PermissionGate, PermissionRules
from agent_ls.core.tools import Capability
from tests.agent.conftest import Recorder, make_session
from tests.agent.helpers import Source, Timed, assert_history_consistent
from tests.llm.scripted_server import ScriptedLLM, Usage, slow_text, text, tool_calls

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")
REPO = Path(__file__).resolve().parents[2]


def spans(log: list[tuple[str, str, float]]) -> dict[str, tuple[float, float]]:
    start = {n: t for n, k, t in log if k == "start"}
    end = {n: t for n, k, t in log if k == "end"}
    return {n: (start[n], end[n]) for n in start}


def overlap(a: tuple[float, float], b: tuple[float, float]) -> bool:
    return a[0] < b[1] and b[0] < a[1]


# --- tool call ordering -----------------------------------------------------------------------


async def test_calls_that_are_not_read_only_run_alone_and_in_order(llm: ScriptedLLM, ws: Path) -> None:
    log: list[tuple[str, str, float]] = []
    r, w = Capability.READ, Capability.WRITE
    tools = [Timed("mcp__s__r1", r, log), Timed("mcp__s__r2", r, log), Timed("mcp__s__w1", w, log),
             Timed("mcp__s__r3", r, log), Timed("mcp__s__w2", w, log), Timed("mcp__s__n1", Capability.NETWORK, log)]
    order = ["mcp__s__r1", "mcp__s__r2", "mcp__s__w1", "mcp__s__r3", "mcp__s__w2", "mcp__s__n1"]
    llm.script(tool_calls([(n, {}) for n in order]), text("done"))
    gate = PermissionGate(PermissionRules(allow=("mcp__s__*",)))
    s = make_session(llm, ws, mcp=Source(tools), gate=gate, defer=False)
    await s.prompt("go")
    sp = spans(log)
    assert overlap(sp["mcp__s__r1"], sp["mcp__s__r2"])  # read-only neighbours run together
    starts = sorted(sp, key=lambda n: sp[n][0])
    assert starts[2:] == order[2:]  # then strictly in order
    for a, b in zip(order[1:], order[2:], strict=False):
        assert sp[a][1] <= sp[b][0], (a, b)  # the write, the read after it, the next write: one at a time
    answered = [m["tool_call_id"] for m in llm.requests[-1].body["messages"] if m["role"] == "tool"]
    calls = [c["function"]["name"] for m in llm.requests[-1].body["messages"] for c in m.get("tool_calls") or []]
    assert calls == order and len(answered) == 6
    assert_history_consistent(llm.requests[-1].body["messages"])


async def test_a_read_tool_that_needs_approval_is_not_run_concurrently(llm: ScriptedLLM, ws: Path) -> None:
    log: list[tuple[str, str, float]] = []
    tools = [Timed("mcp__s__a", Capability.READ, log), Timed("mcp__s__b", Capability.READ, log)]
    asked: list[str] = []

    async def handler(req: ApprovalRequest) -> ApprovalAnswer:
        asked.append(req.spec.name)
        return ApprovalAnswer.ALLOW_ONCE

    llm.script(tool_calls([("mcp__s__a", {}), ("mcp__s__b", {})]), text("ok"))
    s = make_session(llm, ws, mcp=Source(tools), gate=PermissionGate(PermissionRules(ask=("mcp__s__*",)), handler),
                     defer=False)
    await s.prompt("go")
    sp = spans(log)
    assert asked == ["mcp__s__a", "mcp__s__b"] and not overlap(sp["mcp__s__a"], sp["mcp__s__b"])


# --- usage ------------------------------------------------------------------------------------


async def test_usage_is_reported_per_step_and_summed_per_turn(llm: ScriptedLLM, ws: Path) -> None:
    llm.script(tool_calls([("glob", {"pattern": "*"})], usage=Usage(prompt_tokens=100, completion_tokens=20,
                                                                    cache_read_input_tokens=60)),
               text("done", usage=Usage(prompt_tokens=150, completion_tokens=5, cache_read_input_tokens=90)))
    s = make_session(llm, ws)
    rec = Recorder()
    result = await s.prompt("go", rec)
    estimate, *per_step = rec.of("usage")  # the meter's estimate before the first answer, then each step's
    assert estimate.context_source == "estimate" and estimate.input_tokens == 0
    assert [(u.input_tokens, u.output_tokens, u.cache_read_tokens) for u in per_step] == [(100, 20, 60),
                                                                                           (150, 5, 90)]
    u = result.usage
    assert (u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens) == (250, 25, 150, 0)
    assert rec.events[-1].usage == u


# --- the step limit ---------------------------------------------------------------------------


async def test_max_steps_guard_stops_with_a_clear_event_and_a_consistent_history(llm: ScriptedLLM,
                                                                                 ws: Path) -> None:
    llm.script(*[tool_calls([("glob", {"pattern": "*"}), ("grep", {"pattern": "x"})]) for _ in range(4)])
    s = make_session(llm, ws, max_steps=2)
    rec = Recorder()
    result = await s.prompt("loop", rec)
    assert result.stop_reason == "max_steps" and result.steps == 2 and len(llm.requests) == 2
    err = rec.of("error")[0]
    assert err.kind == "max_steps" and "2 steps" in err.message
    assert rec.events[-1].stop_reason == "max_steps"
    assert_history_consistent(s.history)
    assert s.history[-1]["role"] == "tool"
    # the next prompt goes on from there, with a well-formed history
    llm.clear()
    llm.script(text("continuing"))
    assert (await s.prompt("go on")).text == "continuing"
    assert_history_consistent(llm.requests[-1].body["messages"])


# --- cancellation -----------------------------------------------------------------------------


async def test_cancel_while_waiting_for_approval(llm: ScriptedLLM, ws: Path) -> None:
    waiting = asyncio.Event()

    async def handler(req: ApprovalRequest) -> ApprovalAnswer:
        waiting.set()
        await asyncio.Event().wait()  # the user never answers
        raise AssertionError("unreachable")

    llm.script(tool_calls([("write_file", {"path": "f.txt", "content": "x"}), ("glob", {"pattern": "*"})]))
    s = make_session(llm, ws, gate=PermissionGate(PermissionRules(), handler))
    rec = Recorder()
    task = asyncio.create_task(s.prompt("write", rec))
    await asyncio.wait_for(waiting.wait(), 30)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not (ws / "f.txt").exists()
    assert_history_consistent(s.history)
    assert [m["content"] for m in s.history if m["role"] == "tool"] == [
        "Error: The call was cancelled by the user before it finished."] * 2
    started = [e.call_id for e in rec.of("tool_call_started")]
    finished = [e.call_id for e in rec.of("tool_call_finished")]
    assert started and started == finished  # the UI sees every started call end
    assert rec.events[-1].stop_reason == "cancelled"


async def test_cancel_mid_stream_stops_the_stream(llm: ScriptedLLM, ws: Path) -> None:
    llm.script(slow_text(30, delay=0.1))
    s = make_session(llm, ws)
    rec = Recorder()
    task = asyncio.create_task(s.prompt("talk", rec))
    while len(rec.of("text")) < 2:
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    count = len(rec.events)
    await asyncio.sleep(0.5)
    assert len(rec.events) == count  # nothing arrives after the turn ended
    assert rec.events[-1].type == "turn_finished"
    shown = "".join(e.text for e in rec.of("text"))
    assert s.history[-1]["content"].startswith(shown) and "[interrupted by the user]" in s.history[-1]["content"]


# --- bytes on the wire ------------------------------------------------------------------------


async def test_openai_requests_carry_no_cache_control(llm: ScriptedLLM, ws: Path) -> None:
    llm.script(text("hi"))
    await make_session(llm, ws).prompt("x")
    body = llm.requests[-1].body
    assert isinstance(body["messages"][0]["content"], str)
    assert "cache_control" not in json.dumps(body)


async def test_anthropic_frozen_block_and_tools_stay_identical_across_turns(llm: ScriptedLLM, ws: Path) -> None:
    (ws / "AGENTS.md").write_text("Use tabs.\n")
    llm.script(tool_calls([("glob", {"pattern": "*"})]), text("one"), text("two"))
    cfg = LLMConfig(model="anthropic/claude-test", api_base=llm.url, api_key="x", max_retries=0)
    s = make_session(llm, ws, config=cfg)
    await s.prompt("first")
    (ws / "AGENTS.md").write_text("Use spaces.\n")  # project file edited mid-session
    await s.prompt("second")
    bodies = [r.body for r in llm.requests[-3:]]
    assert all(r.path.endswith("/v1/messages") for r in llm.requests[-3:])
    frozen = [json.dumps(b["system"][0]) for b in bodies]
    assert len(set(frozen)) == 1 and "Use tabs." in frozen[0] and "Use spaces." not in frozen[0]
    assert bodies[0]["system"][0]["cache_control"] == {"type": "ephemeral"}
    assert len({json.dumps(b["tools"]) for b in bodies}) == 1
    tools = bodies[0]["tools"]
    assert tools[-1]["cache_control"] == {"type": "ephemeral"} and all("cache_control" not in t for t in tools[:-1])
    # messages grow; the prefix the provider caches does not move
    assert len(bodies[2]["messages"]) > len(bodies[0]["messages"])
    # a new session picks up the edited project file
    llm.script(text("three"))
    await make_session(llm, ws, config=cfg).prompt("third")
    assert "Use spaces." in llm.requests[-1].body["system"][0]["text"]


def test_event_payloads_are_camel_case() -> None:
    assert to_dict(TextDelta("hi")) == {"text": "hi", "type": "text"}
    from agent_ls.agent.events import ToolCallFinished

    d = to_dict(ToolCallFinished("c1", "bash", True, "boom", 1.5, denied=True))
    assert json.loads(json.dumps(d)) == {"callId": "c1", "name": "bash", "isError": True, "content": "boom",
                                         "durationMs": 1.5, "denied": True, "attachments": [], "outputHandle": None,
                                         "sandbox": None, "app": None, "type": "tool_call_finished"}



async def test_text_before_tool_calls_and_malformed_arguments(llm: ScriptedLLM, ws: Path) -> None:
    from tests.llm.scripted_server import ToolCalls

    (ws / "a.txt").write_text("alpha\n")
    raw = ToolCalls(calls=(("call_bad", "read_file", '{"path": "a.txt"'), ("call_ok", "read_file", '{"path": "a.txt"}')))
    llm.script(ToolCalls(calls=raw.calls, text="Let me look. "), text("done"))
    s = make_session(llm, ws)
    rec = Recorder()
    await s.prompt("read", rec)
    assert rec.of("text")[0].text == "Let me look. "
    assistant = [m for m in s.history if m.get("tool_calls")][0]
    assert assistant["content"] == "Let me look. "
    assert [c["function"]["arguments"] for c in assistant["tool_calls"]] == ['{"path": "a.txt"', '{"path": "a.txt"}']
    results = {m["tool_call_id"]: m["content"] for m in s.history if m["role"] == "tool"}
    assert results["call_bad"].startswith("Error: read_file: the arguments are not valid JSON")
    assert "alpha" in results["call_ok"]
    assert_history_consistent(llm.requests[-1].body["messages"])


async def test_reasoning_streams_as_thinking_events_and_stays_out_of_history(llm: ScriptedLLM, ws: Path) -> None:
    """A model that thinks aloud (litellm's ``reasoning_content``): the thinking is streamed as
    ``thinking`` events before the reply; the reply alone is the assistant message."""
    s = make_session(llm, ws)
    llm.script(text("The answer is 4.", reasoning="two plus two is four"))
    rec = Recorder()
    result = await s.prompt("2+2?", rec)
    assert result.text == "The answer is 4."
    thoughts = [e for e in rec.events if isinstance(e, ThinkingDelta)]
    assert "".join(e.text for e in thoughts) == "two plus two is four"
    first_text = next(i for i, e in enumerate(rec.events) if e.type == "text")
    assert rec.events.index(thoughts[-1]) < first_text
    assert s.history[-1] == {"role": "assistant", "content": "The answer is 4."}
