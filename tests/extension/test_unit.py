"""The extension's own checks: strict TypeScript typecheck and ESLint; the vitest unit tests are in
test_vitest.py (their own file, so another worker of the parallel suite runs them meanwhile).

The unit tests (editor-extension/test/*.test.ts, jsdom) cover the webview's rendering and
message handling, markdown sanitizing, schema -> form, the event reducer, slash commands,
the server command resolution and formatting helpers. ESLint runs typescript-eslint's
strict type-checked rules (editor-extension/eslint.config.mjs). Needs
editor-extension/node_modules (scripts/setup.sh step 5 installs it, devDependencies included).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

from tests.tooling import REPO_ROOT, in_ci

EXT = REPO_ROOT / "editor-extension"


def _require_node_modules() -> Path:
    bin_dir = EXT / "node_modules" / ".bin"
    missing = [b for b in ("tsc", "vitest", "eslint") if not (bin_dir / b).exists()]
    if shutil.which("node") is None or missing:
        msg = (f"editor-extension dependencies are not installed (missing: node or {', '.join(missing)}); "
               "run: bash scripts/setup.sh")
        if in_ci():
            pytest.fail(f"CI=true and {msg}", pytrace=False)
        pytest.skip(msg)
    return bin_dir


def _run(cmd: list[str], timeout: float) -> subprocess.CompletedProcess[str]:
    return subprocess.run(cmd, cwd=EXT, capture_output=True, text=True, timeout=timeout,
                          env={**os.environ, "NO_COLOR": "1", "FORCE_COLOR": "0", "CI": "true"})


def test_typecheck_strict() -> None:
    bin_dir = _require_node_modules()
    r = _run([str(bin_dir / "tsc"), "-p", ".", "--noEmit"], timeout=180)
    assert r.returncode == 0, f"tsc --noEmit failed:\n{r.stdout}\n{r.stderr}"


@pytest.mark.timeout(300)
def test_eslint_strict_type_checked() -> None:
    bin_dir = _require_node_modules()
    r = _run([str(bin_dir / "eslint"), "--max-warnings", "0", "."], timeout=280)
    assert r.returncode == 0, f"eslint failed:\n{r.stdout}\n{r.stderr}"
