"""MCP Tasks (the io.modelcontextprotocol/tasks extension, issue 41) through the conversation
service, against a real tasks server written with the SDK (tests/servers/tasks_server.py, stdio)
behind the real MCP manager and the scripted LLM: a task a tool call starts does not hold the
turn (the model gets its id at once), its status messages show in the jobs list, ``task_wait``
returns its result; Stop cancels it server-side (``tasks/cancel``); a task that never ends is
cancelled at ``agent.backgroundTimeout``."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import mcp_types as types
import pytest

from agent_ls.config.state import HostState
from agent_ls.mcp.manager import MCPManager
from agent_ls.runtime.conversations import Conversations
from agent_ls.runtime.host import RuntimeHost
from agent_ls.runtime.pending import PendingHost
from agent_ls.runtime.questions import NoQuestions
from agent_ls.runtime.sessions import FrontEnd
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls
from tests.runtime.test_conversations import Setup

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

SERVER = Path(__file__).resolve().parents[1] / "servers" / "tasks_server.py"


class Forms(NoQuestions):
    """The front end's questions: each form (``elicitation/create``) is recorded and answered with
    ``answer`` once ``release`` is set."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, str]] = []
        self.release = asyncio.Event()
        self.answer = types.ElicitResult(action="accept", content={"name": "Ada"})

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        self.asked.append((server, params.message))
        await self.release.wait()
        return self.answer


class World:
    def __init__(self, setup: Setup, conversations: Conversations, record: Path, runtime: RuntimeHost,
                 forms: Forms) -> None:
        self.setup, self.conversations, self.record = setup, conversations, record
        self.runtime, self.forms = runtime, forms

    def recorded(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.record.read_text().splitlines()] if self.record.exists() else []

    def methods(self) -> list[str]:
        return [e["method"] for e in self.recorded() if "method" in e]


