"""The extension's vitest unit tests (editor-extension/test/*.test.ts, jsdom): the webview's
rendering and message handling, markdown sanitizing, schema -> form, the event reducer, slash
commands, the server command resolution and formatting helpers (see test_unit.py for the
typecheck and ESLint)."""

from __future__ import annotations

import pytest

from tests.extension.test_unit import _require_node_modules, _run


# 450 s: test/provision.test.ts creates real virtual environments and runs pip (~80 s under load)
@pytest.mark.timeout(450)
def test_vitest_unit_tests() -> None:
    bin_dir = _require_node_modules()
    r = _run([str(bin_dir / "vitest"), "run", "--reporter=verbose"], timeout=430)
    out = f"{r.stdout}\n{r.stderr}"
    assert r.returncode == 0, f"vitest failed:\n{out}"
    assert " passed" in out and " failed" not in out.split("Test Files")[-1], out
