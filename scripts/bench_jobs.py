"""Background shell commands (issue 41): what starting one in the background costs.

    .venv/bin/python scripts/bench_jobs.py [--runs 20] [--no-sandbox]

For the same command (``echo ready; sleep 0.2``), ``--runs`` times each, median in ms:

1. Baseline, in the same run: the foreground ``bash`` call, from the call to its result (the
   turn waits the command's whole 0.2 s).
2. ``bash`` with ``run_in_background``: from the call until its result (the id) is back (the turn
   goes on from here), and from the call until ``shell_output`` first returns ``ready``.

The difference between 2's first output and 1 minus the command's 0.2 s is the price of the
leader process (``agent_ls/core/reaper.py``, a Python started with ``-I -S``) and of polling.
With the OS sandbox (the default), every command runs under bubblewrap, as the agent runs it.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_ls.agent.builtin_tools import builtin_tools  # noqa: E402
from agent_ls.agent.jobs import JobTable  # noqa: E402
from agent_ls.agent.workspace import Workspace  # noqa: E402
from agent_ls.config.sandbox import SandboxSettings  # noqa: E402

COMMAND = "echo ready; sleep 0.2"


async def main(runs: int, sandbox: bool) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        jobs = JobTable(max_jobs=runs + 1)
        box = SandboxSettings() if sandbox else None
        tools = {t.spec.name: t for t in builtin_tools(Workspace([ws]), jobs=jobs, sandbox=box)}
        bash, output = tools["bash"], tools["shell_output"]
        fore: list[float] = []
        started: list[float] = []
        first: list[float] = []
        for i in range(runs):
            t0 = time.perf_counter()
            r = await bash.call({"command": COMMAND})
            fore.append((time.perf_counter() - t0) * 1000)
            assert "ready" in r.content, r.content
            t0 = time.perf_counter()
            r = await bash.call({"command": COMMAND, "run_in_background": True})
            started.append((time.perf_counter() - t0) * 1000)
            job_id = f"bg-{i + 1}"
            assert job_id in r.content, r.content
            while "ready" not in (await output.call({"id": job_id, "since": 0})).content:  # noqa: ASYNC110 - the model polls too
                await asyncio.sleep(0.001)
            first.append((time.perf_counter() - t0) * 1000)
        await jobs.close()
    where = "in the bubblewrap sandbox" if sandbox else "without the OS sandbox"
    print(f"{runs} runs of `{COMMAND}` {where}, median (min-max) ms:")
    for label, xs in (("foreground bash, call to result (baseline)", fore),
                      ("background bash, call to id (the turn goes on)", started),
                      ("background bash, call to first output via shell_output", first)):
        print(f"  {label:<58} {statistics.median(xs):8.1f}  ({min(xs):.1f}-{max(xs):.1f})")
    print(f"  the turn waits {statistics.median(started) / statistics.median(fore):.2f}x the foreground time; "
          f"first output after {statistics.median(first) / statistics.median(fore):.2f}x")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--runs", type=int, default=20)
    ap.add_argument("--no-sandbox", action="store_true")
    a = ap.parse_args()
    asyncio.run(main(a.runs, not a.no_sandbox))
