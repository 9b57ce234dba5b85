"""Tools and process helpers for the end-to-end test of the extension in code-server.

Everything here is installed by scripts/setup.sh: Chromium by its step 4 (apt), the .vsix by
step 5 (scripts/setup_extension.sh -> scripts/build_extension.sh), Node 24, code-server and
playwright-core by step 6 (scripts/setup_e2e.sh). A missing piece FAILS the test (it is never
skipped), naming the step that installs it.
"""

from __future__ import annotations

import os
import platform
import re
import signal
import subprocess
import time
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.tooling import REPO_ROOT, TOOLS

E2E_SRC = REPO_ROOT / "editor-extension" / "e2e"
E2E_NODE_MODULES = TOOLS / "e2e" / "node_modules"
VSIX = REPO_ROOT / "editor-extension" / "agent-ls.vsix"
CHROMIUM = Path("/usr/bin/chromium")
ARTIFACTS = REPO_ROOT / "artifacts" / "e2e"
EXTENSION_ID = "agent-ls.agent-ls"


def node24_bin() -> Path:
    arch = "arm64" if platform.machine().lower() in ("aarch64", "arm64") else "x64"
    return TOOLS / "node24" / "node_modules" / f"node-linux-{arch}" / "bin" / "node"


@dataclass(frozen=True)
class E2ETools:
    node: Path
    code_server: Path
    tsc: Path
    chromium: Path
    vsix: Path

    def env_path(self, base: str | None = None) -> str:
        """PATH with Node 24 first (code-server's bin script runs `node`)."""
        return os.pathsep.join([str(self.node.parent), base if base is not None else os.environ.get("PATH", "")])


def _exe(p: Path) -> bool:
    return p.is_file() and os.access(p, os.X_OK)


def require_e2e_tools() -> E2ETools:
    """Every tool the e2e test needs, or pytest.fail naming what is missing and the setup step."""
    missing: list[str] = []
    node = node24_bin()
    if not _exe(node):
        missing.append(f"Node 24 ({node}): scripts/setup.sh step 6 (bash scripts/setup_e2e.sh)")
    code_server = E2E_NODE_MODULES / ".bin" / "code-server"
    if not _exe(code_server):
        missing.append(f"code-server ({code_server}): scripts/setup.sh step 6 (bash scripts/setup_e2e.sh)")
    if not (E2E_NODE_MODULES / "playwright-core" / "package.json").is_file():
        missing.append(
            f"playwright-core ({E2E_NODE_MODULES / 'playwright-core'}): scripts/setup.sh step 6 "
            "(bash scripts/setup_e2e.sh)"
        )
    tsc = E2E_NODE_MODULES / ".bin" / "tsc"
    if not _exe(tsc):
        missing.append(f"typescript ({tsc}): scripts/setup.sh step 6 (bash scripts/setup_e2e.sh)")
    if not _exe(CHROMIUM):
        missing.append(f"Chromium ({CHROMIUM}): scripts/setup.sh step 4 (as root: apt-get install chromium)")
    if not VSIX.is_file():
        missing.append(
            f"the extension package ({VSIX}): scripts/setup.sh step 5 (bash scripts/build_extension.sh)"
        )
    if missing:
        pytest.fail("the end-to-end test cannot run; missing:\n  - " + "\n  - ".join(missing), pytrace=False)
    return E2ETools(node, code_server, tsc, CHROMIUM, VSIX)


def vsix_staleness() -> str | None:
    """A note when extension sources are newer than the built .vsix (a stale build is tested)."""
    if not VSIX.is_file():
        return None
    built = VSIX.stat().st_mtime
    ext = REPO_ROOT / "editor-extension"
    newer = []
    for sub in ("src", "webview", "shared", "media", "package.json"):
        p = ext / sub
        files = [p] if p.is_file() else (list(p.rglob("*")) if p.is_dir() else [])
        newer += [f for f in files if f.is_file() and f.stat().st_mtime > built]
    if not newer:
        return None
    names = ", ".join(str(f.relative_to(ext)) for f in newer[:5])
    return f"note: {len(newer)} extension source file(s) are newer than the .vsix ({names}); rebuild with bash scripts/build_extension.sh"


# --------------------------------------------------------------------------- processes


def _children_map() -> dict[int, list[int]]:
    children: dict[int, list[int]] = defaultdict(list)
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                stat = f.read()
        except OSError:
            continue
        fields = stat.rsplit(")", 1)[1].split()
        children[int(fields[1])].append(int(entry))
    return children


def descendants(pid: int) -> list[int]:
    """Every live descendant of `pid` (whatever session or process group it moved to)."""
    children = _children_map()
    out: list[int] = []
    stack = [pid]
    while stack:
        for c in children.get(stack.pop(), []):
            out.append(c)
            stack.append(c)
    return out


def alive(pid: int) -> bool:
    """Whether `pid` exists and is not a zombie."""
    try:
        with open(f"/proc/{pid}/stat") as f:
            state = f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state != "Z"


def cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return "?"


def kill_tree(proc: subprocess.Popen[bytes], grace: float = 5.0) -> list[str]:
    """End `proc` (started with start_new_session=True) and everything it started.

    The descendants are listed first (so processes that left the group, e.g. MCP servers the
    language server started in their own session, are still found), then SIGTERM goes to the
    group and to each of them, SIGKILL after `grace` seconds. Returns a description of every
    process that survived even that (it should be empty).
    """
    pids = descendants(proc.pid) if proc.poll() is None else []
    targets = [proc.pid, *pids]

    def signal_all(sig: signal.Signals) -> None:
        try:
            os.killpg(proc.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass
        for p in pids:
            try:
                os.kill(p, sig)
            except (ProcessLookupError, PermissionError):
                pass

    if proc.poll() is None or any(alive(p) for p in pids):
        signal_all(signal.SIGTERM)
        deadline = time.monotonic() + grace
        while time.monotonic() < deadline and (proc.poll() is None or any(alive(p) for p in pids)):
            time.sleep(0.05)
        # descendants that appeared during shutdown
        pids += [p for p in descendants(proc.pid) if p not in pids] if proc.poll() is None else []
        signal_all(signal.SIGKILL)
    try:
        proc.wait(5)
    except subprocess.TimeoutExpired:
        pass
    time.sleep(0.1)
    return [f"{p} {cmdline(p)}" for p in targets if alive(p)]


def sweep(marker: str) -> list[str]:
    """SIGKILL every process (but this one) whose command line or environment mentions `marker`.

    Catches what left the process tree before it was listed (daemonizing helpers such as
    Chromium's crash handler); `marker` is a run's private temporary folder. Returns what was
    found alive.
    """
    found = []
    needle = marker.encode()
    for entry in os.listdir("/proc"):
        if not entry.isdigit() or int(entry) == os.getpid():
            continue
        pid = int(entry)
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                cmd = f.read()
            with open(f"/proc/{pid}/environ", "rb") as f:
                env = f.read()
        except OSError:
            continue
        if (needle in cmd or needle in env) and alive(pid):
            found.append(f"{pid} {cmdline(pid)[:200]}")
            try:
                os.kill(pid, signal.SIGKILL)
            except (ProcessLookupError, PermissionError):
                pass
    return found


LISTENING = re.compile(r"HTTP server listening on (http://127\.0\.0\.1:\d+)/?")


def tail(path: Path, n: int = 30) -> str:
    try:
        lines = path.read_text(errors="replace").splitlines()
    except OSError:
        return f"({path} does not exist)"
    return "\n".join(lines[-n:]) if lines else f"({path} is empty)"
