"""The ACP channel: stdout is guarded, frames are checked (no agent process needed)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_ls.acp.stdio import _shape_problem
from agent_ls.acp.updates import history_updates, tool_kind, tool_title
from agent_ls.core.tools import Capability, ToolSpec

REPO_ROOT = Path(__file__).resolve().parents[2]


def test_stray_prints_never_reach_the_protocol_channel() -> None:
    script = (
        "import os, sys\n"
        "from agent_ls.acp.stdio import guard_stdout\n"
        "fd = guard_stdout()\n"
        "print('stray print')\n"
        "os.system('echo stray child output')\n"
        "os.write(fd, b'{\"frame\": 1}\\n')\n"
    )
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, cwd=REPO_ROOT, timeout=60)
    assert out.returncode == 0, out.stderr
    assert out.stdout == b'{"frame": 1}\n'
    assert b"stray print" in out.stderr and b"stray child output" in out.stderr


@pytest.mark.parametrize(("message", "problem"), [
    ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {}}, None),
    ({"jsonrpc": "2.0", "method": "session/cancel", "params": {"sessionId": "s"}}, None),
    ({"jsonrpc": "2.0", "id": 3, "result": {}}, None),
    ({"jsonrpc": "2.0", "id": 3, "error": {"code": 1, "message": "x"}}, None),
    ([{"jsonrpc": "2.0", "id": 1, "method": "initialize"}], "batches"),
    (42, "JSON object"),
    ({"jsonrpc": "2.0", "id": 4}, "needs"),
    ({"jsonrpc": "2.0", "id": 5, "method": ["x"]}, "string"),
    ({"jsonrpc": "2.0", "id": 6, "method": "initialize", "params": 7}, "params"),
])
def test_frame_shapes(message: object, problem: str | None) -> None:
    found = _shape_problem(message)
    if problem is None:
        assert found is None
    else:
        assert found is not None and problem in found


def test_tool_kinds_and_titles() -> None:
    def mcp(cap: Capability) -> ToolSpec:
        return ToolSpec(name="mcp__gh__x", description="", input_schema={}, capability=cap, server="gh",
                        display_name="x")

    assert [tool_kind(n, None) for n in ("read_file", "edit_file", "grep", "bash", "nope")] == [
        "read", "edit", "search", "execute", "other"]
    assert [tool_kind("mcp__gh__x", mcp(c)) for c in Capability] == ["read", "edit", "fetch", "other"]
    assert tool_title("bash", {"command": "pytest -q"}, None) == "Run `pytest -q`"
    assert tool_title("mcp__gh__x", {}, mcp(Capability.READ)) == "x (gh)"


def test_history_replay_marks_errors_failed(tmp_path: Path) -> None:
    messages = [
        {"role": "user", "content": "go"},
        {"role": "assistant", "content": "", "tool_calls": [
            {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": "{\"command\": \"false\"}"}}]},
        {"role": "tool", "tool_call_id": "c1", "content": "Error: exit 1"},
        {"role": "assistant", "content": "It failed."},
    ]
    updates = history_updates(messages, tmp_path, {})
    assert [u.session_update for u in updates] == ["user_message_chunk", "tool_call", "tool_call_update",
                                                   "agent_message_chunk"]
    assert updates[1].kind == "execute" and updates[2].status == "failed"
