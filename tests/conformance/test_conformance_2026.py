"""The official MCP conformance suite of the 2026-07-28 era (client mode), as test_conformance.py
runs the 2025 one: every scenario of the pinned 0.2.0-alpha.12 suite through
scripts/conformance_client.py, with tests/conformance/baseline-2026.yml applied."""

from __future__ import annotations

import re
import subprocess

import pytest

from tests.conformance.test_conformance import CLIENT, RUN, expected_failures
from tests.tooling import REPO_ROOT, require_node22, require_npm

OUT_2026 = REPO_ROOT / "artifacts" / "conformance-2026"
"""Its results: not the 2025 suite's folder, since the two files run at once on two workers."""


@pytest.mark.conformance
@pytest.mark.timeout(900)
def test_whole_client_suite_2026() -> None:
    """The 0.2.0-alpha.12 suite (48 scenarios of the MCP 2026-07-28 era) with baseline-2026.yml:
    every scenario not listed there passes (47 of 48)."""
    require_node22()
    require_npm("conformance")
    proc = subprocess.run([*RUN, "--v2", "--suite", "all", "-o", str(OUT_2026), "--", *CLIENT], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=880)
    out = proc.stdout + proc.stderr
    passed = re.findall(r"^PASS\s+(\S+)", out, flags=re.M)
    xfail = re.findall(r"^XFAIL\s+(\S+)", out, flags=re.M)
    failed = re.findall(r"^(?:FAIL|STALE)\s+(\S+)", out, flags=re.M)
    assert not failed, out
    assert sorted(xfail) == sorted(expected_failures("baseline-2026.yml")), out
    assert len(passed) + len(xfail) == 48, out
    for s in ("request-metadata", "http-standard-headers", "http-custom-headers", "http-invalid-tool-headers",
              "json-schema-2020-12-preservation", "json-schema-ref-no-deref", "auth/iss-supported",
              "auth/offline-access-scope", "auth/authorization-server-migration",
              "auth/enterprise-managed-authorization", "auth/dpop", "auth/dpop-nonce", "auth/wif-jwt-bearer",
              "sep-2640-client-no-prefetch", "sep-2640-client-verify-digest", "sep-2640-client-verify-size",
              "sep-2640-client-verify-frontmatter"):
        assert s in passed, out
