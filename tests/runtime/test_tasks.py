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
import pytest

from agent_ls.config.settings import load_settings
from agent_ls.mcp.manager import MCPManager
from agent_ls.runtime.conversations import Conversations
from agent_ls.runtime.questions import NoQuestions
from agent_ls.runtime.sessions import FrontEnd
from tests.harness import llm_server as llm_server  # the session's scripted LLM (a fixture)
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls
from tests.runtime.test_conversations import Setup
from tests.tooling import TRUST_ALL

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

SERVER = Path(__file__).resolve().parents[1] / "servers" / "tasks_server.py"


@pytest.fixture
def llm(llm_server: ScriptedLLM, monkeypatch: pytest.MonkeyPatch) -> ScriptedLLM:
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    llm_server.clear()
    llm_server.requests.clear()
    return llm_server


class World:
    def __init__(self, setup: Setup, conversations: Conversations, record: Path) -> None:
        self.setup, self.conversations, self.record = setup, conversations, record

    def recorded(self) -> list[dict[str, Any]]:
        return [json.loads(line) for line in self.record.read_text().splitlines()] if self.record.exists() else []


async def world(tmp_path: Path, llm: ScriptedLLM, **agent: Any) -> AsyncIterator[World]:
    setup = Setup(tmp_path, llm)
    setup.agent = attrs.evolve(setup.agent, defer_mcp_tools=False, allow=("mcp__tasks__*",), **agent)
    record = tmp_path / "tasks.jsonl"
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"mcpServers": {"tasks": {"command": sys.executable,
                                                         "args": [str(SERVER), "--record", str(record)]}}}))
    manager = MCPManager(roots=[setup.ws])
    await manager.apply(load_settings([setup.ws], user_settings=user, trust=TRUST_ALL))
    await manager.wait_ready(30)

    async def host() -> MCPManager:
        return manager

    conversations = Conversations(folders=lambda: [setup.ws], settings=lambda: setup.agent, host=host,
                                  front=lambda: FrontEnd(questions=NoQuestions()), store=setup.service()._store)
    try:
        yield World(setup, conversations, record)
    finally:
        await conversations.close()
        await manager.close()


@pytest.fixture
async def w(tmp_path: Path, llm: ScriptedLLM) -> AsyncIterator[World]:
    async for x in world(tmp_path, llm):
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


@pytest.fixture
async def bounded(tmp_path: Path, llm: ScriptedLLM) -> AsyncIterator[World]:
    async for x in world(tmp_path, llm, background_timeout=1.0):
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
    await until(lambda: {"method": "tasks/cancel", "taskId": "task-1"} in w.recorded())
