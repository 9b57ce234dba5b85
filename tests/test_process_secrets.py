"""Issue 38 item 6: the provider key is not in the agent's own process environment.

A script the user let the agent run once reads ``/proc/<agent pid>/environ``: that file shows
the process's *initial* environment block, which ``os.environ`` changes and ``unsetenv`` never
rewrite. Each entry point (``agent-ls chat``, ``agent-ls acp``, and the language server in
tests/lsp/test_process_secrets.py) is started as a real process with the key in its
environment; the key still reaches the provider (the scripted LLM sees the Authorization
header) while ``/proc/<pid>/environ`` of the process and what a child inherits do not hold it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_ls.agent.llm import LLMConfig, provider_credentials
from agent_ls.core import process_secrets
from tests.adversarial import SECRET, SECRET_ENV, USER_KEY
from tests.leftovers import environ_without_agent_ls
from tests.llm.scripted_server import ScriptedLLM, slow_text, tool_calls
from tests.tooling import REPO_ROOT

pytestmark = [pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning"),
              pytest.mark.skipif(not sys.platform.startswith("linux"), reason="/proc/<pid>/environ is Linux's")]


def proc_environ(pid: int) -> bytes:
    return Path(f"/proc/{pid}/environ").read_bytes()


def test_taking_the_secrets_wipes_the_initial_environment_block() -> None:
    """A plain process that takes its secrets: gone from /proc/self/environ, from os.environ and
    from what a child inherits; still readable through the module; other variables kept."""
    code = (
        "import json, os, subprocess\n"
        "from agent_ls.core import process_secrets as p\n"
        "taken = p.take_process_secrets()\n"
        "child = subprocess.run(['sh', '-c', 'cat /proc/$PPID/environ; echo; env'], capture_output=True).stdout\n"
        "print(json.dumps({'taken': taken, 'environ': open('/proc/self/environ', 'rb').read().decode('latin-1'),\n"
        "  'child': child.decode('latin-1'), 'os': {k: os.environ.get(k) for k in ('OPENAI_API_KEY', 'KEEP_ME')},\n"
        "  'memory': p.process_secrets().get('OPENAI_API_KEY'), 'merged': p.environment().get('AWS_SECRET_ACCESS_KEY')}))\n")
    env = {**os.environ, **SECRET_ENV, "AWS_SECRET_ACCESS_KEY": "aws-secret-value-99", "KEEP_ME": "plain-value",
           "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert {"OPENAI_API_KEY", "SECRET_TOKEN", "AWS_SECRET_ACCESS_KEY"} <= set(out["taken"])
    for where in ("environ", "child"):
        assert USER_KEY not in out[where] and SECRET not in out[where] and "aws-secret-value-99" not in out[where]
        assert "KEEP_ME=plain-value" in out[where]
    assert out["os"] == {"OPENAI_API_KEY": None, "KEEP_ME": "plain-value"}
    assert out["memory"] == USER_KEY and out["merged"] == "aws-secret-value-99"


def test_the_block_is_wiped_in_place_where_proc_self_mem_is_refused() -> None:
    """Kernels may refuse writes through /proc/self/mem: the block (the process's own stack) is
    then overwritten in place."""
    code = (
        "import builtins, json\n"
        "real_open = builtins.open\n"
        "def no_mem(path, *a, **k):\n"
        "    if str(path) == '/proc/self/mem':\n"
        "        raise PermissionError(13, 'refused')\n"
        "    return real_open(path, *a, **k)\n"
        "builtins.open = no_mem\n"
        "from agent_ls.core import process_secrets as p\n"
        "taken = p.take_process_secrets()\n"
        "builtins.open = real_open\n"
        "print(json.dumps({'taken': taken, 'environ': open('/proc/self/environ', 'rb').read().decode('latin-1')}))\n")
    env = {**os.environ, **SECRET_ENV, "PYTHONPATH": str(REPO_ROOT)}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    out = json.loads(done.stdout)
    assert "OPENAI_API_KEY" in out["taken"]
    assert USER_KEY not in out["environ"] and SECRET not in out["environ"] and "PYTHONPATH=" in out["environ"]


def test_credential_names() -> None:
    for name in ("OPENAI_API_KEY", "ANTHROPIC_API_KEY", "AWS_SECRET_ACCESS_KEY", "AWS_ACCESS_KEY_ID",
                 "AWS_SESSION_TOKEN", "GITHUB_TOKEN", "AZURE_CLIENT_SECRET", "DB_PASSWORD", "MISTRAL_APIKEY"):
        assert process_secrets.credential_env_name(name), name
    for name in ("PATH", "HOME", "SSH_AUTH_SOCK", "AZURE_FEDERATED_TOKEN_FILE", "AZURE_API_BASE", "KEYBOARD"):
        assert not process_secrets.credential_env_name(name), name


@pytest.mark.parametrize(("model", "env", "expected"), [
    ("openai/gpt-4.1", {"OPENAI_API_KEY": "sk-o"}, {"api_key": "sk-o"}),
    ("anthropic/claude-sonnet-4-5", {"ANTHROPIC_API_KEY": "sk-a", "OPENAI_API_KEY": "sk-o"}, {"api_key": "sk-a"}),
    ("gemini/gemini-2.5-pro", {"GEMINI_API_KEY": "g-k"}, {"api_key": "g-k"}),
    ("azure/gpt4", {"AZURE_API_KEY": "az-k"}, {"api_key": "az-k"}),
    ("azure/gpt4", {"AZURE_AD_TOKEN": "az-t"}, {"azure_ad_token": "az-t"}),
    ("bedrock/anthropic.claude-3", {"AWS_ACCESS_KEY_ID": "AKIA1", "AWS_SECRET_ACCESS_KEY": "s", "AWS_SESSION_TOKEN": "t"},
     {"aws_access_key_id": "AKIA1", "aws_secret_access_key": "s", "aws_session_token": "t"}),
    ("ollama/qwen3", {"OPENAI_API_KEY": "sk-o"}, {}),
])
def test_provider_credentials_come_from_memory(monkeypatch: pytest.MonkeyPatch, model: str, env: dict[str, str],
                                               expected: dict[str, str]) -> None:
    """What litellm is given for each provider once the keys are out of os.environ (the real
    litellm's ``validate_environment`` names the variables)."""
    for name in env:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setattr(process_secrets, "_taken", dict(env))
    assert provider_credentials(LLMConfig(model=model)) == expected


def _agent_env(tmp_path: Path, llm: ScriptedLLM) -> dict[str, str]:
    config = tmp_path / "config"
    config.mkdir()
    (tmp_path / "ws").mkdir()
    (config / "settings.json").write_text(json.dumps({
        "model": "openai/scripted", "apiBase": llm.openai_base, "agent": {"maxRetries": 0},
        "permissions": {"allow": ["bash"]}}))
    env = environ_without_agent_ls()
    env.update({"AGENT_LS_CONFIG_DIR": str(config), "AGENT_LS_DATA_DIR": str(tmp_path / "data"),
                "PYTHONPATH": str(REPO_ROOT), **SECRET_ENV})
    return env


def test_chat_keeps_the_key_out_of_its_environ_and_still_sends_it(tmp_path: Path) -> None:
    """``agent-ls chat``: a command it runs reads /proc/$PPID/environ (the agent's) and its own
    environment: no key; /proc/<pid>/environ read by the test while the model answers: no key;
    the provider got the key."""
    with ScriptedLLM() as llm:
        env = _agent_env(tmp_path, llm)
        llm.script(tool_calls([("bash", {"command": "tr '\\0' '\\n' < /proc/$PPID/environ; env"})]),
                   slow_text(4, delay=0.5))
        chat = subprocess.Popen([sys.executable, "-m", "agent_ls.cli", "chat", "-w", str(tmp_path / "ws"), "go"],
                                env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        try:
            end = time.monotonic() + 120
            while len(llm.requests) < 2 and chat.poll() is None and time.monotonic() < end:
                time.sleep(0.05)
            environ = proc_environ(chat.pid)  # while the second answer streams
            _, err = chat.communicate(timeout=120)
        finally:
            if chat.poll() is None:
                chat.kill()
        assert chat.returncode == 0, err
        assert b"AGENT_LS_CONFIG_DIR=" in environ  # the real block, read while the process lives
        assert USER_KEY.encode() not in environ and SECRET.encode() not in environ
        tool_result = json.dumps(llm.requests[1].body["messages"][-1])
        assert "AGENT_LS_CONFIG_DIR=" in tool_result  # the command did read the agent's environ
        assert USER_KEY not in tool_result and SECRET not in tool_result
        assert all(r.headers.get("authorization") == f"Bearer {USER_KEY}" for r in llm.requests)


def test_acp_keeps_the_key_out_of_its_environ(tmp_path: Path) -> None:
    """``agent-ls acp``, read after it answered ``initialize``."""
    with ScriptedLLM() as llm:
        env = _agent_env(tmp_path, llm)
        acp = subprocess.Popen([sys.executable, "-m", "agent_ls.cli", "acp"], env=env, cwd=tmp_path / "ws",
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        try:
            assert acp.stdin is not None and acp.stdout is not None
            acp.stdin.write(json.dumps({"jsonrpc": "2.0", "id": 1, "method": "initialize",
                                        "params": {"protocolVersion": 1, "clientCapabilities": {}}}).encode() + b"\n")
            acp.stdin.flush()
            assert b'"id":1' in acp.stdout.readline().replace(b" ", b"")
            environ = proc_environ(acp.pid)
        finally:
            acp.kill()
            acp.wait(30)
        assert b"AGENT_LS_CONFIG_DIR=" in environ
        assert USER_KEY.encode() not in environ and SECRET.encode() not in environ
