"""The agent's file changes as the user reviews them (issue 16, item 3).

Every change the file tools make is *reported* for the call that made it:

- :data:`current_call` (a context variable the turn loop sets around each tool call) says
  which session, turn and call is running and how to report;
- :class:`Proposal` is a change before it is applied, as an editor that reviews edits is
  asked about it (:class:`EditReviewer`: the language server sends ``agent/reviewEdit``);
  :class:`ReviewAnswer` is the answer (``accept``, ``reject`` or ``deferred``: apply now,
  the user reviews it afterwards);
- the outcome is a :class:`~agent_ls.agent.events.FileChange` event (the chat's file card),
  and the change (texts before and after included) is recorded in :class:`ChangeStore`, a
  table of the session database, so a resumed session shows its file cards with their
  outcome and can still show the diff.

Statuses in the store: ``proposed`` (asked, no answer yet: the process stopped meanwhile),
``accepted``, ``rejected``, ``failed``, ``written`` (the disk, no editor), ``applied`` (in the
editor, not reviewed yet), then ``kept`` or ``reverted`` (the user's later decision on an
applied change, ``agent/changeOutcome``).
"""

from __future__ import annotations

import difflib
import logging
import sqlite3
import threading
import time
from collections.abc import Awaitable, Callable
from contextvars import ContextVar
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

import attrs

from agent_ls.agent.events import FileChange
from agent_ls.agent.private_db import make_private_db

log = logging.getLogger(__name__)


REVIEWED_TOOLS = ("edit_file", "write_file")
"""The built-in tools whose changes all go through :meth:`FileAccess.write
<agent_ls.agent.editor.editor_files.FileAccess.write>` (and so through the editor's review)."""

MAX_KEPT_CHARS = 4_000_000
"""Texts before and after a change are kept for a later review while together at most this long."""

EXACT_DIFF_LINES = 20_000
"""Line counts come from a real line diff up to this many differing lines on each side;
beyond, the differing middle counts as removed and added."""


def line_counts(before: str, after: str) -> tuple[int, int]:
    """Lines added and removed from ``before`` to ``after`` (as ``git diff --stat`` counts)."""
    a = before.splitlines()
    b = after.splitlines()
    start = 0
    while start < len(a) and start < len(b) and a[start] == b[start]:
        start += 1
    end = 0
    while end < len(a) - start and end < len(b) - start and a[-1 - end] == b[-1 - end]:
        end += 1
    mid_a, mid_b = a[start:len(a) - end], b[start:len(b) - end]
    if not mid_a or not mid_b or len(mid_a) > EXACT_DIFF_LINES or len(mid_b) > EXACT_DIFF_LINES:
        return len(mid_b), len(mid_a)
    added = removed = 0
    for tag, i1, i2, j1, j2 in difflib.SequenceMatcher(None, mid_a, mid_b, autojunk=False).get_opcodes():
        if tag != "equal":
            removed += i2 - i1
            added += j2 - j1
    return added, removed


@attrs.frozen
class Proposal:
    """A change before it is applied, as the editor's review shows it."""

    change_id: str
    session_id: str | None
    call_id: str | None
    turn: int
    path: Path
    shown: str
    uri: str
    before: str
    after: str
    added: int
    removed: int
    created: bool


@attrs.frozen
class ReviewAnswer:
    decision: str
    """``accept``, ``reject`` or ``deferred`` (apply now; the user reviews it afterwards)."""
    reason: str | None = None
    """Why the user rejected it (told to the model)."""


@runtime_checkable
class EditReviewer(Protocol):
    """An editor that reviews the agent's changes (the language server, when its client can)."""

    def reviews_edits(self) -> bool:
        """Whether changes are sent to the editor for review (``agent/reviewEdit``)."""
        ...

    async def review_edit(self, proposal: Proposal) -> ReviewAnswer:
        """The editor's answer; a failure to ask is a ``reject`` with the reason."""
        ...


Report = Callable[[FileChange, str | None, str | None, bool], Awaitable[None]]
"""``report(change, before, after, notify)``: record the change (with its texts) and, when
``notify``, tell the event sink."""


@attrs.frozen
class CallContext:
    """The tool call running now (set by the turn loop around each call)."""

    session_id: str
    call_id: str
    turn: int
    report: Report | None = None
    owner: CallContext | None = None
    """A subagent's call: the parent's ``agent`` call it runs under (its file changes are the
    parent's: :attr:`changes`)."""

    @property
    def changes(self) -> CallContext:
        """Where this call's file changes belong: the top conversation's call (a subagent's change
        is reviewed, recorded and shown in the file card of the turn that started the subagent,
        as the parent's own changes are); the call itself outside a subagent."""
        return self.owner.changes if self.owner is not None else self


current_call: ContextVar[CallContext | None] = ContextVar("agent_ls_current_call", default=None)


