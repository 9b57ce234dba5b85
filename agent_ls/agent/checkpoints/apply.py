"""Putting files back, all or nothing.

A rewind is a list of :class:`Change` (a path, what the plan saw there, what goes there). It is
applied in three steps, and either every change lands or none does:

1. check: each path still holds what the plan saw (content and mode), a path that became a
   folder holds nothing but files the rewind removes, and every object to write is in the store;
2. stage: every file to write is written to a private folder at the top of its workspace folder
   (``.agent-ls-rewind-<random>``, the same file system, so the last step only renames);
3. commit: files to replace or remove are renamed into that folder, folders in the way removed,
   missing parents made, staged files renamed into place, each step logged; if any step fails,
   the log is undone backwards and the error says that nothing was changed. Then the folder
   (the old files) is removed.
"""

from __future__ import annotations

import errno
import os
import secrets
import shutil
import stat
from collections.abc import Callable
from pathlib import Path

import attrs

from agent_ls.agent.checkpoints.objects import (
    FILE,
    LINK,
    NOT_KEPT,
    WORK_PREFIX,
    Entry,
    ObjectStore,
    digest_of,
)
from agent_ls.agent.private_db import PRIVATE_DIR_MODE


class RewindError(Exception):
    """A rewind that could not be done; nothing was changed (the message says why)."""


@attrs.frozen
class Change:
    path: str
    """Absolute path."""
    expect: Entry | None
    """What the plan saw there (None: nothing)."""
    new: Entry | None
    """What goes there (None: removed)."""


def current_entry(path: str) -> Entry | None | str:
    """What ``path`` holds now as an :class:`Entry`, None when absent, ``"dir"`` for a folder."""
    try:
        st = os.lstat(path)
    except FileNotFoundError:
        return None
    except NotADirectoryError:
        return None
    if stat.S_ISDIR(st.st_mode):
        return "dir"
    if stat.S_ISLNK(st.st_mode):
        target = os.fsencode(os.readlink(path))
        return Entry(LINK, 0, digest_of(target), len(target))
    if not stat.S_ISREG(st.st_mode):
        return Entry("other", 0, "", st.st_size)
    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0))
    with os.fdopen(fd, "rb") as f:
        data = f.read()
    return Entry(FILE, stat.S_IMODE(st.st_mode), digest_of(data), len(data))


def _same(now: Entry | None | str, expect: Entry | None, path: str) -> bool:
    if expect is not None and expect.kind == NOT_KEPT and isinstance(now, Entry):
        st = os.lstat(path)
        return expect.digest.endswith(f"{st.st_size}:{st.st_mtime_ns}")
    return now == expect


