"""Issue 25 through `agent-ls chat` as a real process: a command the user allowed runs without
the provider key and the other secrets agent-ls was started with (item 6)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from tests.adversarial import SECRET, SECRET_ENV, USER_KEY
from tests.leftovers import environ_without_agent_ls
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


def test_chat_runs_an_allowed_command_without_the_agents_secrets(tmp_path: Path) -> None:
    config = tmp_path / "config"
    config.mkdir()
    ws = tmp_path / "ws"
    ws.mkdir()
    with ScriptedLLM() as llm:
        (config / "settings.json").write_text(json.dumps({
            "model": "openai/scripted", "apiBase": llm.openai_base, "agent": {"maxRetries": 0},
            "permissions": {"allow": ["bash"]}}))
        env = environ_without_agent_ls()
        env.update({"AGENT_LS_CONFIG_DIR": str(config), "AGENT_LS_DATA_DIR": str(tmp_path / "data"), **SECRET_ENV})
        llm.script(tool_calls([("bash", {"command": 'printenv OPENAI_API_KEY; echo "[$SECRET_TOKEN]"'})]),
                   text("done"))
        chat = subprocess.run([sys.executable, "-m", "agent_ls.cli", "chat", "-w", str(ws), "make", "test"],
                              env=env, capture_output=True, text=True, timeout=120)
        assert chat.returncode == 0, chat.stderr
        tool_result = json.dumps(llm.requests[-1].body["messages"][-1])
        # (a plain `$VAR`: the "bash" rule covers it; `${VAR:-x}` is not checked part by part and would ask)
        assert "[]" in tool_result and "exit code 1" not in tool_result  # echo ran last, exit 0
        assert USER_KEY not in tool_result and SECRET not in tool_result
        assert llm.requests[0].headers.get("authorization") == f"Bearer {USER_KEY}"  # the agent itself has the key
