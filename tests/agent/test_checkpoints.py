"""Checkpoints and rewind (issue 40) on real files: shell commands that create, delete, rename
and chmod files, a real git repository left byte for byte alone, a folder without git, files the
user changed meanwhile, a file that became a folder, no write permission, redo, and the
conversation part in the session store."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path

import pytest

from agent_ls.agent.checkpoints import (
    CONFLICT,
    DELETE,
    KEEP,
    RECREATE,
    RESTORE,
    UNRESTORABLE,
    CheckpointError,
    Checkpoints,
    Limits,
    RewindError,
)
from agent_ls.agent.store import SessionStore, ToolRun
from agent_ls.agent.tools.output_store import StoredOutput

GIT = shutil.which("git")


def tree_state(root: Path) -> dict[str, tuple[str, int]]:
    """Every file outside .git: its content hash (or link target) and permission bits."""
    out: dict[str, tuple[str, int]] = {}
    for dirpath, dirs, files in os.walk(root):
        dirs[:] = [d for d in dirs if d != ".git"]
        for name in files:
            p = Path(dirpath, name)
            rel = str(p.relative_to(root))
            if p.is_symlink():
                out[rel] = ("link:" + os.readlink(p), 0)
            else:
                out[rel] = (hashlib.sha256(p.read_bytes()).hexdigest(), stat.S_IMODE(p.lstat().st_mode))
    return out


def git_dir_state(root: Path) -> dict[str, str]:
    """Every file of .git, hashed (HEAD, index, config, refs, objects, hooks...)."""
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted((root / ".git").rglob("*")) if p.is_file()}


def git(root: Path, *args: str) -> str:
    assert GIT
    return subprocess.run([GIT, "--no-optional-locks", *args], cwd=root, check=True, capture_output=True,
                          text=True).stdout


def sh(root: Path, script: str) -> None:
    subprocess.run(["bash", "-c", script], cwd=root, check=True)


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "src").mkdir(parents=True)
    (root / "src" / "app.py").write_text("print('app')\n")
    (root / "src" / "util.py").write_text("def util():\n    return 1\n")
    (root / "old.txt").write_text("old\n")
    (root / "notes.md").write_text("# notes\n")
    (root / "run.sh").write_text("#!/bin/sh\necho run\n")
    (root / "run.sh").chmod(0o755)
    os.symlink("src/app.py", root / "link.py")
    return root


@pytest.fixture
def cps(tmp_path: Path, ws: Path) -> Checkpoints:
    c = Checkpoints.for_workspace(tmp_path / "data", [ws])
    yield c
    c.close()


TURN = """
    npm_init() { printf '{"name": "demo"}\\n' > package.json; }
    npm_init && rm old.txt
    echo "print('changed')" > src/app.py
    mv src/util.py src/helpers.py
    mkdir -p build/out && echo artefact > build/out/a.bin
    chmod 600 run.sh
    ln -sfn notes.md link.py
