"""Stdio MCP servers in the sandbox: a workspace file's server always runs in it (and works
normally), a user's own runs in it when its entry says so, and neither can read the canary key,
write outside its folder or reach the host's loopback."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from agent_ls.config.entries import ServerSandbox
from agent_ls.core.sandbox import Mechanism, detect
from agent_ls.mcp.connection.transports import with_sandbox
from tests.mcp.conftest import HostEnv, status_of
from tests.sandbox.conftest import CANARY

SERVER = {"command": sys.executable, "args": [str(Path(__file__).with_name("file_server.py"))]}
bwrap_only = pytest.mark.skipif(detect().mechanism is not Mechanism.BUBBLEWRAP, reason="bubblewrap does not work here")


@pytest.fixture
def canary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    key = home / ".ssh" / "id_ed25519"
    key.write_text(CANARY)
    monkeypatch.setenv("HOME", str(home))
    (tmp_path / "tmp").mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path / "tmp"))  # else all of /tmp is writable
    return key


async def _call(host: HostEnv, server: str, tool: str, args: dict[str, Any]) -> str:
    m = host.managers[-1]
    result = await m.call_tool(server, tool, args)
    return str(result.content)


@bwrap_only
async def test_a_workspace_server_runs_sandboxed_and_works(host: HostEnv, canary: Path, http_port: int) -> None:
    host.write_workspace({"files": {**SERVER, "sandbox": False}})
    host.write_user({"mine": SERVER})
    outside = host.root / "outside.txt"
    m = await host.manager(None, wait=5)
    await m.set_trust("files", True)
    await m.wait_ready(30)
    assert status_of(m, "files").state == "connected"
    # the servers view marks it: how it is confined, in words; the user's own is not marked
    assert status_of(m, "files").sandbox == "sandboxed (bubblewrap); no network"
    assert status_of(m, "mine").sandbox is None
    assert await _call(host, "files", "read", {"path": str(canary)}) == "FAILED No such file or directory"
    assert await _call(host, "files", "write", {"path": str(host.workspace / "ok.txt"), "text": "x"}) == "WROTE"
    assert (await _call(host, "files", "write", {"path": str(outside), "text": "x"})).startswith("FAILED")
    assert (await _call(host, "files", "connect", {"port": http_port})).startswith("FAILED")
    assert not outside.exists()
    # the user's own server is not sandboxed unless its entry says so
    assert await _call(host, "mine", "read", {"path": str(canary)}) == f"READ {CANARY}"
    warned = [d for d in host.load().diagnostics if d.json_path[-1] == "sandbox"]
    assert warned and "always runs in the sandbox" in warned[0].message


@bwrap_only
async def test_a_user_server_in_the_sandbox_with_its_own_rules(host: HostEnv, canary: Path, tmp_path: Path) -> None:
    extra = tmp_path / "extra"
    extra.mkdir()
    host.write_user({"mine": {**SERVER, "sandbox": {"allowWrite": [str(extra)], "network": "off"}}})
    await host.manager(None)
    assert (await _call(host, "mine", "read", {"path": str(canary)})).startswith("FAILED")
    assert await _call(host, "mine", "write", {"path": str(extra / "a"), "text": "x"}) == "WROTE"


async def test_without_a_mechanism_a_sandboxed_server_does_not_start(host: HostEnv, canary: Path,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_ls.core.sandbox.runner import FORCE_VARIABLE

    monkeypatch.setenv(FORCE_VARIABLE, "none")
    host.write_user({"mine": {**SERVER, "sandbox": True}})
    m = await host.manager(None)
    status = status_of(m, "mine")
    assert status.state == "failed" and "no OS sandbox is available" in status.error["message"]


def test_the_user_turning_the_sandbox_off_and_bad_entries(host: HostEnv) -> None:
    host.write_workspace({"files": SERVER, "bad": {**SERVER, "sandbox": {"network": "sometimes"}}})
    host.user_file.write_text(json.dumps({"agent": {"sandbox": {"enabled": False}}}))
    loaded = host.load()
    assert loaded.servers["files"].sandbox == ServerSandbox()
    assert with_sandbox(loaded)["files"].sandbox is None
    errors = [d for d in loaded.diagnostics if d.severity == "error" and "sandbox" in d.json_path]
    assert errors and "must be \"off\", \"ask\"" in errors[0].message
