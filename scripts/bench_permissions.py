"""The cost of one approval decision for a shell command, with and without shell parsing.

    .venv/bin/python scripts/bench_permissions.py [--commands 1000] [--rounds 5]

Builds ``--commands`` distinct commands of mixed shapes (simple, pipelines, ``&&``/``||``
lists, ``$(…)`` and backticks, redirections, quoted arguments, heredocs, long ones, ones the
parser cannot account for) and times :meth:`PermissionGate.evaluate` on each, in the same run:

- **parsing**: the gate as shipped (tree-sitter-bash split, every part matched against the
  rules and session grants, protected paths checked); the analysis cache is cleared before
  every call, so each decision parses;
- **baseline**: the decision by tool name and capability alone (``decide``), what the gate did
  before commands were parsed.

Prints the median per decision of each, the 95th percentile with parsing and the difference
(target: median with parsing <= 1 ms).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_ls.agent import permissions as perm  # noqa: E402
from agent_ls.core.tools import Capability, ToolSpec  # noqa: E402

BASH = ToolSpec(name="bash", description="", input_schema={"type": "object"}, capability=Capability.WRITE)
WORDS = ["git", "status", "--short", "npm", "test", "ls", "-la", "src/app.py", "grep", "-rn", "TODO", "cat",
         "README.md", "python", "-m", "pytest", "make", "build", "echo", "hello world", "docker", "ps"]


def commands(n: int, rng: random.Random) -> list[str]:
    def simple() -> str:
        return " ".join(rng.choice(WORDS) if " " not in (w := rng.choice(WORDS)) else repr(w)
                        for _ in range(rng.randint(1, 6)))

    shapes = [
        simple,
        lambda: f"{simple()} | {simple()} | {simple()}",
        lambda: f"{simple()} && {simple()} || {simple()}",
        lambda: f"{simple()}; {simple()}\n{simple()}",
        lambda: f"echo $({simple()}) `{simple()}`",
        lambda: f"{simple()} > out/{rng.randint(0, 999)}.log 2>&1",
        lambda: f"diff <({simple()}) <({simple()})",
        lambda: f"cat <<EOF\n{simple()}\n$({simple()})\nEOF",
        lambda: " && ".join(simple() for _ in range(20)),
        lambda: f"for f in *; do {simple()}; done",
        lambda: f"git log --format='%H %s' -n {rng.randint(1, 50)} -- \"src/{rng.randint(0, 99)}.py\"",
    ]
    out: set[str] = set()
    while len(out) < n:
        out.add(rng.choice(shapes)() + f" # {len(out)}" * rng.randint(0, 1))
    return sorted(out)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commands", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    rng = random.Random(25)
    cmds = commands(args.commands, rng)
    rules = perm.PermissionRules(allow=("bash(git status:*)", "bash(ls:*)", "read_file"),
                                 ask=("bash(git push:*)",), deny=("bash(rm:*)",))
    gate = perm.PermissionGate(rules, None, [REPO])
    gate.session_allowed |= {"bash(npm test:*)", "bash(make build)", "bash(grep:*)"}
    gate.evaluate(BASH, {"command": "warm up"})  # load the grammar once
    with_parse: list[float] = []
    baseline: list[float] = []
    decisions: dict[str, int] = {}
    for _ in range(args.rounds):
        order = list(cmds)
        rng.shuffle(order)
        for c in order:  # interleaved, so machine noise hits both alike
            perm._analyze.cache_clear()
            t0 = time.perf_counter()
            verdict = gate.evaluate(BASH, {"command": c})
            t1 = time.perf_counter()
            perm.decide(rules, BASH)
            t2 = time.perf_counter()
            with_parse.append(t1 - t0)
            baseline.append(t2 - t1)
            decisions[verdict.decision.value] = decisions.get(verdict.decision.value, 0) + 1
    med, base = statistics.median(with_parse), statistics.median(baseline)
    p95 = statistics.quantiles(with_parse, n=20)[-1]
    print(f"{len(cmds)} commands x {args.rounds} rounds; decisions: {decisions}")
    print(f"baseline (name and capability only): median {base * 1e6:8.1f} us")
    print(f"with shell parsing:                   median {med * 1e6:8.1f} us, p95 {p95 * 1e6:8.1f} us")
    print(f"difference: {(med - base) * 1e6:.1f} us per decision; ratio {med / base:.1f}x; "
          f"target median <= 1000 us: {'met' if med <= 1e-3 else 'NOT met'}")


if __name__ == "__main__":
    main()
