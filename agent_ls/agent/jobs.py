"""Background jobs of one conversation: shell commands started with ``run_in_background`` (and,
through the runtime, MCP tasks), each with a short stable id (``bg-3``), its output kept bounded,
its end told to the model at its next request.

:class:`JobTable` is the registry of one conversation; the runtime owns one per conversation
(:mod:`agent_ls.runtime.jobs`) so jobs outlive a rebuilt session, a compaction and a session
switch, and are stopped when the session is deleted or the server ends. A job is anything with
the :class:`Job` shape; :class:`ShellJob` is a background ``bash`` command:

- it runs under :mod:`agent_ls.core.reaper`, the leader of its own process group, which kills
  the group when agent-ls dies (the end of a pipe only agent-ls holds: :func:`lifeline`), so
  nothing is orphaned even by ``SIGKILL``;
- inside the same OS sandbox and with the same scrubbed environment as a foreground command (the
  ``bash`` tool builds the command line, :meth:`JobTable.start_shell` runs it);
- its output (stdout and stderr interleaved) goes to a :class:`JobOutput` that keeps the last
  :data:`KEEP_CHARS` characters: a command that prints 100 MB costs a bounded amount of memory,
  and a reader that fell behind is told how much was dropped;
- it stops when it exits, when the model calls ``shell_stop`` or the user presses Stop (``SIGTERM``
  to the group, ``SIGKILL`` after :data:`STOP_GRACE` seconds), at ``agent.backgroundTimeout``, and
  when the table closes. Processes the command left behind in its group are killed when it ends.
"""

from __future__ import annotations

import asyncio
import codecs
import collections
import contextlib
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol

import attrs

from agent_ls.core.process import kill_group, wait_exit
from agent_ls.core.sandbox.netns import SharedNetwork

log = logging.getLogger("agent_ls.agent.jobs")

KEEP_CHARS = 1_000_000
"""Characters of a job's output kept (the latest); older output is dropped, and counted."""
STOP_GRACE = 2.0
"""Seconds between ``SIGTERM`` to a stopped job's group and ``SIGKILL``."""
DEFAULT_MAX_JOBS = 8
"""Background commands running at once per conversation (``agent.maxBackgroundCommands``)."""
REAPER = str(Path(__file__).resolve().parent.parent / "core" / "reaper.py")
ID_PREFIX = "bg-"
_LIFELINE: list[int] = []


def lifeline() -> int:
    """The read end of this process's lifeline (:mod:`agent_ls.core.reaper`): a pipe whose write
    end only this process holds (never inherited), open until it dies."""
    if not _LIFELINE:
        read_end, write_end = os.pipe()  # both close-on-exec; the read end is passed explicitly
        _LIFELINE.extend((read_end, write_end))
    return _LIFELINE[0]


class JobOutput:
    """The latest ``keep`` characters of a stream of text, addressed by absolute offsets."""

    def __init__(self, keep: int = KEEP_CHARS) -> None:
        self.keep = keep
        self._chunks: collections.deque[str] = collections.deque()
        self._kept = 0
        self.start = 0
        """Offset of the first character kept."""
        self.total = 0
        """Characters written so far (the offset of the next one)."""
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed_bytes(self, data: bytes, *, final: bool = False) -> None:
        self.feed(self._decoder.decode(data, final))

    def feed(self, text: str) -> None:
        if not text:
            return
        self._chunks.append(text)
        self._kept += len(text)
        self.total += len(text)
        while self._kept > self.keep:
            over = self._kept - self.keep
            first = self._chunks[0]
            if len(first) <= over:
                self._chunks.popleft()
                self._kept -= len(first)
                self.start += len(first)
            else:
                self._chunks[0] = first[over:]
                self._kept -= over
                self.start += over

    def read(self, since: int, limit: int) -> tuple[str, int, int]:
        """``(text, dropped, end)``: up to ``limit`` characters from offset ``since``; ``dropped``:
        characters between ``since`` and the first one kept (gone); ``end``: the offset after the text."""
        since = max(0, min(since, self.total))
        dropped = max(0, self.start - since)
        begin = max(since, self.start)
        text = "".join(self._chunks)[begin - self.start:][:limit]
        return text, dropped, begin + len(text)

    def last_line(self, width: int = 200) -> str:
        """The last line that is not blank (for a list of what runs)."""
        tail = ""
        for chunk in reversed(self._chunks):
            tail = chunk + tail
            if tail.strip() and "\n" in tail.rstrip("\n"):
                break
            if len(tail) > 8192:
                break
        lines = [ln for ln in tail.replace("\r", "\n").splitlines() if ln.strip()]
        return lines[-1][:width] if lines else ""


