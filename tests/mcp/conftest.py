"""Fixtures for the MCP host tests: settings files in a temporary workspace, a manager."""

from __future__ import annotations

import json
import os
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from agent_ls.config.settings import LoadedSettings, load_settings
from agent_ls.config.state import HostState
from agent_ls.mcp.connection.failures import RestartPolicy
from agent_ls.mcp.manager import MCPManager
from tests.tooling import TRUST_ALL


class HostEnv:
    """A workspace folder plus a user settings file, and the managers made from them."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.workspace = root / "ws"
        self.workspace.mkdir()
        self.user_file = root / "user" / "settings.json"
        self.user_file.parent.mkdir()
        self.state = HostState(root / "data" / "host-state.json")
        self.managers: list[MCPManager] = []
        self.environ = dict(os.environ)

    def write_user(self, servers: dict[str, Any], **other: Any) -> None:
        self.user_file.write_text(json.dumps({"mcpServers": servers, **other}, indent=2))

    def write_workspace(self, servers: dict[str, Any], rel: str = ".agent-ls/settings.json",
                        key: str = "mcpServers") -> Path:
        path = self.workspace / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({key: servers}, indent=2))
        return path

    def load(self) -> LoadedSettings:
        return load_settings([self.workspace], user_settings=self.user_file, environ=self.environ,
                             trust=TRUST_ALL)

    async def manager(self, servers: dict[str, Any] | None = None, *, wait: float = 30.0,
                      **kwargs: Any) -> MCPManager:
        if servers is not None:
            self.write_user(servers)
        kwargs.setdefault("state", self.state)
        kwargs.setdefault("restart_policy", RestartPolicy(max_restarts=3, base_delay=0.1, max_delay=0.5))
        m = MCPManager(roots=[self.workspace], **kwargs)
        self.managers.append(m)
        await m.apply(self.load())
        await m.wait_ready(wait)
        return m


@pytest.fixture
async def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[HostEnv]:
    # Managers made without an explicit OAuth store use the user data dir: keep it private.
    monkeypatch.setenv("AGENT_LS_DATA_DIR", str(tmp_path / "data"))
    env = HostEnv(tmp_path)
    yield env
    for m in env.managers:
        await m.close()


def status_of(manager: MCPManager, name: str) -> Any:
    for s in manager.status():
        if s.name == name:
            return s
    raise AssertionError(f"no status for {name}")


async def wait_until(pred: Callable[[], bool], timeout: float = 15.0, interval: float = 0.05) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        if loop.time() > end:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(interval)


def processes_with(marker: str) -> list[int]:
    """PIDs whose command line contains ``marker`` (to prove no child outlives the host)."""
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        if marker in cmdline and ") Z " not in stat:
            pids.append(int(entry.name))
    return pids