# --- the store -------------------------------------------------------------------------------

_SCHEMA = """
CREATE TABLE IF NOT EXISTS file_changes (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    change_id  TEXT NOT NULL,
    seq        INTEGER NOT NULL,
    turn       INTEGER NOT NULL,
    call_id    TEXT,
    path       TEXT NOT NULL,
    shown      TEXT NOT NULL,
    uri        TEXT,
    added      INTEGER NOT NULL,
    removed    INTEGER NOT NULL,
    created    INTEGER NOT NULL,
    status     TEXT NOT NULL,
    reason     TEXT,
    before     TEXT,
    after      TEXT,
    updated    REAL NOT NULL,
    PRIMARY KEY (session_id, change_id)
) WITHOUT ROWID
"""

_FIELDS = "change_id, call_id, turn, path, shown, uri, added, removed, created, status, reason"


def _record(row: tuple[Any, ...]) -> dict[str, Any]:
    keys = [k.strip() for k in _FIELDS.split(",")]
    out = dict(zip(keys, row, strict=True))
    out["created"] = bool(out["created"])
    return out


class ChangeStore:
    """The agent's file changes per session, in the session database (its own table; the rows
    go away with their session through the foreign key). Blocking and short: call it through
    ``asyncio.to_thread``. One instance per database file (:meth:`for_path`)."""

    _shared: dict[Path, ChangeStore] = {}
    _shared_lock = threading.Lock()

    def __init__(self, path: str | Path, *, busy_timeout: float = 5.0) -> None:
        self.path = Path(path)
        make_private_db(self.path)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=busy_timeout, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.execute(_SCHEMA)

    @classmethod
    def for_path(cls, path: str | Path) -> ChangeStore:
        key = Path(path)
        with cls._shared_lock:
            store = cls._shared.get(key)
            if store is None:
                store = cls._shared[key] = cls(key)
            return store

    def record(self, session_id: str, change: FileChange, before: str | None, after: str | None) -> None:
        """Insert or update ``change`` (its texts are kept when not too long; ``None`` keeps
        texts recorded earlier)."""
        if before is not None and after is not None and len(before) + len(after) > MAX_KEPT_CHARS:
            before = after = None
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                (seq,) = conn.execute("SELECT COALESCE(MAX(seq), 0) + 1 FROM file_changes WHERE session_id = ?",
                                      (session_id,)).fetchone()
                conn.execute(
                    "INSERT INTO file_changes (session_id, change_id, seq, turn, call_id, path, shown, uri, added,"
                    " removed, created, status, reason, before, after, updated)"
                    " VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)"
                    " ON CONFLICT (session_id, change_id) DO UPDATE SET status = excluded.status,"
                    " reason = excluded.reason, added = excluded.added, removed = excluded.removed,"
                    " before = COALESCE(excluded.before, before), after = COALESCE(excluded.after, after),"
                    " updated = excluded.updated",
                    (session_id, change.change_id, seq, change.turn, change.call_id, change.path, change.shown,
                     change.uri, change.added, change.removed, int(change.created), change.status, change.reason,
                     before, after, time.time()))
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def set_status(self, session_id: str, change_id: str, status: str) -> dict[str, Any] | None:
        """The user's later decision (``kept``, ``reverted``); the updated record, or ``None``
        for an unknown change."""
        with self._lock:
            cur = self._conn.execute(
                "UPDATE file_changes SET status = ?, updated = ? WHERE session_id = ? AND change_id = ?",
                (status, time.time(), session_id, change_id))
            if cur.rowcount == 0:
                return None
            row = self._conn.execute(f"SELECT {_FIELDS} FROM file_changes WHERE session_id = ? AND change_id = ?",
                                     (session_id, change_id)).fetchone()
        return _record(row)

    def list(self, session_id: str) -> list[dict[str, Any]]:
        """The session's changes in order, without their texts (``hasContent`` says whether
        they are kept)."""
        with self._lock:
            rows = self._conn.execute(
                f"SELECT {_FIELDS}, before IS NOT NULL FROM file_changes WHERE session_id = ? ORDER BY seq",
                (session_id,)).fetchall()
        out = []
        for row in rows:
            rec = _record(row[:-1])
            rec["has_content"] = bool(row[-1])
            out.append(rec)
        return out

    def content(self, session_id: str, change_id: str) -> tuple[dict[str, Any], str | None, str | None] | None:
        with self._lock:
            row = self._conn.execute(
                f"SELECT {_FIELDS}, before, after FROM file_changes WHERE session_id = ? AND change_id = ?",
                (session_id, change_id)).fetchone()
        if row is None:
            return None
        return _record(row[:-2]), row[-2], row[-1]

    def close(self) -> None:
        with self._lock:
            self._conn.close()
        with self._shared_lock:
            if self._shared.get(self.path) is self:
                del self._shared[self.path]
