"""The official MCP conformance suite (client mode) driving agent-ls's host code.

Every client scenario of the pinned suite runs (``--suite all``: the 4 core scenarios and the
22 auth ones) through scripts/conformance_client.py, with tests/conformance/baseline.yml
applied: a scenario listed there must fail (and a listed one that passes fails the run as a
stale entry), every other one must pass. ``sse-retry`` runs alone after the others (the
script does that), since under parallel load its reconnect can land late and warn. The suite of
the 2026-07-28 era is in test_conformance_2026.py (its own file: pytest-xdist gives each file to
one worker, and the two suites take about a minute each).
"""

from __future__ import annotations

import re
import subprocess
import sys

import pytest

from tests.tooling import REPO_ROOT, require_node22, require_npm

CLIENT = [sys.executable, str(REPO_ROOT / "scripts" / "conformance_client.py")]
RUN = ["bash", str(REPO_ROOT / "scripts" / "run_conformance.sh")]
CORE = ["initialize", "tools_call", "elicitation-sep1034-client-defaults", "sse-retry"]
MIN_PASSING = 24


def expected_failures(name: str = "baseline.yml") -> list[str]:
    text = (REPO_ROOT / "tests" / "conformance" / name).read_text()
    return re.findall(r"^\s*-\s*(\S+)\s*$", text, flags=re.M)


@pytest.mark.conformance
@pytest.mark.timeout(900)
def test_whole_client_suite() -> None:
    require_node22()
    require_npm("conformance")
    proc = subprocess.run([*RUN, "--suite", "all", "--", *CLIENT], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=880)
    out = proc.stdout + proc.stderr
    passed = re.findall(r"^PASS\s+(\S+)", out, flags=re.M)
    xfail = re.findall(r"^XFAIL\s+(\S+)", out, flags=re.M)
    failed = re.findall(r"^(?:FAIL|STALE)\s+(\S+)", out, flags=re.M)
    if failed == ["sse-retry"]:
        # Timing-sensitive (a reconnect later than 700 ms is a WARNING): once more, alone.
        again = subprocess.run([*RUN, "--scenario", "sse-retry", "--", *CLIENT], cwd=REPO_ROOT,
                               capture_output=True, text=True, timeout=120)
        out += "\n--- sse-retry again ---\n" + again.stdout + again.stderr
        if again.returncode == 0:
            failed, passed = [], [*passed, "sse-retry"]
    assert not failed, out
    assert sorted(xfail) == sorted(expected_failures()), out
    assert len(passed) + len(xfail) == 26, out
    assert len(passed) >= MIN_PASSING, out
    for s in CORE:
        assert s in passed, out
    assert sum(1 for s in passed if s.startswith("auth/")) >= MIN_PASSING - len(CORE), out
