"""`agent-ls chat` as a real process: an MCP tool that samples asks consent on the terminal."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llm.scripted_server import ScriptedLLM, Turn, text, tool_calls
from tests.servers.launch import knob_stdio_params

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


def chat(llm: ScriptedLLM, tmp: Path, ws: Path, *args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    config = tmp / "config"
    config.mkdir(exist_ok=True)
    (config / "settings.json").write_text(json.dumps({
        "mcpServers": {"knob": knob_stdio_params()},
        "agent": {"deferMcpTools": False, "maxRetries": 0},
    }))
    env = dict(os.environ)
    env.update({"AGENT_LS_CONFIG_DIR": str(config), "AGENT_LS_DATA_DIR": str(tmp / "data"),
                "AGENT_LS_API_BASE": llm.openai_base, "OPENAI_API_KEY": "x"})
    env.pop("AGENT_LS_MODEL", None)
    return subprocess.run([sys.executable, "-m", "agent_ls.cli", "chat", "-w", str(ws), "--model",
                           "openai/scripted", *args], input=stdin, env=env, capture_output=True, text=True,
                          timeout=120)


@pytest.mark.parametrize("answer, tool_sees", [("o", "teal"), ("d", "the user denied the sampling request")])
def test_chat_asks_sampling_consent_on_the_terminal(llm: ScriptedLLM, ws: Path, tmp_path: Path, answer: str,
                                                    tool_sees: str) -> None:
    turns: list[Turn] = [tool_calls([("mcp__knob__sample", {"prompt": "name a colour"})])]
    if answer == "o":
        turns.append(text("teal"))  # the sampling request
    turns.append(text("Done."))
    llm.script(*turns)
    # First line: approve the tool call (its capability is unknown); second: the sampling consent.
    proc = chat(llm, tmp_path, ws, "sample", "something", stdin=f"o\n{answer}\n")
    assert proc.returncode == 0, proc.stderr
    assert "[sampling] MCP server 'knob' asks the model openai/scripted (at most 200 tokens)" in proc.stderr
    assert "user: name a colour" in proc.stderr
    assert tool_sees in proc.stderr  # the tool result line
    sampled = [r for r in llm.requests if not r.stream]
    assert len(sampled) == (1 if answer == "o" else 0)
