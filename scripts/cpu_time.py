"""The CPU time of a command and of every process it starts, those that outlive their parent
included (the model host a language server starts: issue 46), which ``time`` does not count.

    .venv/bin/python scripts/cpu_time.py .venv/bin/python -m pytest -q -p no:cacheprovider tests/lsp/test_mcp.py

Linux only: this process becomes a child subreaper (``PR_SET_CHILD_SUBREAPER``), so orphaned
descendants are reparented to it and reaped here, and ``RUSAGE_CHILDREN`` holds all their CPU.
It waits up to two minutes for them after the command ends (the suite's ``model_hosts`` fixture
ends the hosts at the end of the session). Prints wall, user and system seconds to stderr.
"""

from __future__ import annotations

import ctypes
import os
import resource
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def main(argv: list[str]) -> int:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    t0 = time.monotonic()
    code = subprocess.call(argv)
    wall = time.monotonic() - t0
    deadline = time.monotonic() + 120
    while time.monotonic() < deadline:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            time.sleep(0.2)
    ru = resource.getrusage(resource.RUSAGE_CHILDREN)
    print(f"exit {code}  wall {wall:.1f} s  user {ru.ru_utime:.1f} s  sys {ru.ru_stime:.1f} s  "
          f"user+sys {ru.ru_utime + ru.ru_stime:.1f} s", file=sys.stderr)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
