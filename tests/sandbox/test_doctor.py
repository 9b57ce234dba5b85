"""`agent-ls doctor` (a real subprocess): the model and its key, the OS sandbox's mechanism and
what it allows, and the servers; without a mechanism it says so, and that every command asks."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_ls.core.sandbox import Mechanism, detect


def _doctor(tmp_path: Path, *, settings: dict[str, object], **env: str) -> subprocess.CompletedProcess[str]:
    import os

    (tmp_path / "config").mkdir(exist_ok=True)
    (tmp_path / "config" / "settings.json").write_text(json.dumps(settings))
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    environ = {k: v for k, v in os.environ.items() if not k.endswith("_API_KEY")}
    environ.update(AGENT_LS_CONFIG_DIR=str(tmp_path / "config"), AGENT_LS_DATA_DIR=str(tmp_path / "data"),
                   HOME=str(tmp_path / "home"), **env)
    environ.pop("AGENT_LS_MODEL", None)
    return subprocess.run([sys.executable, "-m", "agent_ls", "doctor", "-w", str(ws), "--wait", "5"], env=environ,
                          cwd=ws, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)


@pytest.mark.skipif(detect().mechanism is not Mechanism.BUBBLEWRAP, reason="bubblewrap does not work here")
def test_doctor_shows_the_model_key_and_the_sandbox(tmp_path: Path) -> None:
    proc = _doctor(tmp_path, settings={"model": "openai/gpt-4.1", "agent": {"sandbox": {"network": "off"}}})
    out = proc.stdout
    assert "Model: openai/gpt-4.1 (key: MISSING" in out and "OPENAI_API_KEY" in out, out + proc.stderr
    assert "Sandbox: commands run in an OS sandbox: bubblewrap" in out
    assert f"unreadable: {tmp_path / 'home' / '.ssh'}" in out and "network: no network" in out
    assert proc.returncode == 1  # the missing key


def test_doctor_says_when_there_is_no_sandbox(tmp_path: Path) -> None:
    proc = _doctor(tmp_path, settings={}, AGENT_LS_SANDBOX_MECHANISM="none")
    assert "Sandbox: no OS sandbox is available" in proc.stdout and "every command asks" in proc.stdout, proc.stdout
    off = _doctor(tmp_path, settings={"agent": {"sandbox": False}})
    assert "Sandbox: off (agent.sandbox.enabled is false)" in off.stdout


@pytest.mark.skipif(detect().mechanism is not Mechanism.BUBBLEWRAP, reason="bubblewrap does not work here")
def test_doctor_lists_the_users_workspace_grants(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_ls.config.sandbox import set_workspace_grant

    proc = _doctor(tmp_path, settings={"model": "openai/gpt-4.1"})
    assert "your grants for this workspace: none" in proc.stdout, proc.stdout
    monkeypatch.setenv("AGENT_LS_DATA_DIR", str(tmp_path / "data"))
    set_workspace_grant(tmp_path / "ws", "hosts", "pypi.org", True)
    set_workspace_grant(tmp_path / "ws", "writes", str(tmp_path / "extra"), True)
    proc = _doctor(tmp_path, settings={"model": "openai/gpt-4.1"})
    assert "your grants for this workspace (undo:" in proc.stdout
    assert f"writable: {tmp_path / 'extra'}" in proc.stdout and "host: pypi.org" in proc.stdout
