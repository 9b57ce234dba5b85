"""``bash`` in the ACP client's terminal (``terminal/*``), when the client advertises
``clientCapabilities.terminal``.

The permission gate has decided before the tool runs, so an approved command is the only kind
that reaches the client. Then: ``terminal/create`` (``bash -c COMMAND`` in the session's folder),
the terminal embedded in the tool call (``{type: "terminal", terminalId}``), ``wait_for_exit``
within the command's timeout (``terminal/kill`` when it passes), ``terminal/output`` for the
text and exit status the model gets, and ``terminal/release`` in every case. Cancelling the
turn kills and releases the terminal. A background command (``run_in_background``) is a job of
the conversation in a terminal of its own (:class:`TerminalJob`).

A client that answers ``terminal/create`` with an error did not start anything: the command
runs in agent-ls's own shell instead (today's ``bash``), and so do the session's later
commands. A client that does not answer within :data:`CREATE_TIMEOUT` may still start it, so
the call fails with that reason rather than risk running it twice; later commands run locally.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, Protocol

import attrs
from acp.helpers import tool_terminal_ref, update_tool_call
from acp.schema import EnvVariable

from agent_ls.agent.editor.changes import current_call
from agent_ls.agent.jobs import JobState, JobTable
from agent_ls.agent.tools.arguments import validate_arguments
from agent_ls.core.tools import Tool, ToolResult, ToolSpec

log = logging.getLogger("agent_ls.acp")


class TerminalOwner(Protocol):
    """What a client terminal needs from the session it runs in (:class:`agent_ls.acp.session.AcpSession`)."""

    conn: Any
    id: str
    folder: Path
    terminals: dict[str, str]
    """The client terminal each running ``bash`` call runs in (call id -> terminal id)."""
    terminal_unavailable: str | None
    """Why the client's terminal is not used any more."""

    async def send(self, update: Any) -> None: ...

CREATE_TIMEOUT = 5.0
"""How long the client has to answer ``terminal/create``."""
CONTROL_TIMEOUT = 5.0
"""How long the client has to answer ``terminal/output``, ``kill`` and ``release``."""
OUTPUT_BYTES_PER_CHAR = 4
"""``outputByteLimit`` is the tool's output cap in characters times this (UTF-8 at worst)."""
ENV = (("PAGER", "cat"), ("GIT_PAGER", "cat"), ("GIT_TERMINAL_PROMPT", "0"))
"""As for the local ``bash``: no pager, no credential prompt waiting for input."""


