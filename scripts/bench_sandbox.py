"""What the OS sandbox costs and what it saves (issue 47).

    .venv/bin/python scripts/bench_sandbox.py [--runs 50]

1. Time: the ``bash`` tool running ``true``, with the sandbox (the mechanism this machine has,
   network off; and network "ask", which adds the bridge into the namespace; and network off
   with the user's workspace grants read from host-state.json per command) and without, in
   the same run, alternating so machine noise hits each alike. Prints the medians and the
   time the sandbox adds (goal: at most 15 ms with network off). Also each sandboxed command
   joining its conversation's shared network namespace (``nsenter`` into it, no namespace of its
   own: :mod:`agent_ls.core.sandbox.netns`), network off and "ask" (the proxy's listener in the
   namespace instead of a bridge per command), against a namespace per command, in the same
   run; and the time to make a conversation's shared namespace (once per conversation).
2. Questions: a scripted 20-command edit-test-fix session through the permission gate, counting
   the approval questions with the sandbox and ``autoAllow`` against without it (the user
   answers "allow once" each time, as a careful user does).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_ls.agent.builtin_tools.shell import BashTool  # noqa: E402
from agent_ls.agent.jobs import JobTable  # noqa: E402
from agent_ls.agent.permissions import (  # noqa: E402
    ApprovalAnswer,
    ApprovalRequest,
    PermissionGate,
    PermissionRules,
    SandboxState,
)
from agent_ls.agent.workspace import Workspace  # noqa: E402
from agent_ls.config.sandbox import SandboxSettings, set_workspace_grant  # noqa: E402
from agent_ls.core.sandbox import Mechanism, NetworkPolicy, Sandbox, SharedNetwork, detect  # noqa: E402
from agent_ls.core.tools import Capability, ToolSpec  # noqa: E402

SESSION = [
    "ls", "git status", "cat README.md", "python -m pytest -q", "sed -n 1,40p src/app.py",
    "grep -rn parse src", "python -m pytest -q tests/test_parse.py", "ruff check src", "git diff",
    "python -m pytest -q tests/test_parse.py -x", "mypy src", "npm test", "python -c 'import app'",
    "make", "git add -A", "python -m pytest -q", "ruff format src", "git diff --stat",
    "python scripts/gen.py > out.txt", "git commit -m 'fix parse'",
]


async def _time(tool: BashTool) -> float:
    t0 = time.perf_counter()
    result = await tool.call({"command": "true"})
    elapsed = time.perf_counter() - t0
    if result.is_error:
        raise SystemExit(f"bash true failed: {result.content}")
    return elapsed


async def bench_time(runs: int) -> None:
    avail = detect()
    print(f"mechanism: {avail.sentence()}")
    with tempfile.TemporaryDirectory() as d:
        ws = Workspace([d])
        plain = BashTool(ws)
        settings = SandboxSettings(network=NetworkPolicy.off())
        off = BashTool(ws, sandbox=Sandbox(settings.policy([d])))
        ask = BashTool(ws, sandbox=Sandbox(SandboxSettings(network=NetworkPolicy(ask=True)).policy([d])))
        # the user's workspace grants (host-state.json) read for every command, one grant kept
        os.environ["AGENT_LS_DATA_DIR"] = os.path.join(d, ".data")
        set_workspace_grant(Path(d), "writes", tempfile.gettempdir(), True)
        granted = BashTool(ws, sandbox=settings.sandbox([d]))
        shared_off = BashTool(ws, sandbox=Sandbox(settings.policy([d])), jobs=JobTable())
        shared_ask = BashTool(ws, sandbox=Sandbox(SandboxSettings(network=NetworkPolicy(ask=True)).policy([d])),
                              jobs=JobTable())
        tools = {"no sandbox": plain, "sandbox, network off": off, "sandbox, network ask (bridge)": ask,
                 "sandbox, network off, grants read": granted,
                 "shared namespace, network off": shared_off, "shared namespace, network ask": shared_ask}
        if avail.mechanism is not Mechanism.BUBBLEWRAP:  # (only bubblewrap shares a namespace)
            del tools["shared namespace, network off"], tools["shared namespace, network ask"]
        if not avail.available:
            tools = {"no sandbox": plain}
        times: dict[str, list[float]] = {k: [] for k in tools}
        for tool in tools.values():  # warm up
            await _time(tool)
        for _ in range(runs):
            for name, tool in tools.items():
                times[name].append(await _time(tool))
        base = statistics.median(times["no sandbox"])
        print(f"bash `true`, median of {runs}:")
        for name, ts in times.items():
            med = statistics.median(ts)
            extra = "" if name == "no sandbox" else f"  (+{(med - base) * 1000:.1f} ms, x{med / base:.2f})"
            print(f"  {name:32s} {med * 1000:7.1f} ms{extra}")
        if avail.mechanism is Mechanism.BUBBLEWRAP:
            for per_command, shared in (("sandbox, network off", "shared namespace, network off"),
                                        ("sandbox, network ask (bridge)", "shared namespace, network ask")):
                a, b = statistics.median(times[per_command]), statistics.median(times[shared])
                print(f"  joining the shared namespace against a namespace per command ({shared[18:]}): "
                      f"{(b - a) * 1000:+.1f} ms per command")
            print(f"making a conversation's shared namespace (once), median of {min(runs, 20)}: "
                  f"{statistics.median(await _make_namespace(min(runs, 20))) * 1000:.1f} ms")
        for tool in (shared_off, shared_ask):
            assert tool.jobs is not None
            await tool.jobs.close()
        if ask.sandbox is not None:
            await ask.sandbox.aclose()


async def _make_namespace(runs: int) -> list[float]:
    out = []
    for _ in range(runs):
        network = SharedNetwork()
        t0 = time.perf_counter()
        joined = await network.join(shutil.which("bwrap") or "bwrap", None, 0)
        out.append(time.perf_counter() - t0)
        joined.release()
        network.close()
    return out


async def bench_questions() -> None:
    spec = ToolSpec(name="bash", description="", input_schema={}, capability=Capability.WRITE)
    with tempfile.TemporaryDirectory() as d:
        for label, state in (("without the sandbox", SandboxState()),
                             ("sandbox + autoAllow", SandboxState(True, True, True, True, "bubblewrap"))):
            asked: list[str] = []

            async def handler(req: ApprovalRequest, asked: list[str] = asked) -> ApprovalAnswer:
                asked.append(req.arguments["command"])
                return ApprovalAnswer.ALLOW_ONCE

            gate = PermissionGate(PermissionRules(), handler, [Path(d)], sandbox=state)
            for command in SESSION:
                await gate.check(spec, {"command": command})
            print(f"  {label:22s} {len(asked):2d} questions in {len(SESSION)} commands")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    asyncio.run(bench_time(args.runs))
    print("approval questions in a scripted edit-test-fix session (each answered 'allow once'):")
    asyncio.run(bench_questions())


if __name__ == "__main__":
    main()
