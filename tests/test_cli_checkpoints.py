"""`agent-ls checkpoints list|restore|redo` run as real processes, on checkpoints taken around
real shell commands and a session stored in the real session database (issue 40)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from agent_ls.agent.checkpoints import Checkpoints
from agent_ls.agent.store import SessionStore

AGENT_LS = [sys.executable, "-m", "agent_ls.cli"]


def run(env: dict[str, str], *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([*AGENT_LS, *args], env=env, cwd=cwd, capture_output=True, text=True, timeout=90,
                          stdin=subprocess.DEVNULL)


@pytest.fixture
def setup(tmp_path: Path) -> tuple[dict[str, str], Path, str, list[str]]:
    """A workspace with a session of two prompts, each with its checkpoint."""
    env = {**os.environ, "AGENT_LS_CONFIG_DIR": str(tmp_path / "config"), "AGENT_LS_DATA_DIR": str(tmp_path / "data")}
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.txt").write_text("a\n")
    (ws / "old.txt").write_text("old\n")
    ids = []
    with Checkpoints.for_workspace(tmp_path / "data", [ws]) as cps, \
            SessionStore.for_workspace(tmp_path / "data", ws) as store:
        sid = store.create_session().id
        for i, script in enumerate(["echo A > a.txt && touch new.txt", "rm old.txt && mv new.txt renamed.txt"]):
            cp = cps.begin(sid, i, f"prompt number {i}")
            store.append_message(sid, {"role": "user", "content": f"prompt number {i}"})
            subprocess.run(["bash", "-c", script], cwd=ws, check=True)
            store.append_message(sid, {"role": "assistant", "content": "done"})
            ids.append(cps.finish(cp).id)
    return env, ws, sid, ids


def test_list_as_text_and_json(setup: tuple[dict[str, str], Path, str, list[str]]) -> None:
    env, ws, sid, ids = setup
    out = run(env, "checkpoints", "list", "--json", cwd=ws)
    assert out.returncode == 0, out.stderr
    items = json.loads(out.stdout)["checkpoints"]
    assert [c["id"] for c in items] == ids and items[1]["prompt"] == 2 and items[0]["session"] == sid
    assert sorted(os.path.basename(p) for p in items[1]["changed"]) == ["new.txt", "old.txt", "renamed.txt"]
    out = run(env, "checkpoints", "list", "--session", sid, "--workspace", str(ws), cwd=ws.parent)
    assert out.returncode == 0 and ids[0] in out.stdout and "prompt number 1" in out.stdout


def test_restore_asks_then_rewinds_code_and_conversation_and_redoes(
        setup: tuple[dict[str, str], Path, str, list[str]], tmp_path: Path) -> None:
    env, ws, sid, ids = setup
    out = run(env, "checkpoints", "restore", ids[0], cwd=ws)  # no terminal, no --yes: only shows
    assert out.returncode == 1 and "a.txt: restore" in out.stdout and "new.txt" not in out.stdout
    assert "renamed.txt: delete (created by the agent)" in out.stdout and "--yes" in out.stderr
    assert (ws / "a.txt").read_text() == "A\n"

    out = run(env, "checkpoints", "restore", ids[0][:6], "--both", "--yes", cwd=ws)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt", "old.txt"] and (ws / "a.txt").read_text() == "a\n"
    with SessionStore.for_workspace(tmp_path / "data", ws) as store:
        assert store.load_messages(sid) == []

    out = run(env, "checkpoints", "redo", sid, "--yes", cwd=ws)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt", "renamed.txt"]
    with SessionStore.for_workspace(tmp_path / "data", ws) as store:
        assert len(store.load_messages(sid)) == 4


def test_restore_code_only_keeps_the_conversation(setup: tuple[dict[str, str], Path, str, list[str]],
                                                  tmp_path: Path) -> None:
    env, ws, sid, ids = setup
    out = run(env, "checkpoints", "restore", ids[1], "--code", "--yes", cwd=ws)
    assert out.returncode == 0, out.stderr
    assert sorted(p.name for p in ws.iterdir()) == ["a.txt", "new.txt", "old.txt"]
    with SessionStore.for_workspace(tmp_path / "data", ws) as store:
        assert len(store.load_messages(sid)) == 4


def test_bad_checkpoints_are_clear_errors(setup: tuple[dict[str, str], Path, str, list[str]], tmp_path: Path) -> None:
    env, ws, _sid, ids = setup
    out = run(env, "checkpoints", "restore", "0123456789ab", "--yes", cwd=ws)
    assert out.returncode == 2 and "no checkpoint '0123456789ab'" in out.stderr
    other = tmp_path / "other"
    other.mkdir()
    out = run(env, "checkpoints", "restore", ids[0], "--yes", "--workspace", str(other), cwd=ws)
    assert out.returncode == 2 and "belongs to another workspace" in out.stderr
    assert (ws / "a.txt").read_text() == "A\n"


def test_the_plan_flags_protected_files(tmp_path: Path) -> None:
    """`restore`'s plan (also `/rewind N` in the chat) names a protected file's reason."""
    import io

    from agent_ls.cli.checkpoints import print_plan

    ws = tmp_path / "ws"
    (ws / ".vscode").mkdir(parents=True)
    (ws / ".vscode" / "tasks.json").write_text("{}\n")
    with Checkpoints.for_workspace(tmp_path / "data", [ws]) as cps:
        cp = cps.begin("s", 0, "p")
        (ws / ".vscode" / "tasks.json").write_text('{"tasks": [1]}\n')
        (ws / "plain.txt").write_text("x\n")
        cps.finish(cp)
        out = io.StringIO()
        print_plan(cps.plan_rewind(cp.id), cps.roots, True, file=out)
    lines = out.getvalue().splitlines()
    assert any(".vscode/tasks.json: restore [protected: VS Code runs tasks" in line for line in lines), lines
    assert any(line.strip() == "plain.txt: delete (created by the agent)" for line in lines), lines