"""


def test_rewind_restores_every_shell_change_and_never_touches_git(tmp_path: Path, ws: Path, cps: Checkpoints) -> None:
    if GIT is None:
        pytest.skip("git is not installed")
    git(ws, "init", "-q", "-b", "main")
    git(ws, "config", "user.email", "t@example.com")
    git(ws, "config", "user.name", "t")
    git(ws, "add", "-A")
    git(ws, "commit", "-q", "-m", "first")
    (ws / "notes.md").write_text("# notes\nstaged line\n")
    git(ws, "add", "notes.md")  # a staged change: the index differs from HEAD
    before_files = tree_state(ws)
    before_git = git_dir_state(ws)
    head = git(ws, "rev-parse", "HEAD")
    status = git(ws, "status", "--porcelain")

    cp = cps.begin("s1", 0, "init npm and tidy up")
    sh(ws, TURN)
    cp = cps.finish(cp)
    assert {os.path.relpath(p, ws) for p in cp.changed} == {
        "package.json", "old.txt", "src/app.py", "src/util.py", "src/helpers.py", "build/out/a.bin", "run.sh",
        "link.py"}
    assert git_dir_state(ws) == before_git  # the checkpoint read and wrote nothing in .git

    plan = cps.plan_rewind(cp.id)
    actions = {os.path.relpath(a.path, ws): a.action for a in plan.actions}
    assert actions == {"package.json": DELETE, "old.txt": RECREATE, "src/app.py": RESTORE,
                       "src/util.py": RECREATE, "src/helpers.py": DELETE, "build/out/a.bin": DELETE,
                       "run.sh": RESTORE, "link.py": RESTORE}
    result = cps.rewind(plan)
    assert tree_state(ws) == before_files
    assert not (ws / "build").exists()  # the folders the turn made are gone too
    assert git_dir_state(ws) == before_git  # HEAD, index, config, refs, objects: byte for byte
    assert git(ws, "rev-parse", "HEAD") == head
    assert git(ws, "status", "--porcelain") == status
    assert result.checkpoint.rewound and cps.can_redo("s1")
    assert not list(ws.glob(".agent-ls-rewind-*"))


def test_folder_without_git_and_without_the_git_program(tmp_path: Path, ws: Path, cps: Checkpoints,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    before = tree_state(ws)
    cp = cps.begin("s1", 0, "p")
    sh(ws, TURN)
    after = tree_state(ws)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))  # no git (nor anything else) to run
    cp = cps.finish(cp)
    cps.rewind(cps.plan_rewind(cp.id))
    assert tree_state(ws) == before
    cps.redo(cps.plan_redo("s1"))
    assert tree_state(ws) == after


def test_a_file_the_user_changed_since_is_reported_not_overwritten(ws: Path, cps: Checkpoints) -> None:
    cp1 = cps.begin("s1", 0, "first")
    (ws / "src" / "app.py").write_text("agent 1\n")
    (ws / "notes.md").write_text("agent 1\n")
    cps.finish(cp1)
    (ws / "notes.md").write_text("the user's own words\n")  # between the turns
    (ws / "old.txt").write_text("only the user touched this\n")
    cp2 = cps.begin("s1", 1, "second")
    (ws / "src" / "util.py").write_text("agent 2\n")
    cps.finish(cp2)
    (ws / "src" / "util.py").write_text("user after the last turn\n")

    plan = cps.plan_rewind(cp1.id)
    actions = {os.path.relpath(a.path, ws): a.action for a in plan.actions}
    assert actions == {"src/app.py": RESTORE, "notes.md": CONFLICT, "src/util.py": CONFLICT, "old.txt": KEEP}
    result = cps.rewind(plan)
    assert (ws / "src" / "app.py").read_text() == "print('app')\n"
    assert (ws / "notes.md").read_text() == "the user's own words\n"
    assert (ws / "src" / "util.py").read_text() == "user after the last turn\n"
    assert (ws / "old.txt").read_text() == "only the user touched this\n"
    assert sorted(os.path.relpath(p, ws) for p in result.left_alone) == ["notes.md", "src/util.py"]
    assert [c.id for c in cps.list("s1")] == []  # both turns are rewound (kept for a redo)

    plan = cps.plan_redo("s1")
    assert not plan.conversation  # the rewind took the files alone: so does its redo
    cps.redo(plan)
    assert (ws / "src" / "app.py").read_text() == "agent 1\n"
    assert [c.id for c in cps.list("s1")] == [cp1.id, cp2.id]
    result = cps.rewind(cps.plan_rewind(cp1.id), overwrite=True)  # the user asked for it
    assert (ws / "notes.md").read_text() == "# notes\n"
    assert (ws / "src" / "util.py").read_text() == "def util():\n    return 1\n"


def test_a_file_that_became_a_folder(ws: Path, cps: Checkpoints) -> None:
    cp = cps.begin("s1", 0, "p")
    sh(ws, "rm old.txt && mkdir -p old.txt/inner && echo x > old.txt/inner/x && echo y > old.txt/y")
    cps.finish(cp)
    cps.rewind(cps.plan_rewind(cp.id))
    assert (ws / "old.txt").read_text() == "old\n"

    # a folder holding something the rewind would not restore is an error, and nothing changes
    cps.redo(cps.plan_redo("s1"))
    assert (ws / "old.txt" / "y").read_text() == "y\n"
    (ws / ".gitignore").write_text("*.cache\n")
    (ws / "old.txt" / "keep.cache").write_text("ignored, so not in any checkpoint\n")
    before = tree_state(ws)
    with pytest.raises(RewindError, match=r"old.txt is a folder now and holds .*keep.cache.*Nothing was changed"):
        cps.rewind(cps.plan_rewind(cp.id))
    assert tree_state(ws) == before


def test_a_file_changed_after_the_plan_makes_the_rewind_change_nothing(ws: Path, cps: Checkpoints) -> None:
    cp = cps.begin("s1", 0, "p")
    (ws / "src" / "app.py").write_text("agent\n")
    (ws / "notes.md").write_text("agent\n")
    cps.finish(cp)
    plan = cps.plan_rewind(cp.id)
    (ws / "src" / "app.py").write_text("typed after the plan was shown\n")
    before = tree_state(ws)
    with pytest.raises(RewindError, match="app.py changed since the rewind was planned.*Nothing was changed"):
        cps.rewind(plan)
    assert tree_state(ws) == before
    assert not cps.get(cp.id).rewound


_NO_PERMISSION = textwrap.dedent("""
    import json, os, sys
    from pathlib import Path
    from agent_ls.agent.checkpoints import Checkpoints, RewindError
    ws, data = Path(sys.argv[1]), Path(sys.argv[2])
    cps = Checkpoints.for_workspace(data, [ws])
    cp = cps.begin("s1", 0, "p")
    (ws / "a_first" / "f.txt").write_text("agent\\n")
    (ws / "z_locked" / "g.txt").write_text("agent\\n")
    cps.finish(cp)
    os.chmod(ws / "z_locked", 0o555)  # the user locked the folder
    try:
        cps.rewind(cps.plan_rewind(cp.id))
        print(json.dumps({"error": None}))
    except RewindError as exc:
        print(json.dumps({"error": str(exc)}))