async def world(tmp_path: Path, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch, *, server: Path = SERVER,
                protocol: str | None = None, pending: bool = False, **agent: Any) -> AsyncIterator[World]:
    """The tasks server behind a runtime host whose task owner is the conversation service's jobs,
    wired as each front end wires it (server.py, acp/host.py, cli/chat.py). ``pending``: the
    conversations see a :class:`PendingHost` until the test starts the host (:meth:`World.start`
    is then the test's)."""
    setup = Setup(tmp_path, llm)
    setup.agent = attrs.evolve(setup.agent, defer_mcp_tools=False, allow=("mcp__tasks__*",), **agent)
    record = tmp_path / "tasks.jsonl"
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(server), "--record", str(record)]}
    if protocol is not None:
        entry["protocol"] = protocol
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"mcpServers": {"tasks": entry}}))
    monkeypatch.setenv("AGENT_LS_USER_SETTINGS", str(user))
    monkeypatch.setenv("AGENT_LS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("AGENT_LS_DATA_DIR", str(tmp_path / "data"))
    forms = Forms()
    runtime = RuntimeHost(lambda: [setup.ws], forms, state=HostState(tmp_path / "host-state.json"), sampling=False)
    ready = asyncio.Event()
    waiting = PendingHost(lambda: runtime.manager, ready, lambda: None, starting=["tasks"])

    async def host() -> MCPManager | PendingHost:
        return runtime.manager if runtime.manager is not None else waiting

    conversations = Conversations(folders=lambda: [setup.ws], settings=lambda: setup.agent, host=host,
                                  front=lambda: FrontEnd(questions=forms), store=setup.service()._store)
    runtime.task_owner = conversations.jobs.task_started
    w = World(setup, conversations, record, runtime, forms)
    if not pending:
        await start(w)
    try:
        yield w
    finally:
        await conversations.close()
        await runtime.close()


async def start(w: World) -> None:
    """Start the runtime host (its MCP manager and the tasks server)."""
    manager = await w.runtime.start()
    await manager.wait_ready(30)
    assert manager.status()[0].state == "connected", manager.status()[0]


@pytest.fixture
async def w(tmp_path: Path, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[World]:
    async for x in world(tmp_path, llm, monkeypatch):
        yield x


def said(request: Any) -> list[dict[str, Any]]:
    return [m for m in request.json["messages"] if m["role"] == "tool"]


async def until(check: Any, seconds: float = 15.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():
        assert time.monotonic() < deadline, "timed out"
        await asyncio.sleep(0.05)


async def test_a_task_does_not_hold_the_turn_and_task_wait_gets_its_result(w: World, llm: ScriptedLLM) -> None:
    session = await w.conversations.open()
    assert session is not None
    sid = session.session_id
    llm.script(text("hello"), tool_calls([("mcp__tasks__slow", {"seconds": 2}, "c1")]), text("started it"))
    await w.conversations.prompt(session, "hi")  # (litellm loads)
    t0 = time.monotonic()
    result = await w.conversations.prompt(session, "run the long job")
    assert result.text == "started it" and time.monotonic() - t0 < 2  # the turn did not wait for the task
    assert w.conversations.jobs.states(sid)[sid][0].running
    started = said(llm.requests[2])[0]["content"]
    assert "started as bg-1 and the turn goes on" in started, started
    await until(lambda: w.conversations.jobs.states(sid)[sid][0].message.startswith("step"))
    [state] = w.conversations.jobs.states(sid)[sid]
    assert (state.kind, state.status, state.title) == ("task", "working", "tasks: slow")
    llm.script(tool_calls([("task_wait", {"id": "bg-1", "timeout": 20}, "c2")]), text("it finished"))
    await w.conversations.prompt(session, "wait for it")
    waited = said(llm.requests[-1])[-1]["content"]
    assert waited.startswith("slow done after 2 s") and "[bg-1: completed after" in waited, waited
    assert [e.get("method") for e in w.recorded() if "method" in e][-1] == "tasks/get"  # polled, never cancelled
    assert not any(e.get("method") == "tasks/cancel" for e in w.recorded())


async def test_stop_cancels_the_task_on_the_server(w: World, llm: ScriptedLLM) -> None:
    session = await w.conversations.open()
    assert session is not None
    sid = session.session_id
    llm.script(tool_calls([("mcp__tasks__never", {}, "c1")]), text("started"), text("noted"))
    await w.conversations.prompt(session, "start the endless one")
    await until(lambda: any(e.get("method") == "tasks/get" for e in w.recorded()))
    state = await w.conversations.jobs.stop(sid, "bg-1")
    assert state is not None and state.status == "cancelled"
    await until(lambda: {"ended": "task-1", "status": "cancelled"} in w.recorded())
    assert {"method": "tasks/cancel", "taskId": "task-1"} in w.recorded()
    await w.conversations.prompt(session, "and?")
    told = "\n".join(str(m.get("content")) for m in llm.requests[-1].json["messages"])
    assert "task bg-1 (tasks: never) was cancelled after" in told


@pytest.fixture(params=["extension", "legacy"])
async def bounded(request: pytest.FixtureRequest, tmp_path: Path, llm: ScriptedLLM,
                  monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[World]:
    """A tasks server (the 2026-07-28 extension's, or a legacy 2025-11-25 one) with
    ``agent.backgroundTimeout`` 1 s."""
    legacy = request.param == "legacy"
    async for x in world(tmp_path, llm, monkeypatch, server=LEGACY if legacy else SERVER,
                         protocol="legacy" if legacy else None, background_timeout=1.0):
        yield x


async def test_a_task_that_never_ends_is_bounded(bounded: World, llm: ScriptedLLM) -> None:
    w = bounded
    session = await w.conversations.open()
    assert session is not None
    sid = session.session_id
    llm.script(tool_calls([("mcp__tasks__never", {}, "c1")]), text("started"))
    await w.conversations.prompt(session, "start the endless one")
    await until(lambda: not w.conversations.jobs.states(sid)[sid][0].running, 10)
    [state] = w.conversations.jobs.states(sid)[sid]
    assert state.status == "timed_out" and "cancelled" in state.message
    await until(lambda: any(e.get("method") == "tasks/cancel" for e in w.recorded()))
    assert [e["taskId"] for e in w.recorded() if e.get("method") == "tasks/cancel"] in (["task-1"], ["legacy-1"])


# input_required (the tasks extension's tasks/update) -------------------------------------------------
async def asked_midway(w: World, llm: ScriptedLLM) -> str:
    """A turn starts the ``ask`` task; returns the session id once the form is asked."""
    session = await w.conversations.open()
    assert session is not None
    llm.script(tool_calls([("mcp__tasks__ask", {"question": "Your name?"}, "c1")]), text("started"))
    await w.conversations.prompt(session, "ask me")
    await until(lambda: bool(w.forms.asked))
    return session.session_id


async def test_a_task_that_asks_for_input_reaches_the_elicitation_ui_and_the_answer_goes_back(
        w: World, llm: ScriptedLLM) -> None:
    sid = await asked_midway(w, llm)
    assert w.forms.asked == [("tasks", "Your name?")]  # the host's elicitation handler, the server named
    [state] = w.conversations.jobs.states(sid)[sid]
    assert state.running and state.status == "input_required"  # the Running strip: it waits for input
    assert state.message == "waiting for input: Your name?"
    w.forms.release.set()
    await until(lambda: not w.conversations.jobs.states(sid)[sid][0].running)
    [update] = [e for e in w.recorded() if e.get("method") == "tasks/update"]
    assert update == {"method": "tasks/update", "taskId": update["taskId"],
                      "inputResponses": {"ask-1": {"action": "accept", "content": {"name": "Ada"}}}}
    table = w.conversations.jobs.get(sid)
    assert table is not None
    job = table.get("bg-1")
    assert job is not None
    assert (await job.read(None, 1000)).startswith('answered: accept {"name": "Ada"}')
    assert w.forms.asked == [("tasks", "Your name?")]  # asked once, although polled while it waited


async def test_a_declined_form_is_sent_back_with_tasks_update(w: World, llm: ScriptedLLM) -> None:
    w.forms.answer = types.ElicitResult(action="decline")
    sid = await asked_midway(w, llm)
    w.forms.release.set()
    await until(lambda: not w.conversations.jobs.states(sid)[sid][0].running)
    [update] = [e for e in w.recorded() if e.get("method") == "tasks/update"]
    assert update["inputResponses"] == {"ask-1": {"action": "decline"}}
    assert w.conversations.jobs.states(sid)[sid][0].status == "completed"


async def test_stop_while_a_task_waits_for_input_cancels_it_on_the_server(w: World, llm: ScriptedLLM) -> None:
    sid = await asked_midway(w, llm)
    state = await w.conversations.jobs.stop(sid, "bg-1")
    assert state is not None and state.status == "cancelled"
    await until(lambda: any(e.get("ended") and e["status"] == "cancelled" for e in w.recorded()))
    assert "tasks/cancel" in w.methods() and "tasks/update" not in w.methods()


# a task id reused -------------------------------------------------------------------------------------
async def test_a_task_id_the_server_reuses_is_refused_and_the_running_job_goes_on(w: World, llm: ScriptedLLM) -> None:
    session = await w.conversations.open()
    assert session is not None
    sid = session.session_id
    llm.script(tool_calls([("mcp__tasks__reused", {}, "c1")]), text("one"),
               tool_calls([("mcp__tasks__reused", {}, "c2")]), text("two"))
    await w.conversations.prompt(session, "start one")
    await w.conversations.prompt(session, "start another")
    second = said(llm.requests[-1])[-1]["content"]
    assert "reported task id 'task-same'" in second and "still running" in second, second
    [state] = w.conversations.jobs.states(sid)[sid]  # one job: the first, untouched
    assert state.id == "bg-1" and state.running
    stopped = await w.conversations.jobs.stop(sid, "bg-1")
    assert stopped is not None and stopped.status == "cancelled"
    assert [e for e in w.recorded() if e.get("method") == "tasks/cancel"] == [
        {"method": "tasks/cancel", "taskId": "task-same"}]


# which conversation gets a task --------------------------------------------------------------------------
async def test_a_task_started_in_one_conversations_turn_is_a_job_of_that_conversation(
        w: World, llm: ScriptedLLM) -> None:
    a = await w.conversations.open()
    b = await w.conversations.open()  # opened last
    assert a is not None and b is not None
    llm.script(tool_calls([("mcp__tasks__slow", {"seconds": 1}, "c1")]), text("started in A"))
    await w.conversations.prompt(a, "run it")
    jobs = w.conversations.jobs.states()
    assert [s.title for s in jobs[a.session_id]] == ["tasks: slow"] and b.session_id not in jobs


@pytest.fixture
async def early(tmp_path: Path, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[World]:
    async for x in world(tmp_path, llm, monkeypatch, pending=True):
        yield x


async def test_a_conversation_opened_before_the_mcp_host_started_gets_its_tasks_as_jobs(
        early: World, llm: ScriptedLLM) -> None:
    w = early
    session = await w.conversations.open()  # (the language server: a prompt right after the editor opened)
    assert session is not None
    await start(w)
    llm.script(tool_calls([("mcp__tasks__slow", {"seconds": 2}, "c1")]), text("started"))
    t0 = time.monotonic()
    await w.conversations.prompt(session, "run the long job")
    first = said(llm.requests[-1])[0]["content"]
    assert "started as bg-1 and the turn goes on" in first and time.monotonic() - t0 < 2, first
    sid = session.session_id
    assert w.conversations.jobs.states(sid)[sid][0].title == "tasks: slow"


# the 2025-11-25 form (legacy servers) -------------------------------------------------------------------
LEGACY = Path(__file__).resolve().parents[1] / "servers" / "legacy_tasks_server.py"


@pytest.fixture
async def legacy(tmp_path: Path, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[World]:
    async for x in world(tmp_path, llm, monkeypatch, server=LEGACY, protocol="legacy"):
        yield x


async def test_a_legacy_task_is_a_job_polled_with_tasks_get_and_its_result_fetched_with_tasks_result(
        legacy: World, llm: ScriptedLLM) -> None:
    w = legacy
    session = await w.conversations.open()
    assert session is not None
    sid = session.session_id
    llm.script(tool_calls([("mcp__tasks__slow", {"seconds": 3}, "c1"), ("mcp__tasks__quick", {"text": "hi"}, "c2")]),
               text("started"))
    await w.conversations.prompt(session, "run the long job and the quick one")
    assert w.conversations.jobs.states(sid)[sid][0].running  # the turn did not wait for the task
    results = [m["content"] for m in said(llm.requests[-1])]
    assert "started as bg-1 and the turn goes on" in results[0] and results[1] == "hi", results
    assert w.recorded()[0] == {"call": "slow", "ttl": 3_600_000}  # task-augmented (quick was not)
    await until(lambda: w.conversations.jobs.states(sid)[sid][0].message.startswith("step"))
    llm.script(tool_calls([("task_wait", {"id": "bg-1", "timeout": 20}, "c3")]), text("it finished"))
    await w.conversations.prompt(session, "wait for it")
    waited = said(llm.requests[-1])[-1]["content"]
    assert waited.startswith("slow done after 3 s") and "[bg-1: completed after" in waited, waited
    methods = w.methods()
    assert "tasks/get" in methods and methods[-1] == "tasks/result" and "tasks/cancel" not in methods


async def test_stop_cancels_a_legacy_task_on_the_server(legacy: World, llm: ScriptedLLM) -> None:
    w = legacy
    session = await w.conversations.open()
    assert session is not None
    llm.script(tool_calls([("mcp__tasks__never", {}, "c1")]), text("started"))
    await w.conversations.prompt(session, "start the endless one")
    await until(lambda: "tasks/get" in w.methods())
    state = await w.conversations.jobs.stop(session.session_id, "bg-1")
    assert state is not None and state.status == "cancelled"
    await until(lambda: {"ended": "legacy-1", "status": "cancelled"} in w.recorded())
    assert {"method": "tasks/cancel", "taskId": "legacy-1"} in w.recorded()


async def test_a_legacy_task_that_asks_for_input_reaches_the_same_elicitation_ui(
        legacy: World, llm: ScriptedLLM) -> None:
    w = legacy
    session = await w.conversations.open()
    assert session is not None
    sid = session.session_id
    llm.script(tool_calls([("mcp__tasks__ask", {"question": "Your name?"}, "c1")]), text("started"))
    await w.conversations.prompt(session, "ask me")
    await until(lambda: bool(w.forms.asked))
    assert w.forms.asked == [("tasks", "Your name?")]
    [state] = w.conversations.jobs.states(sid)[sid]
    assert state.status == "input_required" and state.message == "waiting for input: needs your name"
    w.forms.release.set()
    await until(lambda: not w.conversations.jobs.states(sid)[sid][0].running)
    table = w.conversations.jobs.get(sid)
    job = table.get("bg-1") if table is not None else None
    assert job is not None
    assert (await job.read(None, 1000)).startswith('answered: accept {"name": "Ada"}')
