"""Session titles, empty sessions and tool-run records in the session store (issue 17, item 4)."""

from __future__ import annotations

import sqlite3
import time
from pathlib import Path

from agent_ls.agent.store import EMPTY_SESSION_GRACE_S, SessionStore, ToolRun, session_title


def test_title_is_the_first_line_cut_at_a_word() -> None:
    assert session_title("  fix the   failing test \n\nmore detail") == "fix the failing test"
    long = "word " * 30
    t = session_title(long)
    assert len(t) <= 60 and t.endswith("…") and not t[:-1].endswith(" ") and "word wor…" not in t
    assert session_title("x" * 100).endswith("…") and len(session_title("x" * 100)) == 60  # one long word: cut
    # An attached selection (fenced code) is not the title.
    assert session_title("Selection from a.py:\n```py\nprint(1)\n```\n\nwhy?") == "Selection from a.py:"
    assert session_title("```\nonly code\n```") == "``` only code ```"
    assert session_title("") == ""


def test_first_user_message_titles_the_session_once(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.sqlite3") as store:
        s = store.create_session()
        store.append_message(s.id, {"role": "user", "content": "first question about the parser"})
        store.append_message(s.id, {"role": "assistant", "content": "answer"})
        store.append_message(s.id, {"role": "user", "content": "second question"})
        got = store.get_session(s.id)
        assert got is not None and got.title == "first question about the parser"
        # A front end that titles it first (from what the user typed) wins.
        t = store.create_session()
        store.title_if_unset(t.id, "/review main.py")
        store.append_message(t.id, {"role": "user", "content": "Review this code: ..."})
        assert (store.get_session(t.id) or s).title == "/review main.py"
        # A title given at creation is kept.
        named = store.create_session("Named")
        store.append_message(named.id, {"role": "user", "content": "hello"})
        assert (store.get_session(named.id) or s).title == "Named"


def test_empty_sessions_are_not_listed_nor_kept(tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite3"
    with SessionStore(db) as store:
        empty = store.create_session()
        only_assistant = store.create_session()
        store.append_message(only_assistant.id, {"role": "assistant", "content": "hi"})
        used = store.create_session()
        store.append_message(used.id, {"role": "user", "content": "hello"})
        assert [s.id for s in store.list_sessions()] == [used.id]
        assert store.get_session(empty.id) is not None  # still usable while the store is open
    with SessionStore(db) as store:
        assert store.get_session(empty.id) is None  # dropped on close: it never got a message
        assert store.get_session(used.id) is not None
        assert store.get_session(only_assistant.id) is not None  # has a message: kept, not listed
    # An empty session left by a process that died is dropped a day later, when a session is created.
    conn = sqlite3.connect(db)
    old = time.time() - EMPTY_SESSION_GRACE_S - 60
    conn.execute("INSERT INTO sessions (id, title, created, updated) VALUES ('crashed', NULL, ?, ?)", (old, old))
    conn.execute("INSERT INTO sessions (id, title, created, updated) VALUES ('recent', NULL, ?, ?)",
                 (time.time(), time.time()))
    conn.commit()
    conn.close()
    with SessionStore(db) as store:
        store.create_session()
        assert store.get_session("crashed") is None
        assert store.get_session("recent") is not None  # may be another window's new session


def test_tool_runs_are_kept_with_their_session(tmp_path: Path) -> None:
    with SessionStore(tmp_path / "s.sqlite3") as store:
        s = store.create_session()
        store.append_message(s.id, {"role": "user", "content": "go"})
        store.record_tool_run(s.id, ToolRun("c1", "mcp__knob__echo", "knob", "echo", 12.5))
        store.record_tool_run(s.id, ToolRun("c2", "bash", None, None, 3.0, is_error=True, denied=True))
        runs = store.tool_runs(s.id)
        assert runs["c1"] == ToolRun("c1", "mcp__knob__echo", "knob", "echo", 12.5, False, False)
        assert runs["c2"].is_error and runs["c2"].denied and runs["c2"].server is None
        assert store.delete_session(s.id)
        assert store.tool_runs(s.id) == {}
