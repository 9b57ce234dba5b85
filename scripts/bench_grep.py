"""grep with RE2 against Python's ``re`` (the engine it replaced), in the same run.

    .venv/bin/python scripts/bench_grep.py [--repeat 5]

Corpus: this repository's ``agent_ls`` and ``tests`` folders (copied into a temporary
workspace). For each pattern, the ``grep`` tool (RE2, through the tool's real code path) and a
baseline that walks the same files and matches each line with ``re`` (what ``grep`` did before)
are timed; printed are the medians and the ratio RE2 / re. Then the catastrophic pattern
``(a+)+$`` on one line of n a's followed by ``!``: ``re`` doubles with every a, RE2 stays flat.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_ls.agent.builtin_tools import builtin_tools  # noqa: E402
from agent_ls.agent.builtin_tools.search import GrepPattern, walk_files  # noqa: E402
from agent_ls.agent.workspace import Workspace  # noqa: E402

PATTERNS = ["import", r"def \w+\(", r"^class [A-Z]\w*", "(?i)timeout", r"[0-9]{4,}", "zzz_no_match_zzz"]


def baseline(ws: Workspace, root: Path, pattern: str) -> int:
    import threading

    regex = re.compile(pattern)
    hits = 0
    for _file, _rel, real in walk_files(ws, root, threading.Event()):
        data = real.read_bytes()
        if b"\0" in data[:8000]:
            continue
        for line in data.decode("utf-8", errors="replace").split("\n"):
            if regex.search(line.rstrip("\r")):
                hits += 1
    return hits


def median_time(fn, repeat: int) -> float:  # type: ignore[no-untyped-def]
    times = []
    for _ in range(repeat):
        t = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t)
    return statistics.median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp) / "ws"
        for part in ("agent_ls", "tests"):
            shutil.copytree(REPO / part, root / part, ignore=shutil.ignore_patterns("__pycache__", "node_modules"))
        ws = Workspace([root])
        grep = {t.spec.name: t for t in builtin_tools(ws, output_cap_chars=10_000_000)}["grep"]
        files = sum(1 for _ in root.rglob("*") if _.is_file())
        size = sum(p.stat().st_size for p in root.rglob("*") if p.is_file())
        print(f"corpus: {files} files, {size / 1e6:.1f} MB; median of {args.repeat} runs")
        print(f"{'pattern':<22} {'re (baseline)':>14} {'grep (RE2)':>12} {'ratio':>7}")
        for pattern in PATTERNS:
            base = median_time(lambda p=pattern: baseline(ws, root, p), args.repeat)
            ours = median_time(lambda p=pattern: asyncio.run(grep.call({"pattern": p})), args.repeat)
            print(f"{pattern:<22} {base * 1000:>11.1f} ms {ours * 1000:>9.1f} ms {ours / base:>6.2f}x")
        print("\n(a+)+$ on 'a' * n + '!':")
        print(f"{'n':>6} {'re':>12} {'RE2':>12}")
        fast = GrepPattern("(a+)+$")
        for n in (16, 18, 20, 22, 10_000):
            line = "a" * n + "!"
            r2 = median_time(lambda line=line: list(fast.matching_lines(line, lambda: False)), 3)
            slow = "(skipped)"
            if n <= 22:
                slow = f"{median_time(lambda line=line: re.search('(a+)+$', line), 1) * 1000:9.1f} ms"
            print(f"{n:>6} {slow:>12} {r2 * 1000:>9.3f} ms")


if __name__ == "__main__":
    main()
