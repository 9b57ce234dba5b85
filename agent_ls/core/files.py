"""Reading a file that someone else may have put there, without blocking on it.

A repository can hold a named pipe (FIFO) where a settings or instructions file is expected:
``open()`` of a FIFO waits for a writer for ever, which would hang whatever reads it (the MCP
host's start, ``agent-ls mcp status``, the process's exit). :func:`read_regular_file` opens with
``O_NONBLOCK``, checks the open descriptor with ``fstat`` and refuses anything but a regular
file with :class:`NotRegularFile`; it reads at most ``limit + 1`` bytes, so a huge file costs
no more than the limit.
"""

from __future__ import annotations

import errno
import os
import stat
from pathlib import Path


class NotRegularFile(OSError):
    """The path is a FIFO, socket or device: reading or writing it could block forever.
    ``strerror`` says what it is ("a named pipe (FIFO)"), ``filename`` which path."""


def kind_of(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISSOCK(mode):
        return "a socket"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISDIR(mode):
        return "a directory"
    return "not a regular file"


def read_regular_file(path: Path | str, limit: int) -> bytes:
    """At most ``limit + 1`` bytes of a regular file (the caller tells "too large" by the length).

    Raises :class:`FileNotFoundError` and the other :class:`OSError` of ``open``, and
    :class:`NotRegularFile` (an ``OSError`` too) for a FIFO, socket, device or directory.
    """
    return read_regular_fd(os.open(path, NONBLOCKING_READ), limit, path)


NONBLOCKING_READ = os.O_RDONLY | os.O_CLOEXEC | getattr(os, "O_NONBLOCK", 0)
"""The flags to open with for :func:`read_regular_fd`."""


def read_regular_fd(fd: int, limit: int, path: Path | str) -> bytes:
    """:func:`read_regular_file` on a descriptor opened with :data:`NONBLOCKING_READ` (by
    another route, e.g. without following symlinks); the descriptor is closed."""
    try:
        ensure_regular(fd, path)
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read(limit + 1)
    finally:
        os.close(fd)


def ensure_regular(fd: int, path: Path | str) -> None:
    """Raise :class:`NotRegularFile` unless the descriptor (opened with ``O_NONBLOCK``) is a
    regular file; then make it blocking again for the reads that follow."""
    mode = os.fstat(fd).st_mode
    if not stat.S_ISREG(mode):
        raise NotRegularFile(errno.EINVAL, kind_of(mode), str(path))  # strerror says what it is
    if hasattr(os, "set_blocking"):
        os.set_blocking(fd, True)
