"""The headless `agent-ls` commands, run as real processes (the entry point users run)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

from tests.servers.launch import knob_stdio_params
from tests.tooling import REPO_ROOT, require_npm

AGENT_LS = [sys.executable, "-m", "agent_ls.cli"]


@pytest.fixture
def env(tmp_path: Path) -> dict[str, str]:
    e = dict(os.environ)
    e["AGENT_LS_CONFIG_DIR"] = str(tmp_path / "config")
    e["AGENT_LS_DATA_DIR"] = str(tmp_path / "data")
    (tmp_path / "config").mkdir()
    (tmp_path / "ws").mkdir()
    return e


def run(env: dict[str, str], *args: str, cwd: Path | None = None, timeout: float = 90) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*AGENT_LS, *args], env=env, cwd=cwd, capture_output=True, text=True,
                          timeout=timeout, stdin=subprocess.DEVNULL)


def write_user(env: dict[str, str], servers: dict[str, object]) -> None:
    Path(env["AGENT_LS_CONFIG_DIR"], "settings.json").write_text(json.dumps({"mcpServers": servers}))



def test_help_lists_the_commands(env: dict[str, str]) -> None:
    proc = run(env, "--help")
    assert proc.returncode == 0 and "mcp" in proc.stdout and "chat" in proc.stdout and "serve" in proc.stdout


def test_status_json_with_partial_failure(env: dict[str, str], tmp_path: Path) -> None:
    write_user(env, {"good": knob_stdio_params(), "missing": {"command": "no-such-binary-xyz"}})
    proc = run(env, "mcp", "status", "--json", "-w", str(tmp_path / "ws"))
    assert proc.returncode == 0, proc.stderr
    data = json.loads(proc.stdout)
    by = {s["name"]: s for s in data["servers"]}
    assert by["good"]["state"] == "connected" and by["good"]["toolCount"] > 20
    assert by["missing"]["state"] == "failed" and by["missing"]["error"]["phase"] == "spawn"


def test_tools_and_call(env: dict[str, str], tmp_path: Path) -> None:
    write_user(env, {"k": knob_stdio_params()})
    ws = str(tmp_path / "ws")
    tools = run(env, "mcp", "tools", "k", "-w", ws)
    assert tools.returncode == 0, tools.stderr
    assert "mcp__k__echo  [read]  (k: echo)" in tools.stdout
    call = run(env, "mcp", "call", "k", "add", '{"a": 2, "b": 40}', "-w", ws)
    assert call.returncode == 0 and call.stdout.strip() == "42"
    failing = run(env, "mcp", "call", "k", "fail", "-w", ws)
    assert failing.returncode == 1 and "returned an error" in failing.stdout
    bad = run(env, "mcp", "call", "k", "add", "{not json", "-w", ws)
    assert bad.returncode == 2 and "not valid JSON" in bad.stderr
    unknown = run(env, "mcp", "tools", "nope", "-w", ws)
    assert unknown.returncode == 1 and "no MCP server named 'nope'" in unknown.stderr


def test_doctor_reports_phase_errno_stderr_and_hides_secrets(env: dict[str, str], tmp_path: Path) -> None:
    secret = "s3cr3t-" + uuid.uuid4().hex
    env["DOCTOR_TOKEN"] = secret
    write_user(env, {
        "dies": {**knob_stdio_params("--exit-during-handshake", "4", "--stderr-line", "config file missing!"),
                 "env": {"API_TOKEN": "${DOCTOR_TOKEN}"}},
        "missing": {"command": "no-such-binary-xyz", "args": ["--token", "${DOCTOR_TOKEN}"]},
        "ok": knob_stdio_params(),
    })
    proc = run(env, "mcp", "doctor", "-w", str(tmp_path / "ws"))
    out = proc.stdout
    assert proc.returncode == 1
    assert secret not in out + proc.stderr
    assert "API_TOKEN=***" in out
    assert "FAILED in phase 'handshake', exitCode 4" in out
    assert "config file missing!" in out
    assert "FAILED in phase 'spawn', errno 2" in out and "NOT FOUND on PATH" in out
    assert '"--token", "***"' in out
    assert "ok: connected" in out
    one = run(env, "mcp", "doctor", "ok", "-w", str(tmp_path / "ws"))
    assert one.returncode == 0 and "ok: connected" in one.stdout and "dies" not in one.stdout


def test_invalid_settings_reported_with_location(env: dict[str, str], tmp_path: Path) -> None:
    Path(env["AGENT_LS_CONFIG_DIR"], "settings.json").write_text('{\n  "mcpServers": {\n    "x": {"command": 5}\n  }\n}\n')
    proc = run(env, "mcp", "status", "-w", str(tmp_path / "ws"))
    assert proc.returncode == 0
    assert "settings.json:3:22: error: mcpServers.x.command" in proc.stderr
    assert "must be a string" in proc.stderr


def test_workspace_server_waits_for_trust_then_trust_command(env: dict[str, str], tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"wsk": knob_stdio_params()}}))
    first = run(env, "mcp", "status", "--json", "-w", str(ws))
    assert json.loads(first.stdout)["servers"][0]["state"] == "awaiting-trust"
    trusted = run(env, "mcp", "trust", "wsk", "-w", str(ws))
    assert trusted.returncode == 0 and "Trusted 'wsk'" in trusted.stdout
    second = run(env, "mcp", "status", "--json", "-w", str(ws))
    assert json.loads(second.stdout)["servers"][0]["state"] == "connected"
    denied = run(env, "mcp", "trust", "wsk", "--deny", "-w", str(ws))
    assert denied.returncode == 0
    third = run(env, "mcp", "status", "--json", "-w", str(ws))
    assert json.loads(third.stdout)["servers"][0]["state"] == "untrusted"


def test_demo_runs_on_the_demo_workspace(env: dict[str, str]) -> None:
    require_npm("mcp-server-filesystem")
    assert (REPO_ROOT / ".venv" / "bin" / "python").exists(), "run scripts/setup.sh"
    proc = run(env, "demo", timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Demo finished: the host works." in proc.stdout
    for name in ("files", "notes", "time"):
        assert f"mcp__{name}__" in proc.stdout
    assert "search_notes -> hello: agent-ls demo note" in proc.stdout
