"""Checkpoints around real agent turns (issue 40): the scripted model (through litellm) makes the
agent write a file with the built-in tool, write another through the npm MCP filesystem server
and run shell commands that create, delete and rename files; a checkpoint taken before the
prompt and finished after it sees every change, and a rewind of code and conversation puts the
workspace and the stored session back, git left byte for byte alone."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
from pathlib import Path

import pytest

from agent_ls.agent.checkpoints import Checkpoints
from agent_ls.agent.store import SessionStore
from agent_ls.config.settings import load_settings
from agent_ls.mcp.manager import MCPManager
from tests.agent.conftest import make_session
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls
from tests.tooling import TRUST_ALL, require_npm

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


def files(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*")) if p.is_file() and ".git" not in p.relative_to(root).parts}


def git_bytes(root: Path) -> dict[str, str]:
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((root / ".git").rglob("*")) if p.is_file()}


async def test_a_turn_by_every_path_is_rewound(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    fs_server = require_npm("mcp-server-filesystem")
    git = shutil.which("git")
    (ws / "old.txt").write_text("old\n")
    (ws / "keep.py").write_text("print('keep')\n")
    if git:
        for args in (["init", "-q"], ["add", "-A"],
                     ["-c", "user.name=t", "-c", "user.email=t@example.com", "commit", "-qm", "first"]):
            subprocess.run([git, *args], cwd=ws, check=True)
    before, before_git = files(ws), git_bytes(ws) if git else {}
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"mcpServers": {"fs": {"command": str(fs_server), "args": [str(ws)]}}}))
    manager = MCPManager(roots=[ws])
    await manager.apply(load_settings([ws], user_settings=user, trust=TRUST_ALL))
    await manager.wait_ready(60)
    store = SessionStore.for_workspace(tmp_path / "data", ws)
    cps = Checkpoints.for_workspace(tmp_path / "data", [ws])
    try:
        session = make_session(llm, ws, mcp=manager, store=store, defer=False)
        llm.script(text("hello"))
        await session.prompt("say hello")
        llm.script(
            tool_calls([("write_file", {"path": "keep.py", "content": "print('changed by the agent')\n"})]),
            tool_calls([("mcp__fs__write_file", {"path": str(ws / "from_mcp.txt"), "content": "written by MCP\n"})]),
            tool_calls([("bash", {"command": "printf '{}' > package.json && rm old.txt && mkdir lib && "
                                             "mv keep.py lib/keep.py && cp lib/keep.py again.py"})]),
            text("done"),
        )
        cp = cps.begin(session.session_id, session.turns, "change things")  # before the prompt
        result = await session.prompt("change things")
        cp = cps.finish(cp)  # after the turn
        assert result.text == "done"
        assert (ws / "from_mcp.txt").read_text() == "written by MCP\n"
        assert sorted(str(Path(p).relative_to(ws)) for p in cp.changed) == [
            "again.py", "from_mcp.txt", "keep.py", "lib/keep.py", "old.txt", "package.json"]

        plan = cps.plan_rewind(cp.id)
        cps.rewind(plan, code=True, conversation=True, store=store)
        assert files(ws) == before
        if git:
            assert git_bytes(ws) == before_git
        history = store.load_messages(session.session_id)
        assert [m["content"] for m in history if m["role"] == "user"] == ["say hello"]

        cps.redo(cps.plan_redo(session.session_id), store=store)
        assert (ws / "lib" / "keep.py").read_text() == "print('changed by the agent')\n"
        assert [m["content"] for m in store.load_messages(session.session_id) if m["role"] == "user"] == [
            "say hello", "change things"]
    finally:
        cps.close()
        store.close()
        await manager.close()
