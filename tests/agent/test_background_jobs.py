"""Background shell commands (agent_ls.agent.jobs) with real processes: ``bash`` with
``run_in_background`` returns an id at once; a real ``python -m http.server`` on a free loopback
port is reached by a second command, its output read with ``shell_output`` and stopped with
``shell_stop``, its process group gone afterwards; 100 MB of output costs a bounded buffer; the
limit, the background timeout, unknown ids; the server's SIGKILL leaves nothing behind."""

from __future__ import annotations

import asyncio
import os
import re
import signal
import socket
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from agent_ls.agent.builtin_tools import builtin_tools
from agent_ls.agent.jobs import KEEP_CHARS, JobTable, ShellJob
from agent_ls.agent.workspace import Workspace
from agent_ls.core.tools import Tool
from tests.agent.helpers import root

__all__ = ["root"]  # the fixture, from tests/agent/helpers.py


def tools(root: Path, jobs: JobTable) -> dict[str, Tool]:
    return {t.spec.name: t for t in builtin_tools(Workspace([root]), jobs=jobs)}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def group_alive(pgid: int) -> bool:
    """A process of group ``pgid`` still exists (zombies aside)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if fields[0] != "Z" and int(fields[2]) == pgid:
            return True
    return False


async def gone(pgid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not group_alive(pgid):
            return True
        await asyncio.sleep(0.05)
    return False


def job_of(jobs: JobTable, content: str) -> ShellJob:
    found = re.search(r"\b(bg-\d+)\b", content)
    assert found is not None, content
    job = jobs.get(found.group(1))
    assert isinstance(job, ShellJob)
    return job


async def test_a_background_server_is_reached_by_a_second_command_and_stopped(root: Path) -> None:
    jobs = JobTable()
    t = tools(root, jobs)
    port = free_port()
    started = time.monotonic()
    r = await t["bash"].call({"command": f"exec {sys.executable} -u -m http.server {port} --bind 127.0.0.1",
                              "run_in_background": True, "timeout": 0.5})
    assert time.monotonic() - started < 5 and not r.is_error, r.content
    assert "Started in the background as bg-1" in r.content
    job = job_of(jobs, r.content)
    pgid = job.proc.pid
    fetch = (f"{sys.executable} -c \"import time, urllib.request\nfor _ in range(100):\n try:\n  "
             f"print(urllib.request.urlopen('http://127.0.0.1:{port}/').status); break\n"
             " except OSError: time.sleep(0.1)\"")
    second = await t["bash"].call({"command": fetch})
    assert not second.is_error and second.content.startswith("200"), second.content
    await asyncio.sleep(1.0)  # past the foreground timeout it asked for: no timeout applies
    out = await t["shell_output"].call({"id": "bg-1"})
    assert not out.is_error and '"GET / HTTP/1.1" 200' in out.content and "bg-1: running" in out.content
    again = await t["shell_output"].call({"id": "bg-1"})
    assert "(no new output)" in again.content  # a read starts where the last one ended
    whole = await t["shell_output"].call({"id": "bg-1", "since": 0})
    assert '"GET / HTTP/1.1" 200' in whole.content
    assert jobs.states()[0].status == "running" and "GET / HTTP/1.1" in jobs.states()[0].last_line
    stopped = await t["shell_stop"].call({"id": "bg-1"})
    assert not stopped.is_error and "was stopped" in stopped.content, stopped.content
    assert await gone(pgid), "the server's process group is still there"
    assert jobs.take_notices() == []  # the model stopped it itself: no notice


async def test_what_the_command_leaves_behind_dies_with_it_and_its_end_is_noticed(root: Path) -> None:
    jobs = JobTable()
    t = tools(root, jobs)
    r = await t["bash"].call({"command": "sleep 300 & echo child $!; sleep 0.2; exit 3", "run_in_background": True})
    job = job_of(jobs, r.content)
    assert await job.wait(10)
    assert await gone(job.proc.pid)
    state = job.state()
    assert state.status == "exited" and state.exit_code == 3
    assert jobs.take_notices() == [f"background command {job.id} (`sleep 300 & echo child $!; sleep 0.2; exit 3`) "
                                   f"exited with 3 after {state.elapsed:.1f} s; its output: shell_output {job.id}"]
    assert jobs.take_notices() == []


async def test_a_hundred_megabytes_of_output_stay_bounded(root: Path) -> None:
    jobs = JobTable()
    t = tools(root, jobs)
    r = await t["bash"].call({"command": "head -c 100000000 /dev/zero | tr '\\0' x; echo; echo THE-END",
                              "run_in_background": True})
    job = job_of(jobs, r.content)
    assert await job.wait(120)
    assert job.output.total == 100_000_000 + len("\nTHE-END\n")
    assert sum(len(c) for c in job.output._chunks) <= KEEP_CHARS  # noqa: SLF001 - the bound itself
    out = await t["shell_output"].call({"id": job.id})
    assert "[... 99000009 older characters were dropped: only the last 1000000 are kept ...]" in out.content
    assert len(out.content) < 250_000  # one read is bounded; the session pages it
    reads = 1
    while "more: call shell_output" in out.content:
        out = await t["shell_output"].call({"id": job.id})  # each read goes on where the last ended
        reads += 1
    assert reads == 5 and out.content.rstrip().endswith("of 100000009]") and "THE-END" in out.content


async def test_unknown_ids_the_limit_and_the_background_timeout(root: Path) -> None:
    jobs = JobTable(max_jobs=1, timeout=0.5)
    t = tools(root, jobs)
    for name in ("shell_output", "shell_stop"):
        bad = await t[name].call({"id": "bg-9"})
        assert bad.is_error and "no background job 'bg-9'" in bad.content
    r = await t["bash"].call({"command": "sleep 30", "run_in_background": True})
    assert "stopped after 0.5 s (agent.backgroundTimeout)" in r.content
    refused = await t["bash"].call({"command": "true", "run_in_background": True})
    assert refused.is_error and "agent.maxBackgroundCommands" in refused.content
    job = job_of(jobs, r.content)
    assert await job.wait(10)
    assert job.state().status == "timed_out"
    assert "stopped at agent.backgroundTimeout (0.5 s)" in jobs.take_notices()[0]
    again = await t["bash"].call({"command": "echo ok", "run_in_background": True})
    assert "bg-2" in again.content  # ids are never reused
    await jobs.close()


def test_without_a_job_table_bash_has_no_background_option(root: Path) -> None:
    bash = {t.spec.name: t for t in builtin_tools(Workspace([root]))}
    assert "run_in_background" not in bash["bash"].spec.input_schema["properties"]
    assert "shell_output" not in bash and "shell_stop" not in bash


async def test_closing_the_table_stops_every_job(root: Path) -> None:
    jobs = JobTable()
    t = tools(root, jobs)
    ids = [job_of(jobs, (await t["bash"].call({"command": "sleep 300", "run_in_background": True})).content)
           for _ in range(3)]
    await jobs.close()
    for job in ids:
        assert await gone(job.proc.pid)
        assert job.state().status == "stopped"
    refused = await t["bash"].call({"command": "true", "run_in_background": True})
    assert refused.is_error


SERVER_SCRIPT = textwrap.dedent("""
    import asyncio, sys
    from pathlib import Path
    from agent_ls.agent.jobs import JobTable

    async def main():
        jobs = JobTable()
        job = await jobs.start_shell("sleep 300", ["bash", "-c", "sleep 300 & sleep 300"], cwd=sys.argv[1],
                                     env=dict(__import__("os").environ))
        print(job.proc.pid, flush=True)
        await asyncio.sleep(600)

    asyncio.run(main())
""")


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="the check reads /proc")
async def test_a_server_killed_with_sigkill_leaves_no_background_process(root: Path) -> None:
    server = subprocess.Popen([sys.executable, "-c", SERVER_SCRIPT, str(root)], stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        pgid = int(await asyncio.wait_for(asyncio.to_thread(server.stdout.readline), 30))
        await asyncio.sleep(0.3)
        assert group_alive(pgid)
        os.kill(server.pid, signal.SIGKILL)
        server.wait(10)
        assert await gone(pgid), "a background command outlived the SIGKILLed server"
    finally:
        if server.poll() is None:
            server.kill()
