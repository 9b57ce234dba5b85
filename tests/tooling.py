"""Where the tools installed by scripts/setup.sh live, for tests.

    from tests.tooling import require_npm, node22_bin

    def test_everything_server():
        server = require_npm("mcp-server-everything")   # Path, or skip (local) / fail (CI)

Locally a missing tool skips the test; under CI (env CI=true) it FAILS, so CI can never
pass by silently skipping what it was meant to run. The locations match
scripts/tools_env.sh (AGENT_LS_NPM_BIN / AGENT_LS_NODE22 override them).
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
TOOLS = REPO_ROOT / ".tools"

_SETUP_HINT = "run: bash scripts/setup.sh"


def in_ci() -> bool:
    """True when the env says this is CI (CI=true, as .ci/run is started)."""
    return os.environ.get("CI", "").strip().lower() in ("true", "1", "yes")


def npm_bin_dir() -> Path:
    """The .bin folder of the npm tools (AGENT_LS_NPM_BIN, else .tools/npm/node_modules/.bin)."""
    env = os.environ.get("AGENT_LS_NPM_BIN")
    return Path(env) if env else TOOLS / "npm" / "node_modules" / ".bin"


def node22_bin_dir() -> Path:
    """The folder holding the Node 22 binary (AGENT_LS_NODE22, else under .tools/node22)."""
    env = os.environ.get("AGENT_LS_NODE22")
    if env:
        return Path(env)
    arch = "arm64" if platform.machine().lower() in ("aarch64", "arm64") else "x64"
    return TOOLS / "node22" / "node_modules" / f"node-linux-{arch}" / "bin"


def _executable(p: Path) -> Path | None:
    return p if p.is_file() and os.access(p, os.X_OK) else None


def npm_bin(name: str) -> Path | None:
    """The installed npm bin `name` (e.g. "mcp-server-everything", "conformance"), or None.

    These are `#!/usr/bin/env node` scripts: they run on the first `node` on PATH.
    """
    return _executable(npm_bin_dir() / name)


def node22_bin() -> Path | None:
    """The Node 22 `node` binary installed by setup.sh, or None."""
    return _executable(node22_bin_dir() / "node")


def _missing(what: str) -> None:
    msg = f"{what} is not installed ({_SETUP_HINT})"
    if in_ci():
        pytest.fail(f"CI=true and {msg}", pytrace=False)
    pytest.skip(msg)


def require_npm(name: str) -> Path:
    """npm_bin(name), or skip the test (locally) / fail it (CI=true) when missing."""
    path = npm_bin(name)
    if path is None:
        _missing(f"npm tool {name!r} ({npm_bin_dir() / name})")
    assert path is not None
    return path


def require_node22() -> Path:
    """node22_bin(), or skip the test (locally) / fail it (CI=true) when missing."""
    path = node22_bin()
    if path is None:
        _missing(f"Node 22 ({node22_bin_dir() / 'node'})")
    assert path is not None
    return path


def env_with_node22(base: dict[str, str] | None = None) -> dict[str, str]:
    """A copy of `base` (default os.environ) with Node 22's folder first on PATH.

    For starting npm bins (e.g. the conformance CLI, which needs Node 22) as subprocesses.
    """
    env = dict(os.environ if base is None else base)
    env["PATH"] = os.pathsep.join([str(require_node22().parent), env.get("PATH", "")])
    return env


class TrustAll:
    """A trust policy under which every workspace folder is trusted (tests whose subject is not
    workspace trust; tests/unit/test_trust.py and the adversarial tests cover restricted mode)."""

    store = None
    editor_trusted = True

    def explicit(self, folder: Path) -> bool:
        return True

    def evaluate(self, request: object) -> object:
        from agent_ls.config.trust import TrustState, WorkspaceTrustInfo

        return WorkspaceTrustInfo(request, TrustState.TRUSTED)  # type: ignore[arg-type]


TRUST_ALL = TrustAll()
