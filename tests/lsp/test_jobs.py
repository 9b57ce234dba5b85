"""Background jobs over LSP (issue 41): the model starts a background command through the real
language server; ``agent/jobs`` lists it with its last line, ``agent/jobsChanged`` tells each
change, ``agent/stopJob`` is the user's Stop; a background command still running when the editor
shuts the server down, or when the server is killed with SIGKILL, leaves no process behind."""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from pygls.exceptions import JsonRpcException

from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor

pytestmark = pytest.mark.e2e


def unique_seconds(prefix: str) -> str:
    """A ``sleep`` argument no other process has: ``prefix``, then 12 random digits (a fixed
    width, so no token is the start of another). The leftover checks scan the whole machine (a
    process that outlived its server left its tree), where other tests, xdist workers and other
    runs have their own ``sleep`` commands."""
    return f"{prefix}{secrets.randbelow(10**12):012d}"


def with_token(token: str) -> list[int]:
    """The processes whose command line holds ``token`` (zombies aside). The whole machine's:
    each test makes its tokens with :func:`unique_seconds`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            state = (entry / "stat").read_text().rsplit(")", 1)[1].split()[0]
        except OSError:
            continue
        if token in cmdline and state != "Z" and int(entry.name) != os.getpid():
            found.append(int(entry.name))
    return found


async def none_left(token: str, seconds: float = 10.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not with_token(token):
            return True
        await asyncio.sleep(0.1)
    return False


def watch_jobs(changes: list[Any]) -> Any:
    def configure(ed: Editor) -> None:
        @ed.client.feature(P.JOBS_CHANGED)
        def on_jobs(params: Any) -> None:
            changes.append(params)

    return configure


async def until(check: Any) -> None:
    """Wait until ``check()`` holds (no deadline of its own: pytest-timeout bounds the test, and
    how long a loaded machine takes is not what these tests check)."""
    while not check():
        await asyncio.sleep(0.05)


async def started(ed: Editor, token: str, count: int = 2) -> None:
    """Wait until ``count`` processes hold ``token``; after a minute, fail with what the turn did
    (its events and the model's requests) rather than wait out the test's timeout in silence."""
    deadline = time.monotonic() + 60
    while len(with_token(token)) < count:
        if time.monotonic() > deadline:
            events = [json.dumps(e)[:300] for e in ed.events[-10:]]
            jobs = (await ed.request(P.JOBS, {}))["jobs"]  # a job that ended at once: its status and last line
            raise AssertionError(f"no {count} processes with {token!r} after 60 s; the turn's last events: "
                                 f"{events}; the jobs: {json.dumps(jobs)[:1500]}; requests to the model: "
                                 f"{len(ed.setup.llm.requests)}, turns left: {ed.setup.llm.pending}, "
                                 f"stale: {len(ed.setup.llm.stale)}")
        await asyncio.sleep(0.05)


async def listed_once_read(ed: Editor, sid: str) -> list[dict[str, Any]]:
    """``agent/jobs`` once the server has read the job's first output line (the command's process
    runs on before the server's reader has taken its output from the pipe)."""
    while True:
        jobs = (await ed.request(P.JOBS, {"sessionId": sid}))["jobs"]
        if jobs and jobs[0]["lastLine"]:
            return jobs
        await asyncio.sleep(0.05)


def start(command: str, call_id: str) -> Any:
    return tool_calls([("bash", {"command": command, "run_in_background": True}, call_id)])


async def test_jobs_are_listed_changes_notified_and_the_user_stops_one(setup: Setup) -> None:
    setup.user_settings["permissions"] = {"allow": ["bash"]}
    changes: list[Any] = []
    ed = await open_editor(setup, configure=watch_jobs(changes))
    try:
        sleep = f"sleep {unique_seconds('3111')}"  # this test's process alone
        command = f"echo serving on 4242; exec {sleep}"
        setup.llm.script(start(command, "c1"), text("started"))
        sid = (await ed.request(P.PROMPT, {"text": "start a server"}))["sessionId"]
        await until(lambda: any(j["running"] for c in changes for j in c["jobs"]))
        assert changes[0]["sessionId"] == sid
        await until(lambda: bool(with_token(sleep)))
        listed = await listed_once_read(ed, sid)
        assert [(j["id"], j["kind"], j["status"], j["running"]) for j in listed] == [("bg-1", "shell", "running", True)]
        assert listed[0]["title"] == command
        assert listed[0]["lastLine"] == "serving on 4242" and listed[0]["elapsedMs"] >= 0
        assert [j["id"] for j in (await ed.request(P.JOBS, {}))["jobs"]] == ["bg-1"]  # every session's

        stopped = await ed.request(P.STOP_JOB, {"sessionId": sid, "jobId": "bg-1"})
        assert stopped["status"] == "stopped" and stopped["running"] is False and stopped["signal"] == "SIGTERM"
        assert await none_left(sleep)
        await until(lambda: changes[-1]["jobs"][0]["status"] == "stopped")
        with pytest.raises(JsonRpcException, match="bg-7") as err:
            await ed.request(P.STOP_JOB, {"sessionId": sid, "jobId": "bg-7"})
        assert err.value.code == P.REQUEST_FAILED

        setup.llm.script(text("noted"))
        await ed.request(P.PROMPT, {"text": "and now?", "sessionId": sid})
        told = "\n".join(str(m.get("content")) for m in setup.llm.requests[-1].json["messages"])
        assert f"background command bg-1 (`{command}`) was stopped (SIGTERM)" in told
    finally:
        await close_editor(ed)


async def test_a_background_command_does_not_outlive_shutdown(setup: Setup) -> None:
    setup.user_settings["permissions"] = {"allow": ["bash"]}
    ed = await open_editor(setup)
    run = unique_seconds("322")
    try:
        setup.llm.script(start(f"sleep {run}2 & sleep {run}3", "c1"), text("started"))
        await ed.request(P.PROMPT, {"text": "start"})
        await started(ed, f"sleep {run}")
    finally:
        await close_editor(ed)
    assert await none_left(f"sleep {run}"), "a background command outlived the language server's shutdown"


async def test_a_background_command_does_not_outlive_a_sigkilled_server(setup: Setup) -> None:
    setup.user_settings["permissions"] = {"allow": ["bash"]}
    ed = await open_editor(setup)
    process = getattr(ed.client, "_server", None)
    assert process is not None
    run = unique_seconds("333")
    try:
        setup.llm.script(start(f"sleep {run}3 & sleep {run}4", "c1"), text("started"))
        await ed.request(P.PROMPT, {"text": "start"})
        await started(ed, f"sleep {run}")
        os.kill(process.pid, signal.SIGKILL)
        assert await none_left(f"sleep {run}"), "a background command outlived the SIGKILLed language server"
    finally:
        if process.returncode is None:
            process.kill()
        await ed.client.stop()


TASKS_SERVER = Path(__file__).resolve().parents[1] / "servers" / "tasks_server.py"


async def test_an_mcp_task_that_asks_for_input_reaches_the_editors_form_and_its_job_says_it_waits(
        setup: Setup) -> None:
    """The tasks extension's ``input_required`` through the real language server: the task's form
    is an ``mcp/elicit`` request to the editor (the same as any server's form), ``agent/jobsChanged``
    says the job waits for input meanwhile, and the editor's answer completes the task."""
    setup.user_settings["mcpServers"]["tasks"] = {"command": sys.executable, "args": [str(TASKS_SERVER)]}
    setup.user_settings["permissions"] = {"allow": ["mcp__tasks__*"]}
    changes: list[Any] = []
    ed = await open_editor(setup, configure=watch_jobs(changes))
    try:
        await ed.wait_state("tasks", "connected")
        ed.elicit_answer = {"action": "accept", "content": {"name": "Ada"}}
        setup.llm.script(tool_calls([("mcp__tasks__ask", {"question": "Your name?"}, "c1")]), text("started"))
        sid = (await ed.request(P.PROMPT, {"text": "ask me"}))["sessionId"]
        await until(lambda: bool(ed.elicitations))
        assert ed.elicitations[0]["server"] == "tasks" and ed.elicitations[0]["message"] == "Your name?"
        waiting = [j for c in changes for j in c["jobs"] if j["status"] == "input_required"]
        assert waiting and waiting[0]["message"] == "waiting for input: Your name?" and waiting[0]["running"]
        await until(lambda: bool(changes) and changes[-1]["jobs"][0]["status"] == "completed")
        assert changes[-1]["sessionId"] == sid and len(ed.elicitations) == 1
    finally:
        await close_editor(ed)
