"""Checkpoints of a workspace, per session and prompt, and rewinding to them (issue 40).

A checkpoint is two snapshots of every workspace folder (:mod:`.scan`): one taken before a
prompt's turn (:meth:`Checkpoints.begin`) and one after it (:meth:`Checkpoints.finish`). What a
turn changed is the difference between its two snapshots, whatever made the change (the
editor, an MCP server, a shell command); what the user changed is the difference between one
turn's end and the next turn's start, and between the last turn's end and now.

A rewind to a checkpoint puts back, for each file a later turn changed, the content it had
before that checkpoint's prompt (restored, created again, or removed), except files the user
changed since: those are conflicts, left alone unless the caller asks to overwrite them. Files
only the user changed are left alone. A rewind is all or nothing (:mod:`.apply`) and can be
redone until the session's next checkpoint (rewinds stack: each redo undoes the latest).
The conversation part of a rewind moves the session's messages from that prompt on aside in
the session store (:meth:`SessionStore.truncate_at_prompt`), where a redo finds them again.

The calls block (file system and SQLite): from asyncio, run them with :func:`asyncio.to_thread`.
One :class:`Checkpoints` per workspace per process; it is thread-safe.
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
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from agent_ls.agent.checkpoints.apply import Change, RewindError, apply_changes
from agent_ls.agent.checkpoints.objects import NOT_KEPT, Entry, ObjectStore
from agent_ls.agent.checkpoints.scan import Limits, NotKept, Scanner, Snapshot
from agent_ls.agent.permissions.protected import protected_reason
from agent_ls.agent.private_db import make_private_db

if TYPE_CHECKING:
    from agent_ls.agent.store import SessionStore

log = logging.getLogger(__name__)

Trees = list[str | None]
"""A snapshot: the root tree of each workspace folder, in order (None: nothing kept there)."""
CheckpointList = list["Checkpoint"]
Names = list[str]

PROMPT_CHARS = 2000
"""A checkpoint keeps this much of its prompt's text (for lists)."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS checkpoints (
    id           TEXT PRIMARY KEY,
    workspace    TEXT NOT NULL,
    session_id   TEXT NOT NULL,
    prompt_index INTEGER NOT NULL,
    prompt       TEXT NOT NULL,
    created      REAL NOT NULL,
    finished     REAL,
    roots        TEXT NOT NULL,
    before       TEXT NOT NULL,
    after        TEXT,
    changed      TEXT NOT NULL DEFAULT '[]',
    not_kept     TEXT NOT NULL DEFAULT '[]',
    bytes        INTEGER NOT NULL DEFAULT 0,
    rewound      INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS checkpoints_by_session ON checkpoints(workspace, session_id);
