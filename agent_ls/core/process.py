"""The process and its children: ending them when the connection ends, in bounded time.

:func:`kill_children` is the front ends' last resort at exit (no child outlives the server);
:func:`kill_process_tree` ends one MCP server that did not stop when asked; :class:`ExitWatchdog`
ends the process itself when something still holds it a few seconds after the connection ended
(a task that ignores its cancellation, a worker thread stuck in a call, a daemon thread still
importing), writing every thread's stack to stderr first so the cause can be found.
"""

from __future__ import annotations

import asyncio
import contextlib
import faulthandler
import os
import signal
import sys
import threading
from collections.abc import Callable
from typing import IO, Any

_outliving: set[int] = set()
"""The children :func:`kill_children` leaves alone (:func:`outlives_us`)."""


def outlives_us(pid: int) -> None:
    """Mark a child that is meant to outlive this process: the user's model host
    (:mod:`agent_ls.agent.model_host`), which other editor windows and terminals use too.
    :func:`kill_children` leaves it alone."""
    _outliving.add(pid)


def kill_children() -> None:
    """Last resort: no child process outlives the server (also when the editor vanished
    without ``shutdown``), except the ones marked with :func:`outlives_us`. MCP servers run in
    their own process group; end each group.

    Children come from psutil (no platform-specific process scan); zombies are skipped. A
    child that leads its own process group gets SIGTERM for the whole group, any other child
    SIGTERM for itself (``terminate()`` where there are no process groups).
    """
    # lazy: psutil costs 35-55 ms to import (python -X importtime) and this module is imported
    # when the language server starts; psutil is needed only when processes are ended
    import psutil

    try:
        children = psutil.Process().children(recursive=False)
    except psutil.Error:
        return
    for child in children:
        try:
            if child.pid in _outliving or child.status() == psutil.STATUS_ZOMBIE:
                continue
            if hasattr(os, "killpg") and os.getpgid(child.pid) == child.pid:
                os.killpg(child.pid, signal.SIGTERM)
            else:
                child.terminate()
        except (psutil.Error, OSError):
            pass


def kill_process_tree(process: Any) -> None:
    """SIGKILL a stdio server and every process under it (nothing if it is gone already)."""
    pid = getattr(process, "pid", None)
    if pid is None or getattr(process, "returncode", None) is not None:
        return
    import psutil  # lazy: see kill_children

    try:
        root = psutil.Process(pid)
        victims = [*root.children(recursive=True), root]
    except psutil.Error:
        return
    for proc in victims:
        with contextlib.suppress(psutil.Error):
            proc.kill()


EXIT_GRACE = 5.0
"""Seconds between the end of the connection and the forced end of the process."""


class ExitWatchdog:
    """Ends the process ``grace`` seconds after :meth:`arm`, unless it ended by itself first."""

    def __init__(self, grace: float = EXIT_GRACE, *, last_words: Callable[[], object] = kill_children,
                 exit_fn: Callable[[int], object] = os._exit, stream: IO[str] | None = None) -> None:
        self.grace = grace
        self._last_words = last_words
        """Run just before the end (by default :func:`kill_children`: nothing outlives us)."""
        self._exit = exit_fn
        self._stream = stream
        self._timer: threading.Timer | None = None
        self._lock = threading.Lock()

    def arm(self, code: int) -> None:
        """Start the countdown (once; later calls keep the first countdown)."""
        with self._lock:
            if self._timer is not None:
                return
            timer = threading.Timer(self.grace, self._fire, args=(code,))
            timer.name = "agent-ls exit watchdog"
            timer.daemon = True  # never what holds the process
            self._timer = timer
        timer.start()

    def _fire(self, code: int) -> None:
        stream = self._stream if self._stream is not None else sys.stderr
        with contextlib.suppress(Exception):
            stream.write(f"agent-ls: the server was still running {self.grace:g} s after its connection "
                         "ended; ending it now. What each thread was doing:\n")
            stream.flush()
            faulthandler.dump_traceback(file=stream, all_threads=True)
            stream.flush()
        with contextlib.suppress(Exception):
            self._last_words()
        self._exit(code)


def kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the process group of ``proc`` (started in its own session: ``bash`` and hooks)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


async def wait_exit(proc: asyncio.subprocess.Process, first: float = 0.001, growth: float = 1.3) -> int:
    """The exit status of ``proc`` itself. ``Process.wait()`` on 3.11 also waits for the pipes to
    close, which a background child holding stdout can delay forever; this polls the leader's
    own status, finely at first (``first`` seconds, growing by ``growth`` up to 20 ms): a quick
    command exits within milliseconds."""
    delay = first
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * growth, 0.02)
    return proc.returncode
