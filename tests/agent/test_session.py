"""The turn loop against the scripted LLM server through litellm's real HTTP path."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.agent.conftest import Recorder, make_session
from tests.llm.scripted_server import (
    ScriptedLLM,
    Usage,
    auth_error,
    context_exceeded,
    hang,
    rate_limit,
    slow_text,
    text,
    tool_calls,
)

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


async def test_streamed_text_events_and_usage(llm: ScriptedLLM, ws: Path) -> None:
    llm.script(text("Hello there, world", chunks=4, usage=Usage(prompt_tokens=50, completion_tokens=7)))
    s = make_session(llm, ws)
    rec = Recorder()
    result = await s.prompt("hi", rec)
    assert result.stop_reason == "end" and result.text == "Hello there, world"
    deltas = [e.text for e in rec.of("text")]
    assert len(deltas) >= 3 and "".join(deltas) == "Hello there, world"
    assert rec.types()[0] == "turn_started" and rec.types()[-1] == "turn_finished"
    assert result.usage.input_tokens == 50 and result.usage.output_tokens == 7
    body = llm.requests[-1].body
    assert body["messages"][0]["role"] == "system"
    assert body["messages"][-1] == {"role": "user", "content": "hi"}
    assert {t["function"]["name"] for t in body["tools"]} >= {"read_file", "write_file", "edit_file", "bash",
                                                              "grep", "glob"}


async def test_tool_calls_are_run_and_fed_back(llm: ScriptedLLM, ws: Path) -> None:
    (ws / "a.txt").write_text("alpha\n")
    (ws / "b.txt").write_text("beta\n")
    llm.script(
        tool_calls([("read_file", {"path": "a.txt"}), ("read_file", {"path": "b.txt"})]),
        text("both read"),
    )
    s = make_session(llm, ws)
    rec = Recorder()
    result = await s.prompt("read both", rec)
    assert result.text == "both read" and result.steps == 2
    started = rec.of("tool_call_started")
    finished = rec.of("tool_call_finished")
    assert [e.name for e in started] == ["read_file", "read_file"]
    assert all(not e.is_error for e in finished)
    second = llm.requests[-1].body["messages"]
    tool_msgs = [m for m in second if m["role"] == "tool"]
    assert len(tool_msgs) == 2 and "alpha" in tool_msgs[0]["content"] and "beta" in tool_msgs[1]["content"]
    calls = [m for m in second if m.get("tool_calls")][0]["tool_calls"]
    assert [c["id"] for c in calls] == [m["tool_call_id"] for m in tool_msgs]


async def test_read_only_calls_run_concurrently(llm: ScriptedLLM, ws: Path) -> None:
    from agent_ls.core.tools import Capability, ToolResult, ToolSpec

    class Slow:
        def __init__(self, name: str) -> None:
            self.spec = ToolSpec(name=name, description="slow read", input_schema={"type": "object"},
                                 capability=Capability.READ)
            self.active = 0
        async def call(self, arguments: dict) -> ToolResult:  # type: ignore[type-arg]
            await asyncio.sleep(0.3)
            return ToolResult(content="ok")

    class Source:
        def __init__(self) -> None:
            self.t = [Slow("mcp__s__a"), Slow("mcp__s__b"), Slow("mcp__s__c")]
        async def refresh_if_dirty(self) -> bool:
            return False
        def tools(self) -> list:  # type: ignore[type-arg]
            return self.t
        def instructions(self) -> str:
            return ""

    llm.script(tool_calls([("mcp__s__a", {}), ("mcp__s__b", {}), ("mcp__s__c", {})]), text("done"))
    s = make_session(llm, ws, mcp=Source(), defer=False)
    rec = Recorder()
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await s.prompt("go", rec)
    elapsed = loop.time() - t0
    # three 0.3 s reads overlapped (serial would be >= 0.9 s)
    assert elapsed < 0.85, elapsed
    starts = [i for i, e in enumerate(rec.events) if e.type == "tool_call_started"]
    first_finish = next(i for i, e in enumerate(rec.events) if e.type == "tool_call_finished")
    assert max(starts) < first_finish


async def test_bad_tool_arguments_and_unknown_tools_become_errors(llm: ScriptedLLM, ws: Path) -> None:
    llm.script(tool_calls([("no_such_tool", {}), ("read_file", {"wrong": 1})]), text("ok"))
    s = make_session(llm, ws)
    rec = Recorder()
    await s.prompt("x", rec)
    fin = rec.of("tool_call_finished")
    assert fin[0].is_error and "no tool named" in fin[0].content
    assert fin[1].is_error


@pytest.mark.parametrize(("turn", "kind"), [(auth_error, "auth"), (rate_limit, "rate_limit"),
                                            (context_exceeded, "context_window")])
async def test_provider_errors_are_clear(llm: ScriptedLLM, ws: Path, turn, kind) -> None:  # type: ignore[no-untyped-def]
    llm.script(turn(), turn())  # a context-length error is retried once, after compacting
    s = make_session(llm, ws)
    rec = Recorder()
    result = await s.prompt("x", rec)
    assert result.stop_reason == "error" and result.error is not None and result.error.kind == kind
    assert rec.of("error")[0].kind == kind


async def test_missing_key_names_the_variable(llm: ScriptedLLM, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_ls.agent.llm import LLMConfig

    monkeypatch.delenv("ANTHROPIC_API_KEY", raising=False)
    s = make_session(llm, ws, config=LLMConfig(model="anthropic/claude-sonnet-4-5"))
    result = await s.prompt("x")
    assert result.error is not None and result.error.kind == "missing_key"
    assert "ANTHROPIC_API_KEY" in result.error.message
    assert not llm.requests


async def test_max_steps_guard(llm: ScriptedLLM, ws: Path) -> None:
    llm.script(*[tool_calls([("glob", {"pattern": "*"})]) for _ in range(5)])
    s = make_session(llm, ws, max_steps=3)
    result = await s.prompt("loop")
    assert result.stop_reason == "max_steps" and result.steps == 3
    assert len(llm.requests) == 3


async def test_cancel_mid_stream_keeps_history_consistent(llm: ScriptedLLM, ws: Path) -> None:
    llm.script(slow_text(["Part one. ", "part two. ", "part three."], delay=0.4))
    s = make_session(llm, ws)
    rec = Recorder()
    task = asyncio.create_task(s.prompt("talk", rec))
    while not rec.of("text"):
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert rec.types()[-1] == "turn_finished" and rec.events[-1].stop_reason == "cancelled"
    assert s.history[-1]["role"] == "assistant" and "interrupted" in s.history[-1]["content"]


async def test_cancel_while_waiting_for_first_byte(llm: ScriptedLLM, ws: Path) -> None:
    llm.script(hang())
    s = make_session(llm, ws)
    task = asyncio.create_task(s.prompt("wait"))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert s.history[-1] == {"role": "user", "content": "wait"}


async def test_cancel_mid_tool_gives_every_call_a_result(llm: ScriptedLLM, ws: Path) -> None:
    llm.script(tool_calls([("bash", {"command": "sleep 30"}), ("read_file", {"path": "x"})]))
    s = make_session(llm, ws)
    rec = Recorder()
    task = asyncio.create_task(s.prompt("run", rec))
    while not rec.of("tool_call_started"):
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    calls = [m for m in s.history if m.get("tool_calls")][-1]["tool_calls"]
    results = [m for m in s.history if m["role"] == "tool"]
    assert [m["tool_call_id"] for m in results] == [c["id"] for c in calls]
    assert all("cancelled" in m["content"] for m in results)


async def test_frozen_bytes_identical_across_turns(llm: ScriptedLLM, ws: Path) -> None:
    (ws / "AGENTS.md").write_text("Always write tests.")
    llm.script(text("one"), text("two"))
    s = make_session(llm, ws)
    await s.prompt("first")
    await s.prompt("second")
    a, b = (r.body for r in llm.requests[-2:])
    assert a["messages"][0] == b["messages"][0]
    assert "Always write tests." in a["messages"][0]["content"]
    assert json.dumps(a["tools"]) == json.dumps(b["tools"])


async def test_anthropic_cache_control_reaches_the_wire(llm: ScriptedLLM, ws: Path) -> None:
    from agent_ls.agent.llm import LLMConfig

    llm.script(text("cached", usage=Usage(prompt_tokens=100, completion_tokens=3, cache_read_input_tokens=80,
                                           cache_creation_input_tokens=10)))
    cfg = LLMConfig(model="anthropic/claude-test", api_base=llm.url, api_key="x", max_retries=0)
    s = make_session(llm, ws, config=cfg)
    result = await s.prompt("hi")
    assert result.text == "cached"
    body = llm.requests[-1].body
    assert llm.requests[-1].path.endswith("/v1/messages")
    system = body["system"]
    assert system[0]["cache_control"] == {"type": "ephemeral"}
    assert body["tools"][-1].get("cache_control") == {"type": "ephemeral"}
    assert all("cache_control" not in t for t in body["tools"][:-1])
    assert result.usage.cache_read_tokens == 80 and result.usage.cache_write_tokens == 10


async def test_a_cancelled_call_keeps_its_run_for_the_resumed_card(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    """A call cancelled while it ran is recorded like any other (the chat's tool card on resume
    shows its duration and that it ended in an error), next to its 'cancelled' result."""
    from agent_ls.agent.store import SessionStore

    llm.script(tool_calls([("bash", {"command": "sleep 30"})]))
    with SessionStore(tmp_path / "s.sqlite3") as store:
        s = make_session(llm, ws, store=store)
        rec = Recorder()
        task = asyncio.create_task(s.prompt("run", rec))
        while not rec.of("tool_call_started"):
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        call_id = rec.of("tool_call_started")[0].call_id
        for _ in range(100):  # recorded by a shielded task that outlives the cancellation
            if call_id in store.tool_runs(s.session_id):
                break
            await asyncio.sleep(0.02)
        run = store.tool_runs(s.session_id)[call_id]
        assert run.name == "bash" and run.is_error and not run.denied
        assert run.duration_ms is not None and run.duration_ms >= 150
