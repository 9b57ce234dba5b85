"""Write pytest's cache of assert-rewritten modules once, before the suite starts its workers.

    python scripts/pytest_rewrite_cache.py

pytest rewrites the ``assert`` statements of every test module, conftest and pytest plugin it
imports, and keeps the result in ``__pycache__/<name>.cpython-3XX-pytest-<version>.pyc``. With
``PYTHONDONTWRITEBYTECODE`` set (as on these machines) it never writes that cache, but still reads
it: each of the suite's xdist workers then rewrote about 320 modules at collection, ~8 s of CPU
each, half of a worker's collection. This script writes the cache as pytest would (its own
functions; hash-checked pycs, so a changed source is simply rewritten again by pytest): the
files pytest would rewrite are the test files and conftests under tests/ (pytest's default
``python_files``) and the Python files of the installed distributions that provide a pytest plugin
(pytest marks them for rewriting: anyio, hypothesis, pytest-asyncio, ...).

It changes nothing pytest checks: with another pytest (its internals moved) it prints a line
and does nothing, and pytest rewrites as before. Run by scripts/test.sh.
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
import tomllib
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


class _Trace:
    """The ``state`` pytest's ``_write_pyc`` takes, for its trace on a failed write."""

    def trace(self, message: str) -> None:
        pass


def test_files() -> list[Path]:
    return sorted(p for p in (ROOT / "tests").rglob("*.py")
                  if p.name == "conftest.py" or p.name.startswith("test_") or p.name.endswith("_test.py"))


def plugin_files() -> list[Path]:
    """The Python files of the distributions with a ``pytest11`` entry point (what pytest's
    ``Config._mark_plugins_for_rewrite`` marks; over-approximated to all their files)."""
    out: list[Path] = []
    for dist in importlib.metadata.distributions():
        if not any(ep.group == "pytest11" for ep in dist.entry_points):
            continue
        for file in dist.files or []:
            if file.suffix == ".py":
                path = Path(str(dist.locate_file(file)))
                if path.is_file():
                    out.append(path)
    return out


def rewrite(paths: list[Path]) -> int:
    from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, _rewrite_test, _write_pyc, get_cache_dir

    written = 0
    for fn in paths:
        cache_dir = get_cache_dir(fn)
        pyc = cache_dir / (fn.name[:-3] + PYC_TAIL)
        if _read_pyc(fn, pyc) is not None:
            continue  # current already
        try:
            cache_dir.mkdir(exist_ok=True)
            key, co = _rewrite_test(fn, None)  # type: ignore[arg-type]  (None: no assertion pass hook)
        except (OSError, SyntaxError):
            continue  # pytest reports it when it imports the file
        if _write_pyc(_Trace(), co, key, pyc):  # type: ignore[arg-type]  (the key: what _write_pyc takes)
            written += 1
    return written


def main() -> int:
    try:
        from _pytest.assertion.rewrite import PYC_TAIL, _read_pyc, _rewrite_test, _write_pyc  # noqa: F401
    except ImportError as e:
        print(f"pytest_rewrite_cache: this pytest has no {e.name or e}; nothing written", file=sys.stderr)
        return 0
    ini = tomllib.loads((ROOT / "pyproject.toml").read_text()).get("tool", {}).get("pytest", {})
    if ini.get("ini_options", {}).get("enable_assertion_pass_hook"):
        print("pytest_rewrite_cache: enable_assertion_pass_hook is set; nothing written", file=sys.stderr)
        return 0
    paths = test_files() + plugin_files()
    jobs = max(1, os.cpu_count() or 1)
    chunks = [paths[i::jobs] for i in range(jobs)]
    with ProcessPoolExecutor(jobs) as pool:
        written = sum(pool.map(rewrite, chunks))
    print(f"pytest_rewrite_cache: {written} of {len(paths)} modules rewritten into the cache", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
