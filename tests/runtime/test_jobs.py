"""Background jobs owned by the conversation service (agent_ls.runtime.jobs), against the scripted
LLM on loopback: the model starts a background command (approved like any ``bash`` call, run in the
OS sandbox), its end reaches the model's next request as a notice, the jobs survive a session
rebuilt after a settings change, and they stop with their process groups when the session is
deleted or the service closes."""

from __future__ import annotations

import asyncio
import os
import re
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import attrs
import pytest

from agent_ls.agent.jobs import ShellJob
from agent_ls.core.sandbox import Mechanism, detect
from agent_ls.runtime.conversations import Conversations
from tests.agent.test_background_jobs import gone
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls
from tests.runtime.test_conversations import Setup

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


@pytest.fixture
async def service(tmp_path: Path, llm: ScriptedLLM) -> AsyncIterator[tuple[Setup, Conversations]]:
    setup = Setup(tmp_path, llm)
    conversations = setup.service()
    try:
        yield setup, conversations
    finally:
        await conversations.close()


def background(command: str, call_id: str = "call_bg") -> Any:
    return tool_calls([("bash", {"command": command, "run_in_background": True}, call_id)])


def the_job(conversations: Conversations, session_id: str, job_id: str = "bg-1") -> ShellJob:
    table = conversations.jobs.get(session_id)
    assert table is not None
    job = table.get(job_id)
    assert isinstance(job, ShellJob)
    return job


def said_to_model(request: Any) -> str:
    return "\n".join(str(m.get("content")) for m in request.json["messages"])


async def test_the_end_of_a_background_command_reaches_the_next_request(service: tuple[Setup, Conversations],
                                                                        llm: ScriptedLLM) -> None:
    setup, conversations = service
    session = await conversations.open()
    assert session is not None
    llm.script(background("readlink /proc/self/ns/pid; sleep 0.3; exit 3"), text("started it"), text("noted"))
    first = await conversations.prompt(session, "run it in the background")
    assert first.text == "started it" and setup.questions.asked == ["bash"]  # approved like any bash call
    assert "Started in the background as bg-1" in said_to_model(llm.requests[1])
    job = the_job(conversations, session.session_id)
    assert await job.wait(15)
    if detect().mechanism is Mechanism.BUBBLEWRAP:  # it ran in the OS sandbox: its own PID namespace
        assert job.output.read(0, 1000)[0].split()[0] != os.readlink("/proc/self/ns/pid")
    states = conversations.jobs.states(session.session_id)[session.session_id]
    assert [(s.id, s.status, s.exit_code) for s in states] == [("bg-1", "exited", 3)]
    await conversations.prompt(session, "anything new?")
    told = said_to_model(llm.requests[2])
    assert re.search(r"\[Background jobs, not typed by the user:\n- background command bg-1 .* exited with 3 after",
                     told), told
    assert told.index("exited with 3") < told.index("anything new?")
    users = [m for m in session.history if m["role"] == "user"]
    assert len(users) == 2 and users[1]["content"].endswith("\n\nanything new?")  # in the prompt's own message


async def test_jobs_survive_a_rebuilt_session_and_stop_when_it_is_deleted(service: tuple[Setup, Conversations],
                                                                         llm: ScriptedLLM) -> None:
    setup, conversations = service
    session = await conversations.open()
    assert session is not None
    sid = session.session_id
    llm.script(background("sleep 300"), text("started"))
    await conversations.prompt(session, "start")
    job = the_job(conversations, sid)
    setup.agent = attrs.evolve(setup.agent, max_steps=30)
    conversations.settings_changed()
    rebuilt = await conversations.open(sid)
    assert rebuilt is not session and job.state().status == "running"
    assert rebuilt.registry.get("shell_output") is not None and rebuilt.registry.get("shell_stop") is not None
    llm.script(tool_calls([("shell_output", {"id": "bg-1"}, "call_out")]), text("still running"))
    await conversations.prompt(rebuilt, "how is it?")
    assert "bg-1: running" in said_to_model(llm.requests[-1])
    await conversations.delete(sid)
    assert job.state().status == "stopped" and await gone(job.proc.pid)
    assert conversations.jobs.get(sid) is None


async def test_closing_the_service_stops_every_background_command(tmp_path: Path, llm: ScriptedLLM) -> None:
    setup = Setup(tmp_path, llm)
    conversations = setup.service()
    changes: list[tuple[str, list[str]]] = []
    conversations.jobs.listeners.append(lambda sid, states: changes.append((sid, [s.status for s in states])))
    session = await conversations.open()
    assert session is not None
    llm.script(background("sleep 300 & sleep 300", "c1"), background("sleep 300", "c2"), text("two"))
    await conversations.prompt(session, "start two")
    jobs = [the_job(conversations, session.session_id, f"bg-{n}") for n in (1, 2)]
    await asyncio.wait_for(conversations.close(), 20)
    for job in jobs:
        assert await gone(job.proc.pid), "a background command outlived the service"
    assert (session.session_id, ["running"]) in changes and changes[-1][1] == ["stopped", "stopped"]


async def test_an_end_within_the_turn_comes_with_the_steps_last_tool_result(service: tuple[Setup, Conversations],
                                                                            llm: ScriptedLLM) -> None:
    """A job that ends while the turn runs is said after the step's last tool result; the history
    keeps one user message per prompt (rewind and resume count them)."""
    _, conversations = service
    session = await conversations.open()
    assert session is not None
    llm.script(background("sleep 0.2; exit 5"), tool_calls([("bash", {"command": "sleep 1.5"}, "call_wait")]),
               text("saw it"), text("ok"))
    await conversations.prompt(session, "start and wait")
    last_tool = llm.requests[2].json["messages"][-1]
    assert last_tool["role"] == "tool" and last_tool["tool_call_id"] == "call_wait"
    assert "[Background jobs, not typed by the user:\n- background command bg-1 (`sleep 0.2; exit 5`) exited with 5" \
        in last_tool["content"]
    await conversations.prompt(session, "second prompt")
    users = [m for m in session.history if m["role"] == "user"]
    assert [m["content"] for m in users] == ["start and wait", "second prompt"]
