"""Subagents (issue 42, agent_ls.runtime.subagents) through the conversation service, against the
scripted LLM on loopback: one scripted conversation per child, told apart by its system prompt
(and its task). Two children overlap in time, ``explore`` cannot write, cancelling the parent
stops both children, a child's ``bash`` asks the front end (one question at a time, with the
agent's name and task) and the answer reaches that child only; bad input (an unknown agent, 20
calls in one step queued by ``agent.maxParallelAgents``, a child bounded by its step limit)."""

from __future__ import annotations

import asyncio
import json
import time
from collections import deque
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from agent_ls.agent import events as ev
from agent_ls.agent.config import AgentSettings
from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, SessionScope
from agent_ls.agent.store import SessionStore
from agent_ls.runtime.conversations import Conversations
from agent_ls.runtime.questions import NoQuestions
from agent_ls.runtime.sessions import FrontEnd
from tests.harness import llm_server as llm_server  # the session's scripted LLM (a fixture)
from tests.llm.scripted_server import ScriptedLLM, Turn, respond, text, tool_calls
from tests.llm.scripted_turns import hang, slow_text

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

EXPLORE_MARK = "exploring subagent"
GENERAL_MARK = "You are a subagent"


class Router:
    """One scripted conversation per participant: a request goes to the first queue whose marker
    is in its system prompt or its first user message (the parent's queue, marker "", last)."""

    def __init__(self) -> None:
        self.queues: dict[str, deque[Turn]] = {}
        self.seen: list[tuple[str, float, dict[str, Any]]] = []

    def add(self, marker: str, *turns: Turn) -> Router:
        self.queues.setdefault(marker, deque()).extend(turns)
        return self

    def who(self, body: dict[str, Any]) -> str:
        messages = body.get("messages") or []
        system = str(messages[0].get("content")) if messages else ""
        first_user = next((str(m.get("content")) for m in messages if m.get("role") == "user"), "")
        for marker in sorted(self.queues, key=lambda m: m == ""):
            if marker == "" or marker in system or marker in first_user:
                return marker
        return ""

    def __call__(self, body: dict[str, Any]) -> Turn:
        marker = self.who(body)
        self.seen.append((marker, time.perf_counter(), body))
        queue = self.queues.get(marker)
        return queue.popleft() if queue else text("(nothing scripted)")

    def bodies(self, marker: str) -> list[dict[str, Any]]:
        return [b for m, _, b in self.seen if m == marker]

    def times(self, marker: str) -> list[float]:
        return [t for m, t, _ in self.seen if m == marker]


class Asking(NoQuestions):
    """The front end: answers each approval with ``decide(request)``, records it, and notes
    whether two questions were ever open at once."""

    def __init__(self, decide: Any = None) -> None:
        self.decide = decide or (lambda r: ApprovalAnswer.ALLOW_ONCE)
        self.asked: list[ApprovalRequest] = []
        self.open = 0
        self.most_open = 0

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer | SessionScope:
        self.open += 1
        self.most_open = max(self.most_open, self.open)
        self.asked.append(request)
        try:
            await asyncio.sleep(0.1)  # the user reads the question
            answer: ApprovalAnswer | SessionScope = self.decide(request)
            return answer
        finally:
            self.open -= 1


class Setup:
    def __init__(self, tmp_path: Path, llm: ScriptedLLM) -> None:
        self.ws = tmp_path / "ws"
        self.ws.mkdir()
        self.db = tmp_path / "sessions.sqlite3"
        self.llm = llm
        self.agent = AgentSettings(model="openai/scripted", api_base=llm.openai_base, max_retries=0)
        self.questions = Asking()
        self.router = Router()
        llm.script(*[respond(self.router) for _ in range(80)])

    def service(self) -> Conversations:
        async def no_host() -> None:
            return None

        return Conversations(folders=lambda: [self.ws], settings=lambda: self.agent, host=no_host,
                             front=lambda: FrontEnd(questions=self.questions), store=SessionStore(self.db))


@pytest.fixture
def llm(llm_server: ScriptedLLM, monkeypatch: pytest.MonkeyPatch) -> ScriptedLLM:
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    llm_server.clear()
    return llm_server


@pytest.fixture
async def setup(tmp_path: Path, llm: ScriptedLLM) -> AsyncIterator[Setup]:
    yield Setup(tmp_path, llm)
    llm.clear()


