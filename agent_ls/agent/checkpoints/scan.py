"""Snapshots of workspace folders into the object store, fast when little changed.

A snapshot walks each folder (symbolic links are kept as links, never followed), skips what
``.gitignore`` files ignore (every one in the tree, deeper ones overriding, as git reads them)
plus ``.git`` and ``node_modules`` everywhere, and keeps each file's bytes unless it is larger
than the size limit or past the file limit (those are listed as not kept).

Two caches make the next snapshot cheap, as git's index does: a file whose ``lstat`` (size,
times, inode, mode) is unchanged keeps its digest without being read, and a directory whose
``lstat`` and ignore rules are unchanged keeps its listing without being listed or matched
against the ignore rules again. An entry written within :data:`RACY_NS` of the snapshot's
start is not trusted (the file system's clock is coarse: a write in the same tick leaves the
times unchanged), so it is read again next time.
"""

from __future__ import annotations

import contextlib
import errno
import logging
import marshal
import os
import stat
import time
from collections.abc import Callable
from pathlib import Path

import attrs
import pathspec

from agent_ls.agent.checkpoints.objects import (
    DIR,
    FILE,
    LINK,
    NOT_KEPT,
    WORK_PREFIX,
    Entry,
    ObjectStore,
    Tree,
    digest_of,
)
from agent_ls.agent.checkpoints.watch import FolderWatch
from agent_ls.core.sandbox import is_placeholder

log = logging.getLogger(__name__)

RACY_NS = 100_000_000
"""A file or folder changed less than this before a snapshot started is read again next time."""

_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_BY_FD = hasattr(os, "O_DIRECTORY") and os.lstat in os.supports_dir_fd and os.scandir in os.supports_fd
"""Names are looked up relative to an open folder (POSIX); elsewhere by their whole path."""

INDEX_SAVE_AFTER = 1000
"""A snapshot that read this many files saves the file cache at once (others at close)."""
_INDEX_VERSION = 1

ALWAYS_EXCLUDED = (".git", "node_modules")
"""Names never snapshotted, at any depth (the user's repository and installed packages)."""


@attrs.frozen
class Limits:
    """How much checkpoints keep."""

    max_file_bytes: int = 8 * 1024 * 1024
    """A larger file is not copied (listed as not kept)."""
    max_files: int = 100_000
    """Files kept per snapshot; the rest are listed as not kept."""
    session_checkpoints: int = 100
    """Checkpoints kept per session (the oldest are dropped, with a note)."""
    session_bytes: int = 512 * 1024 * 1024
    """Bytes a session's checkpoints may add to the store (the oldest are dropped, with a note)."""
    total_bytes: int = 2 * 1024 * 1024 * 1024
    """Bytes of the whole store, every workspace together (the oldest checkpoints are dropped)."""
    excluded: tuple[str, ...] = ALWAYS_EXCLUDED


@attrs.frozen
class NotKept:
    """A file a snapshot saw but did not copy, and why."""

    path: str
    reason: str


@attrs.define
class Snapshot:
    trees: tuple[str | None, ...]
    """The root tree of each workspace folder (None: nothing kept in it)."""
    not_kept: list[NotKept]
    added_bytes: int
    """Bytes this snapshot added to the object store."""


_StatKey = tuple[int, int, int, int, int]


def _key(st: os.stat_result) -> _StatKey:
    return (st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, st.st_mode)


@attrs.define
class _File:
    key: _StatKey
    entry: Entry
    trusted: bool


@attrs.define
class _Dir:
    key: tuple[object, ...]
    names: list[str]
    """The names kept after the ignore rules."""
    trusted: bool
    tree: Tree | None = None
    digest: str | None = None
    sub_not_kept: list[NotKept] = attrs.Factory(list)
    """What the folder's subtree did not keep, at its last walk."""
    sub_files: int = 0
    """Files in the folder's subtree, at its last walk."""


_Rules = tuple[tuple[str, pathspec.GitIgnoreSpec], ...]