class TerminalBashTool:
    """The ``bash`` tool run through the client's terminal (same spec as the local one)."""

    def __init__(self, local: Tool, owner: TerminalOwner) -> None:
        self._local = local
        self._owner = owner

    @property
    def spec(self) -> ToolSpec:
        """The local spec, its description saying where the command runs: the editor's terminal
        while the client's terminal is in use, agent-ls's own shell once it is not."""
        spec = self._local.spec
        describe = getattr(self._local, "description_for", None)
        if (self._owner.terminal_unavailable is not None or describe is None
                or getattr(self._local, "sandbox", None) is not None):
            return spec
        return attrs.evolve(spec, description=describe(terminal=True))

    async def call(self, arguments: dict[str, Any]) -> ToolResult:
        owner = self._owner
        if owner.terminal_unavailable is not None or getattr(self._local, "sandbox", None) is not None:
            # With the OS sandbox on (agent.sandbox), the command runs confined in agent-ls's own
            # shell: the client's terminal would run it with the user's full rights.
            return await self._local.call(arguments)
        args = validate_arguments(self.spec, arguments)
        if isinstance(args, str):
            return ToolResult.error(args)
        command: str = args["command"]
        if "\x00" in command:
            return ToolResult.error("The command contains a NUL byte")
        timeout = float(args.get("timeout", getattr(self._local, "timeout", 120.0)))
        cap = int(getattr(self._local, "output_cap_chars", 30_000))
        workspace = getattr(self._local, "workspace", None)
        cwd = str(workspace.root) if workspace is not None else str(owner.folder)
        jobs: JobTable | None = getattr(self._local, "jobs", None)
        background = args.get("run_in_background") is True and jobs is not None
        if background and jobs is not None and (refused := jobs.refusal()) is not None:
            return ToolResult.error(f"Could not start the command in the background: {refused}")
        try:
            created = await asyncio.wait_for(owner.conn.create_terminal(
                session_id=owner.id, command="bash", args=["-c", command], cwd=cwd,
                env=[EnvVariable(name=k, value=v) for k, v in ENV],
                output_byte_limit=cap * OUTPUT_BYTES_PER_CHAR if cap > 0 else None), CREATE_TIMEOUT)
        except TimeoutError:
            owner.terminal_unavailable = f"terminal/create got no answer within {CREATE_TIMEOUT:g} s"
            log.warning("ACP: %s; bash runs in agent-ls's own shell from now on", owner.terminal_unavailable)
            return ToolResult.error(
                f"The editor did not answer terminal/create within {CREATE_TIMEOUT:g} s, so the command's "
                "fate is unknown (it may have started in the editor's terminal); it was not run here. Later "
                "commands run in agent-ls's own shell.")
        except asyncio.CancelledError:
            raise
        except Exception as e:
            owner.terminal_unavailable = f"terminal/create failed: {_reason(e)}"
            log.warning("ACP: %s; bash runs in agent-ls's own shell from now on", owner.terminal_unavailable)
            result = await self._local.call(arguments)
            note = f"[the editor's terminal refused the command ({_reason(e)}); it ran in agent-ls's own shell]\n"
            return attrs.evolve(result, content=note + result.content)
        if background and jobs is not None:
            return await self._background(jobs, command, created.terminal_id)
        return await self._follow(created.terminal_id, timeout)

    async def _background(self, jobs: JobTable, command: str, terminal_id: str) -> ToolResult:
        """A background command in the client's terminal: a job of the conversation
        (:class:`TerminalJob`), its id at once; the terminal is shown with the call."""
        call = current_call.get()
        if call is not None:
            await self._owner.send(update_tool_call(call.call_id, content=[tool_terminal_ref(terminal_id)]))
        job = TerminalJob(jobs.new_id(), command, self._owner, terminal_id, timeout=jobs.timeout, on_end=jobs.ended)
        jobs.add(job)
        return ToolResult(content=f"Started in the background as {job.id}, in the editor's terminal. Read its output "
                                  f"with shell_output (id {job.id!r}), stop it with shell_stop; you will be told "
                                  "when it ends.")

    async def _follow(self, terminal_id: str, timeout: float) -> ToolResult:
        owner = self._owner
        call = current_call.get()
        if call is not None:
            owner.terminals[call.call_id] = terminal_id
            await owner.send(update_tool_call(call.call_id, status="in_progress",
                                              content=[tool_terminal_ref(terminal_id)]))
        ids = {"session_id": owner.id, "terminal_id": terminal_id}
        timed_out = False
        try:
            try:
                await asyncio.wait_for(owner.conn.wait_for_terminal_exit(**ids), timeout)
            except TimeoutError:
                timed_out = True
                await _bounded(owner.conn.kill_terminal(**ids), "terminal/kill")
            output = await asyncio.wait_for(owner.conn.terminal_output(**ids), CONTROL_TIMEOUT)
        except asyncio.CancelledError:
            await asyncio.shield(self._end(terminal_id, kill=True))
            raise
        except Exception as e:
            await self._end(terminal_id, kill=True)
            why = "no answer" if isinstance(e, TimeoutError) else _reason(e)
            return ToolResult.error(f"The editor's terminal failed while running the command: {why}")
        await self._end(terminal_id, kill=False)
        return _result(output, timeout, timed_out)

    async def _end(self, terminal_id: str, *, kill: bool) -> None:
        ids = {"session_id": self._owner.id, "terminal_id": terminal_id}
        if kill:
            await _bounded(self._owner.conn.kill_terminal(**ids), "terminal/kill")
        await _bounded(self._owner.conn.release_terminal(**ids), "terminal/release")


def _reason(e: Exception) -> str:
    """An error answer as words: its message and, when the client gave them, its details."""
    data = getattr(e, "data", None)
    details = data.get("details") if isinstance(data, dict) else data if isinstance(data, str) else None
    return f"{e}: {details}" if details else str(e) or type(e).__name__


async def _bounded(request: Awaitable[Any], what: str) -> None:
    """A terminal request whose answer does not matter beyond arriving in time."""
    try:
        await asyncio.wait_for(request, CONTROL_TIMEOUT)
    except asyncio.CancelledError:
        raise
    except Exception as e:
        log.info("ACP: %s: %s", what, _reason(e))


def _result(output: Any, timeout: float, timed_out: bool) -> ToolResult:
    """The model's result, as the local ``bash`` words it."""
    text: str = output.output or ""
    if output.truncated:
        text = "[earlier output was cut by the editor's terminal]\n" + text
    status = output.exit_status
    code = status.exit_code if status is not None else None
    signal = status.signal if status is not None else None
    if timed_out:
        note = f"[command timed out after {timeout:g} s; it was killed]"
    elif code is not None:
        note = f"[exit code {code}]"
    elif signal:
        note = f"[killed by {signal}]"
    else:
        note = "[exit code unknown]"
    if not text:
        text = "(no output)\n"
    elif not text.endswith("\n"):
        text += "\n"
    content = text + note
    if timed_out:
        content = f"Command timed out after {timeout:g} s and was killed.\n" + content
    return ToolResult(content=content, is_error=timed_out or code != 0)


