"""The plan (issue 27 item 4): ``update_plan`` validation, the session's state and events, the
store's round trip, through the scripted LLM and litellm's real HTTP path."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.agent.events import PlanUpdated, to_dict
from agent_ls.agent.plan import MAX_PLAN_STEPS, PlanEntry, UpdatePlanTool, parse_plan, plan_text
from agent_ls.agent.store import SessionStore
from tests.agent.conftest import Recorder, make_session
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


@pytest.mark.parametrize(("steps", "message"), [
    ([{"content": "a", "status": "done"}], "unknown status 'done'"),
    ([{"content": "  ", "status": "pending"}], "step 1: `content` must be a non-empty string"),
    ([{"status": "pending"}], "`content` must be a non-empty string"),
    ([{"content": "a", "status": "pending", "priority": "urgent"}], "unknown priority 'urgent'"),
    ([{"content": f"s{n}", "status": "pending"} for n in range(MAX_PLAN_STEPS + 1)], "at most 50 steps"),
    ("do it", "must be an array"),
    (["do it"], "step 1: expected an object"),
])
async def test_bad_plans_get_clear_errors(steps: object, message: str) -> None:
    result = await UpdatePlanTool().call({"steps": steps})
    assert result.is_error and message in result.content


async def test_every_problem_is_named_at_once() -> None:
    result = await UpdatePlanTool().call({"steps": [{"content": "", "status": "x"}, {"content": "b", "status": "y"}]})
    assert result.is_error
    assert "step 1" in result.content and "step 2: unknown status 'y'" in result.content


async def test_missing_steps_is_an_error() -> None:
    result = await UpdatePlanTool().call({})
    assert result.is_error and "steps" in result.content


def test_a_valid_plan_defaults_priority_and_collapses_whitespace() -> None:
    entries = parse_plan([{"content": "read\n the  code", "status": "in_progress"}, {"content": "fix", "status": "pending"}])
    assert entries == (PlanEntry("read the code", "in_progress", "medium"), PlanEntry("fix", "pending", "medium"))
    assert plan_text(entries) == "[>] read the code\n[ ] fix"


def test_the_protocol_names_the_same_statuses_and_event() -> None:
    from agent_ls.agent.plan import PLAN_STATUSES
    from agent_ls.server.protocol import methods

    assert methods.PLAN_STATUSES == PLAN_STATUSES and "plan" in methods.EVENT_TYPES


def test_the_event_payload_is_camel_json() -> None:
    payload = to_dict(PlanUpdated((PlanEntry("a", "completed", "high"),)))
    assert payload["type"] == "plan"
    assert list(payload["entries"]) == [{"content": "a", "status": "completed", "priority": "high"}]


def test_store_round_trip_and_clear(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.sqlite3") as store:
        sid = store.create_session().id
        assert store.load_plan(sid) == []
        plan = [{"content": "a", "status": "completed", "priority": "medium"}]
        store.set_plan(sid, plan)
        assert store.load_plan(sid) == plan
        store.set_plan(sid, [])
        assert store.load_plan(sid) == []
        store.set_plan(sid, plan)
        store.delete_session(sid)
        assert store.load_plan(sid) == []


async def test_a_turn_updates_the_plan_twice_and_a_resumed_session_has_it(
        llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    first = [{"content": "Read the code", "status": "in_progress"}, {"content": "Fix the bug", "status": "pending"}]
    second = [{"content": "Read the code", "status": "completed"}, {"content": "Fix the bug", "status": "in_progress"}]
    llm.script(tool_calls([("update_plan", {"steps": first})]),
               tool_calls([("update_plan", {"steps": second})]),
               text("working on it"))
    with SessionStore(tmp_path / "s.sqlite3") as store:
        s = make_session(llm, ws, store=store)
        rec = Recorder()
        result = await s.prompt("fix the bug", rec)
        assert result.stop_reason == "end"
        plans = rec.of("plan")
        assert [[(e.content, e.status) for e in p.entries] for p in plans] == [
            [("Read the code", "in_progress"), ("Fix the bug", "pending")],
            [("Read the code", "completed"), ("Fix the bug", "in_progress")],
        ]
        # the plan event comes while the call runs, before its result
        types = rec.types()
        assert types.index("plan") < types.index("tool_call_finished")
        assert not any(e.is_error for e in rec.of("tool_call_finished"))
        tool_msgs = [m for m in llm.requests[-1].body["messages"] if m["role"] == "tool"]
        assert "1 of 2 steps completed" in tool_msgs[-1]["content"]
        assert s.plan == plans[-1].entries
        resumed = make_session(llm, ws, store=store, session_id=s.session_id)
        assert [(e.content, e.status) for e in resumed.plan] == [("Read the code", "completed"),
                                                                 ("Fix the bug", "in_progress")]


async def test_a_rejected_plan_keeps_the_previous_one(llm: ScriptedLLM, ws: Path) -> None:
    llm.script(tool_calls([("update_plan", {"steps": [{"content": "a", "status": "pending"}]})]),
               tool_calls([("update_plan", {"steps": [{"content": "a", "status": "finished"}]})]),
               text("ok"))
    s = make_session(llm, ws)
    rec = Recorder()
    await s.prompt("go", rec)
    assert len(rec.of("plan")) == 1 and s.plan == (PlanEntry("a", "pending"),)
    assert rec.of("tool_call_finished")[-1].is_error
