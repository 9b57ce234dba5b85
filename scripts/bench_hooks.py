"""What a PreToolUse hook costs a tool call: ``true`` as the hook, against no hooks, same run.

    .venv/bin/python scripts/bench_hooks.py [--calls 200]

Each call goes through the one tool runner (:class:`agent_ls.agent.tool_runner.ToolRunner`) with
the permission gate, the way a session's calls do: ``read_file`` of a small file (a cheap tool,
so the figure is the hook's own cost), and ``bash`` running ``true`` (a process per call, for
scale). Calls with and without the hook alternate, so machine noise hits both alike; a few warm-up
calls are not counted. Prints the median of each and the difference (the hook's cost per call).
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
from agent_ls.agent.hooks import Hooks  # noqa: E402
from agent_ls.agent.permissions import PermissionGate, PermissionRules  # noqa: E402
from agent_ls.agent.tool_runner import ToolCall, ToolRunner  # noqa: E402
from agent_ls.agent.workspace import Workspace  # noqa: E402
from agent_ls.config.hooks import HookSpec  # noqa: E402


async def bench(calls: int) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        ws = Path(tmp)
        (ws / "small.txt").write_text("hello\n" * 10)
        tools = {t.spec.name: t for t in builtin_tools(Workspace([ws]))}
        gate = PermissionGate(PermissionRules(allow=("bash",)), None, [ws])
        plain = ToolRunner(gate, "bench")
        hooked = ToolRunner(gate, "bench", hooks=Hooks([HookSpec("PreToolUse", "true")], ws, "bench"))
        for name, args in (("read_file", {"path": "small.txt"}), ("bash", {"command": "true"})):
            times: dict[str, list[float]] = {"none": [], "hook": []}
            for i in range(calls + 5):
                for label, runner in (("none", plain), ("hook", hooked)) if i % 2 else (("hook", hooked), ("none", plain)):
                    started = time.perf_counter()
                    outcome = await runner.run(ToolCall(f"c{i}", name, args), tools[name])
                    elapsed = (time.perf_counter() - started) * 1e3
                    assert not outcome.result.is_error, outcome.result.content
                    if i >= 5:
                        times[label].append(elapsed)
            none, hook = statistics.median(times["none"]), statistics.median(times["hook"])
            print(f"{name:<10} median of {calls}: no hooks {none:7.2f} ms | PreToolUse `true` {hook:7.2f} ms | "
                  f"hook adds {hook - none:6.2f} ms per call (x{hook / none:.1f})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=200)
    asyncio.run(bench(parser.parse_args().calls))


if __name__ == "__main__":
    main()
