"""The one tool runner (issue 29 item 4) and approvals that carry their call (item 3).

A front end answers questions through one approval handler for all its sessions and its direct
calls: every question must say which call (and session) it is about, however many are open at
once and in whatever order they are answered.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

from agent_ls.agent.events import ApprovalRequested, ToolCallFinished, ToolCallStarted
from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, PermissionGate, PermissionRules
from agent_ls.agent.tool_runner import CANCELLED_RESULT, ToolCall, ToolRunner, capped
from agent_ls.core.tools import Capability, ToolResult
from tests.agent.conftest import Recorder, make_session
from tests.agent.helpers import Source, Timed
from tests.harness import happens_before_end
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls

WRITE = "mcp__s__delete"


class AnswerTogether:
    """An approval handler shared by everything that asks: it waits until ``n`` questions are
    open, then answers them last-come first (deny for ``{"id": "A"}``, allow once otherwise)."""

    def __init__(self, n: int) -> None:
        self.n = n
        self.requests: list[ApprovalRequest] = []
        self.all_open = asyncio.Event()
        self.turn = asyncio.Condition()
        self.answered = 0

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        me = len(self.requests) - 1
        if len(self.requests) == self.n:
            self.all_open.set()
        await asyncio.wait_for(self.all_open.wait(), 10)
        async with self.turn:
            await asyncio.wait_for(self.turn.wait_for(lambda: self.answered == self.n - 1 - me), 10)
            self.answered += 1
            self.turn.notify_all()
        return ApprovalAnswer.DENY if request.arguments.get("id") == "A" else ApprovalAnswer.ALLOW_ONCE


async def test_one_approver_for_two_sessions_names_each_call_and_session(llm: ScriptedLLM, ws: Path) -> None:
    """Two sessions whose turns ask at once about calls with the same id (providers' ids repeat
    across sessions), answered in reverse order: each question carries its call id and
    session id, and each answer reaches its own call."""
    handler = AnswerTogether(2)
    log: list[Any] = []
    tool = Timed(WRITE, Capability.WRITE, log, delay=0)
    recorders = [Recorder(), Recorder()]
    sessions = [make_session(llm, ws, mcp=Source([tool]), gate=PermissionGate(PermissionRules(), handler),
                             session_id=f"session-{n}", defer=False) for n in range(2)]
    llm.script(tool_calls([(WRITE, {"id": "A"}, "call_same")]), tool_calls([(WRITE, {"id": "B"}, "call_same")]),
               text("done"), text("done"))
    await asyncio.gather(*(s.prompt("delete", r) for s, r in zip(sessions, recorders, strict=True)))
    assert sorted(r.session_id or "" for r in handler.requests) == ["session-0", "session-1"]
    for request in handler.requests:
        rec = recorders[[s.session_id for s in sessions].index(request.session_id)]
        started, = rec.of("tool_call_started")
        finished, = rec.of("tool_call_finished")
        assert request.call_id == started.call_id == finished.call_id == "call_same"
        assert request.arguments == started.arguments  # the question is about this session's call
        assert finished.denied is (request.arguments["id"] == "A")
        assert finished.content == ("The user denied this call." if finished.denied else f"{WRITE} done")


async def test_parallel_runs_through_one_gate_each_get_their_answer() -> None:
    """Direct calls share one gate: two asking at once, answered in reverse order."""
    handler = AnswerTogether(2)
    tool = Timed(WRITE, Capability.WRITE, [], delay=0)
    runner = ToolRunner(PermissionGate(PermissionRules(), handler))
    a, b = await asyncio.gather(runner.run(ToolCall("direct-1", WRITE, {"id": "A"}), tool),
                                runner.run(ToolCall("direct-2", WRITE, {"id": "B"}), tool))
    assert a.denied and a.result.is_error and not b.denied and b.result.content == f"{WRITE} done"
    asked = {r.arguments["id"]: (r.call_id, r.session_id) for r in handler.requests}
    assert asked == {"A": ("direct-1", None), "B": ("direct-2", None)}


async def test_agent_and_direct_calls_emit_the_same_sequence(llm: ScriptedLLM, ws: Path) -> None:
    """The same tool called in a turn and directly: started, approval requested, finished with
    a duration; the direct call's text is capped, the session's paged."""
    asked: list[ApprovalRequest] = []

    async def allow(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer.ALLOW_ONCE

    tool = Timed(WRITE, Capability.WRITE, [], delay=0.01)
    gate = PermissionGate(PermissionRules(), allow)
    turn = Recorder()
    session = make_session(llm, ws, mcp=Source([tool]), gate=gate, session_id="session-1", defer=False)
    llm.script(tool_calls([(WRITE, {"id": "1"}, "call_1")]), text("done"))
    await session.prompt("delete", turn)
    direct = Recorder()
    outcome = await ToolRunner(gate, shape=capped(5)).run(ToolCall("direct-1", WRITE, {"id": "1"}), tool, direct)
    kinds = [type(e) for e in turn.events if isinstance(e, (ToolCallStarted, ApprovalRequested, ToolCallFinished))]
    assert kinds == [type(e) for e in direct.events] == [ToolCallStarted, ApprovalRequested, ToolCallFinished]
    for rec, call_id in ((turn, "call_1"), (direct, "direct-1")):
        (started,), (announced,), (finished,) = (rec.of(k) for k in (
            "tool_call_started", "approval_requested", "tool_call_finished"))
        assert (started.name, started.server, started.display_name, started.arguments) == (WRITE, "s", "delete", {"id": "1"})
        assert started.call_id == announced.call_id == finished.call_id == call_id
        assert finished.duration_ms >= 10 and not finished.is_error and not finished.denied
    assert [(r.call_id, r.session_id) for r in asked] == [("call_1", session.session_id), ("direct-1", None)]
    assert turn.of("tool_call_finished")[0].content == f"{WRITE} done"
    assert outcome.result.content != f"{WRITE} done" and outcome.result.truncated_chars > 0  # capped


async def test_a_call_cancelled_while_asking_still_finishes_its_card() -> None:
    """Cancelled while the question is open: the card gets its end (and the run record)."""
    asking = asyncio.Event()

    async def never(request: ApprovalRequest) -> ApprovalAnswer:
        asking.set()
        await asyncio.Event().wait()
        raise AssertionError("unreachable")

    runs: list[Any] = []

    async def record(run: Any) -> None:
        runs.append(run)

    rec = Recorder()
    runner = ToolRunner(PermissionGate(PermissionRules(), never), "s1", record=record)
    task = asyncio.create_task(runner.run(ToolCall("c1", WRITE, {}), Timed(WRITE, Capability.WRITE, []), rec))
    await happens_before_end(asking, task, "the approval question")
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    finished, = rec.of("tool_call_finished")
    assert finished.call_id == "c1" and finished.is_error and finished.content == CANCELLED_RESULT
    assert [(r.call_id, r.is_error, r.denied) for r in runs] == [("c1", True, False)]


async def test_bad_arguments_and_unknown_tools_end_without_asking() -> None:
    asked: list[ApprovalRequest] = []

    async def handler(request: ApprovalRequest) -> ApprovalAnswer:
        asked.append(request)
        return ApprovalAnswer.ALLOW_ONCE

    runner = ToolRunner(PermissionGate(PermissionRules(), handler))
    bad = await runner.run(ToolCall("c1", WRITE, "the arguments are not valid JSON"),
                           Timed(WRITE, Capability.WRITE, []))
    missing = await runner.run(ToolCall("c2", "nope", {}), None)
    assert bad.result == ToolResult.error(f"{WRITE}: the arguments are not valid JSON")
    assert missing.result.is_error and "no tool named 'nope'" in missing.result.content and not asked
