"""The content-addressed object store behind checkpoints: blobs (a file's bytes) and trees (one
directory's entries), each kept once under the SHA-256 of its content, zlib-compressed, in
``<data_dir>/checkpoints/objects/<2 hex>/<62 hex>`` (files 0600, folders 0700).

A snapshot of a workspace folder is the hash of its root tree. Trees of unchanged directories
keep their hash from one snapshot to the next, so a checkpoint after a turn that changed ten
files adds ten blobs and the trees on their paths, and two snapshots are compared by walking
only the subtrees whose hashes differ (:meth:`ObjectStore.diff`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import zlib
from collections.abc import Iterator
from pathlib import Path

import attrs

from agent_ls.agent.private_db import PRIVATE_DIR_MODE, PRIVATE_FILE_MODE

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
    """Blobs and trees under ``folder``; safe to share between processes (each object is
    written to a temporary name and renamed into place)."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._trees: dict[str, Tree] = {}
        """Trees read or written by this process (a tree never changes under its hash)."""
        self._known: set[str] = set()

    def _path(self, digest: str) -> Path:
        return self.folder / digest[:2] / digest[2:]

    def has(self, digest: str) -> bool:
        if digest in self._known:
            return True
        if self._path(digest).exists():
            self._known.add(digest)
            return True
        return False

    def put(self, data: bytes, digest: str | None = None) -> tuple[str, int]:
        """Keep ``data``; returns its digest and the bytes this added on disk (0: already kept)."""
        digest = digest or digest_of(data)
        if self.has(digest):
            return digest, 0
        path = self._path(digest)
        if not path.parent.is_dir():
            path.parent.mkdir(mode=PRIVATE_DIR_MODE, parents=True, exist_ok=True)
        packed = zlib.compress(data, 1)
        tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}")
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, PRIVATE_FILE_MODE)
        try:
            with os.fdopen(fd, "wb") as f:
                f.write(packed)
            os.replace(tmp, path)
        except BaseException:
            tmp.unlink(missing_ok=True)
            raise
        self._known.add(digest)
        return digest, len(packed)

    def get(self, digest: str) -> bytes:
        """The bytes kept under ``digest``, checked against it."""
        try:
            data = zlib.decompress(self._path(digest).read_bytes())
        except (OSError, zlib.error) as exc:
            raise ObjectMissing(f"object {digest[:12]} is missing or damaged") from exc
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
        """Delete every object not in ``keep``; returns (objects deleted, bytes left on disk)."""
        deleted = 0
        left = 0
        try:
            shards = list(os.scandir(self.folder))
        except FileNotFoundError:
            return 0, 0
        for shard in shards:
            if not shard.is_dir(follow_symlinks=False):
                continue
            for obj in os.scandir(shard.path):
                digest = shard.name + obj.name
                if digest in keep:
                    left += obj.stat(follow_symlinks=False).st_size
                    continue
                if obj.name.startswith("."):
                    continue  # an object another process is writing
                try:
                    os.unlink(obj.path)
                    deleted += 1
                except FileNotFoundError:
                    pass
        self._known &= keep
        self._trees = {k: v for k, v in self._trees.items() if k in keep}
        return deleted, left
