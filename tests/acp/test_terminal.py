"""`bash` through the ACP client's terminal (`terminal/*`), issue 28 item 5.

:class:`TerminalClient` is an editor with real terminals: `terminal/create` starts the command
as a subprocess, `output`, `wait_for_exit`, `kill` and `release` act on it. It records every
terminal request in order (with the permission requests), so the tests can check that the
command was approved before it reached the client.
"""

from __future__ import annotations

import asyncio
import contextlib
import itertools
import os
import signal
from typing import Any

import pytest
from acp import RequestError, text_block
from acp.schema import (
    CreateTerminalResponse,
    KillTerminalResponse,
    ReleaseTerminalResponse,
    TerminalExitStatus,
    TerminalOutputResponse,
    WaitForTerminalExitResponse,
)

from tests.acp.conftest import AcpSetup, RecordingClient, start_agent, wait_for
from tests.llm.scripted_server import text, tool_calls

pytestmark = pytest.mark.e2e

_ids = itertools.count(1)


class Terminal:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.output = b""
        self.pump = asyncio.ensure_future(self._pump())

    async def _pump(self) -> None:
        assert self.proc.stdout is not None
        while chunk := await self.proc.stdout.read(65536):
            self.output += chunk


class TerminalClient(RecordingClient):
    """An editor whose terminals are real subprocesses. ``mode``: "run", "reject" (an error
    answer to terminal/create) or "hang" (never answers it)."""

    def __init__(self, mode: str = "run") -> None:
        super().__init__()
        self.mode = mode
        self.terminals: dict[str, Terminal] = {}
        self.log: list[tuple[str, Any]] = []

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        self.log.append(("permission", tool_call.tool_call_id))
        return await super().request_permission(session_id, tool_call, options, **kwargs)

    async def create_terminal(self, session_id: str, command: str, args: list[str] | None = None,
                              env: list[Any] | None = None, cwd: str | None = None,
                              output_byte_limit: int | None = None, **kwargs: Any) -> CreateTerminalResponse:
        self.log.append(("create", [command, *(args or [])], cwd))
        if self.mode == "reject":
            raise RequestError.internal_error({"details": "terminals are switched off here"})
        if self.mode == "hang":
            await asyncio.Event().wait()
        environ = dict(os.environ, **{e.name: e.value for e in env or []})
        proc = await asyncio.create_subprocess_exec(command, *(args or []), cwd=cwd, env=environ,
                                                    stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.STDOUT,
                                                    start_new_session=True)
        terminal_id = f"term-{next(_ids)}"
        self.terminals[terminal_id] = Terminal(proc)
        return CreateTerminalResponse(terminal_id=terminal_id)

    async def wait_for_terminal_exit(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.log.append(("wait", terminal_id))
        t = self.terminals[terminal_id]
        code = await t.proc.wait()
        await t.pump
        return WaitForTerminalExitResponse(exit_code=code if code >= 0 else None,
                                           signal=signal.Signals(-code).name if code < 0 else None)

    async def terminal_output(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.log.append(("output", terminal_id))
        t = self.terminals[terminal_id]
        code = t.proc.returncode
        status = None if code is None else TerminalExitStatus(
            exit_code=code if code >= 0 else None, signal=signal.Signals(-code).name if code < 0 else None)
        return TerminalOutputResponse(output=t.output.decode(errors="replace"), truncated=False, exit_status=status)

    async def kill_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.log.append(("kill", terminal_id))
        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.terminals[terminal_id].proc.pid, signal.SIGKILL)
        return KillTerminalResponse()

    async def release_terminal(self, session_id: str, terminal_id: str, **kwargs: Any) -> Any:
        self.log.append(("release", terminal_id))
        t = self.terminals.pop(terminal_id)
        if t.proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(t.proc.pid, signal.SIGKILL)
        return ReleaseTerminalResponse()

    def kinds(self) -> list[str]:
        return [entry[0] for entry in self.log]


@pytest.fixture(autouse=True)
def no_sandbox(setup: AcpSetup) -> None:
    """These tests are about the client's terminal, which runs ``bash`` only while the OS sandbox
    is off (with it on, the command runs confined in agent-ls's own shell: the last test)."""
    setup.user_settings.setdefault("agent", {})["sandbox"] = {"enabled": False}
    setup.write()


def tool_messages(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "tool"]


def bash_description(body: dict) -> str:
    [tool] = [t for t in body["tools"] if t["function"]["name"] == "bash"]
    return str(tool["function"]["description"])


def call_updates(client: RecordingClient, sid: str, call_id: str) -> list[Any]:
    return [u for u in client.of(sid) if getattr(u, "tool_call_id", None) == call_id]


async def test_bash_runs_in_the_clients_terminal(setup: AcpSetup) -> None:
    """Approved first, then terminal/create; the terminal is embedded in the tool call; output and
    exit code reach the model and the tool call (rawOutput too); the terminal is released; a
    cancelled command is killed and released."""
    client = TerminalClient()
    async with start_agent(setup, client, terminal=True) as (conn, _proc, _):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        setup.llm.script(tool_calls([("bash", {"command": "echo in-the-terminal; pwd; exit 3"}, "call_term")]),
                         text("Ran it."))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("run it")]), 60)
        assert client.kinds() == ["permission", "create", "wait", "output", "release"]
        told = bash_description(setup.llm.requests[0].body)  # the model is told where it runs
        assert "in the editor's terminal" in told and "no terminal" not in told and "Nobody types" in told
        assert client.log[1][1:] == (["bash", "-c", "echo in-the-terminal; pwd; exit 3"], str(setup.ws.resolve()))
        terminal_id = client.log[2][1]
        result = tool_messages(setup.llm.requests[-1].body)[0]["content"]
        output = f"in-the-terminal\n{setup.ws.resolve()}\n[exit code 3]"
        assert result == "Error: " + output  # a failing command, as the local bash says it

        updates = call_updates(client, sid, "call_term")
        embedded = [c for u in updates for c in (u.content or []) if c.type == "terminal"]
        assert embedded and {c.terminal_id for c in embedded} == {terminal_id}
        last = updates[-1]
        assert last.status == "failed" and last.raw_output == {"output": output}  # exit code 3
        assert [c.type for c in last.content] == ["terminal", "content"]
        assert "in-the-terminal" in last.content[1].content.text

        # cancel while the command runs: killed and released, the prompt is cancelled
        client.log.clear()
        setup.llm.script(tool_calls([("bash", {"command": "sleep 30"}, "call_sleep")]), text("never"))
        task = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("sleep")]))
        await wait_for(lambda: "wait" in client.kinds(), what="the command running")
        await conn.cancel(session_id=sid)
        assert (await asyncio.wait_for(task, 20)).stop_reason == "cancelled"
        await wait_for(lambda: "release" in client.kinds(), what="the terminal released")
        assert client.kinds()[-2:] == ["kill", "release"] and client.terminals == {}
        assert call_updates(client, sid, "call_sleep")[-1].status == "failed"


