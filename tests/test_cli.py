"""The headless `agent-ls` commands, run as real processes (the entry point users run)."""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
import sys
import time
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
    server = json.loads(first.stdout)["servers"][0]
    assert server["state"] == "awaiting-trust" and "trust this workspace" in server["error"]["message"]
    assert "restricted" in first.stderr and "agent-ls trust" in first.stderr
    # a server of a folder never trusted cannot be trusted on its own
    refused = run(env, "mcp", "trust", "wsk", "-w", str(ws))
    assert refused.returncode == 1 and "agent-ls trust" in refused.stderr
    shown = run(env, "trust", "--show", "-w", str(ws))
    assert "wsk (stdio)" in shown.stdout and "runs: " in shown.stdout and "Trusted" not in shown.stdout
    trusted = run(env, "trust", "-w", str(ws))
    assert trusted.returncode == 0 and f"Trusted {ws} and its 1 MCP server entry" in trusted.stdout
    second = run(env, "mcp", "status", "--json", "-w", str(ws))
    assert json.loads(second.stdout)["servers"][0]["state"] == "connected"
    denied = run(env, "mcp", "trust", "wsk", "--deny", "-w", str(ws))
    assert denied.returncode == 0
    third = run(env, "mcp", "status", "--json", "-w", str(ws))
    assert json.loads(third.stdout)["servers"][0]["state"] == "untrusted"
    # a changed entry of a trusted folder asks on its own, and `mcp trust` answers it
    (ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"wsk": knob_stdio_params("--name", "wsk2")}}))
    fourth = run(env, "mcp", "status", "--json", "-w", str(ws))
    assert json.loads(fourth.stdout)["servers"][0]["state"] == "awaiting-trust"
    assert run(env, "mcp", "trust", "wsk", "-w", str(ws)).returncode == 0
    fifth = run(env, "mcp", "status", "--json", "-w", str(ws))
    assert json.loads(fifth.stdout)["servers"][0]["state"] == "connected"


def test_demo_runs_on_the_demo_workspace(env: dict[str, str]) -> None:
    require_npm("mcp-server-filesystem")
    assert (REPO_ROOT / ".venv" / "bin" / "python").exists(), "run scripts/setup.sh"
    proc = run(env, "demo", timeout=120)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Demo finished: the host works." in proc.stdout
    for name in ("files", "notes", "time"):
        assert f"mcp__{name}__" in proc.stdout
    assert "search_notes -> hello: agent-ls demo note" in proc.stdout


class _OAuthServerProcess:
    """tests/servers/oauth_server.py as a real process (the CLI runs in another one)."""

    def __init__(self) -> None:
        import threading

        self.proc = subprocess.Popen([sys.executable, str(REPO_ROOT / "tests" / "servers" / "oauth_server.py")],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                                     text=True, start_new_session=True)
        self.ready = threading.Event()
        self.mcp_url = ""
        threading.Thread(target=self._read, daemon=True).start()
        assert self.ready.wait(30), "the OAuth test server did not start"

    def _read(self) -> None:
        assert self.proc.stderr is not None
        for line in self.proc.stderr:
            if line.startswith("LISTENING "):
                self.mcp_url = line.split()[1]
                self.ready.set()

    def stop(self) -> None:
        import signal

        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(5)


def _follow_authorization(url: str) -> None:
    """What the user's browser does: open the page (the test server approves at once) and
    follow its redirect to the CLI's loopback listener."""
    import urllib.error
    import urllib.request

    class NoRedirect(urllib.request.HTTPRedirectHandler):
        def redirect_request(self, *a: object, **k: object) -> None:
            return None

    opener = urllib.request.build_opener(NoRedirect)
    try:
        opener.open(url, timeout=10)
        raise AssertionError("the authorization page did not redirect")
    except urllib.error.HTTPError as e:
        assert e.code == 302, e.code
        location = e.headers["Location"]
    with urllib.request.urlopen(location, timeout=10) as back:
        assert back.status == 200


def test_login_status_doctor_logout(env: dict[str, str], tmp_path: Path) -> None:
    import threading

    srv = _OAuthServerProcess()
    try:
        ws = str(tmp_path / "ws")
        write_user(env, {"remote": {"type": "http", "url": srv.mcp_url}})
        before = json.loads(run(env, "mcp", "status", "--json", "-w", ws).stdout)["servers"][0]
        assert before["state"] == "needs-sign-in"
        assert before["auth"] == {"state": "needs-sign-in", "reason": "the server requires sign-in"}
        text = run(env, "mcp", "status", "-w", ws).stdout
        assert "auth: needs-sign-in" in text and "agent-ls mcp login remote" in text

        login = subprocess.Popen([*AGENT_LS, "mcp", "login", "remote", "--no-browser", "-w", ws], env=env,
                                 stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        urls: list[str] = []
        err_lines: list[str] = []
        got_url = threading.Event()

        def read_err() -> None:
            assert login.stderr is not None
            for line in login.stderr:
                err_lines.append(line)
                if line.strip().startswith("http://") and "/authorize?" in line:
                    urls.append(line.strip())
                    got_url.set()

        threading.Thread(target=read_err, daemon=True).start()
        assert got_url.wait(60), "".join(err_lines)
        assert "Sign in to 'remote'" in "".join(err_lines)
        _follow_authorization(urls[0])
        out, _ = login.communicate(timeout=60)
        assert login.returncode == 0, out + "".join(err_lines)
        assert "Signed in to 'remote'" in out and "auth: signed-in, token expires" in out

        after = json.loads(run(env, "mcp", "status", "--json", "-w", ws).stdout)["servers"][0]
        assert after["state"] == "connected" and after["auth"]["state"] == "signed-in"
        assert after["auth"]["expiresAt"] > time.time()
        store = Path(env["AGENT_LS_DATA_DIR"]) / "oauth"
        files = list(store.iterdir())
        assert len(files) == 1 and oct(files[0].stat().st_mode & 0o777) == "0o600"
        access = json.loads(files[0].read_text())["tokens"]["access_token"]
        doctor = run(env, "mcp", "doctor", "remote", "-w", ws)
        assert doctor.returncode == 0, doctor.stdout
        assert "oauth: grant authorization_code, automatic" in doctor.stdout
        assert "tokens: tokens, registration (dcr), refresh token in" in doctor.stdout
        assert "auth: signed-in" in doctor.stdout
        called = run(env, "--log-level", "DEBUG", "mcp", "call", "remote", "echo", '{"text": "hello"}', "-w", ws)
        assert called.returncode == 0 and called.stdout.strip() == "hello"
        assert "HTTP Request" in called.stderr and access not in called.stderr + called.stdout

        logout = run(env, "mcp", "logout", "remote", "-w", ws)
        assert logout.returncode == 0 and "Signed out of 'remote'" in logout.stdout
        assert list(store.iterdir()) == []
        final = json.loads(run(env, "mcp", "status", "--json", "-w", ws).stdout)["servers"][0]
        assert final["state"] == "needs-sign-in"
        bad = run(env, "mcp", "login", "nope", "-w", ws)
        assert bad.returncode == 1 and "no MCP server named 'nope'" in bad.stderr
    finally:
        srv.stop()


def test_login_of_a_server_without_oauth(env: dict[str, str], tmp_path: Path) -> None:
    write_user(env, {"k": knob_stdio_params()})
    proc = run(env, "mcp", "login", "k", "-w", str(tmp_path / "ws"))
    assert proc.returncode == 1 and "does not use OAuth" in proc.stderr