@attrs.frozen
class JobState:
    """A job as a list shows it (the LSP ``agent/jobs`` result, ``/jobs``)."""

    id: str
    kind: str
    """``"shell"`` or ``"task"`` (an MCP task)."""
    title: str
    """The command line, or the task's tool."""
    status: str
    """``running``, ``exited``, ``killed``, ``stopped``, ``timed_out``, ``failed``; a task's own
    (``working``, ``input_required``, ``completed``, ``cancelled``)."""
    started: float
    """Wall-clock start (seconds since the epoch)."""
    elapsed: float
    """Seconds it ran (until now while it runs)."""
    last_line: str = ""
    exit_code: int | None = None
    signal: str | None = None
    message: str = ""
    """A task's status message, or why a command could not start."""

    @property
    def running(self) -> bool:
        return self.status in RUNNING


RUNNING = frozenset({"running", "working", "input_required"})


class Job(Protocol):
    """What the table keeps of a job of any kind."""

    id: str

    def state(self) -> JobState: ...

    async def read(self, since: int | None, limit: int) -> str:
        """New output since ``since`` (None: since the last read), with the job's state."""
        ...

    async def stop(self) -> None: ...

    async def wait(self, timeout: float | None) -> bool:
        """Wait until it ends (at most ``timeout`` seconds); True when it has."""
        ...

    def ended_notice(self) -> str:
        """The short line that tells the model it ended."""
        ...


def _elapsed(seconds: float) -> str:
    return f"{seconds:.0f} s" if seconds >= 10 else f"{seconds:.1f} s"