async def test_a_client_that_rejects_terminal_create_gets_the_local_shell(setup: AcpSetup) -> None:
    client = TerminalClient("reject")
    async with start_agent(setup, client, terminal=True) as (conn, _proc, _):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        setup.llm.script(tool_calls([("bash", {"command": "echo ran-locally"}, "call_a")]), text("ok"),
                         tool_calls([("bash", {"command": "echo again-locally"}, "call_b")]), text("ok"))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("run")]), 60)
        result = tool_messages(setup.llm.requests[-1].body)[0]["content"]
        assert "refused the command" in result and "terminals are switched off" in result
        assert "ran-locally\n[exit code 0]" in result
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("again")]), 60)
        assert client.kinds().count("create") == 1  # not asked again in this session
        assert "in the editor's terminal" in bash_description(setup.llm.requests[0].body)
        assert "There is no terminal" in bash_description(setup.llm.requests[-1].body)  # it runs here now
        assert tool_messages(setup.llm.requests[-1].body)[-1]["content"].startswith("again-locally")


async def test_a_client_that_never_answers_terminal_create_fails_the_call_in_time(setup: AcpSetup) -> None:
    client = TerminalClient("hang")
    async with start_agent(setup, client, terminal=True) as (conn, _proc, _):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        setup.llm.script(tool_calls([("bash", {"command": "touch made-by-bash"}, "call_hang")]), text("hm"))
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("run")]), 30)
        assert result.stop_reason == "end_turn"
        message = tool_messages(setup.llm.requests[-1].body)[0]["content"]
        assert "did not answer terminal/create within 5 s" in message and "not run here" in message
        assert not (setup.ws / "made-by-bash").exists()  # not run twice: not run locally
        assert call_updates(client, sid, "call_hang")[-1].status == "failed"