def apply_changes(changes: list[Change], objects: ObjectStore, roots: list[Path],
                  dir_in_target: Callable[[str], bool]) -> None:
    """Apply ``changes`` all or nothing (see the module's docstring); raises :class:`RewindError`."""
    if not changes:
        return
    removed = {c.path for c in changes if c.new is None}
    by_path = {c.path: c for c in changes}
    folders_to_remove: list[str] = []
    # 1. check
    for c in sorted(changes, key=lambda c: c.path):
        link = _linked_parent(c.path, roots)
        if link is not None:
            raise RewindError(f"{link} is a symbolic link now, so {c.path} is not inside the workspace folder; "
                              "nothing was changed")
        try:
            now = current_entry(c.path)
            if now == "dir":
                if c.expect is not None:
                    raise RewindError(f"{c.path} is a folder now; nothing was changed")
                for dirpath, _dirs, files in os.walk(c.path):
                    for name in files:
                        inner = os.path.join(dirpath, name)
                        if inner not in removed:
                            raise RewindError(f"{c.path} is a folder now and holds {inner}, which the rewind "
                                              "would not restore; move it away and try again. Nothing was changed")
                folders_to_remove.append(c.path)
            elif not _same(now, c.expect, c.path):
                raise RewindError(f"{c.path} changed since the rewind was planned; plan it again. "
                                  "Nothing was changed")
        except OSError as exc:
            raise RewindError(f"cannot read {c.path}: {exc.strerror or exc}; nothing was changed") from exc
        if c.new is not None:
            if c.new.kind not in (FILE, LINK):
                raise RewindError(f"{c.path} was not kept by the checkpoint; nothing was changed")
            parent = os.path.dirname(c.path)
            while parent not in by_path and not os.path.isdir(parent):
                if os.path.lexists(parent):
                    raise RewindError(f"{parent} is in the way of {c.path} (not a folder); nothing was changed")
                parent = os.path.dirname(parent)
    work: dict[str, str] = {}

    def work_dir(path: str) -> str:
        root = next((str(r) for r in roots if path.startswith(f"{r}{os.sep}")), None)
        if root is None:
            raise RewindError(f"{path} is outside the workspace folders; nothing was changed")
        if root not in work:
            folder = os.path.join(root, f"{WORK_PREFIX}{secrets.token_hex(6)}")
            os.mkdir(folder, PRIVATE_DIR_MODE)
            work[root] = folder
        return work[root]

    log: list[tuple[str, str, str]] = []
    try:
        # 2. stage
        staged: dict[str, str] = {}
        for i, c in enumerate(changes):
            if c.new is None:
                continue
            data = objects.get(c.new.digest)
            tmp = os.path.join(work_dir(c.path), f"new-{i}")
            if c.new.kind == LINK:
                os.symlink(os.fsdecode(data), tmp)
            else:
                fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
                with os.fdopen(fd, "wb") as f:
                    f.write(data)
                os.chmod(tmp, c.new.mode)
            staged[c.path] = tmp
        # 3. commit
        for i, c in enumerate(changes):
            if c.expect is not None:
                backup = os.path.join(work_dir(c.path), f"old-{i}")
                os.rename(c.path, backup)
                log.append(("moved", c.path, backup))
        for folder in sorted(folders_to_remove, reverse=True):
            for dirpath, _dirs, _files in sorted(os.walk(folder), key=lambda w: w[0], reverse=True):
                os.rmdir(dirpath)
                log.append(("rmdir", dirpath, ""))
        for c in sorted(changes, key=lambda c: c.path):
            if c.path not in staged:
                continue
            missing: list[str] = []
            parent = os.path.dirname(c.path)
            while not os.path.isdir(parent):
                missing.append(parent)
                parent = os.path.dirname(parent)
            for d in reversed(missing):
                os.mkdir(d)
                log.append(("mkdir", d, ""))
            os.rename(staged[c.path], c.path)
            log.append(("placed", c.path, ""))
    except (OSError, RewindError, Exception) as exc:
        undo_problems = _undo(log)
        for folder in work.values():
            shutil.rmtree(folder, ignore_errors=True)
        what = exc if isinstance(exc, RewindError) else _describe(exc)
        if undo_problems:
            raise RewindError(f"{what}; the rewind was undone except: {'; '.join(undo_problems)}") from exc
        raise RewindError(f"{what}; nothing was changed") from exc
    for folder in work.values():
        shutil.rmtree(folder, ignore_errors=True)
    _prune_empty_parents(sorted(removed, reverse=True), roots, dir_in_target)


def _linked_parent(path: str, roots: list[Path]) -> str | None:
    """The first folder between ``path``'s workspace folder and ``path`` that is a symbolic link
    (writing through it would reach outside the workspace), or None."""
    root = next((str(r) for r in roots if path.startswith(f"{r}{os.sep}")), None)
    if root is None:
        return path
    current = root
    for part in os.path.relpath(os.path.dirname(path), root).split(os.sep):
        if part in ("", "."):
            continue
        current = os.path.join(current, part)
        try:
            if stat.S_ISLNK(os.lstat(current).st_mode):
                return current
        except OSError:
            return None  # missing from here on: the rewind makes real folders
    return None


def _describe(exc: BaseException) -> str:
    if isinstance(exc, OSError):
        where = f" ({exc.filename})" if exc.filename else ""
        if exc.errno in (errno.EACCES, errno.EPERM):
            return f"no permission to change a file{where}"
        return f"{exc.strerror or exc}{where}"
    return str(exc)


def _undo(log: list[tuple[str, str, str]]) -> list[str]:
    problems: list[str] = []
    for action, path, backup in reversed(log):
        try:
            if action == "placed":
                os.unlink(path)
            elif action == "mkdir":
                os.rmdir(path)
            elif action == "rmdir":
                os.mkdir(path)
            elif action == "moved":
                os.rename(backup, path)
        except OSError as exc:
            problems.append(f"{path}: {exc.strerror or exc}")
    return problems


def _prune_empty_parents(removed: list[str], roots: list[Path], dir_in_target: Callable[[str], bool]) -> None:
    """Remove the folders the rewind emptied that the checkpoint did not have."""
    tops = {str(r) for r in roots}
    for path in removed:
        parent = os.path.dirname(path)
        while parent not in tops and len(parent) > 1:
            try:
                if os.listdir(parent) or dir_in_target(parent):
                    break
                os.rmdir(parent)
            except OSError:
                break
            parent = os.path.dirname(parent)
