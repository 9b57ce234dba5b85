"""The official MCP conformance suite (client mode) driving agent-ls's host code."""

from __future__ import annotations

import subprocess
import sys

import pytest

from tests.tooling import REPO_ROOT, require_node22, require_npm

CORE = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]


@pytest.mark.conformance
@pytest.mark.timeout(300)
def test_core_scenarios_pass() -> None:
    require_node22()
    require_npm("conformance")
    cmd = ["bash", str(REPO_ROOT / "scripts" / "run_conformance.sh")]
    for s in CORE:
        cmd += ["--scenario", s]
    cmd += ["--", sys.executable, str(REPO_ROOT / "scripts" / "conformance_client.py")]
    proc = subprocess.run(cmd, cwd=REPO_ROOT, capture_output=True, text=True, timeout=280)
    out = proc.stdout + proc.stderr
    assert proc.returncode == 0, out
    for s in CORE:
        assert f"PASS  {s}" in out, out
