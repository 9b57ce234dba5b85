"""The SQLite session store."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sqlite3
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from agent_ls.agent.store import SessionInfo, SessionStore, all_workspace_stores, db_path_for_workspace

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def store(tmp_path: Path):
    s = SessionStore(tmp_path / "s.sqlite3")
    yield s
    s.close()


def run_child(code: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", textwrap.dedent(code), *args],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=60,
    )


def test_db_path_per_workspace(tmp_path: Path):
    ws1, ws2 = tmp_path / "a", tmp_path / "b"
    ws1.mkdir()
    ws2.mkdir()
    p1 = db_path_for_workspace(tmp_path / "data", ws1)
    assert p1 == db_path_for_workspace(tmp_path / "data", str(ws1) + "/")
    assert p1 == db_path_for_workspace(tmp_path / "data", ws1 / "x" / "..")
    assert p1 != db_path_for_workspace(tmp_path / "data", ws2)
    assert p1.parent == tmp_path / "data" / "sessions"
    assert p1.suffix == ".sqlite3"
    s = SessionStore.for_workspace(tmp_path / "data", ws1)
    try:
        assert s.path == p1 and p1.exists()
    finally:
        s.close()


def test_wal_mode(store: SessionStore):
    conn = sqlite3.connect(store.path)
    try:
        assert conn.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    finally:
        conn.close()


def test_create_append_load_roundtrip(store: SessionStore):
    info = store.create_session(title="Fix the bug", model="openai/gpt-x")
    assert isinstance(info, SessionInfo)
    assert info.title == "Fix the bug" and info.model == "openai/gpt-x" and info.message_count == 0
    messages = [
        {
            "role": "system",
            "content": [{"type": "text", "text": "frozen", "cache_control": {"type": "ephemeral"}}],
        },
        {"role": "user", "content": "héllo ✓ 你好"},
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [
                {"id": "c1", "type": "function", "function": {"name": "read", "arguments": '{"path": "a"}'}}
            ],
        },
        {"role": "tool", "tool_call_id": "c1", "content": "file text"},
    ]
    seqs = [store.append_message(info.id, m) for m in messages]
    assert seqs == [1, 2, 3, 4]
    assert store.load_messages(info.id) == messages
    got = store.get_session(info.id)
    assert got is not None and got.message_count == 4 and got.updated >= info.updated


def test_list_newest_first_with_counts(store: SessionStore):
    a = store.create_session("a")
    time.sleep(0.01)
    b = store.create_session("b")
    time.sleep(0.01)
    c = store.create_session("c")
    assert store.list_sessions() == []  # sessions with no user message are not listed
    for x in (b, c):
        time.sleep(0.01)
        store.append_message(x.id, {"role": "user", "content": "0"})
    assert [s.title for s in store.list_sessions()] == ["c", "b"]
    time.sleep(0.01)
    store.append_message(a.id, {"role": "user", "content": "1"})
    store.append_message(a.id, {"role": "assistant", "content": "2"})
    listed = store.list_sessions()
    assert [s.title for s in listed] == ["a", "c", "b"]
    assert {s.id: s.message_count for s in listed} == {a.id: 2, b.id: 1, c.id: 1}


def test_messages_keep_order_between_sessions(store: SessionStore):
    a, b = store.create_session(), store.create_session()
    for i in range(20):
        store.append_message(a.id if i % 2 else b.id, {"role": "user", "content": str(i)})
    assert [m["content"] for m in store.load_messages(a.id)] == [str(i) for i in range(1, 20, 2)]
    assert [m["content"] for m in store.load_messages(b.id)] == [str(i) for i in range(0, 20, 2)]


def test_rename_and_set_model(store: SessionStore):
    s = store.create_session()
    store.rename(s.id, "New title")
    store.set_model(s.id, "anthropic/claude-x")
    got = store.get_session(s.id)
    assert got is not None and got.title == "New title" and got.model == "anthropic/claude-x"
    with pytest.raises(KeyError):
        store.rename("nope", "x")


def test_delete_cascades(store: SessionStore):
    keep, gone = store.create_session("keep"), store.create_session("gone")
    for i in range(3):
        store.append_message(keep.id, {"role": "user", "content": i})
        store.append_message(gone.id, {"role": "user", "content": i})
    assert store.delete_session(gone.id) is True
    assert store.delete_session(gone.id) is False
    assert [s.id for s in store.list_sessions()] == [keep.id]
    conn = sqlite3.connect(store.path)
    try:
        assert (
            conn.execute("SELECT COUNT(*) FROM messages WHERE session_id = ?", (gone.id,)).fetchone()[0] == 0
        )
        assert (
            conn.execute("SELECT COUNT(*) FROM messages WHERE session_id = ?", (keep.id,)).fetchone()[0] == 3
        )
    finally:
        conn.close()
    with pytest.raises(KeyError):
        store.load_messages(gone.id)


def test_errors(store: SessionStore):
    with pytest.raises(KeyError):
        store.append_message("nope", {"role": "user", "content": "x"})
    s = store.create_session()
    with pytest.raises(ValueError):
        store.append_message(s.id, {"content": "no role"})
    with pytest.raises(TypeError):
        store.append_message(s.id, {"role": "user", "content": object()})
    assert store.load_messages(s.id) == []  # failed appends left nothing behind
    assert store.append_message(s.id, {"role": "user", "content": "ok"}) == 1
    store.close()
    store.close()
    with pytest.raises(RuntimeError):
        store.list_sessions()


def test_persists_across_processes(tmp_path: Path):
    db = tmp_path / "p.sqlite3"
    child = run_child(
        """
        import sys
        from agent_ls.agent.store import SessionStore
        s = SessionStore(sys.argv[1])
        info = s.create_session(title="from child", model="m")
        for i in range(5):
            s.append_message(info.id, {"role": "user" if i % 2 == 0 else "assistant", "content": f"m{i}"})
        s.close()
        print(info.id)
        """,
        str(db),
    )
    assert child.returncode == 0, child.stderr
    session_id = child.stdout.strip()
    with SessionStore(db) as s:
        (info,) = s.list_sessions()
        assert info.id == session_id and info.title == "from child" and info.message_count == 5
        assert [m["content"] for m in s.load_messages(session_id)] == [f"m{i}" for i in range(5)]
        # and the other way round: written here, read by a new process
        s.append_message(session_id, {"role": "user", "content": "from parent"})
    child = run_child(
        """
        import json, sys
        from agent_ls.agent.store import SessionStore
        s = SessionStore(sys.argv[1])
        print(json.dumps(s.load_messages(sys.argv[2])[-1]))
        """,
        str(db),
        session_id,
    )
    assert child.returncode == 0, child.stderr
    assert json.loads(child.stdout) == {"role": "user", "content": "from parent"}


def test_os_exit_midway_keeps_completed_messages(tmp_path: Path):
    db = tmp_path / "crash.sqlite3"
    child = run_child(
        """
        import os, sys
        from agent_ls.agent.store import SessionStore
        s = SessionStore(sys.argv[1])
        info = s.create_session(title="crashy")
        print(info.id, flush=True)
        for i in range(7):
            s.append_message(info.id, {"role": "user", "content": i})
        os._exit(3)  # no close(), no cleanup, no checkpoint
        """,
        str(db),
    )
    assert child.returncode == 3, child.stderr
    with SessionStore(db) as s:
        assert [m["content"] for m in s.load_messages(child.stdout.strip())] == list(range(7))


def test_sigkill_midway_keeps_every_reported_message(tmp_path: Path):
    db = tmp_path / "kill.sqlite3"
    code = textwrap.dedent(
        """
        import sys
        from agent_ls.agent.store import SessionStore
        s = SessionStore(sys.argv[1])
        info = s.create_session()
        print(info.id, flush=True)
        i = 0
        while True:
            i += 1
            seq = s.append_message(info.id, {"role": "assistant", "content": "x" * 2000, "i": i})
            print(seq, flush=True)
        """
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code, str(db)], cwd=REPO, stdout=subprocess.PIPE, text=True
    )
    assert proc.stdout is not None
    session_id = proc.stdout.readline().strip()
    last = 0
    while last < 25:
        last = int(proc.stdout.readline())
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait(10)
    with SessionStore(db) as s:
        messages = s.load_messages(session_id)
    assert len(messages) >= last  # every append that returned is there
    assert [m["i"] for m in messages] == list(range(1, len(messages) + 1))


async def test_concurrent_appends_via_to_thread(store: SessionStore):
    s = store.create_session()
    seqs = await asyncio.gather(
        *(asyncio.to_thread(store.append_message, s.id, {"role": "user", "content": i}) for i in range(50))
    )
    assert sorted(seqs) == list(range(1, 51))
    loaded = await asyncio.to_thread(store.load_messages, s.id)
    assert sorted(m["content"] for m in loaded) == list(range(50))
    # content order matches the seq each append got
    by_seq = dict(zip(seqs, range(50), strict=True))
    assert [m["content"] for m in loaded] == [by_seq[i] for i in range(1, 51)]


def test_two_stores_on_one_file(tmp_path: Path):
    db = tmp_path / "shared.sqlite3"
    with SessionStore(db) as one, SessionStore(db) as two:
        s = one.create_session()
        for i in range(10):
            (one if i % 2 else two).append_message(s.id, {"role": "user", "content": i})
        assert [m["content"] for m in two.load_messages(s.id)] == list(range(10))


# --- permissions: 0600 files in a 0700 folder -------------------------------------------------


@pytest.fixture
def loose_umask():
    old = os.umask(0o022)
    try:
        yield
    finally:
        os.umask(old)


def mode(path: Path) -> int:
    return os.stat(path).st_mode & 0o777


def test_new_store_is_private_with_its_wal_and_shm(tmp_path: Path, loose_umask: None, monkeypatch):
    from agent_ls.agent import store as store_mod
    from agent_ls.runtime.display import DisplayStore

    data = tmp_path / "data"
    ws = tmp_path / "ws"
    ws.mkdir()
    seen_at_connect: list[tuple[int, int]] = []
    real_connect = sqlite3.connect

    def connect(path, *args, **kwargs):  # the modes SQLite finds when it opens the file
        seen_at_connect.append((mode(Path(path).parent), mode(Path(path))))
        return real_connect(path, *args, **kwargs)

    monkeypatch.setattr(store_mod.sqlite3, "connect", connect)
    s = SessionStore.for_workspace(data, ws)
    try:
        assert seen_at_connect == [(0o700, 0o600)]
        info = s.create_session("t")
        s.append_message(info.id, {"role": "user", "content": "secret conversation"})
        display = DisplayStore(s.path)
        try:
            display.put(info.id, "secret conversation", {"text": "x"})
            folder = s.path.parent
            assert folder.name == "sessions" and mode(folder) == 0o700
            assert mode(data) == 0o700  # created by us as a parent: private too
            assert mode(s.path) == 0o600
            for suffix in ("-wal", "-shm"):
                companion = s.path.with_name(s.path.name + suffix)
                assert companion.exists() and mode(companion) == 0o600, suffix
        finally:
            display.close()
    finally:
        s.close()


def test_existing_loose_folder_db_wal_and_shm_are_tightened(tmp_path: Path, loose_umask: None):
    from agent_ls.runtime.display import DisplayStore

    folder = tmp_path / "sessions"
    folder.mkdir(mode=0o755)
    os.chmod(folder, 0o755)
    db = folder / "s.sqlite3"
    # an older version left a 0644 database with live 0644 -wal and -shm files
    old = sqlite3.connect(db, isolation_level=None)
    try:
        old.execute("PRAGMA journal_mode=WAL")
        old.execute("CREATE TABLE t (x)")
        old.execute("INSERT INTO t VALUES (1)")
        companions = [db.with_name(db.name + suffix) for suffix in ("-wal", "-shm")]
        assert [mode(p) for p in [db, *companions]] == [0o644, 0o644, 0o644]
        assert mode(folder) == 0o755
        s = SessionStore(db)
        try:
            s.append_message(s.create_session().id, {"role": "user", "content": "x"})
            assert mode(folder) == 0o700
            assert [mode(p) for p in [db, *companions]] == [0o600, 0o600, 0o600]
        finally:
            s.close()
    finally:
        old.close()
    # the display store tightens the same file on its own too
    os.chmod(folder, 0o750)
    os.chmod(db, 0o640)
    d = DisplayStore(db)
    try:
        assert mode(folder) == 0o700 and mode(db) == 0o600
    finally:
        d.close()


def test_a_store_remembers_its_folder_for_listing_every_folder(tmp_path: Path) -> None:
    """ACP's session/list without cwd: every store under the data folder, each with its folder;
    a store opened by path only (or written before the folder was recorded) has none."""
    data, one, two = tmp_path / "data", tmp_path / "one", tmp_path / "two"
    one.mkdir()
    two.mkdir()
    with SessionStore.for_workspace(data, one) as a, SessionStore.for_workspace(data, two / ".." / "two") as b:
        assert a.workspace_root() == one.resolve() and b.workspace_root() == two.resolve()
    assert all_workspace_stores(data) == sorted([db_path_for_workspace(data, one), db_path_for_workspace(data, two)])
    with SessionStore(db_path_for_workspace(data, one)) as again:
        assert again.workspace_root() == one.resolve()
    with SessionStore(tmp_path / "plain.sqlite3") as plain:
        assert plain.workspace_root() is None
    assert all_workspace_stores(tmp_path / "nothing-here") == []
