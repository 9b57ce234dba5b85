"""The network proxy's socket folders in /tmp do not pile up: a process that ends with
``os._exit`` (as the language server and the ACP agent do) or is killed cannot remove its own,
so the next proxy sweeps the folders of processes that are gone (agent_ls/core/sandbox/proxy.py)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

from agent_ls.core.sandbox import proxy
from agent_ls.core.sandbox.policy import NetworkPolicy

A_PROXY_THAT_EXITS = """
import asyncio, os, sys
from agent_ls.core.sandbox.proxy import NetworkProxy
from agent_ls.core.sandbox.policy import NetworkPolicy

async def main():
    p = NetworkProxy(NetworkPolicy())
    print(await p.start(), flush=True)
    os._exit(0)  # the way the language server ends: no finalizer runs

asyncio.run(main())
"""


def _leave_a_folder() -> Path:
    out = subprocess.run([sys.executable, "-c", A_PROXY_THAT_EXITS], capture_output=True, text=True, timeout=60,
                         check=True).stdout.strip()
    return Path(out).parent


async def test_a_proxy_folder_left_by_a_process_that_is_gone_is_swept_by_the_next_proxy() -> None:
    left = _leave_a_folder()
    assert left.is_dir() and left.name.startswith("agent-ls-proxy-")  # what os._exit leaves behind
    mine = None
    try:
        mine = proxy.NetworkProxy(NetworkPolicy())
        proxy._swept.discard(str(left.parent))  # (this test process may have swept already)
        path = await mine.start()
        assert not left.exists()
        assert Path(path).parent.name.startswith(f"agent-ls-proxy-{os.getpid()}-")
    finally:
        if mine is not None:
            await mine.aclose()


def test_the_sweep_keeps_live_processes_and_other_folders(tmp_path: Path) -> None:
    live = tmp_path / f"agent-ls-proxy-{os.getppid()}-abc"  # a process that runs (pytest's parent)
    gone_pid = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True,
                              text=True, check=True).stdout.strip()
    gone = tmp_path / f"agent-ls-proxy-{gone_pid}-abc"
    legacy_dead = tmp_path / "agent-ls-proxy-x1y2z3"  # named before the pid was in the name
    legacy_live = tmp_path / "agent-ls-proxy-q9w8e7"
    other = tmp_path / "something-else-123"
    for d in (live, gone, legacy_dead, legacy_live, other):
        d.mkdir()
    dead = socket.socket(socket.AF_UNIX)
    dead.bind(str(legacy_dead / "proxy.sock"))
    dead.close()  # the file stays, nothing listens
    listening = socket.socket(socket.AF_UNIX)
    listening.bind(str(legacy_live / "proxy.sock"))
    listening.listen()
    try:
        removed = proxy.sweep_stale(str(tmp_path))
    finally:
        listening.close()
    assert sorted(removed) == sorted([str(gone), str(legacy_dead)])
    assert live.is_dir() and legacy_live.is_dir() and other.is_dir()