class TerminalJob:
    """A background command in the client's terminal (:class:`agent_ls.agent.jobs.Job`):
    ``terminal/wait_for_exit`` in the background, ``terminal/output`` for ``shell_output``,
    ``terminal/kill`` for a stop (and at ``agent.backgroundTimeout``), ``terminal/release`` when
    the conversation's jobs end (the output stays readable until then)."""

    def __init__(self, job_id: str, command: str, owner: TerminalOwner, terminal_id: str, *,
                 timeout: float | None, on_end: Callable[[TerminalJob], None]) -> None:
        self.id = job_id
        self.command = command
        self._owner = owner
        self._ids = {"session_id": owner.id, "terminal_id": terminal_id}
        self.terminal_id = terminal_id
        self.started = time.time()
        self._t0 = time.monotonic()
        self._t1: float | None = None
        self.timeout = timeout
        self._on_end = on_end
        self.exit_code: int | None = None
        self.signal: str | None = None
        self.status = "running"
        self.message = ""
        self.seen = 0
        """Characters of the terminal's output the model has read."""
        self.last_line = ""
        self.told = False
        self.released = False
        self.ended = asyncio.Event()
        self._task = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        try:
            exit_status = await asyncio.wait_for(self._owner.conn.wait_for_terminal_exit(**self._ids), self.timeout)
            self.exit_code, self.signal = exit_status.exit_code, exit_status.signal
            if self.status == "running":
                self.status = "killed" if self.signal and self.exit_code is None else "exited"
        except TimeoutError:
            self.status = "timed_out"
            await _bounded(self._owner.conn.kill_terminal(**self._ids), "terminal/kill")
        except asyncio.CancelledError:
            raise
        except Exception as e:
            self.status, self.message = "failed", f"the editor's terminal failed: {_reason(e)}"
        finally:
            self._t1 = time.monotonic()
            self.ended.set()
            self._on_end(self)

    def state(self) -> JobState:
        end = self._t1 if self._t1 is not None else time.monotonic()
        return JobState(self.id, "shell", self.command, self.status, self.started, end - self._t0, self.last_line,
                        self.exit_code, self.signal, self.message)

    async def read(self, since: int | None, limit: int) -> str:
        try:
            out = await asyncio.wait_for(self._owner.conn.terminal_output(**self._ids), CONTROL_TIMEOUT)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            return f"[{self.id}: the editor's terminal did not give its output: {_reason(e)}]"
        text: str = out.output or ""
        lines = [ln for ln in text.splitlines() if ln.strip()]
        self.last_line = lines[-1][:200] if lines else self.last_line
        start = 0 if out.truncated else (self.seen if since is None else min(since, len(text)))
        new = text[start:start + limit]
        self.seen = max(self.seen, start + len(new)) if not out.truncated else len(text)
        head = "[earlier output was cut by the editor's terminal]\n" if out.truncated else ""
        body = new if new else "(no new output)"
        if not body.endswith("\n"):
            body += "\n"
        running = not self.ended.is_set()
        if not running and start + len(new) >= len(text):
            self.told = True
        return f"{head}{body}[{self.id}: {'running' if running else self.describe_end()}, in the editor's terminal]"

    def describe_end(self) -> str:
        s = self.state()
        if s.status == "timed_out":
            how = f"was stopped at agent.backgroundTimeout ({self.timeout:g} s)"
        elif s.status == "stopped":
            how = "was stopped"
        elif s.status == "failed":
            how = f"failed ({s.message})"
        elif s.signal:
            how = f"was killed by {s.signal}"
        else:
            how = f"exited with {s.exit_code}"
        return f"{how} after {s.elapsed:.1f} s"

    def ended_notice(self) -> str:
        return f"background command {self.id} (`{self.command[:80]}`) {self.describe_end()}; its output: shell_output {self.id}"

    async def stop(self) -> None:
        if not self.ended.is_set():
            self.status = "stopped"
            await _bounded(self._owner.conn.kill_terminal(**self._ids), "terminal/kill")
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.ended.wait(), CONTROL_TIMEOUT)

    async def wait(self, timeout: float | None) -> bool:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.ended.wait(), timeout)
        return self.ended.is_set()

    async def release(self) -> None:
        """Let the client's terminal go (once)."""
        if not self.released:
            self.released = True
            if not self.ended.is_set():
                self._task.cancel()
            await _bounded(self._owner.conn.release_terminal(**self._ids), "terminal/release")


def with_terminal(tools: Sequence[Tool], owner: TerminalOwner) -> list[Tool]:
    """``bash`` through the client's terminal (the other tools as they are)."""
    return [TerminalBashTool(t, owner) if t.spec.name == "bash" and t.spec.server is None else t for t in tools]
