"""The OS sandbox in ``agent-ls chat`` (issue 47; a real process, the scripted model, real
bubblewrap): ``bash`` cannot read the canary key or write outside the workspace, and the network
question on the terminal offers once / session / always; ``a`` keeps the host as the user's grant
and the next run is not asked."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest

from agent_ls.core.sandbox import Mechanism, detect
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls
from tests.sandbox.conftest import CANARY
from tests.sandbox.conftest import http_port as http_port  # the fixture

pytestmark = [pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning"),
              pytest.mark.skipif(detect().mechanism is not Mechanism.BUBBLEWRAP, reason="bubblewrap does not work here")]

# "localhost" stands for a remote host here: through the proxy, although the sandbox's loopback
# names skip it by default (a conversation's commands share a loopback where its servers listen)
FETCH = (f"{sys.executable} -c \"import os, urllib.request as u, sys; os.environ['no_proxy'] = ''; "
         "os.environ['NO_PROXY'] = ''; print(u.urlopen(sys.argv[1], timeout=5).read().decode())\"")


def chat(llm: ScriptedLLM, tmp: Path, ws: Path, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.update({"AGENT_LS_CONFIG_DIR": str(tmp / "config"), "AGENT_LS_DATA_DIR": str(tmp / "data"),
                "AGENT_LS_API_BASE": llm.openai_base, "OPENAI_API_KEY": "x",
                "HOME": str(tmp / "home"), "TMPDIR": str(tmp / "tmp")})
    return subprocess.run([sys.executable, "-m", "agent_ls.cli", "chat", "-w", str(ws), "--model", "openai/scripted",
                           *args], input=stdin, env=env, capture_output=True, text=True, timeout=90)


def test_bash_is_contained_and_always_is_kept(llm: ScriptedLLM, ws: Path, tmp_path: Path, http_port: int) -> None:
    outside = tmp_path / "outside"
    for d in (tmp_path / "home" / ".ssh", tmp_path / "tmp", outside, tmp_path / "config"):
        d.mkdir(parents=True)
    (tmp_path / "home" / ".ssh" / "id_ed25519").write_text(CANARY)
    (tmp_path / "config" / "settings.json").write_text(json.dumps({"agent": {"sandbox": {"autoAllow": True}}}))
    url = f"http://localhost:{http_port}/"
    llm.script(
        tool_calls([("bash", {"command": f"cat ~/.ssh/id_ed25519; touch {outside}/x"})]),
        tool_calls([("bash", {"command": f"{FETCH} {url}"})]),
        text("done"),
    )
    # "o": the canary command names a protected path (it asks even with autoAllow); "a": always
    proc = chat(llm, tmp_path, ws, "go", stdin="o\na\n")
    assert proc.returncode == 0, proc.stderr
    assert "[approve] sandbox_network" in proc.stderr
    assert "[a] Always allow localhost in this workspace" in proc.stderr
    assert "[session] Allow localhost for this session" in proc.stderr
    results = [m["content"] for m in llm.requests[-1].body["messages"] if m["role"] == "tool"]
    assert CANARY not in results[0] and "Read-only file system" in results[0] and not (outside / "x").exists()
    assert "hello from the host" in results[1]
    state = json.loads((tmp_path / "data" / "host-state.json").read_text())
    assert state["sandbox"][str(ws.resolve())]["hosts"] == ["localhost"]
    # the next run reaches the kept host without asking (no input at all)
    llm.script(tool_calls([("bash", {"command": f"{FETCH} {url}"})]), text("again"))
    again = chat(llm, tmp_path, ws, "again")
    assert again.returncode == 0 and "[approve]" not in again.stderr, again.stderr
    assert "hello from the host" in [m for m in llm.requests[-1].body["messages"] if m["role"] == "tool"][-1]["content"]


def test_start_the_dev_server_and_check_that_health_answers(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    """Issue 41's story with the sandbox on (its default network, "ask"): a server started in the
    background by one sandboxed command answers the next one, which asks nobody (the loopback is
    the conversation's own, not a host to ask about)."""
    for d in (tmp_path / "home", tmp_path / "tmp", tmp_path / "config"):
        d.mkdir(parents=True)
    (tmp_path / "config" / "settings.json").write_text(json.dumps({"agent": {"sandbox": {"autoAllow": True}}}))
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    (ws / "health").write_text("ok\n")
    check = (f"{sys.executable} -c \"import time, urllib.request as u\nfor _ in range(100):\n try:\n  "
             f"print(u.urlopen('http://127.0.0.1:{port}/health', timeout=5).read().decode()); break\n"
             " except OSError: time.sleep(0.1)\"")
    llm.script(
        tool_calls([("bash", {"command": f"exec {sys.executable} -m http.server {port} --bind 127.0.0.1",
                              "run_in_background": True})]),
        tool_calls([("bash", {"command": check})]),
        text("it answers"),
    )
    proc = chat(llm, tmp_path, ws, "start the dev server and check that /health answers")
    assert proc.returncode == 0, proc.stderr
    assert "[approve]" not in proc.stderr, proc.stderr
    results = [m["content"] for m in llm.requests[-1].body["messages"] if m["role"] == "tool"]
    assert "bg-1" in results[0], results[0]
    assert results[1].startswith("ok"), results[1]
