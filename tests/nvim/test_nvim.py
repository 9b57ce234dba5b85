"""A second real LSP client: Neovim (Debian's 0.7.2, installed by scripts/setup.sh) starts
agent-ls with its built-in client, sends custom requests and answers the server's requests."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.llm.scripted_server import ScriptedLLM, text, tool_calls
from tests.servers.launch import knob_stdio_params

pytestmark = pytest.mark.e2e

DRIVE = Path(__file__).with_name("drive.lua")
REPO_ROOT = Path(__file__).resolve().parents[2]


def nvim() -> str:
    path = shutil.which("nvim")
    if path is None:
        pytest.fail("nvim is not installed: run `bash scripts/setup.sh` (it installs Debian's neovim)")
    return path


@pytest.fixture(scope="module")
def llm() -> ScriptedLLM:  # type: ignore[misc]
    with ScriptedLLM() as server:
        yield server


def test_neovim_drives_custom_requests(tmp_path: Path, llm: ScriptedLLM) -> None:
    ws = tmp_path / "ws"
    (ws / ".agent-ls").mkdir(parents=True)
    # The folder asks for trust (a server, and a setting that needs trust).
    (ws / ".agent-ls" / "settings.json").write_text(json.dumps({
        "mcpServers": {"wsknob": knob_stdio_params("--name", "wsknob")}, "agent": {"bashTimeout": 30}}))
    (ws / "notes.txt").write_text("notes\n")
    other = tmp_path / "other"
    other.mkdir()
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({
        "model": "openai/scripted", "apiBase": llm.openai_base,
        "agent": {"maxRetries": 0, "deferMcpTools": False},
        "mcpServers": {"knob": knob_stdio_params()},
    }))
    llm.script(tool_calls([("mcp__knob__delete_item", {"id": "n1"})]), text("neovim works"))
    out = tmp_path / "report.json"
    env = dict(os.environ)
    env.update({
        "AGENT_LS_NVIM_CMD": json.dumps([sys.executable, "-m", "agent_ls.cli"]),
        "AGENT_LS_NVIM_ROOT": str(ws), "AGENT_LS_NVIM_OUT": str(out), "AGENT_LS_NVIM_FOLDER": str(other),
        "AGENT_LS_CONFIG_DIR": str(config), "AGENT_LS_DATA_DIR": str(tmp_path / "data"),
        "OPENAI_API_KEY": "x", "PYTHONPATH": str(REPO_ROOT),
        # keep Neovim's state, cache (lsp.log) and config out of $HOME
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"), "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"), "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
    })
    proc = subprocess.run([nvim(), "--headless", "--clean", "-c", f"luafile {DRIVE}"], env=env, cwd=ws,
                          capture_output=True, timeout=180, stdin=subprocess.DEVNULL)
    assert out.exists(), f"nvim wrote no report (exit {proc.returncode}): {proc.stderr.decode()[-2000:]}"
    report = json.loads(out.read_text())
    assert report["errors"] == [], report
    assert proc.returncode == 0
    assert report["steps"] == ["initialized", "status", "prompt", "folder added", "trusted", "stopped"]
    assert report["knob_state"] == "connected"
    assert report["echo"] == "hello from nvim"
    assert report["bad_params"]["code"] == -32602 and "enabled" in report["bad_params"]["message"]
    assert report["prompt"] == {"text": "neovim works", "stopReason": "end"}
    assert report["approvals"] == ["mcp__knob__delete_item"]
    assert report["events"][0] == "turn_started" and report["events"][-1] == "turn_finished"
    assert "tool_call_finished" in report["events"]
    assert llm.requests[-1].body["messages"][-1]["content"] == "deleted item n1"
    # Issue 30 item 5: Neovim 0.7.2's add_workspace_folder() (it sends `removed: [{}]`) adds the folder.
    assert report["workspace_folders"] == [str(ws), str(other)]
    # Issue 30 item 4: no agent/trustWorkspace in Neovim: the standard question, the whole text
    # on "Show what it wants", then the command asks again and "Trust" starts the folder's server.
    asked = report["message_requests"]
    assert [r["actions"] for r in asked] == [["Trust", "Keep restricted", "Show what it wants"],
                                             ["Trust", "Keep restricted"], ["Trust", "Keep restricted", "Show what it wants"]]
    assert str(ws) in asked[0]["message"] and "1 MCP server (wsknob)" in asked[0]["message"]
    assert any("wsknob (stdio)" in m and "runs:" in m for m in report["messages"])
    assert report["trust_command"] == {"folders": [{"folder": str(ws), "trusted": True}], "servers": []}, \
        report["trust_command_error"]
    assert report["wsknob_state"] == "connected"
