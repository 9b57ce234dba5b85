"""kill_children (agent_ls/core/process.py): the server's last resort at exit, on psutil.

It runs in a throwaway Python process here (it ends every child of the process that calls it,
which inside pytest would include other tests' servers).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

ROOT = Path(__file__).resolve().parents[2]

SCRIPT = r"""
import json, subprocess, sys, time
from agent_ls.core.process import kill_children

sleep = [sys.executable, "-c", "import time; time.sleep(60)"]
# like an MCP server: its own process group, with a child of its own in that group
leader = subprocess.Popen(
    [sys.executable, "-c",
     "import subprocess, sys, time\n"
     "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
     "print(p.pid, flush=True)\n"
     "time.sleep(60)"],
    start_new_session=True, stdout=subprocess.PIPE, text=True)
grandchild = int(leader.stdout.readline())
# a plain child in our own process group: only it may be signalled, never the group
plain = subprocess.Popen(sleep)
# a child that already exited and was not reaped (a zombie): skipped
zombie = subprocess.Popen([sys.executable, "-c", "pass"])
time.sleep(0.5)
kill_children()
codes = {"leader": leader.wait(10), "plain": plain.wait(10), "zombie": zombie.wait(10)}
print(json.dumps({"grandchild": grandchild, "codes": codes}), flush=True)
"""


def gone(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() == psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return True


@pytest.mark.skipif(sys.platform == "win32", reason="process groups")
def test_kill_children_ends_each_child_and_its_process_group() -> None:
    out = subprocess.run([sys.executable, "-c", SCRIPT], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr  # the caller itself survived (no SIGTERM to its own group)
    report = json.loads(out.stdout.strip().splitlines()[-1])
    assert report["codes"] == {"leader": -15, "plain": -15, "zombie": 0}
    deadline = time.monotonic() + 10
    while not gone(report["grandchild"]) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert gone(report["grandchild"]), "the group leader's own child outlived kill_children"


def test_kill_children_without_children_is_a_no_op() -> None:
    out = subprocess.run([sys.executable, "-c", "from agent_ls.core.process import kill_children; "
                          "kill_children(); print('ok')"], cwd=ROOT, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0 and out.stdout.strip() == "ok", out.stderr


def test_kill_process_tree_ends_a_server_and_its_children() -> None:
    """What a closing MCP connection does to a server that did not wind down in time
    (agent_ls/mcp/connection/connection.py); the leader ignores SIGTERM, SIGKILL ends it anyway."""
    from agent_ls.core.process import kill_process_tree

    leader = subprocess.Popen(
        [sys.executable, "-c",
         "import signal, subprocess, sys, time\n"
         "signal.signal(signal.SIGTERM, signal.SIG_IGN)\n"
         "p = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n"
         "print(p.pid, flush=True)\n"
         "time.sleep(60)"],
        start_new_session=True, stdout=subprocess.PIPE, text=True)
    assert leader.stdout is not None
    child = int(leader.stdout.readline())
    kill_process_tree(leader)
    assert leader.wait(10) == -9
    deadline = time.monotonic() + 10
    while psutil.pid_exists(child) and psutil.Process(child).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the server's child survived"
        time.sleep(0.05)
    kill_process_tree(leader)  # already gone: nothing happens
