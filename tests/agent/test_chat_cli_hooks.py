"""Hooks (issue 43) through `agent-ls chat` as a real process against the scripted LLM: a
PreToolUse hook that blocks `bash`, a UserPromptSubmit hook that blocks the prompt, and a
workspace's hooks that do not run before the folder is trusted. Each run is a `[hook]` line on
stderr."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.agent.test_chat_cli import chat
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


def hooks(**events: str) -> dict[str, Any]:
    """``{"hooks": ...}`` with one command per event (tool events match ``Bash``)."""
    out: dict[str, Any] = {}
    for event, command in events.items():
        group: dict[str, Any] = {"hooks": [{"type": "command", "command": command, "timeout": 30}]}
        if event in ("PreToolUse", "PostToolUse"):
            group["matcher"] = "Bash"
        out[event] = [group]
    return {"hooks": out}


def user_settings(tmp: Path, value: dict[str, Any]) -> None:
    (tmp / "config").mkdir(parents=True, exist_ok=True)
    (tmp / "config" / "settings.json").write_text(json.dumps(value))


def test_a_pre_tool_use_hook_blocks_bash_and_the_model_gets_why(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    user_settings(tmp_path, hooks(PreToolUse="echo 'no touching in this repository' >&2; exit 2"))
    llm.script(tool_calls([("bash", {"command": "touch ran"})]), text("I will not."))
    proc = chat(llm, tmp_path, ws, "make", "a", "file")
    assert proc.returncode == 0, proc.stderr
    assert not (ws / "ran").exists()
    assert "[approve]" not in proc.stderr  # blocked before anyone is asked
    line = [x for x in proc.stderr.splitlines() if x.startswith("[hook]")]
    assert len(line) == 1 and line[0].startswith("[hook] PreToolUse `echo 'no touching in …` blocked ("), line
    assert line[0].endswith("ms): no touching in this repository")
    tool = [m for m in llm.requests[-1].body["messages"] if m["role"] == "tool"][0]["content"]
    assert "a PreToolUse hook blocked it: no touching in this repository" in tool


def test_a_user_prompt_submit_hook_blocks_the_prompt(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    user_settings(tmp_path, hooks(UserPromptSubmit="echo 'no secrets in prompts' >&2; exit 2"))
    proc = chat(llm, tmp_path, ws, "my", "key", "is", "sk-123")
    assert llm.requests == []  # never sent
    assert proc.returncode != 0
    (line,) = [x for x in proc.stderr.splitlines() if x.startswith("[hook]")]  # one line of its own
    assert line.startswith("[hook] UserPromptSubmit `echo 'no secrets in …` blocked ("), line
    assert "[error] no secrets in prompts" in proc.stderr


def test_a_workspace_hook_does_not_run_before_trust(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    canary = tmp_path / "canary"
    settings = hooks(SessionStart=f"touch {canary}", UserPromptSubmit=f"touch {canary}", PreToolUse=f"touch {canary}")
    (ws / ".claude").mkdir()
    (ws / ".claude" / "settings.json").write_text(json.dumps(settings))
    llm.script(tool_calls([("bash", {"command": "true"})]), text("done"))
    proc = chat(llm, tmp_path, ws, "hello")  # no terminal: the folder stays restricted
    assert proc.returncode == 0, proc.stderr
    assert not canary.exists() and "[hook]" not in proc.stderr
    assert "--trust-workspace" in proc.stderr
    # once trusted, the same hooks run (the canary above could have been created)
    llm.script(tool_calls([("bash", {"command": "true"})]), text("done"))
    trusted = chat(llm, tmp_path, ws, "--trust-workspace", "--yes", "hello")
    assert trusted.returncode == 0, trusted.stderr
    assert canary.exists()
    shown = [x.split("`")[0] for x in trusted.stderr.splitlines() if x.startswith("[hook]")]
    assert shown == ["[hook] SessionStart ", "[hook] UserPromptSubmit ", "[hook] PreToolUse "], trusted.stderr