class ShellJob:
    """One background ``bash`` command (see the module docstring)."""

    def __init__(self, job_id: str, command: str, proc: asyncio.subprocess.Process, *,
                 timeout: float | None = None, cleanup: Callable[[], None] | None = None,
                 on_end: Callable[[ShellJob], None] | None = None, keep: int = KEEP_CHARS) -> None:
        self.id = job_id
        self.command = command
        self.proc = proc
        self.output = JobOutput(keep)
        self.started = time.time()
        self._t0 = time.monotonic()
        self._t1: float | None = None
        self.timeout = timeout
        self._cleanup = cleanup
        self._on_end = on_end
        self.cursor = 0
        """Where the model's next ``shell_output`` without ``since`` starts."""
        self.stopped = False
        self.timed_out = False
        self.told = False
        """The model has seen how it ended (its ``shell_output`` or ``shell_stop``): no notice."""
        self.ended = asyncio.Event()
        self._task = asyncio.ensure_future(self._watch())

    # the process -----------------------------------------------------------------------------
    async def _pump(self) -> None:
        stream = self.proc.stdout
        assert stream is not None
        while True:
            chunk = await stream.read(65536)
            if not chunk:
                self.output.feed_bytes(b"", final=True)
                return
            self.output.feed_bytes(chunk)

    async def _watch(self) -> None:
        reader = asyncio.ensure_future(self._pump())
        try:
            try:
                await asyncio.wait_for(wait_exit(self.proc), self.timeout)
            except TimeoutError:
                self.timed_out = True
                await self._terminate()
            kill_group(self.proc)  # what the command left behind in its group
            with contextlib.suppress(TimeoutError):  # (the group is gone: only a loaded machine takes long)
                await asyncio.wait_for(asyncio.shield(reader), 5.0)
                await asyncio.wait_for(self.proc.wait(), 5.0)  # the transport closes
        finally:
            if not reader.done():
                reader.cancel()
            kill_group(self.proc)
            self._t1 = time.monotonic()
            if self._cleanup is not None:
                with contextlib.suppress(Exception):
                    self._cleanup()
            self.ended.set()
            if self._on_end is not None:
                self._on_end(self)

    async def _terminate(self) -> None:
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            await asyncio.wait_for(wait_exit(self.proc), STOP_GRACE)
        except TimeoutError:
            kill_group(self.proc)
            await wait_exit(self.proc)

    async def stop(self) -> None:
        """Stop it (``SIGTERM`` to its group, ``SIGKILL`` after :data:`STOP_GRACE`) and wait."""
        if not self.ended.is_set():
            self.stopped = True
            await self._terminate()
            await self.ended.wait()

    def kill_now(self) -> None:
        """``SIGKILL`` to its group, without waiting (the server's last moments)."""
        if self.proc.returncode is None:
            self.stopped = True
        kill_group(self.proc)

    async def wait(self, timeout: float | None) -> bool:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.ended.wait(), timeout)
        return self.ended.is_set()

    # what it shows ---------------------------------------------------------------------------
    def state(self) -> JobState:
        code = self.proc.returncode if self.ended.is_set() else None
        sig = None
        if not self.ended.is_set():
            status = "running"
        elif self.timed_out:
            status = "timed_out"
        elif self.stopped:
            status = "stopped"
        elif code is not None and code < 0:
            status = "killed"
        else:
            status = "exited"
        if code is not None and code < 0:
            try:
                sig = signal.Signals(-code).name
            except ValueError:
                sig = f"signal {-code}"
            code = None
        end = self._t1 if self._t1 is not None else time.monotonic()
        return JobState(self.id, "shell", self.command, status, self.started, end - self._t0,
                        self.output.last_line(), code, sig)

    def describe_end(self) -> str:
        s = self.state()
        if s.status == "timed_out":
            how = f"was stopped at agent.backgroundTimeout ({self.timeout:g} s)"
        elif s.status == "stopped":
            how = "was stopped" + (f" ({s.signal})" if s.signal else "")
        elif s.signal is not None:
            how = f"was killed by {s.signal}"
        else:
            how = f"exited with {s.exit_code}"
        return f"{how} after {_elapsed(s.elapsed)}"

    async def read(self, since: int | None, limit: int) -> str:
        return self.read_now(since, limit)

    def read_now(self, since: int | None, limit: int) -> str:
        start = self.cursor if since is None else since
        text, dropped, end = self.output.read(start, limit)
        self.cursor = max(self.cursor, end)
        s = self.state()
        more = self.output.total - end
        lines = []
        if dropped:
            lines.append(f"[... {dropped} older characters were dropped: only the last {self.output.keep} are kept ...]")
        lines.append(text if text else "(no new output)")
        status = "running" if s.running else self.describe_end()
        notes = [f"[{self.id}: {status}; output characters {start + dropped}-{end} of {self.output.total}"]
        if more > 0:
            notes.append(f"; {more} more: call shell_output with since={end}")
        notes.append("]")
        if not s.running and more <= 0:
            self.told = True
        body = "\n".join(lines)
        if body and not body.endswith("\n"):
            body += "\n"
        return body + "".join(notes)

    def ended_notice(self) -> str:
        return (f"background command {self.id} (`{_short(self.command)}`) {self.describe_end()}; "
                f"its output: shell_output {self.id}")


def _short(command: str, width: int = 80) -> str:
    one = " ".join(command.split())
    return one if len(one) <= width else one[: width - 1] + "…"


class TooMany(Exception):
    """The table runs as many background commands as it may."""