""")


def test_no_write_permission_changes_nothing(tmp_path: Path) -> None:
    if os.geteuid() == 0:  # pytest's tmp_path is root's alone: a folder nobody can use
        tmp_path = Path(tempfile.mkdtemp(prefix="agent-ls-perm-"))
    ws = tmp_path / "perm"
    for d in ("a_first", "z_locked"):
        (ws / d).mkdir(parents=True)
        (ws / d / ("f.txt" if d == "a_first" else "g.txt")).write_text("before\n")
    script = tmp_path / "script.py"
    script.write_text(_NO_PERMISSION)
    argv = [sys.executable, str(script), str(ws), str(tmp_path / "data")]
    if os.geteuid() == 0:  # root writes anywhere: run as nobody (permissions mean something there)
        setpriv = shutil.which("setpriv")
        if setpriv is None:
            pytest.skip("running as root without setpriv")
        for p in [tmp_path, *tmp_path.rglob("*")]:
            os.chown(p, 65534, 65534)
        argv = [setpriv, "--reuid=65534", "--regid=65534", "--clear-groups", *argv]
    out = subprocess.run(argv, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "HOME": str(tmp_path)})
    assert out.returncode == 0, out.stderr
    error = json.loads(out.stdout)["error"]
    assert error is not None and "no permission" in error and "nothing was changed" in error
    assert (ws / "a_first" / "f.txt").read_text() == "agent\n"  # put back after the failed step
    assert (ws / "z_locked" / "g.txt").read_text() == "agent\n"
    assert not list(ws.glob(".agent-ls-rewind-*"))
    if os.geteuid() == 0:
        shutil.rmtree(tmp_path)


def test_ignored_large_and_node_modules_files_are_not_kept(tmp_path: Path, ws: Path) -> None:
    (ws / ".gitignore").write_text("*.log\n/dist/\n!keep.log\n")
    (ws / "sub").mkdir()
    (ws / "sub" / ".gitignore").write_text("secret.txt\n")
    (ws / "sub" / "secret.txt").write_text("s")
    (ws / "x.log").write_text("ignored")
    (ws / "keep.log").write_text("kept")
    (ws / "dist").mkdir()
    (ws / "dist" / "bundle.js").write_text("ignored")
    (ws / "node_modules" / "pkg").mkdir(parents=True)
    (ws / "node_modules" / "pkg" / "index.js").write_text("ignored")
    (ws / "big.bin").write_bytes(b"\0" * 5000)
    with Checkpoints.for_workspace(tmp_path / "data", [ws], Limits(max_file_bytes=4096)) as cps:
        cp = cps.begin("s1", 0, "p")
        assert [(n.path, n.reason) for n in cp.not_kept] == [("big.bin", "larger than 4096 bytes")]
        sh(ws, "echo changed > x.log; echo changed > keep.log; echo changed > dist/bundle.js; "
               "echo changed > node_modules/pkg/index.js; echo changed > sub/secret.txt; head -c 6000 /dev/zero > big.bin")
        cp = cps.finish(cp)
        assert sorted(os.path.relpath(p, ws) for p in cp.changed) == ["big.bin", "keep.log"]
        plan = cps.plan_rewind(cp.id)
        assert {os.path.relpath(a.path, ws): a.action for a in plan.actions} == {
            "keep.log": RESTORE, "big.bin": UNRESTORABLE}
        result = cps.rewind(plan)
        assert (ws / "keep.log").read_text() == "kept"
        assert (ws / "x.log").read_text() == "changed\n"
        assert [os.path.relpath(p, ws) for p in result.left_alone] == ["big.bin"]
        with sqlite3.connect(tmp_path / "data" / "checkpoints" / "objects.sqlite3") as db:
            found = {cps.objects.get(d) for (d,) in db.execute("SELECT digest FROM objects")}
        assert b"ignored" not in found and b"s" not in found and b"kept" in found


def test_storage_is_bounded_with_notes_and_private(tmp_path: Path, ws: Path) -> None:
    with Checkpoints.for_workspace(tmp_path / "data", [ws], Limits(session_checkpoints=3)) as cps:
        ids = []
        for i in range(5):
            cp = cps.begin("s1", i, f"prompt {i}")
            (ws / f"file{i}.txt").write_text(f"{i}\n" * 1000)
            ids.append(cps.finish(cp).id)
        assert [c.id for c in cps.list("s1")] == ids[2:]
        notes = cps.notes("s1")
        assert len(notes) == 2 and ids[0] in notes[0] and "at most 3 checkpoints" in notes[0]
        # the objects only the dropped checkpoints needed are gone; the kept ones still rewind
        cps.rewind(cps.plan_rewind(ids[2]))
        assert not (ws / "file2.txt").exists() and (ws / "file1.txt").exists()
    with Checkpoints.for_workspace(tmp_path / "data", [ws], Limits(total_bytes=1)) as cps:
        cps.begin("s2", 0, "a")
        cps.begin("s2", 1, "b")
        assert len(cps.list("s2")) == 1 and "all checkpoints together may use 1 bytes" in cps.notes("s2")[0]
    data = tmp_path / "data" / "checkpoints"
    for p in [data, *data.rglob("*")]:
        mode = stat.S_IMODE(p.stat().st_mode)
        assert mode & 0o077 == 0, (p, oct(mode))


def test_unknown_checkpoints_and_other_workspaces(tmp_path: Path, ws: Path, cps: Checkpoints) -> None:
    with pytest.raises(CheckpointError, match="no checkpoint 'feedbeef'"):
        cps.plan_rewind("feedbeef")
    with pytest.raises(CheckpointError, match="no checkpoint"):
        cps.plan_rewind("../etc")
    other = tmp_path / "other"
    other.mkdir()
    with Checkpoints.for_workspace(tmp_path / "data", [other]) as elsewhere:
        cp = elsewhere.begin("s9", 0, "p")
    with pytest.raises(CheckpointError, match=f"checkpoint {cp.id} belongs to another workspace"):
        cps.plan_rewind(cp.id)
    with pytest.raises(CheckpointError, match="no rewind to redo"):
        cps.plan_redo("s1")


def test_redo_is_possible_until_the_next_checkpoint(ws: Path, cps: Checkpoints) -> None:
    cp = cps.begin("s1", 0, "p")
    (ws / "new.txt").write_text("new\n")
    cps.finish(cp)
    cps.rewind(cps.plan_rewind(cp.id))
    assert not (ws / "new.txt").exists() and cps.can_redo("s1")
    cps.begin("s1", 0, "another prompt instead")
    assert not cps.can_redo("s1")
    assert [c.prompt for c in cps.list("s1", include_rewound=True)] == ["another prompt instead"]


def test_conversation_rewind_and_redo(tmp_path: Path, ws: Path, cps: Checkpoints) -> None:
    with SessionStore.for_workspace(tmp_path / "data", ws) as store:
        sid = store.create_session().id
        cps_taken = []
        for i in range(3):
            cps_taken.append(cps.begin(sid, i, f"prompt {i}"))
            store.append_message(sid, {"role": "user", "content": f"prompt {i}"})
            store.append_message(sid, {"role": "assistant", "content": f"answer {i}"})
            (ws / f"f{i}.txt").write_text(str(i))
            cps.finish(cps_taken[-1])
        result = cps.rewind(cps.plan_rewind(cps_taken[1].id), code=False, conversation=True, store=store)
        assert result.messages_removed and result.changed == ()
        assert [m["content"] for m in store.load_messages(sid)] == ["prompt 0", "answer 0"]
        assert (ws / "f2.txt").exists()  # conversation only: the files stay
        plan = cps.plan_redo(sid)
        assert plan.conversation and plan.actions == ()  # the redo's plan: the conversation comes back
        cps.redo(plan, store=store)
        assert len(store.load_messages(sid)) == 6

        cps.rewind(cps.plan_rewind(cps_taken[2].id), conversation=True, store=store)  # both
        assert not (ws / "f2.txt").exists() and len(store.load_messages(sid)) == 4
        store.append_message(sid, {"role": "user", "content": "something else"})  # the conversation moved on
        result = cps.redo(cps.plan_redo(sid), store=store)
        assert not result.messages_removed and len(store.load_messages(sid)) == 5


def test_store_truncate_and_restore(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.sqlite3") as store:
        sid = store.create_session().id
        for m in ["u0", "a0", "u1", "a1", "u2"]:
            store.append_message(sid, {"role": "user" if m[0] == "u" else "assistant", "content": m})
        b1 = store.truncate_at_prompt(sid, 2)
        b2 = store.truncate_at_prompt(sid, 1)
        assert [m["content"] for m in store.load_messages(sid)] == ["u0", "a0"]
        assert store.truncate_at_prompt(sid, 5) is None
        assert b1 is not None and b2 is not None
        assert store.restore_truncated(sid, b2) == 2
        assert store.restore_truncated(sid, b1) == 1
        assert [m["content"] for m in store.load_messages(sid)] == ["u0", "a0", "u1", "a1", "u2"]
        assert store.truncate_at_prompt(sid, 0) is not None
        assert not store.discard_if_empty(sid)  # an emptied session still holds what a redo needs
        with pytest.raises(KeyError):
            store.truncate_at_prompt("nope", 0)


def test_records_of_rewound_tool_calls_go_once_the_conversation_moves_on(tmp_path: Path) -> None:
    """A rewound turn's tool runs, MCP App records and full outputs stay while a redo can bring
    the turn back, and are deleted with the rewound messages once a new message is stored."""
    def call(call_id: str) -> dict[str, object]:
        return {"role": "assistant", "content": "", "tool_calls": [
            {"id": call_id, "type": "function", "function": {"name": "mcp__apps__show", "arguments": "{}"}}]}

    def counts(store: SessionStore, sid: str, table: str) -> list[str]:
        with store._lock:
            return sorted(r[0] for r in store._c.execute(f"SELECT call_id FROM {table} WHERE session_id = ?", (sid,)))

    with SessionStore(tmp_path / "s.sqlite3") as store:
        sid = store.create_session().id
        messages = [{"role": "user", "content": "u0"}, call("c1"), {"role": "tool", "tool_call_id": "c1", "content": "r1"},
                    {"role": "user", "content": "u1"}, call("c2"), {"role": "tool", "tool_call_id": "c2", "content": "r2"},
                    call("c1"), {"role": "tool", "tool_call_id": "c1", "content": "r1 again"}]  # an id reused
        outputs = store.outputs_for(sid, 10_000)
        for n, m in enumerate(messages):
            store.append_message(sid, m)
            if m["role"] == "tool":
                cid = str(m["tool_call_id"])
                app = {"server": "apps", "tool": "show", "resourceUri": "ui://apps/show.html", "arguments": {}}
                store.record_tool_run(sid, ToolRun(cid, "mcp__apps__show", "apps", "show", 3.0, app=app))
                outputs.save(n, StoredOutput(f"out-{n}", "show", "x" * 10, 10, cid))
        outputs.save(99, StoredOutput("out-99", "bash", "y", 1, ""))  # an output of no call
        everything = (["c1", "c2"], ["c1", "c2"], ["", "c1", "c1", "c2"])
        assert (counts(store, sid, "tool_runs"), counts(store, sid, "tool_apps"), counts(store, sid, "outputs")) == everything

        batch = store.truncate_at_prompt(sid, 1)
        assert batch is not None
        # a redo can bring the turn back: its records stay
        assert (counts(store, sid, "tool_runs"), counts(store, sid, "tool_apps"), counts(store, sid, "outputs")) == everything
        assert store.restore_truncated(sid, batch) == 5
        assert store.tool_runs(sid)["c2"].app is not None

        assert store.truncate_at_prompt(sid, 1) is not None
        store.append_message(sid, {"role": "user", "content": "something else"})  # the conversation moved on
        assert counts(store, sid, "tool_runs") == ["c1"]  # c1 is in the kept turn too
        assert counts(store, sid, "tool_apps") == ["c1"]
        # outputs are kept by call id: both of the reused id stay, c2's went; one of no call stays
        assert counts(store, sid, "outputs") == ["", "c1", "c1"]
        assert set(store.tool_runs(sid)) == {"c1"}


def test_two_folders_and_a_nothing_changed_checkpoint(tmp_path: Path, ws: Path) -> None:
    second = tmp_path / "second"
    second.mkdir()
    (second / "b.txt").write_text("b\n")
    with Checkpoints.for_workspace(tmp_path / "data", [ws, second]) as cps:
        cp = cps.begin("s1", 0, "p")
        cp = cps.finish(cp)
        assert cp.changed == () and cps.plan_rewind(cp.id).actions == ()
        cp = cps.begin("s1", 1, "q")
        (second / "b.txt").write_text("changed\n")
        (ws / "notes.md").unlink()
        cps.finish(cp)
        cps.rewind(cps.plan_rewind(cp.id))
        assert (second / "b.txt").read_text() == "b\n" and (ws / "notes.md").read_text() == "# notes\n"


def test_the_watched_snapshot_always_equals_a_full_walk(tmp_path: Path) -> None:
    """After each of many random shell changes (files and folders created, changed, chmodded,
    deleted, renamed, a folder replaced by another, .gitignore edited), the snapshot that only
    looks where the kernel saw changes has the same trees as a new scanner walking everything."""
    from agent_ls.agent.checkpoints.objects import ObjectStore
    from agent_ls.agent.checkpoints.scan import Scanner

    ws = tmp_path / "w"
    ws.mkdir()
    objects = ObjectStore(tmp_path / "objects.sqlite3")
    watched = Scanner([ws], objects, Limits())
    if not watched.watch.active:
        pytest.skip("no inotify on this platform: every snapshot walks everything")
    rng = __import__("random").Random(40)
    dirs = ["", "a", "a/b", "a/b/c", "d", "d/e"]
    for d in dirs:
        (ws / d).mkdir(parents=True, exist_ok=True)
        for i in range(3):
            (ws / d / f"f{i}.txt").write_text(f"{d}{i}")
    ops = [
        lambda d: (ws / d / f"f{rng.randint(0, 4)}.txt").write_text(str(rng.random())),
        lambda d: sh(ws, f"rm -f '{d or '.'}/f{rng.randint(0, 4)}.txt'"),
        lambda d: sh(ws, f"chmod {rng.choice(['600', '755'])} '{d or '.'}'/f*.txt 2>/dev/null || true"),
        lambda d: sh(ws, f"mv '{d or '.'}/f1.txt' '{d or '.'}/moved{rng.randint(0, 9)}.txt' 2>/dev/null || true"),
        lambda d: sh(ws, f"mkdir -p '{d or '.'}/new{rng.randint(0, 2)}/deep' && echo x > '{d or '.'}/new0/deep/x'"
                         " 2>/dev/null || true"),
        lambda d: sh(ws, f"rm -rf '{d or '.'}/new0' && mkdir -p tmpdir && echo y > tmpdir/y && "
                         f"mv tmpdir '{d or '.'}/new0' 2>/dev/null || true"),
        lambda d: (ws / d / ".gitignore").write_text(rng.choice(["*.txt\n", "moved*\n", "", "new0/\n"])),
        lambda d: sh(ws, "mv a a_renamed && mv a_renamed a 2>/dev/null || true"),
    ]
    watched.snapshot()
    for step in range(120):
        rng.choice(ops)(rng.choice([d for d in dirs if (ws / d).is_dir()]))
        got = watched.snapshot().trees
        full = Scanner([ws], objects, Limits())
        fresh = full.snapshot().trees
        full.close()
        assert got == fresh, f"step {step}: the watched snapshot missed a change"
    watched.close()


def test_a_folder_replaced_by_a_link_to_outside_is_never_written_through(tmp_path: Path, ws: Path,
                                                                         cps: Checkpoints) -> None:
    outside = tmp_path / "outside"
    outside.mkdir()
    cp = cps.begin("s1", 0, "p")
    (ws / "src" / "app.py").unlink()  # the agent deletes a file
    cps.finish(cp)
    shutil.rmtree(ws / "src")  # then the folder becomes a link to somewhere else
    os.symlink(outside, ws / "src")
    plan = cps.plan_rewind(cp.id)
    with pytest.raises(RewindError, match=r"src is a symbolic link now.*nothing was changed"):
        cps.rewind(plan)
    assert list(outside.iterdir()) == []


def test_the_walk_by_path_equals_the_walk_by_folder_descriptor(tmp_path: Path, ws: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Where names cannot be looked up relative to an open folder (Windows), whole paths are used."""
    from agent_ls.agent.checkpoints import scan
    from agent_ls.agent.checkpoints.objects import ObjectStore

    (ws / ".gitignore").write_text("*.log\n")
    (ws / "src" / "x.log").write_text("ignored")
    objects = ObjectStore(tmp_path / "objects.sqlite3")
    by_fd = scan.Scanner([ws], objects, Limits())
    expected = by_fd.snapshot().trees
    by_fd.close()
    monkeypatch.setattr(scan, "_BY_FD", False)
    by_path = scan.Scanner([ws], objects, Limits())
    assert by_path.snapshot().trees == expected
    by_path.close()