async def test_with_the_sandbox_on_bash_never_goes_to_the_clients_terminal(setup: AcpSetup) -> None:
    """The client's terminal would run the command with the user's full rights: while the OS
    sandbox is on, ``bash`` runs confined in agent-ls's own shell (issue 47)."""
    from agent_ls.core.sandbox import detect

    if not detect().available:
        pytest.skip("no sandbox mechanism on this machine")
    setup.user_settings["agent"]["sandbox"] = {"enabled": True}
    setup.user_settings["permissions"] = {"allow": ["bash"]}
    setup.write()
    client = TerminalClient()
    async with start_agent(setup, client, terminal=True) as (conn, _proc, _):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        setup.llm.script(tool_calls([("bash", {"command": "echo confined"}, "call_box")]), text("done"))
        await conn.prompt(session_id=sid, prompt=[text_block("run it")])
        assert "create" not in client.kinds()
        assert "confined" in tool_messages(setup.llm.requests[-1].body)[0]["content"]


async def test_a_background_command_runs_in_a_terminal_of_its_own(setup: AcpSetup) -> None:
    """Issue 41 over ACP: `run_in_background` creates a client terminal and returns its id at once
    (the turn goes on); `shell_output` reads it through terminal/output, `shell_stop` kills it
    (terminal/kill); the terminal stays until the session's jobs end (its output readable)."""
    client = TerminalClient()
    async with start_agent(setup, client, terminal=True) as (conn, _proc, _):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        setup.llm.script(
            tool_calls([("bash", {"command": "echo serving; exec sleep 3666", "run_in_background": True}, "c_bg")]),
            text("started"))
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("start it")]), 30)
        assert result.stop_reason == "end_turn"
        told = tool_messages(setup.llm.requests[-1].body)[0]["content"]
        assert told.startswith("Started in the background as bg-1, in the editor's terminal")
        assert client.kinds() == ["permission", "create", "wait"]  # no release: it runs on
        [terminal_id] = client.terminals
        embedded = [c for u in call_updates(client, sid, "c_bg") for c in (u.content or []) if c.type == "terminal"]
        assert {c.terminal_id for c in embedded} == {terminal_id}
        await wait_for(lambda: b"serving" in client.terminals[terminal_id].output, what="its output")

        setup.llm.script(tool_calls([("shell_output", {"id": "bg-1"}, "c_out")]),
                         tool_calls([("shell_stop", {"id": "bg-1"}, "c_stop")]), text("stopped"))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("read then stop")]), 30)
        out, stop = (m["content"] for m in tool_messages(setup.llm.requests[-1].body)[-2:])
        assert out.startswith("serving\n[bg-1: running, in the editor's terminal]"), out
        assert "[bg-1: was stopped after" in stop, stop
        assert "kill" in client.kinds() and client.terminals[terminal_id].proc.returncode is not None
        assert "release" not in client.kinds()