class JobTable:
    """The background jobs of one conversation (see the module docstring).

    ``max_jobs``: how many may run at once (``agent.maxBackgroundCommands``); ``timeout``: the
    longest a background command may run (``agent.backgroundTimeout``; None: no limit)."""

    def __init__(self, *, max_jobs: int = DEFAULT_MAX_JOBS, timeout: float | None = None) -> None:
        self.max_jobs = max_jobs
        self.timeout = timeout
        self._jobs: dict[str, Job] = {}
        self._next = 1
        self._notices: list[str] = []
        self.listeners: list[Callable[[JobTable], None]] = []
        """Told after each change (a job started, ended, or its task's status changed)."""
        self.closed = False
        self.network = SharedNetwork()
        """The network namespace this conversation's sandboxed commands share (made at the first;
        closed with the table): a server a background command starts is reachable from the next."""

    # the registry ----------------------------------------------------------------------------
    def new_id(self) -> str:
        job_id = f"{ID_PREFIX}{self._next}"
        self._next += 1
        return job_id

    def add(self, job: Job) -> None:
        self._jobs[job.id] = job
        self.changed()

    def get(self, job_id: str) -> Job | None:
        return self._jobs.get(job_id.strip())

    def unknown(self, job_id: str) -> str:
        known = ", ".join(self._jobs) or "none"
        return f"no background job {job_id!r} in this conversation (its jobs: {known})"

    def jobs(self) -> list[Job]:
        return list(self._jobs.values())

    def states(self) -> list[JobState]:
        return [job.state() for job in self._jobs.values()]

    def running(self) -> int:
        return sum(1 for job in self._jobs.values() if job.state().running)

    def changed(self) -> None:
        for listener in list(self.listeners):
            try:
                listener(self)
            except Exception:  # a front end's listener must not break a job
                log.exception("a jobs listener failed")

    def ended(self, job: Job) -> None:
        """``job`` ended: its notice waits for the model's next request (unless it has seen how)."""
        if not getattr(job, "told", False) and not self.closed:
            self._notices.append(job.ended_notice())
        self.changed()

    def take_notices(self) -> list[str]:
        """The notices of jobs that ended since the last call (the session's next request says them)."""
        out, self._notices = self._notices, []
        return out

    # shell commands --------------------------------------------------------------------------
    def refusal(self) -> str | None:
        """Why no background job may start now (None: one may)."""
        if self.closed:
            return "this conversation's background jobs were stopped (it is closing)"
        if self.running() >= self.max_jobs:
            return (f"{self.max_jobs} background commands run already (agent.maxBackgroundCommands); "
                    "stop one with shell_stop first")
        return None

    async def start_shell(self, command: str, argv: Sequence[str], *, cwd: str, env: dict[str, str],
                          cleanup: Callable[[], None] | None = None) -> ShellJob:
        """Run ``argv`` (``bash -c command``, wrapped in the sandbox by the caller) in the
        background under the reaper. :class:`TooMany` past the limit; :class:`OSError` when it
        cannot start."""
        refused = self.refusal()
        if refused is not None:
            raise TooMany(refused)
        fd = lifeline()
        full = [sys.executable, "-I", "-S", REAPER, str(fd), "--", *argv]
        spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *full, cwd=cwd, env=env, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.STDOUT, start_new_session=True, pass_fds=(fd,)))
        try:
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            with contextlib.suppress(BaseException):
                kill_group(await spawn)
            raise
        job = ShellJob(self.new_id(), command, proc, timeout=self.timeout, cleanup=cleanup, on_end=self.ended)
        self.add(job)
        return job

    async def stop(self, job_id: str, *, by_model: bool = False) -> Job | None:
        """Stop a job and wait until it has ended (None: no such job). ``by_model``: the model's
        ``shell_stop`` (it gets the end in the result: no notice); else the user's Stop (noticed)."""
        job = self.get(job_id)
        if job is None:
            return None
        if by_model and hasattr(job, "told"):
            job.told = True  # type: ignore[attr-defined]  # (every kind of job has it)
        await job.stop()
        self.changed()
        return job

    async def close(self) -> None:
        """Stop every job (the session was deleted, or the server shuts down); a job that holds
        something of a client's (an ACP terminal) lets it go."""
        self.closed = True
        running = [job for job in self._jobs.values() if job.state().running]
        if running:
            await asyncio.gather(*(job.stop() for job in running), return_exceptions=True)
        releases = [release() for job in self._jobs.values() if (release := getattr(job, "release", None))]
        if releases:
            await asyncio.gather(*releases, return_exceptions=True)
        self.network.close()

    def add_task(self, title: str, source: TaskSource, result_text: Callable[[object], tuple[str, bool]]) -> TaskJob:
        """A task a tool call started, as a job of this conversation (its id is what the model is told)."""
        job = TaskJob(self.new_id(), title, source, result_text=result_text, limit=self.timeout, on_end=self.ended,
                      on_change=self.changed)
        self.add(job)
        return job

    def kill_now(self) -> None:
        """``SIGKILL`` every command's group without waiting (the server's shutdown)."""
        self.closed = True
        for job in self._jobs.values():
            kill = getattr(job, "kill_now", None)
            if kill is not None:
                kill()
        self.network.close()


