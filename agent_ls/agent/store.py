"""Session store: one SQLite database (WAL mode) per workspace.

Each completed message is committed as it is appended, so a crash of the process loses no
completed message. Messages are stored as JSON (the OpenAI-style dicts the agent sends to
litellm), in order, under a per-session sequence number.

The store holds one connection guarded by a lock; calls are short and blocking, and are
meant to be made from asyncio with :func:`asyncio.to_thread`. Several stores (for example
two editor windows on the same workspace) may open the same file: writes take SQLite's
write lock (``BEGIN IMMEDIATE``) and wait up to ``busy_timeout`` for each other.

The database holds whole conversations (file contents, command output, whatever the model
saw), so it is private to the user (:mod:`agent_ls.agent.private_db`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sqlite3
import threading
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import attrs

from agent_ls.agent.private_db import make_private_db

log = logging.getLogger(__name__)

SCHEMA_VERSION = 1

_SCHEMA = """
CREATE TABLE IF NOT EXISTS sessions (
    id      TEXT PRIMARY KEY,
    title   TEXT,
    created REAL NOT NULL,
    updated REAL NOT NULL,
    model   TEXT
);
CREATE TABLE IF NOT EXISTS messages (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    role       TEXT NOT NULL,
    json       TEXT NOT NULL,
    created    REAL NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS sessions_by_updated ON sessions(updated DESC);
CREATE TABLE IF NOT EXISTS tool_runs (
    session_id   TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    call_id      TEXT NOT NULL,
    name         TEXT NOT NULL,
    server       TEXT,
    display_name TEXT,
    duration_ms  REAL,
    is_error     INTEGER NOT NULL DEFAULT 0,
    denied       INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (session_id, call_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS tool_apps (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    call_id    TEXT NOT NULL,
    json       TEXT NOT NULL,
    PRIMARY KEY (session_id, call_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS outputs (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    number     INTEGER NOT NULL,
    call_id    TEXT NOT NULL,
    tool       TEXT NOT NULL,
    text       TEXT NOT NULL,
    total      INTEGER NOT NULL,
    chars      INTEGER NOT NULL,
    created    REAL NOT NULL,
    PRIMARY KEY (session_id, number)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS outputs_by_created ON outputs(created);
CREATE TABLE IF NOT EXISTS output_marks (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    highest    INTEGER NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS compactions (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    seq        INTEGER NOT NULL,
    json       TEXT NOT NULL,
    created    REAL NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS plans (
    session_id TEXT PRIMARY KEY REFERENCES sessions(id) ON DELETE CASCADE,
    json       TEXT NOT NULL
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rewound_messages (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    batch      INTEGER NOT NULL,
    seq        INTEGER NOT NULL,
    role       TEXT NOT NULL,
    json       TEXT NOT NULL,
    created    REAL NOT NULL,
    PRIMARY KEY (session_id, seq)
) WITHOUT ROWID;
"""
# outputs, output_marks, compactions (issue 26), plans (issue 27) and rewound_messages (issue 40) are only
# added: a store written by this version still opens in the previous one, so the schema version stays 1.

DEFAULT_OUTPUTS_TOTAL_CHARS = 200_000_000
"""Characters of tool output the session database keeps over all sessions (oldest evicted first)."""

_ROOT_SCHEMA = "CREATE TABLE IF NOT EXISTS store_root (id INTEGER PRIMARY KEY CHECK (id = 1), path TEXT NOT NULL)"
"""The folder a store belongs to (its file name is only a hash of it): listing every stored
session across folders (:func:`all_workspace_stores`, ACP's ``session/list`` without ``cwd``)."""

TITLE_MAX_CHARS = 60
"""A session's title is its first user message cut to this length (at a word boundary)."""

EMPTY_SESSION_GRACE_S = 24 * 3600
"""Sessions with no message older than this are deleted when a session is created (leftovers of
a process that died before it could drop them); younger ones may belong to another window."""


def session_title(text: str, limit: int = TITLE_MAX_CHARS) -> str:
    """A session's title from its first user message: the first non-empty line, whitespace
    collapsed, cut at a word boundary to at most ``limit`` characters (with an ellipsis).
    Fenced code is skipped, so an attached selection does not become the title."""
    lines: list[str] = []
    fenced = False
    for line in text.splitlines():
        if line.lstrip().startswith("```"):
            fenced = not fenced
            continue
        if not fenced and line.strip():
            lines.append(line)
    first = " ".join(lines[0].split()) if lines else " ".join(text.split())
    if len(first) <= limit:
        return first
    cut = first[: limit - 1]
    space = cut.rfind(" ")
    if space >= limit // 2:
        cut = cut[:space]
    return cut.rstrip(" ,;:.-") + "…"


@attrs.frozen
class ToolRun:
    """What the chat shows on a tool card besides the call and its result: who ran it and how
    it went (the model's history has only the name, the arguments and the result text)."""

    call_id: str
    name: str
    server: str | None = None
    display_name: str | None = None
    duration_ms: float | None = None
    is_error: bool = False
    denied: bool = False
    app: dict[str, Any] | None = None
    """The call's MCP App as a resumed chat shows it again: ``{server, tool, resourceUri, arguments,
    result}`` (never its HTML: a resumed chat reads the app from its server again, so nothing in
    this file can put a page in the chat)."""


def _app_record(raw: str | None) -> dict[str, Any] | None:
    """A stored app record (None: none, or not a readable one)."""
    if raw is None:
        return None
    try:
        app = json.loads(raw)
    except ValueError:
        return None
    return app if isinstance(app, dict) and isinstance(app.get("server"), str) and isinstance(app.get("tool"), str) else None


def _call_ids(messages_json: Iterable[str]) -> set[str]:
    """The tool call ids that stored messages (JSON) name: an assistant message's calls, a tool
    message's answer."""
    ids: set[str] = set()
    for raw in messages_json:
        try:
            m = json.loads(raw)
        except ValueError:
            continue
        if not isinstance(m, dict):
            continue
        if isinstance(m.get("tool_call_id"), str):
            ids.add(m["tool_call_id"])
        for call in m.get("tool_calls") or ():
            if isinstance(call, dict) and isinstance(call.get("id"), str):
                ids.add(call["id"])
    return ids


@attrs.frozen
class SessionInfo:
    """A stored session, as listed."""

    id: str
    title: str | None
    created: float
    """Seconds since the epoch."""
    updated: float
    """Seconds since the epoch of the last change (creation, message, rename)."""
    model: str | None
    message_count: int = 0


def db_path_for_workspace(data_dir: str | os.PathLike[str], workspace_root: str | os.PathLike[str]) -> Path:
    """The database file for a workspace: ``<data_dir>/sessions/<hash of the root>.sqlite3``.

    The root is made absolute and normalised first, so equivalent spellings of one folder
    share a database. The hash keeps the name short and free of path characters.
    """
    root = os.path.normcase(os.path.realpath(os.fspath(workspace_root)))
    digest = hashlib.sha256(root.encode("utf-8", "surrogatepass")).hexdigest()[:24]
    return Path(data_dir) / "sessions" / f"{digest}.sqlite3"


class SessionStore:
    """Sessions and their messages in one SQLite file (0600, in a 0700 folder)."""

    def __init__(self, db_path: str | os.PathLike[str], *, busy_timeout: float = 5.0) -> None:
        self.path = Path(db_path)
        make_private_db(self.path)
        self._lock = threading.RLock()
        self._created: set[str] = set()
        """Sessions created through this store (dropped on close when still empty)."""
        self._conn: sqlite3.Connection | None = sqlite3.connect(
            self.path, timeout=busy_timeout, check_same_thread=False, isolation_level=None
        )
        conn = self._conn
        conn.execute("PRAGMA journal_mode=WAL")
        # FULL: each commit is fsynced, so a completed message also survives a power loss.
        conn.execute("PRAGMA synchronous=FULL")
        conn.execute("PRAGMA foreign_keys=ON")
        with self._write() as c:
            # executescript() would commit on its own: run the statements inside this transaction
            for statement in filter(None, (s.strip() for s in _SCHEMA.split(";"))):
                c.execute(statement)
            version = c.execute("PRAGMA user_version").fetchone()[0]
            if version > SCHEMA_VERSION:
                raise RuntimeError(
                    f"{self.path}: session store schema {version} is newer than {SCHEMA_VERSION}"
                )
            if version < SCHEMA_VERSION:
                c.execute(f"PRAGMA user_version={SCHEMA_VERSION}")

    @classmethod
    def for_workspace(
        cls, data_dir: str | os.PathLike[str], workspace_root: str | os.PathLike[str]
    ) -> SessionStore:
        """Open (creating if needed) the store of ``workspace_root`` under ``data_dir``; the
        store remembers its folder (:meth:`workspace_root`)."""
        store = cls(db_path_for_workspace(data_dir, workspace_root))
        store._remember_root(os.path.realpath(os.fspath(workspace_root)))
        return store

    # ------------------------------------------------------- the store's folder

    def _remember_root(self, root: str) -> None:
        if str(self.workspace_root()) == root:
            return  # the common case: no write (and no fsync) on every open
        with self._write() as conn:
            conn.execute(_ROOT_SCHEMA)
            conn.execute("INSERT OR REPLACE INTO store_root (id, path) VALUES (1, ?)", (root,))

    def workspace_root(self) -> Path | None:
        """The folder whose sessions this store holds (None: a store from before it was recorded)."""
        with self._lock:
            conn = self._c
            if conn.execute("SELECT 1 FROM sqlite_master WHERE name = 'store_root'").fetchone() is None:
                return None
            row = conn.execute("SELECT path FROM store_root WHERE id = 1").fetchone()
        return Path(row[0]) if row else None

    # ------------------------------------------------------------ internals

    @property
    def _c(self) -> sqlite3.Connection:
        if self._conn is None:
            raise RuntimeError("session store is closed")
        return self._conn

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        """One write transaction, committed on exit (rolled back on error)."""
        with self._lock:
            conn = self._c
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    @staticmethod
    def _info(row: tuple[Any, ...]) -> SessionInfo:
        return SessionInfo(
            id=row[0], title=row[1], created=row[2], updated=row[3], model=row[4], message_count=row[5]
        )

    def _require(self, conn: sqlite3.Connection, session_id: str) -> None:
        if conn.execute("SELECT 1 FROM sessions WHERE id = ?", (session_id,)).fetchone() is None:
            raise KeyError(session_id)

    # ---------------------------------------------------------------- API

    def create_session(self, title: str | None = None, model: str | None = None) -> SessionInfo:
        """A new session. It is not listed until its first user message, and dropped when the
        store closes with no message in it (:meth:`close`)."""
        now = time.time()
        session_id = uuid.uuid4().hex
        with self._write() as conn:
            conn.execute(
                "INSERT INTO sessions (id, title, created, updated, model) VALUES (?, ?, ?, ?, ?)",
                (session_id, title, now, now, model),
            )
            conn.execute(
                "DELETE FROM sessions WHERE created < ? AND NOT EXISTS"
                " (SELECT 1 FROM messages m WHERE m.session_id = sessions.id)",
                (now - EMPTY_SESSION_GRACE_S,),
            )
        self._created.add(session_id)
        return SessionInfo(session_id, title, now, now, model, 0)

    def discard_if_empty(self, session_id: str) -> bool:
        """Delete the session if it holds no message (an empty session is not kept); True when deleted."""
        with self._write() as conn:
            cur = conn.execute(
                "DELETE FROM sessions WHERE id = ? AND NOT EXISTS"
                " (SELECT 1 FROM messages m WHERE m.session_id = sessions.id) AND NOT EXISTS"
                " (SELECT 1 FROM rewound_messages r WHERE r.session_id = sessions.id)",
                (session_id,),
            )
            return cur.rowcount > 0

    def title_if_unset(self, session_id: str, text: str) -> None:
        """Title the session from ``text`` (see :func:`session_title`) unless it has a title."""
        title = session_title(text)
        if not title:
            return
        with self._write() as conn:
            conn.execute("UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL", (title, session_id))

    def set_title(self, session_id: str, title: str) -> None:
        """Replace the session's title (a model-made one, :mod:`agent_ls.agent.titles`)."""
        with self._write() as conn:
            conn.execute("UPDATE sessions SET title = ? WHERE id = ?", (session_title(title), session_id))

    def record_tool_run(self, session_id: str, run: ToolRun) -> None:
        """Remember how a tool call ran (server, duration, outcome) for the chat's cards on resume."""
        with self._write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO tool_runs (session_id, call_id, name, server, display_name, duration_ms,"
                " is_error, denied) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (session_id, run.call_id, run.name, run.server, run.display_name, run.duration_ms,
                 int(run.is_error), int(run.denied)),
            )
            if run.app is not None:
                conn.execute("INSERT OR REPLACE INTO tool_apps (session_id, call_id, json) VALUES (?, ?, ?)",
                             (session_id, run.call_id, json.dumps(run.app, ensure_ascii=False)))

    def tool_runs(self, session_id: str) -> dict[str, ToolRun]:
        """The recorded tool runs of a session, by call id."""
        with self._lock:
            rows = self._c.execute(
                "SELECT call_id, name, server, display_name, duration_ms, is_error, denied FROM tool_runs"
                " WHERE session_id = ?",
                (session_id,),
            ).fetchall()
            apps = dict(self._c.execute("SELECT call_id, json FROM tool_apps WHERE session_id = ?",
                                        (session_id,)).fetchall())
        return {r[0]: ToolRun(r[0], r[1], r[2], r[3], r[4], bool(r[5]), bool(r[6]), _app_record(apps.get(r[0])))
                for r in rows}

    def set_plan(self, session_id: str, entries: list[dict[str, Any]]) -> None:
        """Keep the session's plan (the ``update_plan`` tool's list; empty: no plan)."""
        with self._write() as conn:
            if entries:
                conn.execute("INSERT OR REPLACE INTO plans (session_id, json) VALUES (?, ?)",
                             (session_id, json.dumps(entries, ensure_ascii=False)))
            else:
                conn.execute("DELETE FROM plans WHERE session_id = ?", (session_id,))

    def load_plan(self, session_id: str) -> list[dict[str, Any]]:
        """The session's stored plan (``[]``: none)."""
        with self._lock:
            row = self._c.execute("SELECT json FROM plans WHERE session_id = ?", (session_id,)).fetchone()
        if row is None:
            return []
        try:
            value = json.loads(row[0])
        except ValueError:
            return []
        return value if isinstance(value, list) else []

    def append_message(self, session_id: str, message: dict[str, Any]) -> int:
        """Store ``message`` at the end of the session and commit; returns its sequence number
        (1 for the first message). Raises ``KeyError`` for an unknown session and ``TypeError``
        or ``ValueError`` when the message is not JSON-serialisable."""
        role = message.get("role")
        if not isinstance(role, str):
            raise ValueError("message has no 'role'")
        data = json.dumps(message, ensure_ascii=False, allow_nan=False)
        now = time.time()
        with self._write() as conn:
            self._require(conn, session_id)
            (seq,) = conn.execute(
                "SELECT COALESCE(MAX(seq), 0) + 1 FROM messages WHERE session_id = ?", (session_id,)
            ).fetchone()
            conn.execute(
                "INSERT INTO messages (session_id, seq, role, json, created) VALUES (?, ?, ?, ?, ?)",
                (session_id, seq, role, data, now),
            )
            self._drop_rewound(conn, session_id)
            conn.execute("UPDATE sessions SET updated = MAX(updated, ?) WHERE id = ?", (now, session_id))
            content = message.get("content")
            if role == "user" and isinstance(content, str) and (title := session_title(content)):
                # titled from the first user message (a front end may have titled it already)
                conn.execute("UPDATE sessions SET title = ? WHERE id = ? AND title IS NULL", (title, session_id))
        return int(seq)

    # ------------------------------------------------------- conversation rewind (issue 40)

    @staticmethod
    def _drop_rewound(conn: sqlite3.Connection, session_id: str) -> None:
        """The conversation moved on: what a rewind took away can no longer be put back, and the
        records of its tool calls (how each ran, its MCP App, its full output) go with it. They
        stay while a redo can still bring the calls back. A call id that the kept history still
        holds (a model that reuses ids) keeps its records."""
        rows = conn.execute("SELECT json FROM rewound_messages WHERE session_id = ?", (session_id,)).fetchall()
        if not rows:
            return
        gone = _call_ids(r[0] for r in rows)
        if gone:
            kept = _call_ids(r[0] for r in conn.execute(
                "SELECT json FROM messages WHERE session_id = ? AND role IN ('assistant', 'tool')", (session_id,)))
            dropped = [(session_id, c) for c in sorted(gone - kept)]
            for table in ("tool_runs", "tool_apps", "outputs"):
                conn.executemany(f"DELETE FROM {table} WHERE session_id = ? AND call_id = ?", dropped)
        conn.execute("DELETE FROM rewound_messages WHERE session_id = ?", (session_id,))

    def truncate_at_prompt(self, session_id: str, prompt_index: int) -> int | None:
        """Take the session's history back to just before its user message number
        ``prompt_index`` (0: the first): that message and every later one are moved aside, kept
        as one batch until a new message is stored (:meth:`restore_truncated` puts them back;
        the records of their tool calls stay until then, :meth:`_drop_rewound`).
        Returns the batch's number, None when the session has no such message. Raises
        ``KeyError`` for an unknown session."""
        with self._write() as conn:
            self._require(conn, session_id)
            row = conn.execute(
                "SELECT seq FROM messages WHERE session_id = ? AND role = 'user' ORDER BY seq LIMIT 1 OFFSET ?",
                (session_id, max(prompt_index, 0))).fetchone()
            if row is None:
                return None
            (batch,) = conn.execute("SELECT COALESCE(MAX(batch), 0) + 1 FROM rewound_messages WHERE session_id = ?",
                                    (session_id,)).fetchone()
            conn.execute(
                "INSERT INTO rewound_messages (session_id, batch, seq, role, json, created)"
                " SELECT session_id, ?, seq, role, json, created FROM messages WHERE session_id = ? AND seq >= ?",
                (batch, session_id, row[0]))
            conn.execute("DELETE FROM messages WHERE session_id = ? AND seq >= ?", (session_id, row[0]))
            conn.execute("UPDATE sessions SET updated = MAX(updated, ?) WHERE id = ?", (time.time(), session_id))
        return int(batch)

    def restore_truncated(self, session_id: str, batch: int) -> int:
        """Put back the messages :meth:`truncate_at_prompt` moved aside as ``batch`` (a redo);
        returns how many (0: the batch is gone, because a message was stored since)."""
        with self._write() as conn:
            cur = conn.execute(
                "INSERT INTO messages (session_id, seq, role, json, created)"
                " SELECT session_id, seq, role, json, created FROM rewound_messages WHERE session_id = ? AND batch = ?",
                (session_id, batch))
            conn.execute("DELETE FROM rewound_messages WHERE session_id = ? AND batch = ?", (session_id, batch))
            return int(cur.rowcount)

    # ------------------------------------------------------- compactions (issue 26)

    def record_compaction(self, session_id: str, state_json: str) -> None:
        """Keep the model's compacted view of the session (the messages themselves stay)."""
        with self._write() as conn:
            (seq,) = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM compactions WHERE session_id = ?",
                                  (session_id,)).fetchone()
            conn.execute("INSERT INTO compactions (session_id, seq, json, created) VALUES (?, ?, ?, ?)",
                         (session_id, seq, state_json, time.time()))

    def last_compaction(self, session_id: str) -> str | None:
        with self._lock:
            row = self._c.execute("SELECT json FROM compactions WHERE session_id = ? ORDER BY seq DESC LIMIT 1",
                                  (session_id,)).fetchone()
        return None if row is None else str(row[0])

    def outputs_for(self, session_id: str, max_chars: int,
                    total_chars: int = DEFAULT_OUTPUTS_TOTAL_CHARS) -> PersistedOutputs:
        return PersistedOutputs(self, session_id, max_chars, total_chars)

    def get_session(self, session_id: str) -> SessionInfo | None:
        with self._lock:
            row = self._c.execute(
                "SELECT s.id, s.title, s.created, s.updated, s.model,"
                " (SELECT COUNT(*) FROM messages m WHERE m.session_id = s.id)"
                " FROM sessions s WHERE s.id = ?",
                (session_id,),
            ).fetchone()
        return None if row is None else self._info(row)

    def list_sessions(self) -> list[SessionInfo]:
        """The sessions that hold a user message (an empty session is not listed), most
        recently updated first, with their message counts."""
        with self._lock:
            rows = self._c.execute(
                "SELECT s.id, s.title, s.created, s.updated, s.model, COUNT(m.seq)"
                " FROM sessions s JOIN messages m ON m.session_id = s.id"
                " GROUP BY s.id HAVING SUM(m.role = 'user') > 0"
                " ORDER BY s.updated DESC, s.created DESC, s.id"
            ).fetchall()
        return [self._info(r) for r in rows]

    def load_messages(self, session_id: str) -> list[dict[str, Any]]:
        """The session's messages in order. Raises ``KeyError`` for an unknown session."""
        with self._lock:
            conn = self._c
            self._require(conn, session_id)
            rows = conn.execute(
                "SELECT json FROM messages WHERE session_id = ? ORDER BY seq", (session_id,)
            ).fetchall()
        return [json.loads(r[0]) for r in rows]

    def delete_session(self, session_id: str) -> bool:
        """Delete a session and its messages; False when there was no such session."""
        with self._write() as conn:
            cur = conn.execute("DELETE FROM sessions WHERE id = ?", (session_id,))
            return cur.rowcount > 0

    def rename(self, session_id: str, title: str | None) -> None:
        """Set the title. Raises ``KeyError`` for an unknown session."""
        with self._write() as conn:
            cur = conn.execute(
                "UPDATE sessions SET title = ?, updated = MAX(updated, ?) WHERE id = ?",
                (title, time.time(), session_id),
            )
            if cur.rowcount == 0:
                raise KeyError(session_id)

    def set_model(self, session_id: str, model: str | None) -> None:
        """Record the model a session uses. Raises ``KeyError`` for an unknown session."""
        with self._write() as conn:
            cur = conn.execute("UPDATE sessions SET model = ? WHERE id = ?", (model, session_id))
            if cur.rowcount == 0:
                raise KeyError(session_id)

    def close(self) -> None:
        """Close the connection (idempotent), dropping the sessions this store created that
        never got a message."""
        with self._lock:
            if self._conn is not None:
                for session_id in sorted(self._created):
                    try:
                        self.discard_if_empty(session_id)
                    except sqlite3.Error as exc:
                        log.warning("could not drop the empty session %s: %s", session_id, exc)
                self._created.clear()
                self._conn.close()
                self._conn = None

    def __enter__(self) -> SessionStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def all_workspace_stores(data_dir: str | os.PathLike[str]) -> list[Path]:
    """Every workspace's session database under ``data_dir`` (see :func:`db_path_for_workspace`)."""
    folder = Path(data_dir) / "sessions"
    try:
        return sorted(p for p in folder.iterdir() if p.suffix == ".sqlite3" and p.is_file())
    except OSError:
        return []


class PersistedOutputs:
    """A session's tool outputs in the session database (the output store's backend), bounded
    per session (``max_chars``) and over all sessions (``total_chars``), oldest evicted first."""

    def __init__(self, store: SessionStore, session_id: str, max_chars: int, total_chars: int) -> None:
        self.store = store
        self.session_id = session_id
        self.max_chars = max_chars
        self.total_chars = total_chars

    def save(self, number: int, item: Any) -> None:
        with self.store._write() as conn:
            conn.execute(
                "INSERT OR REPLACE INTO outputs (session_id, number, call_id, tool, text, total, chars, created)"
                " VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                (self.session_id, number, item.call_id, item.tool, item.text, item.total_chars, len(item.text),
                 time.time()))
            conn.execute("INSERT INTO output_marks (session_id, highest) VALUES (?, ?) ON CONFLICT(session_id)"
                         " DO UPDATE SET highest = MAX(highest, excluded.highest)", (self.session_id, number))
            self._evict(conn, "WHERE session_id = ?", (self.session_id,), self.max_chars)
            self._evict(conn, "", (), self.total_chars)

    @staticmethod
    def _evict(conn: sqlite3.Connection, where: str, args: tuple[Any, ...], bound: int) -> None:
        (size,) = conn.execute(f"SELECT COALESCE(SUM(chars), 0) FROM outputs {where}", args).fetchone()
        if size <= bound:
            return
        rows = conn.execute(f"SELECT session_id, number, chars FROM outputs {where} ORDER BY created, number",
                            args).fetchall()
        for sid, number, chars in rows[:-1]:  # the newest always stays
            if size <= bound:
                break
            conn.execute("DELETE FROM outputs WHERE session_id = ? AND number = ?", (sid, number))
            size -= chars
            log.info("evicted stored output out-%s of session %s (output bound %d characters)", number, sid, bound)

    def load(self, number: int) -> Any:
        # lazy: not loaded with the store alone (the server lists sessions with it), ~5 ms
        from agent_ls.agent.tools.output_store import HANDLE_PREFIX, StoredOutput

        with self.store._lock:
            row = self.store._c.execute(
                "SELECT call_id, tool, text, total FROM outputs WHERE session_id = ? AND number = ?",
                (self.session_id, number)).fetchone()
        if row is None:
            return None
        return StoredOutput(f"{HANDLE_PREFIX}{number}", str(row[1]), str(row[2]), int(row[3]), str(row[0]))

    def index(self) -> tuple[int, dict[str, int]]:
        with self.store._lock:
            conn = self.store._c
            mark = conn.execute("SELECT highest FROM output_marks WHERE session_id = ?", (self.session_id,)).fetchone()
            rows = conn.execute("SELECT call_id, number FROM outputs WHERE session_id = ? AND call_id != ''",
                                (self.session_id,)).fetchall()
        return (int(mark[0]) if mark else 0), {str(c): int(n) for c, n in rows}
