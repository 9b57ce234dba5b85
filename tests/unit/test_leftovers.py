"""tests/leftovers.py: which processes are this run's (the end-of-session check that nothing is
left running must not blame another run's processes, nor miss this run's)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import uuid

from tests.leftovers import RUN_MARK, run_processes


def test_a_process_is_the_runs_by_its_mark_and_another_runs_is_not() -> None:
    since = time.time()
    mine = dict(os.environ, PYTEST_CURRENT_TEST="t (call)")
    assert mine.get(RUN_MARK)  # set by the session fixture model_hosts
    theirs = dict(mine, **{RUN_MARK: uuid.uuid4().hex})  # a run at the same time, xdist or not
    argv = [sys.executable, "-c", "import sys, time; time.sleep(60)", "agent_ls"]
    procs = [subprocess.Popen(argv, env=env) for env in (mine, theirs)]
    try:
        deadline = time.monotonic() + 30
        while not (found := run_processes(since)) and time.monotonic() < deadline:
            time.sleep(0.05)
        assert [p.pid for p in found] == [procs[0].pid]
    finally:
        for p in procs:
            p.kill()
            p.wait()