def test_a_folder_that_became_a_file(ws: Path, cps: Checkpoints) -> None:
    before = tree_state(ws)
    cp = cps.begin("s1", 0, "p")
    sh(ws, "rm -r src && echo 'now a file' > src")
    cps.finish(cp)
    plan = cps.plan_rewind(cp.id)
    assert {os.path.relpath(a.path, ws): a.action for a in plan.actions} == {
        "src": DELETE, "src/app.py": RECREATE, "src/util.py": RECREATE}
    cps.rewind(plan)
    assert tree_state(ws) == before


def test_past_the_file_limit_files_are_listed_not_kept(tmp_path: Path, ws: Path) -> None:
    for i in range(20):
        (ws / f"many{i:02}.txt").write_text(str(i))
    with Checkpoints.for_workspace(tmp_path / "data", [ws], Limits(max_files=10)) as cps:
        cp = cps.begin("s1", 0, "p")
        assert len(cp.not_kept) == 20 + 6 - 10 and {n.reason for n in cp.not_kept} == {
            "past the file limit (10 files)"}
        (ws / "many19.txt").write_text("changed")
        cp = cps.finish(cp)
        plan = cps.plan_rewind(cp.id)
        assert [(os.path.relpath(a.path, ws), a.action) for a in plan.actions] == [("many19.txt", UNRESTORABLE)]


