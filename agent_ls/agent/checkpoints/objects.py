"""The content-addressed object store behind checkpoints: blobs (a file's bytes) and trees (one
directory's entries), each kept once under the SHA-256 of its content, zlib-compressed, in one
SQLite file (``<data_dir>/checkpoints/objects.sqlite3``, 0600 in a 0700 folder).

A snapshot of a workspace folder is the hash of its root tree. Trees of unchanged directories
keep their hash from one snapshot to the next, so a checkpoint after a turn that changed ten
files adds ten blobs and the trees on their paths, and two snapshots are compared by walking
only the subtrees whose hashes differ (:meth:`ObjectStore.diff`).

One database rather than a file per object: the first snapshot of a workspace writes every kept
file at once, and ten thousand small files cost ten thousand creations and renames (about four
times the whole snapshot on a slow file system), where one transaction costs one commit.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
import threading
import zlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import attrs

from agent_ls.agent.private_db import make_private_db

FILE = "f"
LINK = "l"
DIR = "d"
NOT_KEPT = "s"
"""A file the snapshot saw but did not copy (over the size limit, unreadable, past the file
limit): its digest is only ``size:mtime``, so a change is noticed but cannot be restored."""

WORK_PREFIX = ".agent-ls-rewind-"
"""The name of the short-lived folder a rewind stages files in (never snapshotted)."""


@attrs.frozen
class Entry:
    """One name in a tree: a file, a symbolic link, a directory (``digest`` is its tree) or a
    file that was not kept."""

    kind: str
    mode: int
    """Permission bits (files); 0 for the other kinds."""
    digest: str
    size: int = 0

    @property
    def is_dir(self) -> bool:
        return self.kind == DIR


Tree = dict[str, Entry]


class ObjectMissing(Exception):
    """An object a checkpoint needs is not in the store (dropped, or the store was damaged)."""


def digest_of(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


class ObjectStore:
    """Blobs and trees in the SQLite file ``path``; safe to share between processes (SQLite's
    locking). Writes between :meth:`batch` enter and exit are one transaction."""

    def __init__(self, path: Path) -> None:
        self.path = path
        make_private_db(path)
        self._lock = threading.RLock()
        self._conn = sqlite3.connect(path, timeout=30.0, check_same_thread=False, isolation_level=None)
        self._conn.execute("PRAGMA auto_vacuum=INCREMENTAL")  # (a new file only) collect() gives space back
        self._conn.execute("PRAGMA journal_mode=WAL")
        self._conn.execute("PRAGMA synchronous=NORMAL")
        self._conn.execute("CREATE TABLE IF NOT EXISTS objects (digest TEXT PRIMARY KEY, data BLOB NOT NULL)"
                           " WITHOUT ROWID")
        self._depth = 0
        self._trees: dict[str, Tree] = {}
        """Trees read or written by this process (a tree never changes under its hash)."""
        self._known: set[str] = set()

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    @contextmanager
    def batch(self) -> Iterator[None]:
        """Make the writes inside one transaction (committed on exit, also on error: every
        object written is whole and correct on its own)."""
        with self._lock:
            if self._depth == 0:
                self._conn.execute("BEGIN IMMEDIATE")
            self._depth += 1
            try:
                yield
            finally:
                self._depth -= 1
                if self._depth == 0:
                    self._conn.execute("COMMIT")

    def has(self, digest: str) -> bool:
        if digest in self._known:
            return True
        with self._lock:
            found = self._conn.execute("SELECT 1 FROM objects WHERE digest = ?", (digest,)).fetchone() is not None
        if found:
            self._known.add(digest)
        return found

    def put(self, data: bytes, digest: str | None = None) -> tuple[str, int]:
        """Keep ``data``; returns its digest and the bytes this added (0: already kept)."""
        digest = digest or digest_of(data)
        if self.has(digest):
            return digest, 0
        packed = zlib.compress(data, 1)
        with self._lock:
            self._conn.execute("INSERT OR IGNORE INTO objects (digest, data) VALUES (?, ?)", (digest, packed))
        self._known.add(digest)
        return digest, len(packed)

    def present(self, digests: set[str]) -> set[str]:
        """Those of ``digests`` the store holds."""
        with self._lock:
            held = {str(r[0]) for r in self._conn.execute("SELECT digest FROM objects")}
        return digests & held

    def get(self, digest: str) -> bytes:
        """The bytes kept under ``digest``, checked against it."""
        with self._lock:
            row = self._conn.execute("SELECT data FROM objects WHERE digest = ?", (digest,)).fetchone()
        try:
            if row is None:
                raise ObjectMissing(f"object {digest[:12]} is missing")
            data = zlib.decompress(row[0])
        except zlib.error as exc:
            raise ObjectMissing(f"object {digest[:12]} is damaged") from exc
        if digest_of(data) != digest:
            raise ObjectMissing(f"object {digest[:12]} is damaged")
        return data

    # ------------------------------------------------------------------ trees

    def put_tree(self, tree: Tree) -> tuple[str, int]:
        data = json.dumps([[name, e.kind, e.mode, e.digest, e.size] for name, e in sorted(tree.items())],
                          separators=(",", ":"), ensure_ascii=False).encode("utf-8", "surrogateescape")
        digest, added = self.put(data)
        self._trees[digest] = tree
        return digest, added

    def tree(self, digest: str) -> Tree:
        tree = self._trees.get(digest)
        if tree is None:
            rows = json.loads(self.get(digest).decode("utf-8", "surrogateescape"))
            tree = {r[0]: Entry(r[1], r[2], r[3], r[4]) for r in rows}
            self._trees[digest] = tree
        return tree

    def files(self, root: str | None, prefix: str = "") -> Iterator[tuple[str, Entry]]:
        """Every file entry (not directories) under the tree ``root``, with its path."""
        if root is None:
            return
        for name, entry in sorted(self.tree(root).items()):
            if entry.is_dir:
                yield from self.files(entry.digest, f"{prefix}{name}/")
            else:
                yield f"{prefix}{name}", entry

    def lookup(self, root: str | None, path: str) -> Entry | None:
        """The entry at ``path`` (``a/b/c``) in the tree ``root``."""
        parts = path.split("/")
        digest = root
        for i, part in enumerate(parts):
            if digest is None:
                return None
            entry = self.tree(digest).get(part)
            if entry is None:
                return None
            if i == len(parts) - 1:
                return entry
            digest = entry.digest if entry.is_dir else None
        return None

    def diff(self, a: str | None, b: str | None, prefix: str = "",
             out: dict[str, tuple[Entry | None, Entry | None]] | None = None,
             ) -> dict[str, tuple[Entry | None, Entry | None]]:
        """The file paths whose entry differs between trees ``a`` and ``b`` (None: empty),
        each with its two entries (None: absent). Subtrees with equal hashes are not read."""
        out = {} if out is None else out
        if a == b:
            return out
        ta = self.tree(a) if a else {}
        tb = self.tree(b) if b else {}
        for name in sorted(ta.keys() | tb.keys()):
            x, y = ta.get(name), tb.get(name)
            if x == y:
                continue
            path = prefix + name
            xd = x.digest if x is not None and x.is_dir else None
            yd = y.digest if y is not None and y.is_dir else None
            if xd is not None or yd is not None:
                self.diff(xd, yd, f"{path}/", out)
            xf = x if x is not None and not x.is_dir else None
            yf = y if y is not None and not y.is_dir else None
            if xf != yf:
                out[path] = (xf, yf)
        return out

    def reachable(self, roots: list[str]) -> set[str]:
        """Every object the trees ``roots`` need (themselves, their subtrees and blobs)."""
        seen: set[str] = set()
        stack = [r for r in roots if r]
        while stack:
            digest = stack.pop()
            if digest in seen:
                continue
            seen.add(digest)
            for entry in self.tree(digest).values():
                if entry.is_dir:
                    stack.append(entry.digest)
                elif entry.kind in (FILE, LINK):
                    seen.add(entry.digest)
        return seen

    def collect(self, keep: set[str]) -> tuple[int, int]:
        """Delete every object not in ``keep``; returns (objects deleted, bytes left)."""
        with self._lock:
            c = self._conn
            c.execute("BEGIN IMMEDIATE")
            try:
                c.execute("CREATE TEMP TABLE IF NOT EXISTS keep (digest TEXT PRIMARY KEY) WITHOUT ROWID")
                c.execute("DELETE FROM keep")
                c.executemany("INSERT OR IGNORE INTO keep (digest) VALUES (?)", ((d,) for d in keep))
                deleted = c.execute("DELETE FROM objects WHERE digest NOT IN (SELECT digest FROM keep)").rowcount
                (left,) = c.execute("SELECT COALESCE(SUM(length(data)), 0) FROM objects").fetchone()
                c.execute("DELETE FROM keep")
            except BaseException:
                c.execute("ROLLBACK")
                raise
            c.execute("COMMIT")
            c.execute("PRAGMA incremental_vacuum")
        self._known &= keep
        self._trees = {k: v for k, v in self._trees.items() if k in keep}
        return int(deleted), int(left)
