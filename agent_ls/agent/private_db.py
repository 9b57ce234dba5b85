"""Private SQLite files: the session database holds whole conversations (file contents,
command output, whatever the model saw), so it is private to the user.

:func:`make_private_db` (run by every opener of the file: the session store, the change store
and the server's display store) makes its folder 0700 and the file 0600 before SQLite opens
it, tightening them if they already exist looser. The file is created with
``os.open(..., 0o600)``, so it never exists with wider permissions; SQLite gives the ``-wal``
and ``-shm`` files it creates the mode of the database file, and existing ones are tightened too.
"""

from __future__ import annotations

import errno
import logging
import os
import stat
from pathlib import Path

log = logging.getLogger(__name__)

PRIVATE_DIR_MODE = 0o700
PRIVATE_FILE_MODE = 0o600
_COMPANION_SUFFIXES = ("-wal", "-shm", "-journal")


def _make_dirs_private(folder: Path) -> None:
    """Create ``folder`` and its missing parents 0700; tighten ``folder`` itself if looser."""
    missing: list[Path] = []
    current = folder
    while not current.exists() and current != current.parent:
        missing.append(current)
        current = current.parent
    for d in reversed(missing):
        try:
            d.mkdir(mode=PRIVATE_DIR_MODE)
        except FileExistsError:
            pass
    _tighten(folder, PRIVATE_DIR_MODE)


def _tighten(path: Path, mode: int, fd: int | None = None) -> None:
    """Remove permission bits beyond ``mode`` (on ``fd`` if given); failures are logged."""
    try:
        st = os.fstat(fd) if fd is not None else os.stat(path)
        if stat.S_IMODE(st.st_mode) & ~mode:
            if fd is not None:
                os.fchmod(fd, stat.S_IMODE(st.st_mode) & mode)
            else:
                os.chmod(path, stat.S_IMODE(st.st_mode) & mode)
    except FileNotFoundError:
        pass
    except OSError as exc:
        log.warning("could not restrict the permissions of %s to %o: %s", path, mode, exc.strerror or exc)


def make_private_db(db_path: str | os.PathLike[str]) -> None:
    """Make the SQLite file at ``db_path`` private before it is opened.

    Its folder is created 0700 (missing parents too) or tightened to at most 0700; the file
    is created empty with mode 0600 (SQLite takes an empty file as a new database) or
    tightened to at most 0600, and so are existing ``-wal``, ``-shm`` and ``-journal`` files.
    Permission changes that fail (a file owned by someone else) are logged, not raised.
    """
    path = Path(db_path)
    _make_dirs_private(path.parent)
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, PRIVATE_FILE_MODE)
    try:
        _tighten(path, PRIVATE_FILE_MODE, fd)
    finally:
        os.close(fd)
    for suffix in _COMPANION_SUFFIXES:
        companion = path.with_name(path.name + suffix)
        try:
            cfd = os.open(companion, os.O_RDONLY | os.O_CLOEXEC | os.O_NOFOLLOW | os.O_NONBLOCK)
        except OSError as exc:
            if exc.errno not in (errno.ENOENT, errno.ELOOP):
                log.warning("could not check the permissions of %s: %s", companion, exc.strerror or exc)
            continue
        try:
            _tighten(companion, PRIVATE_FILE_MODE, cfd)
        finally:
            os.close(cfd)
