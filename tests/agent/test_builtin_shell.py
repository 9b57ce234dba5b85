"""The bash built-in tool, called directly on a real temporary workspace: the working directory,
exit codes, timeouts and cancellation that kill the whole process group, and the output cap."""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest

from agent_ls.agent.builtin_tools.shell import BashTool
from agent_ls.agent.workspace import Workspace
from tests.agent.helpers import call, root, tools_for

__all__ = ["root"]  # the fixture, from tests/agent/helpers.py


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purposes
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


async def wait_dead(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        await asyncio.sleep(0.05)
    return not pid_alive(pid)


# --- bash ---------------------------------------------------------------------------------


async def test_bash_runs_in_the_workspace_root_with_empty_stdin(root: Path) -> None:
    r = await call(root, "bash", command="pwd; cat; echo err >&2; echo out")
    assert not r.is_error
    lines = r.content.splitlines()
    assert lines[0] == str(root.resolve())
    assert "err" in lines and "out" in lines and lines[-1] == "[exit code 0]"


async def test_bash_exit_code_is_an_error_result(root: Path) -> None:
    r = await call(root, "bash", command="echo before; exit 3")
    assert r.is_error and "before" in r.content and r.content.endswith("[exit code 3]")
    r = await call(root, "bash", command="true")
    assert not r.is_error and r.content.startswith("(no output)")
    r = await call(root, "bash", command="kill -TERM $$")
    assert r.is_error and "[killed by SIGTERM]" in r.content


async def test_bash_timeout_kills_the_whole_process_group(root: Path) -> None:
    t = BashTool(Workspace([root]), timeout=60)
    r = await t.call({"command": "sleep 300 & echo $! > child.pid; echo started; wait", "timeout": 0.7})
    assert r.is_error
    assert r.content.startswith("Command timed out after 0.7 s and was killed.")
    assert "started" in r.content and "timed out after 0.7 s" in r.content
    child = int((root / "child.pid").read_text())
    assert await wait_dead(child), "the background child survived the timeout"


async def test_bash_default_timeout_comes_from_the_tool(root: Path) -> None:
    t = BashTool(Workspace([root]), timeout=0.5)
    r = await t.call({"command": "sleep 30"})
    assert r.is_error and "timed out after 0.5 s" in r.content
    assert "Default timeout 0.5 s" in t.spec.description
    too_long = await t.call({"command": "true", "timeout": 10_000})
    assert too_long.is_error and "at most" in too_long.content


async def test_bash_background_job_holding_output_does_not_hang(root: Path) -> None:
    r = await asyncio.wait_for(call(root, "bash", command="(sleep 60; echo late) & echo now"), 20)
    assert "now" in r.content and "late" not in r.content
    assert "background processes" in r.content and "[exit code 0]" in r.content


async def test_bash_output_cap_keeps_head_and_tail_with_a_marker(root: Path) -> None:
    t = BashTool(Workspace([root]), output_cap_chars=1000)
    r = await t.call({"command": "seq 1 100000"})
    assert not r.is_error and r.truncated_chars > 500_000
    assert r.content.startswith("1\n2\n3\n")
    assert f"[... {r.truncated_chars} characters cut ...]" in r.content
    assert "99999\n100000\n[exit code 0]" in r.content
    assert len(r.content) < 1200


async def test_bash_cancel_kills_the_process_group(root: Path) -> None:
    t = tools_for(root)["bash"]
    task = asyncio.create_task(t.call({"command": "echo $$ > shell.pid; sleep 300 & echo $! > child.pid; wait"}))
    for _ in range(200):
        if (root / "child.pid").exists() and (root / "child.pid").read_text().strip():
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for f in ("shell.pid", "child.pid"):
        assert await wait_dead(int((root / f).read_text())), f


async def test_bash_nul_byte_and_pager_env(root: Path) -> None:
    r = await call(root, "bash", command="echo a\x00b")
    assert r.is_error and "NUL" in r.content
    r = await call(root, "bash", command="echo $PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT")
    assert r.content.splitlines()[0] == "cat cat 0"


# --- the environment (issue 25, item 6) ---------------------------------------------------

PROVIDER_KEY = "sk-provider-key-0123456789"


async def test_an_approved_command_does_not_see_the_agents_secrets(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_ls.core import redact

    registered = "registered-secret-value-42"
    monkeypatch.setattr(redact, "_live_secrets", {*redact._live_secrets, registered})
    secrets = {"OPENAI_API_KEY": PROVIDER_KEY, "ANTHROPIC_API_KEY": "sk-ant-1234567", "GITHUB_TOKEN": "ghp_12345678",
               "DB_PASSWORD": "hunter2hunter2", "AWS_SECRET_ACCESS_KEY": "aws-secret-123", "MY_APIKEY": "apikey-1234",
               "innocent_name": registered}
    for k, v in secrets.items():
        monkeypatch.setenv(k, v)
    monkeypatch.setenv("AGENT_LS_VISIBLE", "plain-value")
    r = await call(root, "bash", command="printenv OPENAI_API_KEY; env; echo \"[$AGENT_LS_VISIBLE]\"")
    for name, value in secrets.items():
        assert value not in r.content and f"{name}=" not in r.content, name
    assert "[plain-value]" in r.content and "PATH=" in r.content and "HOME=" in r.content


async def test_named_variables_pass_through(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("OPENAI_API_KEY", PROVIDER_KEY)
    monkeypatch.setenv("NPM_TOKEN", "npm-token-123456")
    tool = tools_for(root, bash_env_passthrough=("NPM_TOKEN",))["bash"]
    r = await tool.call({"command": "echo \"[$NPM_TOKEN][$OPENAI_API_KEY]\""})
    assert "[npm-token-123456][]" in r.content


def test_shell_environment_names() -> None:
    from agent_ls.agent.builtin_tools.shell import shell_environment

    env = {"PATH": "/bin", "HOME": "/h", "LANG": "C.UTF-8", "TERM": "dumb", "USER": "me", "PWD": "/w",
           "OPENAI_API_KEY": "x", "AZURE_OPENAI_API_KEY": "x", "HF_TOKEN": "x", "REPLICATE_API_TOKEN": "x",
           "AWS_SESSION_TOKEN": "x", "GOOGLE_APPLICATION_CREDENTIALS": "x", "PGPASSWORD": "x",
           "CLIENT_SECRET": "x", "SSH_AUTH_SOCK": "x", "WATSONX_APIKEY": "x", "SLACK_BOT_TOKEN": "x"}
    assert sorted(shell_environment(env)) == ["HOME", "LANG", "PATH", "PWD", "TERM", "USER"]
    assert "SSH_AUTH_SOCK" in shell_environment(env, ["SSH_AUTH_SOCK"])
