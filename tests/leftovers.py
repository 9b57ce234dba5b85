"""The agent-ls processes a test run leaves behind (checked at the end of each pytest session by
``no_agent_ls_process_left`` in tests/conftest.py).

A process is the run's when it runs agent-ls (``agent_ls`` in its command line) with this
interpreter, started after the session did, and its environment says it comes from a test of
this pytest process: ``PYTEST_CURRENT_TEST`` (pytest sets it while a test runs, and every
process a test starts inherits it, down to the model host a chat started), the run's own
:data:`RUN_MARK` (two runs without xdist at once tell theirs apart), and, under xdist, this
worker's ``PYTEST_XDIST_TESTRUNUID`` and ``PYTEST_XDIST_WORKER``. Another engineer's run, another
worktree's interpreter and the user's own agent-ls processes are not the run's."""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path

import psutil

RUN_MARK = "AGENT_LS_TEST_RUN"
"""A value of this pytest process's own (``model_hosts`` in tests/conftest.py sets it), which every
process its tests start inherits. Left out of the model host's key, as every ``AGENT_LS_*`` is."""
_MARKS = (RUN_MARK, "PYTEST_XDIST_TESTRUNUID", "PYTEST_XDIST_WORKER")
RUN_VARIABLES = ("AGENT_LS_RUNTIME_DIR", "AGENT_LS_MODEL_HOST_IDLE", RUN_MARK)
"""The variables ``model_hosts`` (tests/conftest.py) sets for the run: where its model hosts live,
and the run's mark."""


def environ_without_agent_ls() -> dict[str, str]:
    """``os.environ`` without the ``AGENT_LS_*`` settings (a test that starts a front end with only
    the settings it gives), but with the run's :data:`RUN_VARIABLES`: without them the front end's
    model host would start in the user's runtime folder and outlive the run."""
    return {k: v for k, v in os.environ.items() if not k.startswith("AGENT_LS_") or k in RUN_VARIABLES}


def run_processes(since: float, keep: Callable[[psutil.Process], bool] = lambda p: False) -> list[psutil.Process]:
    """The live agent-ls processes this pytest process's tests started after ``since`` (a
    ``time.time()``), except those ``keep`` accepts."""
    marks = {k: os.environ.get(k) for k in _MARKS}
    python = os.path.realpath(sys.executable)
    found = []
    for proc in psutil.process_iter(["pid", "cmdline", "create_time", "status"]):
        info = proc.info
        cmdline = info["cmdline"] or []
        if (proc.pid == os.getpid() or info["status"] == psutil.STATUS_ZOMBIE or not cmdline
                or (info["create_time"] or 0) < since - 1 or not any("agent_ls" in a for a in cmdline)):
            continue
        try:
            if os.path.realpath(proc.exe()) != python:
                continue
            environ = proc.environ()
        except (psutil.Error, OSError):
            continue
        if "PYTEST_CURRENT_TEST" in environ and all(environ.get(k) == v for k, v in marks.items()) \
                and not keep(proc):
            found.append(proc)
    return found


def model_host_in(folder: Path) -> Callable[[psutil.Process], bool]:
    """Whether a process is a model host whose socket is in ``folder`` (the run's runtime folder:
    those are ended with the run, by the ``model_hosts`` fixture)."""
    def keep(proc: psutil.Process) -> bool:
        cmdline = proc.info["cmdline"]
        return "agent_ls.agent.model_host_server" in cmdline and Path(cmdline[-1]).parent == folder
    return keep


def leftovers(since: float, keep: Callable[[psutil.Process], bool], grace: float = 5.0) -> list[str]:
    """The run's processes (:func:`run_processes`) still alive after ``grace`` seconds, each as
    ``pid: command line``."""
    deadline = time.monotonic() + grace
    while (found := run_processes(since, keep)) and time.monotonic() < deadline:
        time.sleep(0.1)
    return [f"{p.pid}: {' '.join(p.info['cmdline'])}" for p in found]
