"""What a checkpoint costs a prompt on a 10,000-file repository (issue 40).

    .venv/bin/python scripts/bench_checkpoints.py [--files 10000] [--runs 20]

A git repository of ``--files`` source files (1-3 KB each, in folders of 50), plus an ignored
``node_modules`` and build folder, is made in a temporary folder. Each simulated prompt runs a
"turn" (nothing, or rewriting 10 files) either bare (the baseline) or between
``Checkpoints.begin`` and ``Checkpoints.finish``; the two alternate in the same run and the
median of ``--runs`` of each is printed, with the difference: the time a checkpoint adds to a
prompt. Also printed: the first checkpoint of a workspace (it copies every file once), the
first in a new process (objects already kept, every file read again), the disk a checkpoint
adds for a 10-file turn (objects, and the metadata database), and a rewind of that turn.
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_ls.agent.checkpoints import Checkpoints  # noqa: E402


def make_repo(root: Path, files: int) -> list[Path]:
    rng = random.Random(40)
    paths = []
    for i in range(files):
        p = root / "src" / f"pkg{i // 500}" / f"mod{(i // 50) % 10}" / f"file{i}.py"
        p.parent.mkdir(parents=True, exist_ok=True)
        lines = [f"def f{i}_{j}(x):\n    return x * {rng.randint(0, 10**6)}\n" for j in range(rng.randint(25, 75))]
        p.write_text("".join(lines))
        paths.append(p)
    (root / ".gitignore").write_text("build/\n*.pyc\n")
    for i in range(500):
        d = root / "node_modules" / f"dep{i // 50}"
        d.mkdir(parents=True, exist_ok=True)
        (d / f"index{i}.js").write_text("module.exports = {};\n" * 20)
    (root / "build").mkdir()
    (root / "build" / "out.bin").write_bytes(os.urandom(1 << 20))
    git = shutil.which("git")
    if git:
        subprocess.run([git, "init", "-q"], cwd=root, check=True)
        subprocess.run([git, "add", "-A"], cwd=root, check=True)
        subprocess.run([git, "-c", "user.name=b", "-c", "user.email=b@example.com", "commit", "-qm", "init"],
                       cwd=root, check=True)
    return paths


def ms(seconds: float) -> str:
    return f"{seconds * 1000:.1f} ms"


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--files", type=int, default=10_000)
    ap.add_argument("--runs", type=int, default=20)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        ws = Path(d) / "repo"
        ws.mkdir()
        data = Path(d) / "data"
        paths = make_repo(ws, args.files)
        time.sleep(0.2)  # older than the racy window: the stat cache may trust every file
        print(f"repository: {args.files} source files, 500 in node_modules, 1 MiB in build/ (ignored), "
              f"git: {'yes' if shutil.which('git') else 'no'}")

        cps = Checkpoints.for_workspace(data, [ws])
        t = time.perf_counter()
        first = cps.begin("bench", 0, "first")
        cold = time.perf_counter() - t
        cps.finish(first)
        print(f"first checkpoint of the workspace (copies every kept file): {ms(cold)}, "
              f"{first.bytes_added / 2**20:.1f} MiB kept")
        cps.close()
        cps = Checkpoints.for_workspace(data, [ws])
        t = time.perf_counter()
        cps.finish(cps.begin("bench", 1, "new process"))
        print(f"first checkpoint in a new process (the file cache kept, every file lstat-ed, none read): "
              f"{ms(time.perf_counter() - t)}")

        rng = random.Random(1)
        counter = [0]

        def nothing() -> None:
            pass

        def ten_files() -> None:
            counter[0] += 1
            for p in rng.sample(paths, 10):
                with p.open("a") as f:
                    f.write(f"# change {counter[0]}\n")

        prompt = [2]
        added_bytes: list[int] = []

        def with_checkpoint(turn: Callable[[], None]) -> float:
            t0 = time.perf_counter()
            cp = cps.begin("bench", prompt[0], "prompt")
            turn()
            cp = cps.finish(cp)
            prompt[0] += 1
            if turn is ten_files:
                added_bytes.append(cp.bytes_added)
            return time.perf_counter() - t0

        def bare(turn: Callable[[], None]) -> float:
            t0 = time.perf_counter()
            turn()
            return time.perf_counter() - t0

        def measure(label: str) -> None:
            for name, turn in (("nothing changed", nothing), ("10 files changed", ten_files)):
                base: list[float] = []
                withc: list[float] = []
                time.sleep(0.2)
                for _ in range(args.runs):
                    base.append(bare(turn))
                    withc.append(with_checkpoint(turn))
                b, w = statistics.median(base), statistics.median(withc)
                print(f"{label}, {name}: prompt without checkpoint {ms(b)}, with {ms(w)} "
                      f"(median of {args.runs}): a checkpoint adds {ms(w - b)}")

        watching = cps.scanner.watch.active
        measure("kernel watch " + ("on" if watching else "unavailable"))

        db = data / "checkpoints" / "checkpoints.sqlite3"

        def db_bytes() -> int:
            with sqlite3.connect(db) as conn:
                conn.execute("PRAGMA wal_checkpoint(TRUNCATE)")
                pages, size = conn.execute("PRAGMA page_count").fetchone()[0], conn.execute(
                    "PRAGMA page_size").fetchone()[0]
                free = conn.execute("PRAGMA freelist_count").fetchone()[0]
            return int((pages - free) * size)

        db_before = db_bytes()
        start = prompt[0]
        added_bytes.clear()
        for _ in range(args.runs):
            with_checkpoint(ten_files)
        db_after = db_bytes()
        print(f"disk per checkpoint (10 files changed): {statistics.median(added_bytes) / 1024:.1f} KiB of objects "
              f"(median), {(db_after - db_before) / (prompt[0] - start) / 1024:.1f} KiB of metadata (mean of "
              f"{prompt[0] - start})")

        cp = cps.begin("bench", prompt[0], "to rewind")
        ten_files()
        cps.finish(cp)
        t = time.perf_counter()
        plan = cps.plan_rewind(cp.id)
        planned = time.perf_counter() - t
        t = time.perf_counter()
        result = cps.rewind(plan)
        print(f"rewind of a 10-file turn: plan {ms(planned)}, restore {ms(time.perf_counter() - t)} "
              f"({len(result.changed)} files)")
        if watching:
            cps.scanner.watch.close()  # as on a platform without inotify, or past the watch limit
            measure("no kernel watch (every folder walked)")
        cps.close()


if __name__ == "__main__":
    main()