class Scanner:
    """Snapshots of ``roots`` into ``objects``; keeps its caches between snapshots."""

    def __init__(self, roots: list[Path], objects: ObjectStore, limits: Limits,
                 skip: tuple[str, ...] = (), index: Path | None = None) -> None:
        self.roots = roots
        self.objects = objects
        self.limits = limits
        self.skip = {os.path.realpath(p) for p in skip}
        """Folders never snapshotted (the data directory, when it lies in a workspace)."""
        self._files: dict[str, _File] = {}
        self._dirs: dict[str, _Dir] = {}
        self._ignores: dict[str, tuple[_StatKey, pathspec.GitIgnoreSpec]] = {}
        self._last: Snapshot | None = None
        self.watch = FolderWatch()
        self.index = index
        """Where the file cache is kept between processes (None: not kept)."""
        self._unsaved = 0
        """Files read since the file cache was last saved."""
        self._load_index()

    def forget(self) -> None:
        """Drop the caches (after objects were collected: a cached digest may be gone)."""
        self._files.clear()
        self._dirs.clear()
        self._last = None
        self.watch.complete = False

    def snapshot(self, pause: Callable[[], None] | None = None) -> Snapshot:
        """The workspace now. ``pause``: called before each folder is read (it may block: a
        background snapshot that yields the interpreter to more urgent work)."""
        state = _Walk(time.time_ns() - RACY_NS, pause=pause)
        changes = self.watch.changed()
        if changes is not None:
            for subtree in changes.subtrees:
                self._invalidate(subtree)
            state.touched = set()
            state.dirty = changes.folders | changes.subtrees
            for folder in changes.folders | changes.subtrees:
                while folder not in state.touched and len(folder) > 1:
                    state.touched.add(folder)
                    folder = os.path.dirname(folder)
            if not state.touched and self._last is not None:
                return Snapshot(self._last.trees, list(self._last.not_kept), 0)  # the kernel saw no change
        trees: list[str | None] = []
        with self.objects.batch():
            for root in self.roots:
                try:
                    st = os.stat(root)
                except OSError:
                    trees.append(None)
                    continue
                trees.append(self._walk(state, str(root), "", (), (), st))
        self._last = Snapshot(tuple(trees), state.not_kept, state.added)
        if self._unsaved >= INDEX_SAVE_AFTER:
            self.save_index()  # (a smaller change is kept at close)
        return Snapshot(tuple(trees), list(state.not_kept), state.added)

    def close(self) -> None:
        self.save_index()
        self.watch.close()

    # The file cache is kept between processes (a new process, the CLI, a restarted server would
    # otherwise read every file again): as git's index, keyed by each file's lstat (size, times,
    # inode, mode: a change of content changes the ctime, which no program can set back). Only
    # trusted entries are kept, and only those whose object is still in the store.

    def _load_index(self) -> None:
        if self.index is None:
            return
        try:
            with open(self.index, "rb") as f:
                data = marshal.load(f)
            if not isinstance(data, dict) or data.get("version") != _INDEX_VERSION:
                return
            entries = data["files"]
            present = self.objects.present({row[3] for row in entries.values()})
            for path, (key, kind, digest_mode, digest, size) in entries.items():
                if digest in present:
                    self._files[path] = _File(tuple(key), Entry(kind, digest_mode, digest, size), True)
        except (OSError, EOFError, ValueError, TypeError, KeyError) as exc:
            log.info("checkpoint file cache not used (%s): every file is read again", exc)

    def save_index(self) -> None:
        """Keep the file cache for the next process (when files were read since the last save)."""
        if self.index is None or not self._unsaved:
            return
        files = {path: (f.key, f.entry.kind, f.entry.mode, f.entry.digest, f.entry.size)
                 for path, f in self._files.items() if f.trusted and f.entry.kind in (FILE, LINK)}
        tmp = self.index.with_name(f".{self.index.name}.{os.getpid()}")
        try:
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "wb") as f:
                marshal.dump({"version": _INDEX_VERSION, "files": files}, f)
            os.replace(tmp, self.index)
            self._unsaved = 0
        except OSError as exc:
            log.info("could not keep the checkpoint file cache: %s", exc)
            with contextlib.suppress(OSError):
                os.unlink(tmp)

    def _invalidate(self, folder: str) -> None:
        """Forget what is cached for ``folder`` and everything under it."""
        prefix = f"{folder}/"
        for cache in (self._dirs, self._files):
            for path in [p for p in cache if p == folder or p.startswith(prefix)]:
                del cache[path]

    # ---------------------------------------------------------------- internals

    def _ignore_spec(self, path: str, st: os.stat_result) -> pathspec.GitIgnoreSpec:
        cached = self._ignores.get(path)
        if cached is not None and cached[0] == _key(st):
            return cached[1]
        try:
            with open(path, encoding="utf-8", errors="replace") as f:
                spec = pathspec.GitIgnoreSpec.from_lines(f.read().splitlines())
        except OSError:
            spec = pathspec.GitIgnoreSpec.from_lines([])
        self._ignores[path] = (_key(st), spec)
        return spec

    def _ignored(self, rules: _Rules, rel: str, is_dir: bool) -> bool:
        result: bool | None = None
        for base, spec in rules:
            sub = rel[len(base):] if base else rel
            check = spec.check_file(f"{sub}/" if is_dir else sub)
            if check.include is not None:
                result = check.include
        return bool(result)

    def _listing(self, path: str, fd: int, rel: str, rules: _Rules, rules_key: tuple[object, ...],
                 st: os.stat_result, since: int) -> _Dir:
        key = (st.st_mtime_ns, st.st_ctime_ns, st.st_ino, rules_key)
        cached = self._dirs.get(path)
        if cached is not None and cached.trusted and cached.key == key:
            return cached
        names: list[str] = []
        try:
            entries = sorted(os.scandir(fd if fd >= 0 else path), key=lambda e: e.name)
        except OSError:
            entries = []
        for e in entries:
            if e.name in self.limits.excluded or e.name.startswith(WORK_PREFIX):
                continue
            try:
                is_dir = e.is_dir(follow_symlinks=False)
            except OSError:
                continue
            if is_dir and f"{path}/{e.name}" in self.skip:
                continue
            if e.name.startswith(".") and is_placeholder(f"{path}/{e.name}"):
                continue  # a sandboxed command's read-only placeholder, not a file of the user's
            if rules and self._ignored(rules, f"{rel}{e.name}", is_dir):
                continue
            names.append(e.name)
        listing = _Dir(key, names, max(st.st_mtime_ns, st.st_ctime_ns) < since)
        if cached is not None:
            listing.tree, listing.digest = cached.tree, cached.digest
        self._dirs[path] = listing
        return listing

    def _walk(self, state: _Walk, path: str, rel: str, rules: _Rules, rules_key: tuple[object, ...],
              st: os.stat_result) -> str | None:
        if state.touched is not None and path not in state.touched:
            cached = self._dirs.get(path)
            if cached is not None and cached.digest is not None:  # the kernel saw no change under it
                state.not_kept.extend(cached.sub_not_kept)
                state.files += cached.sub_files
                return cached.digest
        if state.pause is not None:
            state.pause()
        self.watch.watch(path)  # before it is read: a later change is reported
        # Names are looked up relative to the folder's descriptor (one path component each, not
        # the whole path again): the scan is mostly lstat calls, and this halves their cost.
        if not _BY_FD:
            return self._walk_fd(state, -1, path, rel, rules, rules_key, st)
        try:
            fd = os.open(path, os.O_RDONLY | os.O_DIRECTORY | _NOFOLLOW)
        except OSError:
            return None
        try:
            return self._walk_fd(state, fd, path, rel, rules, rules_key, st)
        finally:
            os.close(fd)

    def _walk_fd(self, state: _Walk, fd: int, path: str, rel: str, rules: _Rules, rules_key: tuple[object, ...],
                 st: os.stat_result) -> str | None:
        try:
            ist = os.lstat(".gitignore", dir_fd=fd) if fd >= 0 else os.lstat(f"{path}/.gitignore")
        except OSError:
            ist = None
        if ist is not None and stat.S_ISREG(ist.st_mode):
            rules = (*rules, (rel, self._ignore_spec(f"{path}/.gitignore", ist)))
            rules_key = (*rules_key, (rel, _key(ist)))
        listing = self._listing(path, fd, rel, rules, rules_key, st, state.since)
        first_not_kept, first_files = len(state.not_kept), state.files
        tree: Tree = {}
        files = self._files
        lstat = os.lstat
        isdir = stat.S_ISDIR
        # a folder only on the way to a changed one: its own names and files are as they were
        touched = state.touched if state.touched is not None else set()
        same = (state.touched is not None and path not in state.dirty and listing.tree is not None
                and listing.trusted)
        for name in listing.names:
            if same:
                assert listing.tree is not None
                child = f"{path}/{name}"
                previous = listing.tree.get(name)
                if child not in touched:
                    if previous is not None:
                        tree[name] = previous
                        if not previous.is_dir:
                            state.files += 1
                            if previous.kind == NOT_KEPT:
                                state.not_kept.append(NotKept(f"{rel}{name}", _reason(previous, self.limits)))
                        else:
                            sub = self._dirs.get(child)
                            state.files += sub.sub_files if sub else 0
                            state.not_kept.extend(sub.sub_not_kept if sub else ())
                    continue
            try:
                cst = lstat(name, dir_fd=fd) if fd >= 0 else lstat(f"{path}/{name}")
            except OSError:
                continue  # gone since it was listed
            child = f"{path}/{name}"
            if isdir(cst.st_mode):
                digest = self._walk(state, child, f"{rel}{name}/", rules, rules_key, cst)
                if digest is not None:
                    tree[name] = Entry(DIR, 0, digest)
                continue
            cached = files.get(child)
            if (cached is not None and cached.trusted and cached.entry.kind != NOT_KEPT
                    and cached.key == (cst.st_size, cst.st_mtime_ns, cst.st_ctime_ns, cst.st_ino, cst.st_mode)):
                state.files += 1
                tree[name] = cached.entry  # unchanged: not read again
                continue
            entry = self._file(state, child, f"{rel}{name}", cst)
            if entry is not None:
                tree[name] = entry
        listing.sub_not_kept = state.not_kept[first_not_kept:]
        listing.sub_files = state.files - first_files
        if not tree:
            listing.tree, listing.digest = {}, None
            return None
        if listing.tree == tree and listing.digest is not None:
            return listing.digest
        digest, added = self.objects.put_tree(tree)
        state.added += added
        listing.tree, listing.digest = tree, digest
        return digest

    def _file(self, state: _Walk, path: str, rel: str, st: os.stat_result) -> Entry | None:
        if not (stat.S_ISREG(st.st_mode) or stat.S_ISLNK(st.st_mode)):
            state.not_kept.append(NotKept(rel, "not a regular file"))
            return None
        state.files += 1
        key = _key(st)
        cached = self._files.get(path)
        if cached is not None and cached.trusted and cached.key == key:
            if cached.entry.kind == NOT_KEPT:
                state.not_kept.append(NotKept(rel, _reason(cached.entry, self.limits)))
            return cached.entry
        entry = self._read(state, path, rel, st)
        self._files[path] = _File(key, entry, max(st.st_mtime_ns, st.st_ctime_ns) < state.since)
        self._unsaved += 1
        return entry

    def _read(self, state: _Walk, path: str, rel: str, st: os.stat_result) -> Entry:
        not_kept = Entry(NOT_KEPT, stat.S_IMODE(st.st_mode), f"{st.st_size}:{st.st_mtime_ns}", st.st_size)
        if stat.S_ISLNK(st.st_mode):
            try:
                target = os.fsencode(os.readlink(path))
            except OSError as exc:
                state.not_kept.append(NotKept(rel, f"unreadable link: {exc.strerror}"))
                return not_kept
            digest, added = self.objects.put(target)
            state.added += added
            return Entry(LINK, 0, digest, len(target))
        if st.st_size > self.limits.max_file_bytes:
            state.not_kept.append(NotKept(rel, _reason(not_kept, self.limits)))
            return not_kept
        if state.files > self.limits.max_files:
            state.not_kept.append(NotKept(rel, f"past the file limit ({self.limits.max_files} files)"))
            return attrs.evolve(not_kept, digest=f"limit:{not_kept.digest}")
        try:
            fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
            with os.fdopen(fd, "rb") as f:
                data = f.read(self.limits.max_file_bytes + 1)
        except OSError as exc:
            reason = "permission denied" if exc.errno == errno.EACCES else (exc.strerror or str(exc))
            state.not_kept.append(NotKept(rel, f"unreadable: {reason}"))
            return attrs.evolve(not_kept, digest=f"unreadable:{not_kept.digest}")
        if len(data) > self.limits.max_file_bytes:
            state.not_kept.append(NotKept(rel, _reason(not_kept, self.limits)))
            return not_kept
        digest, added = self.objects.put(data, digest_of(data))
        state.added += added
        return Entry(FILE, stat.S_IMODE(st.st_mode), digest, len(data))


def _reason(entry: Entry, limits: Limits) -> str:
    if entry.digest.startswith("limit:"):
        return f"past the file limit ({limits.max_files} files)"
    if entry.digest.startswith("unreadable:"):
        return "unreadable"
    return f"larger than {limits.max_file_bytes} bytes"


@attrs.define
class _Walk:
    since: int
    touched: set[str] | None = None
    """The folders the kernel saw change and the folders above them (None: walk everything)."""
    dirty: set[str] = attrs.Factory(set)
    """The folders the kernel saw change."""
    not_kept: list[NotKept] = attrs.Factory(list)
    added: int = 0
    files: int = 0
    pause: Callable[[], None] | None = None
