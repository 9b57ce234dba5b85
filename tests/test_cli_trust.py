"""Workspace trust through the `agent-ls` commands, as real processes (issue 14).

The adversarial workspace (tests/adversarial.py) opened by `agent-ls mcp status` and
`agent-ls chat` in a folder never trusted: nothing runs, nothing is sent, the shell still asks;
stderr says the workspace is restricted and how to trust it. After `agent-ls trust` (or
`--trust-workspace`, or `y` at the terminal prompt), the same settings take effect.
"""

from __future__ import annotations

import json
import os
import pty
import select
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial import (
    PRIVATE_KEY,
    SECRET,
    SECRET_ENV,
    USER_KEY,
    AdversarialWorkspace,
    Sink,
    oauth_file_attack,
)
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls
from tests.servers.launch import knob_stdio_params

AGENT_LS = [sys.executable, "-m", "agent_ls.cli"]
pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


class Env:
    def __init__(self, tmp: Path, llm: ScriptedLLM, evil: ScriptedLLM, sink: Sink) -> None:
        self.tmp = tmp
        self.config = tmp / "config"
        self.config.mkdir()
        self.ws = tmp / "ws"
        self.llm = llm
        self.attack = AdversarialWorkspace(self.ws, tmp / "markers", evil.openai_base, sink.url).write()
        (self.config / "settings.json").write_text(json.dumps({
            "model": "openai/scripted", "apiBase": llm.openai_base, "agent": {"maxRetries": 0},
            "mcpServers": {"knob": knob_stdio_params()}}))
        self.env = dict(os.environ)
        for k in ("AGENT_LS_MODEL", "AGENT_LS_API_BASE", "AGENT_LS_USER_SETTINGS"):
            self.env.pop(k, None)
        self.env.update({"AGENT_LS_CONFIG_DIR": str(self.config), "AGENT_LS_DATA_DIR": str(tmp / "data"),
                         **SECRET_ENV})

    def run(self, *args: str, stdin: str = "", cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run([*AGENT_LS, *args], env=self.env, input=stdin, capture_output=True, text=True,
                              timeout=120, cwd=cwd)


@pytest.fixture
def cli(tmp_path: Path, llm: ScriptedLLM, evil_llm: ScriptedLLM, sink: Sink) -> Env:
    llm.clear()
    evil_llm.clear()
    return Env(tmp_path, llm, evil_llm, sink)


def test_untrusted_workspace_on_the_command_line(cli: Env, sink: Sink, evil_llm: ScriptedLLM) -> None:
    attack = cli.attack
    # run from inside the folder (json.py / numbers.py at its root), stdin not a terminal
    status = cli.run("mcp", "status", "--json", "-w", str(cli.ws), cwd=cli.ws)
    assert status.returncode == 0, status.stderr
    servers = {s["name"]: s for s in json.loads(status.stdout)["servers"]}
    assert servers["knob"]["state"] == "connected" and servers["knob"]["scope"] == "user"
    for name in ("evil_stdio", "leak", "leak_url"):
        assert servers[name]["state"] == "awaiting-trust"
    assert "restricted" in status.stderr and f"agent-ls trust --workspace {cli.ws}" in status.stderr
    diagnostics = json.loads(status.stdout)["diagnostics"]
    assert any("apiBase: ignored until you trust this workspace" in d for d in diagnostics)

    cli.llm.script(tool_calls([("bash", {"command": f"touch {attack.bash_marker}"})]), text("done"))
    chat = cli.run("chat", "-w", str(cli.ws), "run", "it")  # stdin is empty: the approval is a deny
    assert chat.returncode == 0, chat.stderr
    assert "[approve] bash" in chat.stderr and "model openai/scripted" in chat.stderr
    assert attack.nothing_ran() == [] and sink.requests == [] and not evil_llm.requests

    shown = cli.run("trust", "--show", "-w", str(cli.ws))
    assert "apiBase = " in shown.stdout and "the endpoint receives your API key" in shown.stdout
    assert "header: Authorization: Bearer ${env:SECRET_TOKEN}" in shown.stdout
    assert "receives the values of: OPENAI_API_KEY, SECRET_TOKEN" in shown.stdout
    assert SECRET not in shown.stdout and USER_KEY not in shown.stdout
    assert attack.nothing_ran() == [] and sink.requests == []

    # trusted: the same settings take effect (the model at the workspace's endpoint, allow ["*"], servers)
    assert cli.run("trust", "-w", str(cli.ws)).returncode == 0
    evil_llm.script(tool_calls([("bash", {"command": f"touch {attack.bash_marker}"})]), text("done"))
    # (--wait: the servers connect before the prompt; else they start once the model answered)
    chat = cli.run("chat", "--wait", "60", "-w", str(cli.ws), "run", "it")
    assert chat.returncode == 0, chat.stderr
    assert "[approve]" not in chat.stderr and attack.bash_marker.exists()
    assert evil_llm.requests[0].headers.get("authorization") == f"Bearer {USER_KEY}"
    assert attack.stdio_marker.exists() and attack.override_marker.exists()
    assert SECRET in sink.seen() and USER_KEY in sink.seen()
    assert not attack.import_marker.exists()

    # revoked: restricted again
    assert cli.run("trust", "--revoke", "-w", str(cli.ws)).returncode == 0
    again = cli.run("mcp", "status", "--json", "-w", str(cli.ws))
    assert {s["name"]: s["state"] for s in json.loads(again.stdout)["servers"]}["evil_stdio"] == "awaiting-trust"


def test_trust_workspace_flag(cli: Env, sink: Sink) -> None:
    status = cli.run("mcp", "status", "--json", "--trust-workspace", "-w", str(cli.ws))
    states = {s["name"]: s["state"] for s in json.loads(status.stdout)["servers"]}
    assert states["evil_stdio"] != "awaiting-trust" and cli.attack.stdio_marker.exists()
    assert SECRET in sink.seen()


def _run_on_a_terminal(cli: Env, answer: str, *args: str) -> str:
    """Run the CLI with its stdin on a pseudo-terminal; answer the first question; return stderr."""
    primary, secondary = pty.openpty()
    proc = subprocess.Popen([*AGENT_LS, *args], env=cli.env, stdin=secondary, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    os.close(secondary)
    try:
        assert proc.stderr is not None
        seen = ""
        end = time.monotonic() + 60
        while "[y/N]" not in seen and time.monotonic() < end and proc.poll() is None:
            ready, _, _ = select.select([proc.stderr], [], [], 0.5)
            if ready:
                seen += os.read(proc.stderr.fileno(), 65536).decode()
        if "[y/N]" in seen:
            os.write(primary, (answer + "\n").encode())
        _out, err = proc.communicate(timeout=90)
        return seen + err
    finally:
        os.close(primary)
        if proc.poll() is None:
            proc.kill()


def test_terminal_prompt_shows_everything_and_remembers_the_answer(cli: Env, sink: Sink) -> None:
    asked = _run_on_a_terminal(cli, "n", "mcp", "status", "-w", str(cli.ws))
    assert "Trust this workspace? [y/N]" in asked
    for shown in ("evil_stdio (stdio)", "env: BASH_ENV=./evil.sh", "connects to: " + cli.attack.sink_url,
                  "permissions.allow = [\"*\"]", "toolActions = "):
        assert shown in asked, shown
    assert cli.attack.nothing_ran() == [] and sink.requests == []
    # declined is remembered: not asked again, and it says how to trust it later
    second = _run_on_a_terminal(cli, "y", "mcp", "status", "-w", str(cli.ws))
    assert "[y/N]" not in second and "kept this workspace restricted" in second
    assert cli.run("trust", "-w", str(cli.ws)).returncode == 0
    third = cli.run("mcp", "status", "-w", str(cli.ws))
    assert "[y/N]" not in third.stderr and cli.attack.stdio_marker.exists()


def test_yes_at_the_terminal_trusts(cli: Env, sink: Sink) -> None:
    asked = _run_on_a_terminal(cli, "y", "mcp", "status", "-w", str(cli.ws))
    assert "[y/N]" in asked
    assert cli.attack.stdio_marker.exists() and SECRET in sink.seen()


def test_secrets_in_urls_and_headers_never_reach_the_log(cli: Env, sink: Sink) -> None:
    """A trusted workspace's HTTP servers carry secrets in the URL and a header: at DEBUG, every
    log line (the SDK's, httpx's, ours) shows them masked, while the listener did get them."""
    out = cli.run("--log-level", "DEBUG", "mcp", "status", "--trust-workspace", "-w", str(cli.ws))
    assert SECRET in sink.seen() and USER_KEY in sink.seen()
    assert "/mcp?t=" in out.stderr  # the URL is logged...
    assert SECRET not in out.stderr and USER_KEY not in out.stderr  # ...with the values masked
    assert SECRET not in out.stdout and USER_KEY not in out.stdout


def test_a_workspace_oauth_entry_cannot_read_a_local_file_and_post_it(cli: Env, sink: Sink) -> None:
    """Issue 25, finding 1 on the command line: `agent-ls trust --show` lists every OAuth
    setting (the file it names, marked refused); once the folder is trusted the entry is refused
    with a diagnostic at the key, the file is not read and nothing reaches the listener."""
    ws = cli.tmp / "oauth-ws"
    key_file = cli.tmp / "home" / ".ssh" / "id_rsa"
    oauth_file_attack(ws, sink.url, key_file)
    shown = cli.run("trust", "--show", "-w", str(ws))
    assert f"connects to: {sink.url}/mcp" in shown.stdout
    assert "oauth.grant: jwt_bearer" in shown.stdout and "oauth.clientId: agent" in shown.stdout
    line = next(x for x in shown.stdout.splitlines() if "oauth.assertionFile:" in x)
    assert str(key_file) in line and "refused in a workspace file" in line

    assert cli.run("trust", "-w", str(ws)).returncode == 0
    status = cli.run("mcp", "status", "--json", "-w", str(ws))
    out = json.loads(status.stdout)
    wif = {s["name"]: s for s in out["servers"]}["wif"]
    assert wif["state"] == "failed" and "refused in a workspace file" in wif["error"]["message"], wif
    assert any("oauth.assertionFile" in d and "refused in a workspace file" in d for d in out["diagnostics"])
    assert sink.requests == [] and PRIVATE_KEY.splitlines()[1] not in sink.seen()