CREATE TABLE IF NOT EXISTS rewinds (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace     TEXT NOT NULL,
    session_id    TEXT NOT NULL,
    checkpoint_id TEXT NOT NULL,
    redo          TEXT NOT NULL,
    paths         TEXT NOT NULL,
    rewound_ids   TEXT NOT NULL,
    batch         INTEGER,
    created       REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS notes (
    id         INTEGER PRIMARY KEY AUTOINCREMENT,
    workspace  TEXT NOT NULL,
    session_id TEXT NOT NULL,
    created    REAL NOT NULL,
    text       TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value INTEGER NOT NULL);
"""

# What happens to a file in a rewind (FileAction.action)
RESTORE = "restore"
"""Changed by the agent: its earlier content is put back."""
RECREATE = "recreate"
"""Deleted by the agent: created again with its earlier content."""
DELETE = "delete"
"""Created by the agent: removed."""
CONFLICT = "conflict"
"""Changed by the agent and by the user since: left alone unless the rewind overwrites."""
KEEP = "keep"
"""Changed only by the user since: left alone."""
UNRESTORABLE = "not-kept"
"""The checkpoint did not keep its content (too large, unreadable): left alone."""


class CheckpointError(Exception):
    """A checkpoint that does not exist here, or cannot be rewound (the message says why)."""


@attrs.frozen
class Checkpoint:
    """The state of the workspace before one prompt of a session, and what that turn changed."""

    id: str
    session_id: str
    prompt_index: int
    """The prompt's index in the session (0: the first user message)."""
    prompt: str
    created: float
    """Seconds since the epoch."""
    finished: float | None
    """When the turn's changes were recorded (None: the turn has not finished)."""
    changed: tuple[str, ...]
    """Absolute paths of the files the turn changed (created, modified, deleted)."""
    not_kept: tuple[NotKept, ...]
    """Files the checkpoint saw but did not keep (too large, past the file limit, unreadable);
    paths relative to their workspace folder."""
    bytes_added: int
    """Bytes this checkpoint added to the store."""
    rewound: bool
    """Undone by a rewind (kept for a redo until the session's next checkpoint)."""


@attrs.frozen
class FileAction:
    path: str
    """Absolute path."""
    action: str
    """:data:`RESTORE`, :data:`RECREATE`, :data:`DELETE`, :data:`CONFLICT`, :data:`KEEP` or
    :data:`UNRESTORABLE`."""
    protected: str | None = None
    """Why the path is protected (:mod:`agent_ls.agent.permissions.protected`: ``.vscode/``,
    ``.mcp.json``, git hooks...), None when it is not. A rewind restores it like any other file
    (it puts back what the file was before the agent's turn), but every front end shows the
    flag in the plan before the user confirms."""


@attrs.frozen
class RewindPlan:
    """What a rewind (or a redo) would do to each file; show it, then pass it to
    :meth:`Checkpoints.rewind` (or :meth:`Checkpoints.redo`)."""

    checkpoint: Checkpoint
    actions: tuple[FileAction, ...]
    redo: bool = False
    """A plan to redo the latest rewind of the session."""
    conversation: bool = False
    """A redo plan: the rewind took the conversation back too, so the redo puts it back."""
    _changes: tuple[Change, ...] = attrs.field(default=(), repr=False, alias="changes")
    _conflicts: tuple[Change, ...] = attrs.field(default=(), repr=False, alias="conflicts")
    _now: tuple[str | None, ...] = attrs.field(default=(), repr=False, alias="now")
    _rewind_id: int | None = attrs.field(default=None, repr=False, alias="rewind_id")


@attrs.frozen
class RewindResult:
    checkpoint: Checkpoint
    changed: tuple[str, ...]
    """Absolute paths the rewind wrote or removed (reload them in open editors)."""
    left_alone: tuple[str, ...]
    """Conflicts not overwritten, and files the checkpoint did not keep."""
    messages_removed: bool
    """The conversation was taken back (or, for a redo, put back)."""


def _workspace_key(roots: list[Path]) -> str:
    text = json.dumps(sorted(str(r) for r in roots))
    return hashlib.sha256(text.encode("utf-8", "surrogateescape")).hexdigest()[:24]


class Checkpoints:
    """The checkpoints of one workspace (its folders ``roots``), kept under ``data_dir``."""

    def __init__(self, folder: Path, roots: Sequence[str | os.PathLike[str]], limits: Limits | None = None,
                 *, skip: tuple[str, ...] = ()) -> None:
        self.roots = [Path(os.path.realpath(r)) for r in roots]
        self.limits = limits or Limits()
        self.workspace = _workspace_key(self.roots)
        make_private_db(folder / "checkpoints.sqlite3")
        self.objects = ObjectStore(folder / "objects.sqlite3")
        self.scanner = Scanner(self.roots, self.objects, self.limits, skip=(str(folder), *skip),
                               index=folder / f"files-{self.workspace}.cache")
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(folder / "checkpoints.sqlite3", timeout=10.0, check_same_thread=False,
                                     isolation_level=None)
        self._conn.row_factory = sqlite3.Row
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")  # checkpoints may lose the last write to a power cut
        with self._write() as c:
            for statement in filter(None, (s.strip() for s in _SCHEMA.split(";"))):
                c.execute(statement)

    @classmethod
    def for_workspace(cls, data_dir: str | os.PathLike[str], roots: Sequence[str | os.PathLike[str]],
                      limits: Limits | None = None) -> Checkpoints:
        """The checkpoints of the workspace ``roots`` in ``<data_dir>/checkpoints`` (shared by every
        workspace: one object store, one size bound)."""
        return cls(Path(data_dir) / "checkpoints", [Path(r) for r in roots], limits,
                   skip=(os.path.realpath(data_dir),))

    def close(self) -> None:
        with self._lock:
            self.scanner.close()
            self.objects.close()
            self._conn.close()

    def __enter__(self) -> Checkpoints:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @contextmanager
    def _write(self) -> Iterator[sqlite3.Connection]:
        with self._lock:
            conn = self._conn
            conn.execute("BEGIN IMMEDIATE")
            try:
                yield conn
            except BaseException:
                conn.execute("ROLLBACK")
                raise
            conn.execute("COMMIT")

    def _snapshot(self, pause: Callable[[], None] | None = None) -> Snapshot:
        snap = self.scanner.snapshot(pause)
        if snap.added_bytes:
            with self._write() as c:
                c.execute("INSERT INTO meta (key, value) VALUES ('disk', ?) ON CONFLICT(key)"
                          " DO UPDATE SET value = value + excluded.value", (snap.added_bytes,))
        return snap

    # ------------------------------------------------------------------ taking

    def warm(self, pause: Callable[[], None] | None = None) -> None:
        """Snapshot the workspace without a checkpoint: keeps the files the first checkpoint
        would copy (seconds on a large workspace, once per workspace) and starts the kernel
        watch, so the next :meth:`begin` costs what a later one does. Call it in the
        background when a session opens; ``pause`` is called before each folder is read (it
        may block while more urgent work runs; a :meth:`begin` waits for the warm-up)."""
        with self._lock:
            self._snapshot(pause)

    def begin(self, session_id: str, prompt_index: int, prompt_text: str) -> Checkpoint:
        """Before a prompt's turn: snapshot the workspace. A rewound checkpoint of the session
        can no longer be redone after this."""
        with self._lock:
            with self._write() as c:
                c.execute("DELETE FROM checkpoints WHERE workspace = ? AND session_id = ? AND rewound = 1",
                          (self.workspace, session_id))
                c.execute("DELETE FROM rewinds WHERE workspace = ? AND session_id = ?", (self.workspace, session_id))
            snap = self._snapshot()
            cid = uuid.uuid4().hex[:12]
            with self._write() as c:
                c.execute(
                    "INSERT INTO checkpoints (id, workspace, session_id, prompt_index, prompt, created, roots, before,"
                    " not_kept, bytes) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    (cid, self.workspace, session_id, prompt_index, prompt_text[:PROMPT_CHARS], time.time(),
                     json.dumps([str(r) for r in self.roots]), json.dumps(snap.trees),
                     _dump_not_kept(snap.not_kept), snap.added_bytes))
            self._enforce_bounds(session_id)
            return self.get(cid)

    def finish(self, checkpoint: Checkpoint | str) -> Checkpoint:
        """After the turn (finished, failed or cancelled): record what it changed."""
        cid = checkpoint if isinstance(checkpoint, str) else checkpoint.id
        with self._lock:
            row = self._row(cid)
            snap = self._snapshot()
            changed = self._diff(json.loads(row["before"]), list(snap.trees))
            with self._write() as c:
                c.execute("UPDATE checkpoints SET finished = ?, after = ?, changed = ?, bytes = bytes + ?,"
                          " not_kept = ? WHERE id = ?",
                          (time.time(), json.dumps(snap.trees), json.dumps(sorted(changed)), snap.added_bytes,
                           _dump_not_kept(_merge_not_kept(json.loads(row["not_kept"]), snap.not_kept)), cid))
            self._enforce_bounds(row["session_id"])
            return self.get(cid)

    # ------------------------------------------------------------------ reading

    def list(self, session_id: str | None = None, *, include_rewound: bool = False) -> CheckpointList:
        """The workspace's checkpoints (of one session, or all), oldest first."""
        query = "SELECT * FROM checkpoints WHERE workspace = ?"
        args: list[Any] = [self.workspace]
        if session_id is not None:
            query += " AND session_id = ?"
            args.append(session_id)
        if not include_rewound:
            query += " AND rewound = 0"
        with self._lock:
            rows = self._conn.execute(query + " ORDER BY rowid", args).fetchall()
        return [self._checkpoint(r) for r in rows]

    def get(self, checkpoint_id: str) -> Checkpoint:
        """The checkpoint with this id (or unique prefix of at least 4 characters) in this workspace."""
        return self._checkpoint(self._row(checkpoint_id))

    def notes(self, session_id: str | None = None) -> Names:
        """What was dropped to keep the store bounded, oldest first."""
        query = "SELECT text FROM notes WHERE workspace = ?"
        args: list[Any] = [self.workspace]
        if session_id is not None:
            query += " AND session_id = ?"
            args.append(session_id)
        with self._lock:
            return [str(r[0]) for r in self._conn.execute(query + " ORDER BY id", args).fetchall()]

    def can_redo(self, session_id: str) -> bool:
        with self._lock:
            return self._conn.execute("SELECT 1 FROM rewinds WHERE workspace = ? AND session_id = ?",
                                      (self.workspace, session_id)).fetchone() is not None

    def _row(self, checkpoint_id: str) -> sqlite3.Row:
        with self._lock:
            rows = []
            if len(checkpoint_id) >= 4 and all(ch in "0123456789abcdef" for ch in checkpoint_id):
                rows = self._conn.execute("SELECT * FROM checkpoints WHERE id >= ? AND id < ? LIMIT 2",
                                          (checkpoint_id, checkpoint_id + "g")).fetchall()
        if len(rows) > 1:
            raise CheckpointError(f"checkpoint id {checkpoint_id!r} is ambiguous; give more of it")
        if not rows:
            raise CheckpointError(f"no checkpoint {checkpoint_id!r}")
        row: sqlite3.Row = rows[0]
        if row["workspace"] != self.workspace:
            roots = ", ".join(json.loads(row["roots"]))
            raise CheckpointError(f"checkpoint {row['id']} belongs to another workspace ({roots})")
        return row

    def _checkpoint(self, row: sqlite3.Row) -> Checkpoint:
        return Checkpoint(
            id=row["id"], session_id=row["session_id"], prompt_index=row["prompt_index"], prompt=row["prompt"],
            created=row["created"], finished=row["finished"], changed=tuple(json.loads(row["changed"])),
            not_kept=tuple(NotKept(p, r) for p, r in json.loads(row["not_kept"])), bytes_added=row["bytes"],
            rewound=bool(row["rewound"]))

    def _diff(self, a: Trees, b: Trees) -> dict[str, tuple[Entry | None, Entry | None]]:
        out: dict[str, tuple[Entry | None, Entry | None]] = {}
        for root, ta, tb in zip(self.roots, a, b, strict=True):
            for rel, pair in self.objects.diff(ta, tb).items():
                out[os.path.join(root, rel)] = pair
        return out

    def _lookup(self, trees: Trees, path: str, *, folders: bool = False) -> Entry | None:
        """The file (or, with ``folders``, also folder) entry at the absolute ``path``."""
        for root, tree in zip(self.roots, trees, strict=True):
            if path.startswith(f"{root}{os.sep}"):
                entry = self.objects.lookup(tree, os.path.relpath(path, root).replace(os.sep, "/"))
                return entry if entry is None or folders or not entry.is_dir else None
        return None

    def _dir_in(self, trees: Trees) -> Callable[[str], bool]:
        def check(path: str) -> bool:
            entry = self._lookup(trees, path, folders=True)
            return entry is not None and entry.is_dir

        return check

    # ------------------------------------------------------------------ rewinding

    def _action(self, path: str, action: str) -> FileAction:
        """``action`` on the absolute ``path``, flagged when the path is protected."""
        root = next((r for r in self.roots if path.startswith(f"{r}{os.sep}")), None)
        why = protected_reason(os.path.relpath(path, root) if root else path, self.roots,
                               str(root) if root else None, user_places=True)
        return FileAction(path, action, why)

    def plan_rewind(self, checkpoint_id: str) -> RewindPlan:
        """What rewinding to before ``checkpoint_id``'s prompt would do to each file."""
        with self._lock:
            row = self._row(checkpoint_id)
            cp = self._checkpoint(row)
            if cp.rewound:
                raise CheckpointError(f"checkpoint {cp.id} was already rewound (redo it, or pick an earlier one)")
            if json.loads(row["roots"]) != [str(r) for r in self.roots]:
                raise CheckpointError(f"checkpoint {cp.id} was taken with other workspace folders")
            later = self._conn.execute(
                "SELECT before, after FROM checkpoints WHERE workspace = ? AND session_id = ? AND rewound = 0"
                " AND rowid >= (SELECT rowid FROM checkpoints WHERE id = ?) ORDER BY rowid",
                (self.workspace, cp.session_id, cp.id)).fetchall()
            now = list(self._snapshot().trees)
            agent: set[str] = set()
            user: set[str] = set()
            for i, k in enumerate(later):
                nxt = json.loads(later[i + 1]["before"]) if i + 1 < len(later) else now
                after = json.loads(k["after"]) if k["after"] else nxt
                agent |= self._diff(json.loads(k["before"]), after).keys()
                user |= self._diff(after, nxt).keys()
            actions: list[FileAction] = []
            changes: list[Change] = []
            conflicts: list[Change] = []
            for path, (target, current) in sorted(self._diff(json.loads(row["before"]), now).items()):
                if path not in agent:
                    actions.append(self._action(path, KEEP))
                elif target is not None and target.kind == NOT_KEPT:
                    actions.append(self._action(path, UNRESTORABLE))
                elif path in user:
                    actions.append(self._action(path, CONFLICT))
                    conflicts.append(Change(path, current, target))
                else:
                    actions.append(self._action(path, DELETE if target is None else
                                                RECREATE if current is None else RESTORE))
                    changes.append(Change(path, current, target))
            return RewindPlan(cp, tuple(actions), changes=tuple(changes), conflicts=tuple(conflicts),
                              now=tuple(now))

    def rewind(self, plan: RewindPlan, *, code: bool = True, conversation: bool = False,
               store: SessionStore | None = None, overwrite: bool = False) -> RewindResult:
        """Carry out ``plan`` (from :meth:`plan_rewind`): the files (``code``), the session's
        messages from the checkpoint's prompt on (``conversation``, in ``store``), or both.
        Conflicts are overwritten only with ``overwrite``. All or nothing: raises
        :class:`RewindError` (nothing changed) or :class:`CheckpointError`."""
        if plan.redo:
            raise CheckpointError("this is a redo plan: pass it to redo()")
        if conversation and store is None:
            raise CheckpointError("a conversation rewind needs the session store")
        cp = plan.checkpoint
        with self._lock:
            if self.get(cp.id).rewound:
                raise CheckpointError(f"checkpoint {cp.id} was already rewound")
            changes = [*plan._changes, *(plan._conflicts if overwrite else ())] if code else []
            target = list(json.loads(self._row(cp.id)["before"]))
            apply_changes(changes, self.objects, self.roots, self._dir_in(target))
            batch = None
            if conversation and store is not None:
                try:
                    batch = store.truncate_at_prompt(cp.session_id, cp.prompt_index)
                except Exception as exc:
                    apply_changes([Change(c.path, c.new, c.expect) for c in changes], self.objects, self.roots,
                                  self._dir_in(list(plan._now)))
                    raise RewindError(f"the conversation could not be taken back ({exc}); nothing was changed") \
                        from exc
            with self._write() as c:
                ids = [r[0] for r in c.execute(
                    "SELECT id FROM checkpoints WHERE workspace = ? AND session_id = ? AND rewound = 0"
                    " AND rowid >= (SELECT rowid FROM checkpoints WHERE id = ?)",
                    (self.workspace, cp.session_id, cp.id)).fetchall()]
                c.executemany("UPDATE checkpoints SET rewound = 1 WHERE id = ?", [(i,) for i in ids])
                c.execute("INSERT INTO rewinds (workspace, session_id, checkpoint_id, redo, paths, rewound_ids, batch,"
                          " created) VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                          (self.workspace, cp.session_id, cp.id, json.dumps(plan._now),
                           json.dumps([[ch.path, _entry_json(ch.new)] for ch in changes]), json.dumps(ids), batch,
                           time.time()))
            left = [a.path for a in plan.actions if a.action == UNRESTORABLE or
                    (a.action == CONFLICT and not (code and overwrite))] if code else []
            return RewindResult(self.get(cp.id), tuple(ch.path for ch in changes), tuple(left), batch is not None)

    def plan_redo(self, session_id: str) -> RewindPlan:
        """What redoing the session's latest rewind would do (until its next checkpoint)."""
        with self._lock:
            row = self._conn.execute("SELECT * FROM rewinds WHERE workspace = ? AND session_id = ? ORDER BY id DESC"
                                     " LIMIT 1", (self.workspace, session_id)).fetchone()
            if row is None:
                raise CheckpointError(f"session {session_id} has no rewind to redo")
            redo_trees = json.loads(row["redo"])
            now = list(self._snapshot().trees)
            actions: list[FileAction] = []
            changes: list[Change] = []
            conflicts: list[Change] = []
            for path, left in json.loads(row["paths"]):
                left_entry = _entry_from(left)
                current = self._lookup(now, path)
                wanted = self._lookup(redo_trees, path)
                if current == wanted:
                    continue
                if current != left_entry:
                    actions.append(self._action(path, CONFLICT))
                    conflicts.append(Change(path, current, wanted))
                    continue
                actions.append(self._action(path, DELETE if wanted is None else
                                            RECREATE if current is None else RESTORE))
                changes.append(Change(path, current, wanted))
            return RewindPlan(self.get(row["checkpoint_id"]), tuple(actions), redo=True,
                              conversation=row["batch"] is not None, changes=tuple(changes),
                              conflicts=tuple(conflicts), now=tuple(now), rewind_id=row["id"])

    def redo(self, plan: RewindPlan, *, store: SessionStore | None = None, overwrite: bool = False) -> RewindResult:
        """Undo the latest rewind (from :meth:`plan_redo`): its files, and its conversation part
        (with ``store``) when it had one. All or nothing."""
        if not plan.redo:
            raise CheckpointError("this is a rewind plan: pass it to rewind()")
        with self._lock:
            row = self._conn.execute("SELECT * FROM rewinds WHERE id = ?", (plan._rewind_id,)).fetchone()
            if row is None:
                raise CheckpointError("that rewind can no longer be redone (a new checkpoint was taken)")
            changes = [*plan._changes, *(plan._conflicts if overwrite else ())]
            apply_changes(changes, self.objects, self.roots, self._dir_in(json.loads(row["redo"])))
            restored = False
            if row["batch"] is not None and store is not None:
                restored = store.restore_truncated(row["session_id"], int(row["batch"])) > 0
            with self._write() as c:
                c.executemany("UPDATE checkpoints SET rewound = 0 WHERE id = ?",
                              [(i,) for i in json.loads(row["rewound_ids"])])
                c.execute("DELETE FROM rewinds WHERE id = ?", (row["id"],))
            left = [a.path for a in plan.actions if a.action == CONFLICT and not overwrite]
            return RewindResult(self.get(plan.checkpoint.id), tuple(c.path for c in changes), tuple(left), restored)

    # ------------------------------------------------------------------ bounds

    def _enforce_bounds(self, session_id: str) -> None:
        """Drop the oldest checkpoints (never a session's newest) while the session or the
        store is over its bound, with a note each, then delete the objects nothing needs."""
        dropped: list[tuple[str, str, str]] = []
        with self._lock:
            c = self._conn
            rows = c.execute("SELECT id, bytes FROM checkpoints WHERE workspace = ? AND session_id = ? ORDER BY rowid",
                             (self.workspace, session_id)).fetchall()
            count, size = len(rows), sum(r[1] for r in rows)
            for cid, nbytes in rows[:-1]:
                if count <= self.limits.session_checkpoints and size <= self.limits.session_bytes:
                    break
                reason = (f"the session keeps at most {self.limits.session_checkpoints} checkpoints"
                          if count > self.limits.session_checkpoints
                          else f"the session's checkpoints may use {self.limits.session_bytes} bytes")
                dropped.append((cid, session_id, reason))
                count, size = count - 1, size - nbytes
            disk_row = c.execute("SELECT value FROM meta WHERE key = 'disk'").fetchone()
            disk = int(disk_row[0]) if disk_row else 0
            if disk > self.limits.total_bytes:
                newest = {r[0] for r in c.execute("SELECT MAX(rowid) FROM checkpoints GROUP BY workspace, session_id")}
                excess = disk - self.limits.total_bytes
                for rowid, cid, sid, nbytes in c.execute("SELECT rowid, id, session_id, bytes FROM checkpoints"
                                                         " ORDER BY rowid").fetchall():
                    if excess <= 0:
                        break
                    if rowid in newest or any(d[0] == cid for d in dropped):
                        continue
                    dropped.append((cid, sid, f"all checkpoints together may use {self.limits.total_bytes} bytes"))
                    excess -= max(nbytes, 1)
            if not dropped:
                return
            with self._write() as w:
                for cid, sid, reason in dropped:
                    prompt = w.execute("SELECT prompt_index, prompt FROM checkpoints WHERE id = ?", (cid,)).fetchone()
                    w.execute("DELETE FROM checkpoints WHERE id = ?", (cid,))
                    w.execute("DELETE FROM rewinds WHERE checkpoint_id = ?", (cid,))
                    text = (f"dropped checkpoint {cid} (prompt {prompt[0] + 1}: {' '.join(prompt[1].split())[:60]!r}):"
                            f" {reason}")
                    w.execute("INSERT INTO notes (workspace, session_id, created, text) VALUES (?, ?, ?, ?)",
                              (self.workspace, sid, time.time(), text))
                    log.info("%s", text)
            self.collect()

    def collect(self) -> int:
        """Delete the objects no checkpoint or rewind needs; returns the bytes left in the store."""
        with self._lock:
            roots: list[str] = []
            for before, after in self._conn.execute("SELECT before, after FROM checkpoints").fetchall():
                roots += json.loads(before) + (json.loads(after) if after else [])
            for (redo,) in self._conn.execute("SELECT redo FROM rewinds").fetchall():
                roots += json.loads(redo)
            _deleted, left = self.objects.collect(self.objects.reachable([r for r in roots if r]))
            self.scanner.forget()  # a digest it remembers may belong to a deleted object
            with self._write() as w:
                w.execute("INSERT OR REPLACE INTO meta (key, value) VALUES ('disk', ?)", (left,))
            return left


def _entry_json(entry: Entry | None) -> list[Any] | None:
    return None if entry is None else [entry.kind, entry.mode, entry.digest, entry.size]


def _entry_from(data: list[Any] | None) -> Entry | None:
    return None if data is None else Entry(data[0], data[1], data[2], data[3])


def _dump_not_kept(items: list[NotKept]) -> str:
    return json.dumps([[n.path, n.reason] for n in items[:1000]])


def _merge_not_kept(before: list[list[str]], after: list[NotKept]) -> list[NotKept]:
    seen = {p for p, _ in before}
    return [NotKept(p, r) for p, r in before] + [n for n in after if n.path not in seen]
