"""The cost of one approval decision for a shell command, with and without shell parsing.

    .venv/bin/python scripts/bench_permissions.py [--commands 1000] [--rounds 5] [--baseline /work/main]

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

``--baseline CHECKOUT``: another checkout of agent-ls (e.g. /work/main, before the per-program
option model of issue 38) decides the same commands with its own gate in the same run: each
round runs a worker process per checkout (this one and the baseline, alternating which goes
first), each timing every command with its own code. Prints both medians and the difference
(target: this checkout's median <= 1 ms).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
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
        # what the per-program model reads (issue 38): options, scripts, globs, paths
        lambda: f"git --no-pager log --oneline --stat -n {rng.randint(1, 50)} {rng.choice(['HEAD', '--all'])}",
        lambda: f"git diff --cached -M --stat -- src/{rng.randint(0, 99)}.py && git status -sb",
        lambda: f"git fetch --prune origin && git grep -n -i {rng.choice(WORDS)!r} -- '*.py'",
        lambda: f"sed -n '{rng.randint(1, 99)},$p;s/a/b/g' src/{rng.randint(0, 99)}.py | head",
        lambda: f"awk -F: '$2 > {rng.randint(1, 99)} {{ print $1 }}' data.txt",
        lambda: f"find . -name '*.py' -type f -newer src/{rng.randint(0, 99)}.py",
        lambda: f"cp src/*.py build/{rng.randint(0, 99)}/ && ls ~/projects",
        lambda: f"tar czf out{rng.randint(0, 99)}.tgz src docs",
        lambda: f"npm run build && make -j{rng.randint(1, 8)} test",
    ]
    out: set[str] = set()
    while len(out) < n:
        out.add(rng.choice(shapes)() + f" # {len(out)}" * rng.randint(0, 1))
    return sorted(out)


RULES = dict(allow=("bash(git status:*)", "bash(ls:*)", "read_file"), ask=("bash(git push:*)",),
             deny=("bash(rm:*)",))
GRANTS = ("bash(npm test:*)", "bash(make build)", "bash(grep:*)", "bash(git log:*)", "bash(sed:*)")

WORKER = """
import json, sys, time
from pathlib import Path
from agent_ls.agent import permissions as perm
from agent_ls.core.tools import Capability, ToolSpec
spec = json.load(open(sys.argv[1]))
bash = ToolSpec(name="bash", description="", input_schema={"type": "object"}, capability=Capability.WRITE)
rules = perm.PermissionRules(**{k: tuple(v) for k, v in spec["rules"].items()})
gate = perm.PermissionGate(rules, None, [Path(spec["root"])])
gate.session_allowed |= set(spec["grants"])
gate.evaluate(bash, {"command": "warm up"})
out = []
for c in spec["commands"]:
    perm._analyze.cache_clear()
    t0 = time.perf_counter()
    verdict = gate.evaluate(bash, {"command": c})
    out.append((time.perf_counter() - t0, verdict.decision.value))
print(json.dumps(out))
"""


def worker_times(checkout: Path, commands: list[str]) -> list[tuple[float, str]]:
    """Each command decided once by ``checkout``'s own gate, in a process of its own."""
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as f:
        json.dump({"rules": RULES, "grants": GRANTS, "commands": commands, "root": str(REPO)}, f)
    try:
        env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
        proc = subprocess.run([sys.executable, "-c", WORKER, f.name], cwd=checkout, env=env, capture_output=True,
                              text=True, check=True)
    finally:
        os.unlink(f.name)
    return [(t, d) for t, d in json.loads(proc.stdout)]


def with_baseline(cmds: list[str], rounds: int, baseline: Path, rng: random.Random) -> None:
    mine: list[float] = []
    theirs: list[float] = []
    changed = 0
    for r in range(rounds):
        order = list(cmds)
        rng.shuffle(order)
        pair = [(REPO, mine), (baseline, theirs)]
        for checkout, sink in pair if r % 2 == 0 else reversed(pair):
            times = worker_times(checkout, order)
            sink.extend(t for t, _ in times)
            if checkout == REPO:
                mine_decisions = [d for _, d in times]
            else:
                their_decisions = [d for _, d in times]
        changed += sum(a != b for a, b in zip(mine_decisions, their_decisions, strict=True))
    med, base = statistics.median(mine), statistics.median(theirs)
    p95, bp95 = statistics.quantiles(mine, n=20)[-1], statistics.quantiles(theirs, n=20)[-1]
    print(f"{len(cmds)} commands x {rounds} rounds, each checkout in its own process, alternating")
    print(f"baseline {baseline}: median {base * 1e6:8.1f} us, p95 {bp95 * 1e6:8.1f} us")
    print(f"this checkout {REPO}: median {med * 1e6:8.1f} us, p95 {p95 * 1e6:8.1f} us")
    print(f"difference: {(med - base) * 1e6:+.1f} us per decision; ratio {med / base:.2f}x; decisions that differ: "
          f"{changed / rounds:.0f} of {len(cmds)}; target median <= 1000 us: {'met' if med <= 1e-3 else 'NOT met'}")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--commands", type=int, default=1000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--baseline", type=Path, default=None, help="another agent-ls checkout (e.g. /work/main)")
    args = ap.parse_args()
    rng = random.Random(25)
    cmds = commands(args.commands, rng)
    if args.baseline is not None:
        with_baseline(cmds, args.rounds, args.baseline.resolve(), rng)
        return
    rules = perm.PermissionRules(**{k: tuple(v) for k, v in RULES.items()})
    gate = perm.PermissionGate(rules, None, [REPO])
    gate.session_allowed |= set(GRANTS)
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
