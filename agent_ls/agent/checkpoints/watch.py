"""Which folders changed since the last snapshot, from the kernel (Linux inotify).

A snapshot of a 10,000-file workspace is mostly 10,000 ``lstat`` calls; with a watch on every
folder it walked, the next snapshot looks only at the folders the kernel says changed (a file
written, created, deleted, renamed or chmodded in them) and reuses the trees of the rest. The
watch on a folder is added before the folder is read, so a change is either seen by the walk
or reported afterwards. When the kernel's event queue overflows, a watch cannot be added (the
per-user limit) or the platform has no inotify, :meth:`FolderWatch.changed` answers None and
the snapshot walks everything, as without a watch.

inotify is reached through ``ctypes`` (the C library's ``inotify_init1``/``inotify_add_watch``):
no dependency, nothing to build, and a missing function only means no watch.
"""

from __future__ import annotations

import ctypes
import errno
import logging
import os
import struct
import sys

log = logging.getLogger(__name__)

IN_MODIFY = 0x2
IN_ATTRIB = 0x4
IN_CLOSE_WRITE = 0x8
IN_MOVED_FROM = 0x40
IN_MOVED_TO = 0x80
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_ONLYDIR = 0x1000000
IN_DONT_FOLLOW = 0x2000000
IN_EXCL_UNLINK = 0x4000000
IN_ISDIR = 0x40000000

_MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE | IN_DELETE
         | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR | IN_DONT_FOLLOW | IN_EXCL_UNLINK)
_EVENT = struct.Struct("iIII")


class Changes:
    """What changed since the last :meth:`FolderWatch.changed`."""

    def __init__(self) -> None:
        self.folders: set[str] = set()
        """Folders whose entries changed (a file in them, or the list of names)."""
        self.subtrees: set[str] = set()
        """Folders whose whole subtree must be read again (a folder moved or made there, an
        ignore file changed)."""


class FolderWatch:
    """inotify watches on folders; one per :class:`~agent_ls.agent.checkpoints.scan.Scanner`."""

    def __init__(self) -> None:
        self._fd = -1
        self._paths: dict[int, str] = {}
        self._wds: dict[str, int] = {}
        self.complete = False
        """Every folder of the last walk is watched and no event was lost since."""
        if not sys.platform.startswith("linux"):
            return
        try:
            self._libc = ctypes.CDLL(None, use_errno=True)
            fd = self._libc.inotify_init1(os.O_NONBLOCK | os.O_CLOEXEC)
        except (OSError, AttributeError):
            return
        if fd < 0:
            log.info("no inotify (%s): checkpoints walk every folder", os.strerror(ctypes.get_errno()))
            return
        self._fd = fd

    @property
    def active(self) -> bool:
        return self._fd >= 0

    def watch(self, path: str) -> None:
        """Watch ``path`` (a folder about to be read). A failure makes the watch incomplete."""
        if self._fd < 0 or path in self._wds:
            return
        wd = self._libc.inotify_add_watch(self._fd, os.fsencode(path), _MASK)
        if wd < 0:
            err = ctypes.get_errno()
            if err == errno.ENOSPC:
                log.warning("inotify watch limit reached: checkpoints walk every folder (raise "
                            "fs.inotify.max_user_watches to avoid it)")
                self.close()
            self.complete = False
            return
        self._paths[wd] = path
        self._wds[path] = wd

    def changed(self) -> Changes | None:
        """The folders that changed since the last call; None: unknown (walk everything)."""
        if self._fd < 0:
            return None
        out = Changes()
        lost = False
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                break
            except OSError:
                lost = True
                break
            offset = 0
            while offset < len(data):
                wd, mask, _cookie, length = _EVENT.unpack_from(data, offset)
                name = data[offset + _EVENT.size: offset + _EVENT.size + length].split(b"\0", 1)[0]
                offset += _EVENT.size + length
                if mask & IN_Q_OVERFLOW:
                    lost = True
                    continue
                path = self._paths.get(wd)
                if path is None:
                    continue
                if mask & (IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF):
                    self._forget(path)
                    out.subtrees.add(path)
                    continue
                out.folders.add(path)
                if name:
                    child = f"{path}/{os.fsdecode(name)}"
                    if mask & IN_ISDIR:
                        out.subtrees.add(child)
                        if mask & (IN_MOVED_FROM | IN_DELETE):
                            self._forget_under(child)
                    elif name == b".gitignore":
                        out.subtrees.add(path)
        if lost or not self.complete:
            self.complete = True  # from now on, as long as the next walk watches every folder
            return None
        return out

    def _forget(self, path: str) -> None:
        wd = self._wds.pop(path, None)
        if wd is not None:
            self._paths.pop(wd, None)

    def _forget_under(self, path: str) -> None:
        prefix = f"{path}/"
        for p in [p for p in self._wds if p == path or p.startswith(prefix)]:
            wd = self._wds.pop(p)
            self._paths.pop(wd, None)
            self._libc.inotify_rm_watch(self._fd, wd)

    def close(self) -> None:
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1
        self._paths.clear()
        self._wds.clear()
        self.complete = False