class TaskSource(Protocol):
    """A long-running operation of a server that is polled (an MCP task:
    :class:`agent_ls.mcp.tasks.TaskHandle`)."""

    status: str
    message: str
    poll: float
    """Seconds between polls (the server's word)."""

    async def get(self) -> object:
        """Poll once (``status`` and ``message`` follow); the value is handed to ``result_text``."""
        ...

    async def answer(self, got: object) -> None:
        """The task waits for input (``input_required``): ask the user what it asks for (what
        :meth:`get` returned says) and send the answers; nothing when they were sent already."""
        ...

    async def cancel(self) -> None: ...


DEFAULT_TASK_LIMIT = 3600.0
"""Seconds a task runs at most when ``agent.backgroundTimeout`` is not set (then it is cancelled)."""
TASK_ENDED = frozenset({"completed", "failed", "cancelled"})


class TaskJob:
    """A task a tool call started (an MCP task): polled in the background at the server's
    interval, its status message shown like a command's last line, what it asks for
    (``input_required``) asked of the user while its state says it waits for input, cancelled on
    Stop (``tasks/cancel``) or past its limit; its result is what ``shell_output`` and ``task_wait``
    return once it ended. ``result_text``: the finished task's result as text and whether it is
    an error."""

    def __init__(self, job_id: str, title: str, source: TaskSource, *,
                 result_text: Callable[[object], tuple[str, bool]], limit: float | None,
                 on_end: Callable[[TaskJob], None], on_change: Callable[[], None]) -> None:
        self.id = job_id
        self.title = title
        self.source = source
        self._result_text = result_text
        self.limit = limit if limit is not None else DEFAULT_TASK_LIMIT
        self._on_end = on_end
        self._on_change = on_change
        self.started = time.time()
        self._t0 = time.monotonic()
        self._t1: float | None = None
        self.status = source.status
        self.message = source.message
        self.result = ""
        self.is_error = False
        self.told = False
        self.ended = asyncio.Event()
        self._task = asyncio.ensure_future(self._watch())

    async def _watch(self) -> None:
        try:
            async with asyncio.timeout(self.limit):
                while True:
                    got = await self.source.get()
                    if (self.source.status, self.source.message) != (self.status, self.message):
                        self.status, self.message = self.source.status, self.source.message
                        if self.status not in TASK_ENDED:
                            self._on_change()
                    if self.status in TASK_ENDED:
                        self.result, self.is_error = self._result_text(got)
                        return
                    if self.status == "input_required":
                        await self.source.answer(got)  # (the state says it waits, meanwhile)
                        if self.source.message != self.message:
                            self.message = self.source.message
                            self._on_change()
                    await asyncio.sleep(self.source.poll)
        except TimeoutError:
            self.status, self.message = "timed_out", f"no end within {self.limit:g} s; it was cancelled"
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.source.cancel(), 5)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # the server went away, or answered nonsense
            self.status, self.message = "failed", f"polling the task failed: {e}"
        finally:
            self._t1 = time.monotonic()
            self.ended.set()
            self._on_end(self)

    def state(self) -> JobState:
        end = self._t1 if self._t1 is not None else time.monotonic()
        status = "working" if self.status in ("submitted", "running") else self.status
        return JobState(self.id, "task", self.title, status, self.started, end - self._t0, self.message,
                        message=self.message)

    def describe_end(self) -> str:
        s = self.state()
        how = {"completed": "completed", "cancelled": "was cancelled", "timed_out": "was cancelled at its limit"}.get(
            s.status, f"ended {s.status}")
        if s.status == "completed" and self.is_error:
            how = "completed with an error"
        return f"{how} after {_elapsed(s.elapsed)}"

    async def read(self, since: int | None, limit: int) -> str:
        if not self.ended.is_set():
            said = f": {self.message}" if self.message else ""
            return f"[{self.id}: {self.state().status}{said}]"
        self.told = True
        body = self.result or self.message or "(no result)"
        return f"{body[:limit]}\n[{self.id}: {self.describe_end()}]"

    def ended_notice(self) -> str:
        return f"task {self.id} ({self.title}) {self.describe_end()}; its result: task_wait {self.id}"

    async def stop(self) -> None:
        if not self.ended.is_set():
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.source.cancel(), 5)
            self.status, self.message = "cancelled", "stopped"
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._task

    async def wait(self, timeout: float | None) -> bool:
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(self.ended.wait()), timeout)
        return self.ended.is_set()