def agent_call(prompt: str, agent: str | None = None, description: str = "a task",
               call_id: str | None = None) -> tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str]:
    args: dict[str, Any] = {"prompt": prompt, "description": description}
    if agent is not None:
        args["agent"] = agent
    return ("agent", args) if call_id is None else ("agent", args, call_id)


def tool_names(body: dict[str, Any]) -> list[str]:
    return sorted(t["function"]["name"] for t in body.get("tools") or [])


def tool_results(body: dict[str, Any]) -> list[str]:
    return [str(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "tool"]


async def test_two_children_run_in_parallel_each_with_its_own_context(setup: Setup) -> None:
    r = setup.router
    r.add("", tool_calls([agent_call("taskA: find the retry logic", "explore", "find retry"),
                          agent_call("taskB: list the services", "general", "list services")]),
          text("both answered"))
    r.add(EXPLORE_MARK, slow_text(["retry ", "is in a.py"], delay=0.3))
    r.add(GENERAL_MARK, slow_text(["three ", "services"], delay=0.3))
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        events: list[Any] = []
        result = await asyncio.wait_for(conversations.prompt(session, "compare the services", events.append), 30)
        assert result.text == "both answered"
        (explore_at,), (general_at,) = r.times(EXPLORE_MARK), r.times(GENERAL_MARK)
        # each child streams for >= 0.6 s: the second started while the first was still answering
        assert abs(explore_at - general_at) < 0.4
        explore_body, general_body = r.bodies(EXPLORE_MARK)[0], r.bodies(GENERAL_MARK)[0]
        # own history: the task only, never the parent's conversation; the definition's system prompt
        assert [m["role"] for m in explore_body["messages"]] == ["system", "user"]
        assert explore_body["messages"][1]["content"] == "taskA: find the retry logic"
        assert "compare the services" not in json.dumps(explore_body)
        assert explore_body["messages"][0]["content"].startswith("You are an exploring subagent")
        # no child can start a child (depth 1); the parent has the agent tool
        assert "agent" not in tool_names(explore_body) and "agent" not in tool_names(general_body)
        parent_bodies = r.bodies("")
        assert "agent" in tool_names(parent_bodies[0])
        results = tool_results(parent_bodies[1])
        assert results[0].startswith("retry is in a.py") and results[1].startswith("three services")
        assert "read_output(handle=" in results[0]
        # the child's events reach the parent's sink, tied to the agent call
        finished = [e for e in events if isinstance(e, ev.SubagentEvent) and isinstance(e.event, ev.TurnFinished)]
        assert sorted((e.agent, e.description, e.event.stop_reason) for e in finished) == [
            ("explore", "find retry", "end"), ("general", "list services", "end")]
        # the transcript is kept in the parent's output store
        handle = results[0].split('read_output(handle="')[1].split('"')[0]
        stored = conversations.output(session.session_id, handle)
        assert "taskA: find the retry logic" in stored.text and "retry is in a.py" in stored.text
    finally:
        await conversations.close()


async def test_explore_cannot_write(setup: Setup) -> None:
    r = setup.router
    r.add("", tool_calls([agent_call("look around", "explore", "look")]), text("ok"))
    r.add(EXPLORE_MARK, tool_calls([("write_file", {"path": "x.txt", "content": "no"}),
                                    ("bash", {"command": "touch y.txt"})]), text("I could not write"))
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        await asyncio.wait_for(conversations.prompt(session, "explore"), 30)
        first, second = r.bodies(EXPLORE_MARK)
        offered = tool_names(first)
        assert "read_file" in offered and "grep" in offered and "glob" in offered
        assert not {"write_file", "edit_file", "bash"} & set(offered)
        assert all("no tool named" in t for t in tool_results(second))
        assert not (setup.ws / "x.txt").exists() and not (setup.ws / "y.txt").exists()
        assert setup.questions.asked == []  # refused outright, never put to the user
    finally:
        await conversations.close()


async def test_cancelling_the_parent_stops_every_child(setup: Setup) -> None:
    r = setup.router
    r.add("", tool_calls([agent_call("taskA", "explore"), agent_call("taskB", "general")]))
    r.add(EXPLORE_MARK, hang())
    r.add(GENERAL_MARK, hang())
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        events: list[Any] = []
        turn = asyncio.ensure_future(conversations.prompt(session, "go", events.append))
        for _ in range(500):
            if r.times(EXPLORE_MARK) and r.times(GENERAL_MARK):
                break
            await asyncio.sleep(0.01)
        else:
            raise AssertionError("the children never asked the model")
        assert await conversations.cancel(session.session_id) is True
        assert turn.cancelled()
        ends = [e.event.stop_reason for e in events
                if isinstance(e, ev.SubagentEvent) and isinstance(e.event, ev.TurnFinished)]
        assert ends == ["cancelled", "cancelled"]
        finished = [e for e in events if isinstance(e, ev.ToolCallFinished) and e.name == "agent"]
        assert len(finished) == 2 and all(e.is_error for e in finished)
    finally:
        await conversations.close()


async def test_a_childs_bash_asks_and_the_answer_reaches_that_child_only(setup: Setup) -> None:
    def decide(request: ApprovalRequest) -> ApprovalAnswer:
        return ApprovalAnswer.ALLOW_ONCE if "write one" in (request.agent or "") else ApprovalAnswer.DENY

    setup.questions = Asking(decide)
    r = setup.router
    r.add("", tool_calls([agent_call("taskA", "general", "write one"), agent_call("taskB", "general", "write two")]),
          text("done"))
    r.add("taskA", tool_calls([("bash", {"command": "echo one > one.txt"})]), text("A done"))
    r.add("taskB", tool_calls([("bash", {"command": "echo two > two.txt"})]), text("B done"))
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        await asyncio.wait_for(conversations.prompt(session, "write"), 30)
        asked = setup.questions.asked
        assert sorted(q.agent or "" for q in asked) == ["general (write one)", "general (write two)"]
        assert all(q.spec.name == "bash" and q.session_id == session.session_id for q in asked)
        assert all(q.reason.startswith("subagent general (write ") for q in asked)
        assert setup.questions.most_open == 1  # one question at a time
        assert (setup.ws / "one.txt").read_text().strip() == "one"
        assert not (setup.ws / "two.txt").exists()
        a_results = tool_results(r.bodies("taskA")[1])
        b_results = tool_results(r.bodies("taskB")[1])
        assert "denied" not in a_results[0] and "denied" in b_results[0]
    finally:
        await conversations.close()


async def test_an_unknown_agent_is_an_error_for_the_model(setup: Setup) -> None:
    r = setup.router
    r.add("", tool_calls([agent_call("x", "nobody")]), text("ok"))
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        await asyncio.wait_for(conversations.prompt(session, "go"), 30)
        (result,) = tool_results(r.bodies("")[1])
        assert "no agent named 'nobody'" in result and "explore" in result
    finally:
        await conversations.close()


async def test_twenty_calls_in_one_step_are_queued_by_the_bound(setup: Setup) -> None:
    setup.agent = attrs.evolve(setup.agent, max_parallel_agents=3)
    r = setup.router
    r.add("", tool_calls([agent_call(f"task{n:02d}", "explore") for n in range(20)]), text("all done"))
    running = 0
    most = 0

    def child(body: dict[str, Any]) -> Turn:
        return slow_text(["a ", "b"], delay=0.05)

    r.add(EXPLORE_MARK, *[respond(child) for _ in range(20)])
    original = r.__call__

    def counting(body: dict[str, Any]) -> Turn:
        nonlocal running, most
        if r.who(body) == EXPLORE_MARK:
            running = sum(1 for m, _, _ in r.seen if m == EXPLORE_MARK) + 1 - len(done_times)
            most = max(most, running)
        return original(body)

    done_times: list[float] = []
    events: list[Any] = []
    setup.llm.clear()
    setup.llm.script(*[respond(counting) for _ in range(60)])
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None

        def sink(event: Any) -> None:
            events.append(event)
            if isinstance(event, ev.SubagentEvent) and isinstance(event.event, ev.TurnFinished):
                done_times.append(time.perf_counter())

        result = await asyncio.wait_for(conversations.prompt(session, "go", sink), 60)
        assert result.text == "all done"
        assert len(r.times(EXPLORE_MARK)) == 20 and len(done_times) == 20
        assert most == 3  # never more than the bound at once, and the bound was used
        waits = [e for e in events if isinstance(e, ev.ToolCallProgress) and "waiting for a free slot" in e.message]
        assert waits
    finally:
        await conversations.close()


async def test_a_child_that_never_stops_is_bounded_by_its_step_limit(setup: Setup) -> None:
    setup.agent = attrs.evolve(setup.agent, max_steps=3)
    r = setup.router
    r.add("", tool_calls([agent_call("loop", "explore")]), text("ok"))
    r.add(EXPLORE_MARK, *[tool_calls([("glob", {"pattern": "*"})]) for _ in range(10)])
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        await asyncio.wait_for(conversations.prompt(session, "go"), 30)
        assert len(r.bodies(EXPLORE_MARK)) == 3
        (result,) = tool_results(r.bodies("")[1])
        assert "limit of 3 steps" in result
    finally:
        await conversations.close()


def custom(tmp_path: Path, name: str, text: str) -> Any:
    from agent_ls.config.agents import load_agents

    path = tmp_path / f"{name}.md"
    path.write_text(text)
    catalog = load_agents([path], [])
    assert not catalog.diagnostics, catalog.diagnostics
    return catalog


async def test_a_custom_agents_prompt_and_tools_are_what_its_request_carries(setup: Setup, tmp_path: Path) -> None:
    catalog = custom(tmp_path, "reviewer", "---\ndescription: Reviews diffs\ntools: Read, Grep\n---\n"
                     "REVIEWER-PROMPT: you review.\n")
    setup.agent = attrs.evolve(setup.agent, agents=catalog, instructions="USER-INSTRUCTIONS")
    (setup.ws / "AGENTS.md").write_text("PROJECT-RULES")
    r = setup.router
    r.add("", tool_calls([agent_call("review it", "reviewer", "review")]), text("ok"))
    r.add("REVIEWER-PROMPT", text("looks fine"))
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        await asyncio.wait_for(conversations.prompt(session, "go"), 30)
        agent_tool = next(t for t in r.bodies("")[0]["tools"] if t["function"]["name"] == "agent")
        assert "- reviewer: Reviews diffs" in agent_tool["function"]["description"]
        (body,) = r.bodies("REVIEWER-PROMPT")
        system = body["messages"][0]["content"]
        assert system.startswith("REVIEWER-PROMPT: you review.")
        assert "PROJECT-RULES" in system and "USER-INSTRUCTIONS" in system
        assert "You are agent-ls, a coding agent" not in system
        assert tool_names(body) == ["grep", "read_file", "read_output"]
        assert tool_results(r.bodies("")[1])[0].startswith("looks fine")
    finally:
        await conversations.close()


async def test_a_definitions_max_depth_lets_its_child_start_children_and_no_deeper(setup: Setup,
                                                                                   tmp_path: Path) -> None:
    """Children start no children (depth 1) unless their definition's ``maxDepth`` allows it; a
    grandchild never goes deeper than every agent above it allows, whatever its own says."""
    from agent_ls.config.agents import load_agents

    lead, worker = tmp_path / "lead.md", tmp_path / "worker.md"
    lead.write_text("---\ndescription: Splits work\nmaxDepth: 2\n---\nLEAD-PROMPT: split it.\n")
    worker.write_text("---\ndescription: Does one part\nmaxDepth: 3\n---\nWORKER-PROMPT: do it.\n")
    catalog = load_agents([lead, worker], [])
    assert not catalog.diagnostics, catalog.diagnostics
    setup.agent = attrs.evolve(setup.agent, agents=catalog)
    r = setup.router
    r.add("", tool_calls([agent_call("plan the work", "lead", "lead")]), text("all done"))
    r.add("LEAD-PROMPT", tool_calls([agent_call("do part one", "worker", "part one")]), text("lead: part one done"))
    r.add("WORKER-PROMPT", text("worker: did part one"))
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        result = await asyncio.wait_for(conversations.prompt(session, "go"), 30)
        assert result.text == "all done"
        assert "agent" in tool_names(r.bodies("LEAD-PROMPT")[0])  # maxDepth 2: it may delegate
        (worker_body,) = r.bodies("WORKER-PROMPT")
        assert "agent" not in tool_names(worker_body)  # depth 2 is as deep as the lead allows
        assert tool_results(r.bodies("LEAD-PROMPT")[1])[0].startswith("worker: did part one")
        assert tool_results(r.bodies("")[1])[0].startswith("lead: part one done")
    finally:
        await conversations.close()


async def test_a_tool_list_naming_no_existing_tool_is_an_error(setup: Setup, tmp_path: Path) -> None:
    catalog = custom(tmp_path, "ghost", "---\ndescription: Nothing\ntools: WebFetch, mcp__nowhere__x\n---\nGhost.\n")
    setup.agent = attrs.evolve(setup.agent, agents=catalog)
    r = setup.router
    r.add("", tool_calls([agent_call("x", "ghost")]), text("ok"))
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        await asyncio.wait_for(conversations.prompt(session, "go"), 30)
        (result,) = tool_results(r.bodies("")[1])
        assert "names no tool this conversation has" in result
        assert len(r.seen) == 2  # the child never called the model
    finally:
        await conversations.close()


async def test_subagent_stop_hooks_run_when_a_child_finishes_and_may_send_it_back(setup: Setup) -> None:
    from agent_ls.config.hooks import HookSpec

    script = ("if [ -e seen ]; then cat > second.json; else touch seen; cat > first.json; "
              "echo 'add the file names' >&2; exit 2; fi")
    setup.agent = attrs.evolve(setup.agent, hooks=(HookSpec("SubagentStop", script),))
    r = setup.router
    r.add("", tool_calls([agent_call("find it", "explore", "find")]), text("ok"))
    r.add(EXPLORE_MARK, text("found it"), text("found it in a.py"))
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        await asyncio.wait_for(conversations.prompt(session, "go"), 30)
        first = json.loads((setup.ws / "first.json").read_text())
        assert first["hook_event_name"] == "SubagentStop" and first["agent_type"] == "explore"
        assert first["last_assistant_message"] == "found it" and first["stop_hook_active"] is False
        second = json.loads((setup.ws / "second.json").read_text())
        assert second["stop_hook_active"] is True and second["last_assistant_message"] == "found it in a.py"
        assert "add the file names" in str(r.bodies(EXPLORE_MARK)[1]["messages"][-1]["content"])
        assert tool_results(r.bodies("")[1])[0].startswith("found it in a.py")
    finally:
        await conversations.close()


async def test_a_resumed_session_keeps_its_childrens_cards_and_transcripts(setup: Setup) -> None:
    r = setup.router
    r.add("", tool_calls([agent_call("find it", "explore", "find retry", "call_agent")]), text("ok"))
    r.add(EXPLORE_MARK, tool_calls([("grep", {"pattern": "retry"}, "call_grep")]), text("nothing found"))
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        sid = session.session_id
        await asyncio.wait_for(conversations.prompt(session, "go"), 30)
    finally:
        await conversations.close()
    again = setup.service()  # agent-ls restarted: the session is read from the store
    try:
        transcript = await again.transcript(sid)
        (result,) = [m for m in transcript.messages if m.get("tool_call_id") == "call_agent"]
        record = result["run"]["subagent"]
        assert record["agent"] == "explore" and record["description"] == "find retry"
        assert record["stopReason"] == "end" and record["tokens"] > 0
        assert [(c["callId"], c["tool"], c["args"], c["isError"]) for c in record["calls"]] == [
            ("call_grep", "grep", {"pattern": "retry"}, False)]
        # the whole transcript is still there under the handle the model was given
        handle = result["content"].split('read_output(handle="')[1].split('"')[0]
        await again.open(sid)
        stored = again.output(sid, handle)
        assert "nothing found" in stored.text and "-> grep" in stored.text
    finally:
        await again.close()


async def test_a_childs_file_changes_are_in_the_file_card_of_the_parents_turn(setup: Setup) -> None:
    """A subagent's write is the conversation's change: the file_change event is the parent's own
    (not inside the child's events), of the parent's turn and its ``agent`` call, and the session's
    stored changes (the file card on resume, the review's keep and revert) hold it."""
    r = setup.router
    r.add("", text("warm-up"))
    r.add("", tool_calls([agent_call("write the notes", "general", "write notes", "call_agent")]), text("written"))
    r.add(GENERAL_MARK, tool_calls([("write_file", {"path": "notes.md", "content": "one\ntwo\n"}, "call_write")]),
          text("notes.md written"))
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        sid = session.session_id
        await asyncio.wait_for(conversations.prompt(session, "hello"), 30)  # turn 1
        events: list[Any] = []
        await asyncio.wait_for(conversations.prompt(session, "take notes", events.append), 30)  # turn 2
        assert (setup.ws / "notes.md").read_text() == "one\ntwo\n"
        (change,) = [e for e in events if isinstance(e, ev.FileChange)]
        assert (change.shown, change.turn, change.call_id, change.added, change.status) == (
            "notes.md", 2, "call_agent", 2, "written")
        assert not [e for e in events if isinstance(e, ev.SubagentEvent) and isinstance(e.event, ev.FileChange)]
    finally:
        await conversations.close()
    again = setup.service()
    try:
        transcript = await again.transcript(sid)
        assert [(c["shown"], c["turn"], c["call_id"], c["status"]) for c in transcript.changes] == [
            ("notes.md", 2, "call_agent", "written")]
    finally:
        await again.close()
