"""Where the test suite's time goes: the test files and folders that take longest, from the JUnit
XML that ``scripts/test.sh`` writes (artifacts/junit-suite.xml).

    python scripts/suite_times.py [artifacts/junit-suite.xml] [--top 25]

The suite runs one file per xdist worker at a time (``--dist loadfile``), so a file's total is
what one worker spends on it: the longest file bounds how short the parallel run can be.
"""

from __future__ import annotations

import argparse
import collections
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def file_of(classname: str) -> str:
    """``tests.lsp.test_x.TestY`` or ``tests.lsp.test_x`` -> ``tests/lsp/test_x.py``."""
    parts = classname.split(".")
    for n in range(len(parts), 0, -1):
        candidate = ROOT.joinpath(*parts[:n]).with_suffix(".py")
        if candidate.exists():
            return str(candidate.relative_to(ROOT))
    return classname


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("xml", nargs="?", default=str(ROOT / "artifacts" / "junit-suite.xml"))
    parser.add_argument("--top", type=int, default=25)
    args = parser.parse_args()
    path = Path(args.xml)
    if not path.exists():
        print(f"no {path}: run bash scripts/test.sh first", file=sys.stderr)
        return 1
    files: dict[str, float] = collections.defaultdict(float)
    counts: dict[str, int] = collections.Counter()
    for case in ET.parse(path).iter("testcase"):
        f = file_of(case.get("classname", ""))
        files[f] += float(case.get("time") or 0)
        counts[f] += 1
    total = sum(files.values())
    folders: dict[str, float] = collections.defaultdict(float)
    for f, t in files.items():
        folders[str(Path(f).parent)] += t
    print(f"{sum(counts.values())} tests, {total:.0f} s of test time in {len(files)} files")
    print(f"\nfolders ({len(folders)}):")
    for folder, t in sorted(folders.items(), key=lambda kv: -kv[1]):
        print(f"  {t:8.1f} s  {100 * t / total:5.1f} %  {folder}")
    print(f"\nthe {args.top} longest files:")
    for f, t in sorted(files.items(), key=lambda kv: -kv[1])[:args.top]:
        print(f"  {t:8.1f} s  {counts[f]:4d} tests  {f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