def test_a_new_process_reads_only_the_files_that_changed(tmp_path: Path, ws: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    """The file cache is kept in the data directory (0600): the next Checkpoints (a new process,
    the CLI) reads only files whose lstat changed, and a damaged cache only costs a full read."""
    from agent_ls.agent.checkpoints import scan

    time.sleep(0.15)  # older than the racy window: every entry may be trusted
    with Checkpoints.for_workspace(tmp_path / "data", [ws]) as first:
        first.finish(first.begin("s1", 0, "p"))
    read: list[str] = []
    original = scan.Scanner._read

    def counting(self: scan.Scanner, state: object, path: str, rel: str, st: os.stat_result) -> object:
        read.append(rel)
        return original(self, state, path, rel, st)  # type: ignore[arg-type]

    monkeypatch.setattr(scan.Scanner, "_read", counting)
    (ws / "notes.md").write_text("changed while no process watched\n")
    with Checkpoints.for_workspace(tmp_path / "data", [ws]) as second:
        cp = second.begin("s1", 1, "q")
        assert read == ["notes.md"]
        cp = second.finish(cp)
        cache = next((tmp_path / "data" / "checkpoints").glob("files-*.cache"))
        assert stat.S_IMODE(cache.stat().st_mode) == 0o600
    cache.write_bytes(b"\x00garbage")
    read.clear()
    with Checkpoints.for_workspace(tmp_path / "data", [ws]) as third:
        third.begin("s1", 2, "r")
        assert len(read) == len(tree_state(ws))


def test_what_a_turn_did_inside_git_is_not_rewound(ws: Path, cps: Checkpoints) -> None:
    """The agent's `git add` wrote the user's index: a rewind restores the files, never .git."""
    if GIT is None:
        pytest.skip("git is not installed")
    git(ws, "init", "-q")
    before_files = tree_state(ws)
    cp = cps.begin("s1", 0, "stage it")
    sh(ws, "echo new > staged.txt && git add staged.txt")
    after_turn_git = git_dir_state(ws)
    cp = cps.finish(cp)
    assert [os.path.relpath(p, ws) for p in cp.changed] == ["staged.txt"]  # nothing under .git
    cps.rewind(cps.plan_rewind(cp.id))
    assert tree_state(ws) == before_files
    assert git_dir_state(ws) == after_turn_git


def test_protected_paths_are_flagged_in_the_plan_and_restored(ws: Path, cps: Checkpoints) -> None:
    """Issue 40 item 4: a turn that changes protected files (``.vscode/``, ``.mcp.json``, a git
    hook folder) shows them flagged, with the reason, in the plan; the rewind restores them (it
    puts back what they were before the agent's turn)."""
    (ws / ".vscode").mkdir()
    (ws / ".vscode" / "settings.json").write_text('{"a": 1}\n')
    cp = cps.begin("s1", 0, "change settings")
    (ws / ".vscode" / "settings.json").write_text('{"a": 2}\n')
    (ws / ".vscode" / "tasks.json").write_text('{"tasks": []}\n')
    (ws / ".mcp.json").write_text('{"mcpServers": {}}\n')
    (ws / "src" / "app.py").write_text("agent\n")
    cps.finish(cp)

    plan = cps.plan_rewind(cp.id)
    flagged = {os.path.relpath(a.path, ws): (a.action, a.protected) for a in plan.actions}
    assert flagged["src/app.py"] == (RESTORE, None)
    assert flagged[".vscode/settings.json"][0] == RESTORE and "VS Code" in (flagged[".vscode/settings.json"][1] or "")
    assert flagged[".vscode/tasks.json"][0] == DELETE and flagged[".vscode/tasks.json"][1]
    assert flagged[".mcp.json"][0] == DELETE and "MCP servers" in (flagged[".mcp.json"][1] or "")
    cps.rewind(plan)
    assert (ws / ".vscode" / "settings.json").read_text() == '{"a": 1}\n'
    assert not (ws / ".vscode" / "tasks.json").exists() and not (ws / ".mcp.json").exists()


def test_a_workspace_of_50000_files_is_checkpointed_and_rewound_whole(tmp_path: Path, ws: Path) -> None:
    """Issue 40, bad input: a workspace of 50,000 files. The checkpoint keeps them all (under the
    file limit), a turn that changes, deletes and adds files among them is rewound completely,
    and a rewind that cannot complete (a file became a folder the user filled) changes nothing
    and says which file stopped it."""
    many = ws / "many"
    for d in range(50):
        sub = many / f"d{d:02}"
        sub.mkdir(parents=True)
        for i in range(1000):
            (sub / f"f{i:03}.txt").write_text(f"{d}-{i}\n")
    before = tree_state(ws)
    assert len(before) >= 50_000
    with Checkpoints.for_workspace(tmp_path / "data", [ws]) as cps:
        cp = cps.begin("s1", 0, "p")
        assert not cp.not_kept
        sh(ws, "rm many/d07/f001.txt && echo changed > many/d42/f999.txt && echo new > many/d00/new.txt"
               " && mv many/d13/f500.txt many/d13/moved.txt")
        cp = cps.finish(cp)
        cps.rewind(cps.plan_rewind(cp.id))
        assert tree_state(ws) == before
        # all or nothing: one file of the plan cannot be put back, nothing else moves
        cp = cps.begin("s1", 1, "p2")
        sh(ws, "echo a > many/d01/f001.txt && rm many/d02/f002.txt")
        cp = cps.finish(cp)
        plan = cps.plan_rewind(cp.id)
        (ws / "many/d02/f002.txt").mkdir()
        (ws / "many/d02/f002.txt/user.txt").write_text("the user's\n")
        changed = tree_state(ws)
        with pytest.raises((RewindError, CheckpointError)) as err:
            cps.rewind(plan, overwrite=True)
        assert "f002.txt" in str(err.value)
        assert tree_state(ws) == changed
