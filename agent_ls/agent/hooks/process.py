"""One hook command run as a process: JSON on stdin, bounded output, a timeout, cancel.

The command runs with ``bash -c`` in the workspace folder, in its own process group (a timeout
or a cancel kills everything it started), with the ``bash`` tool's scrubbed environment
(:func:`agent_ls.agent.builtin_tools.shell.shell_environment`: no provider keys, tokens or
registered secrets) plus ``AGENT_LS_WORKSPACE`` / ``CLAUDE_PROJECT_DIR`` (the folder) and
``AGENT_LS_HOOK_EVENT``. With the OS sandbox on (``agent.sandbox``), it runs inside it like
``bash`` (:meth:`agent_ls.core.sandbox.Sandbox.wrap_shell`); where no mechanism can confine it,
it does not run (the error says why), never unconfined. stdout and stderr are each kept up to :data:`MAX_OUTPUT_BYTES`; the rest is read and
counted, never kept (a hook that prints 10 MB costs no memory).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Callable, Iterable
from pathlib import Path

import attrs

from agent_ls.agent.builtin_tools.shell import shell_environment
from agent_ls.core.process import kill_group, wait_exit
from agent_ls.core.process_secrets import environment
from agent_ls.core.sandbox import Sandbox, SandboxUnavailable

MAX_OUTPUT_BYTES = 256 * 1024
"""What is kept of a hook's stdout, and of its stderr (the rest is counted and dropped)."""
_DRAIN_SECONDS = 0.5
"""After the hook exits, how long to wait for the end of its output (a background child may hold it)."""


@attrs.frozen
class ProcessResult:
    """How one hook process ended."""

    exit_code: int | None
    """None: it did not start, or was killed at its timeout."""
    stdout: str
    stderr: str
    duration_ms: float
    timed_out: bool = False
    start_error: str | None = None
    """Why it could not be started (errno text), or None."""
    stdout_dropped: int = 0
    """Bytes of stdout beyond :data:`MAX_OUTPUT_BYTES` (read and dropped)."""
    stderr_dropped: int = 0


class _Bounded:
    def __init__(self, limit: int) -> None:
        self.limit = limit
        self.kept = bytearray()
        self.dropped = 0

    async def pump(self, stream: asyncio.StreamReader) -> None:
        while chunk := await stream.read(65536):
            room = self.limit - len(self.kept)
            if room > 0:
                self.kept += chunk[:room]
            self.dropped += max(0, len(chunk) - max(room, 0))

    def text(self) -> str:
        return self.kept.decode("utf-8", errors="replace")


def hook_environment(folder: Path, event: str, passthrough: Iterable[str] = ()) -> dict[str, str]:
    """The environment of a hook: ``bash``'s scrubbed one, plus where and why it runs."""
    env = shell_environment(environment(), passthrough)
    env.update({"AGENT_LS_WORKSPACE": str(folder), "CLAUDE_PROJECT_DIR": str(folder),
                "AGENT_LS_HOOK_EVENT": event, "PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
    return env


async def run_hook_process(command: str, stdin: bytes, *, cwd: Path, env: dict[str, str],
                           timeout: float, sandbox: Sandbox | None = None) -> ProcessResult:
    """Run ``bash -c command`` with ``stdin``; kill its process group at ``timeout`` or when the
    awaiting task is cancelled (the cancel is raised again once it is dead)."""
    started = time.perf_counter()
    argv = ["bash", "-c", command]
    cleanup: Callable[[], None] | None = None
    if sandbox is not None:
        try:
            wrapped = await sandbox.wrap_shell(command, cwd=str(cwd), env=env)
        except SandboxUnavailable as e:  # never unconfined
            return ProcessResult(None, "", "", (time.perf_counter() - started) * 1e3,
                                 start_error=f"the OS sandbox cannot run it ({e})")
        argv, env, cleanup = wrapped.argv, wrapped.env, wrapped.cleanup
    try:
        return await _run(argv, stdin, cwd=cwd, env=env, timeout=timeout, started=started)
    finally:
        if cleanup is not None:
            cleanup()


async def _run(argv: list[str], stdin: bytes, *, cwd: Path, env: dict[str, str], timeout: float,
               started: float) -> ProcessResult:
    spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
        *argv, cwd=cwd, env=env, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True))
    try:
        proc = await asyncio.shield(spawn)
    except asyncio.CancelledError:
        with contextlib.suppress(BaseException):
            kill_group(await spawn)
        raise
    except OSError as e:
        return ProcessResult(None, "", "", (time.perf_counter() - started) * 1e3, start_error=str(e))
    assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
    out, err = _Bounded(MAX_OUTPUT_BYTES), _Bounded(MAX_OUTPUT_BYTES)
    readers = [asyncio.create_task(out.pump(proc.stdout)), asyncio.create_task(err.pump(proc.stderr))]

    async def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(BrokenPipeError, ConnectionResetError):  # a hook need not read its input
            proc.stdin.write(stdin)
            await proc.stdin.drain()
        with contextlib.suppress(BrokenPipeError, ConnectionResetError, OSError):
            proc.stdin.close()

    writer = asyncio.create_task(feed())
    timed_out = False
    # proc.wait() notices the exit at once, but may also wait for the pipes (which a background
    # child can hold open); the poll notices it within milliseconds either way: the first wins
    exited = [asyncio.ensure_future(proc.wait()), asyncio.ensure_future(wait_exit(proc, 0.0005, 1.5))]
    try:
        try:
            finished, _ = await asyncio.wait(exited, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
            if not finished:
                timed_out = True
                kill_group(proc)
        finally:
            for waiter in exited:
                waiter.cancel()
            await asyncio.gather(*exited, return_exceptions=True)
        done, _ = await asyncio.wait(readers, timeout=_DRAIN_SECONDS)
        if len(done) < len(readers):  # a background child still holds the output open
            kill_group(proc)
            await asyncio.wait(readers, timeout=_DRAIN_SECONDS)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(wait_exit(proc, 0.0005, 1.5), 5)
    except BaseException:
        kill_group(proc)
        raise
    finally:
        for task in (*readers, writer):
            task.cancel()
        await asyncio.gather(*readers, writer, return_exceptions=True)
    return ProcessResult(None if timed_out else proc.returncode, out.text(), err.text(),
                         (time.perf_counter() - started) * 1e3, timed_out, None, out.dropped, err.dropped)
