"""`agent-ls hooks list` as a real process (issue 43): the hooks in effect and where each comes
from; a folder's hooks wait for its trust, then count."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

AGENT_LS = [sys.executable, "-m", "agent_ls.cli"]


def run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "AGENT_LS_CONFIG_DIR": str(tmp_path / "config"), "AGENT_LS_DATA_DIR": str(tmp_path / "data")}
    env.pop("AGENT_LS_USER_SETTINGS", None)
    return subprocess.run([*AGENT_LS, *args], env=env, capture_output=True, text=True, timeout=60, check=False)


def test_hooks_list_shows_each_hook_and_its_source(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    (ws / ".claude").mkdir(parents=True)
    (ws / ".claude" / "settings.json").write_text(json.dumps(
        {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "./check.sh --strict"}]}]}}))
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "settings.json").write_text(json.dumps(
        {"hooks": {"Stop": [{"hooks": [{"type": "command", "command": "notify-send done", "timeout": 5}]}],
                   "PostToolUse": [{"matcher": "(", "hooks": []}]}}))
    before = run(tmp_path, "hooks", "list", "-w", str(ws))
    assert before.returncode == 0, before.stderr
    assert "Stop (timeout 5 s, user:" in before.stdout and "runs: notify-send done" in before.stdout
    waiting = before.stdout.split("Not in effect until you trust the workspace")[1]
    assert "runs: ./check.sh --strict" in waiting and ".claude/settings.json" in waiting
    assert "hooks.PostToolUse[0].matcher" in before.stderr and "not a valid regular expression" in before.stderr
    assert run(tmp_path, "trust", "-w", str(ws)).returncode == 0
    after = json.loads(run(tmp_path, "hooks", "list", "--json", "-w", str(ws)).stdout)
    assert {(h["event"], h["command"], h["scope"]) for h in after["hooks"]} == {
        ("Stop", "notify-send done", "user"), ("PreToolUse", "./check.sh --strict", "claude")}
    assert after["awaitingTrust"] == []
