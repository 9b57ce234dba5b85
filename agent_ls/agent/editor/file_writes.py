"""Atomic disk writes confined to the workspace, for the file tools when no editor applies the
change: a temporary file in the same directory renamed over the target, every directory opened
without following symlinks, FIFOs, sockets and devices refused."""

from __future__ import annotations

import contextlib
import errno
import os
import secrets
import stat
from pathlib import Path

from agent_ls.agent.workspace import SymlinkInPath, Workspace
from agent_ls.core.files import NotRegularFile, kind_of

__all__ = ["NotRegularFile", "atomic_write", "kind_of"]


def atomic_write(workspace: Workspace, path: Path, data: bytes, *, create_parents: bool = False) -> None:
    """Replace the file at an already resolved path with ``data`` atomically.

    The data goes to a new temporary file in the same directory, which is then renamed over
    the target (``os.replace``): a reader sees the old or the new content, never a part, and
    a failure leaves the old file as it was. The directory is opened through
    :meth:`Workspace.open_dir` (``openat`` style, ``O_NOFOLLOW`` on every component;
    ``create_parents`` makes the missing ones), and the temporary file and the rename work
    relative to that descriptor, so a symlink swapped into the path after
    :meth:`Workspace.resolve` raises :class:`SymlinkInPath` and nothing is written through it.
    A target that is now a symlink (even a dangling one) is refused the same way; a FIFO,
    socket or device raises :class:`NotRegularFile`. An existing file keeps its permission
    bits (and its owner where allowed); a new one gets 0o666 less the umask. A hard link is
    replaced by the new file (the other names keep the old content).

    If the directory does not let us create the temporary file (no write permission on it
    while the file itself is writable), the file is rewritten in place instead.
    """
    if path == workspace.root_of(path):
        raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
    dir_fd = workspace.open_dir(path.parent, create=create_parents)
    try:
        name = path.name
        try:
            st: os.stat_result | None = os.stat(name, dir_fd=dir_fd, follow_symlinks=False)
        except FileNotFoundError:
            st = None
        if st is not None:
            if stat.S_ISLNK(st.st_mode):
                raise SymlinkInPath(workspace.display(path), workspace.display(path))
            if stat.S_ISDIR(st.st_mode):
                raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(path))
            if not stat.S_ISREG(st.st_mode):
                raise NotRegularFile(errno.EINVAL, kind_of(st.st_mode), str(path))
        tmp = f".{name[:200]}.agent-ls-{secrets.token_hex(4)}.tmp"
        flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
        try:
            fd = os.open(tmp, flags, 0o666 if st is None else 0o600, dir_fd=dir_fd)
        except PermissionError:
            if st is None:
                raise PermissionError(errno.EACCES, os.strerror(errno.EACCES), str(path)) from None
            _rewrite_in_place(dir_fd, name, path, data)
            return
        try:
            try:
                with os.fdopen(fd, "wb", closefd=False) as f:
                    f.write(data)
                    f.flush()
                    os.fsync(fd)
                if st is not None:
                    os.fchmod(fd, stat.S_IMODE(st.st_mode))
                    with contextlib.suppress(OSError):
                        os.fchown(fd, st.st_uid, st.st_gid)
            finally:
                os.close(fd)
            os.replace(tmp, name, src_dir_fd=dir_fd, dst_dir_fd=dir_fd)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp, dir_fd=dir_fd)
            raise
    finally:
        os.close(dir_fd)


def _rewrite_in_place(dir_fd: int, name: str, path: Path, data: bytes) -> None:
    flags = os.O_WRONLY | os.O_NOFOLLOW | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
    try:
        fd = os.open(name, flags, dir_fd=dir_fd)
    except OSError as exc:
        raise type(exc)(exc.errno, exc.strerror, str(path)) from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NotRegularFile(errno.EINVAL, "not a regular file", str(path))
        os.set_blocking(fd, True)
        os.ftruncate(fd, 0)
        view = memoryview(data)
        while view:
            view = view[os.write(fd, view) :]
    finally:
        os.close(fd)
