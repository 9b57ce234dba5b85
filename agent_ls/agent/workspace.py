"""Workspace roots and the confinement of file access to them.

Every path a built-in tool touches goes through :meth:`Workspace.resolve`: relative paths
are taken against the first root, then the path is fully resolved (symlinks followed,
``..`` collapsed; for a path that does not exist yet, its nearest existing parent is
resolved and the rest appended) and must lie inside one of the roots. A symlink inside the
workspace that points outside is therefore refused, and one that stays inside is allowed.

The check is made on the path as it is when :meth:`~Workspace.resolve` runs. Files are then
opened through :meth:`Workspace.open_file` (and directories through
:meth:`Workspace.open_dir`), never by name: starting from the root the resolved path lies
in, every directory of the *resolved* path is opened relative to its parent's descriptor
(``openat`` style) with ``O_NOFOLLOW | O_DIRECTORY``, and the file itself relative to the
last one with ``O_NOFOLLOW``; missing parent directories are created the same way
(``mkdirat``). The resolved path has no symlinks in it, so a component that is a symlink at
open time was swapped in after the check (by another process, or by a ``bash`` job left
running): the open fails with :class:`SymlinkInPath` and nothing is read, created or written
through it. A symlink that stays inside the workspace keeps working, because it was
followed by the resolution before the walk.

Not covered: the roots themselves (and the directories above them) are trusted and opened
by name, and a hard link is an ordinary directory entry (a file hard-linked into the
workspace from outside is written in place like any other file).
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import attrs


class WorkspacePathError(ValueError):
    """A path the workspace refuses (outside the roots, or malformed)."""


class PathOutsideWorkspace(WorkspacePathError):
    """The path resolves to a place outside every workspace root."""

    def __init__(self, path: str, resolved: Path, roots: Sequence[Path]) -> None:
        self.path = path
        self.resolved = resolved
        self.roots = tuple(roots)
        where = "" if str(resolved) == path else f" (it resolves to {resolved})"
        allowed = ", ".join(str(r) for r in roots)
        super().__init__(
            f"Path {path!r} is outside the workspace{where}; "
            f"access is limited to the workspace root{'s' if len(roots) > 1 else ''}: {allowed}"
        )


class DeniedBySandbox(WorkspacePathError):
    """The path lies in a place the sandbox keeps unreadable (``agent.sandbox.denyRead``)."""

    def __init__(self, path: str, place: Path) -> None:
        super().__init__(f"{path} is in {place}, which the sandbox keeps unreadable (agent.sandbox.denyRead): "
                         "no tool reads or writes there")


class SymlinkInPath(WorkspacePathError):
    """A component of an already checked path is a symlink when it is opened.

    The resolved path had none, so it changed after the check: it is refused rather than
    followed, whatever the link points to.
    """

    def __init__(self, path: str, component: str) -> None:
        self.path = path
        self.component = component
        super().__init__(
            f"Refused {path!r}: {component!r} is a symbolic link now, but was not when the path was "
            "checked against the workspace (it was replaced in between, e.g. by another process); "
            "symbolic links are not followed at that point, so nothing was read or written through it"
        )


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
"""How every directory below a root is opened: relative to its parent, never through a symlink."""


def _with_path(exc: OSError, path: Path) -> OSError:
    """The same error (same class and errno) naming the full path instead of the relative name."""
    return type(exc)(exc.errno, exc.strerror, str(path))


def _is_symlink_at(dir_fd: int, name: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False


def _realpath(path: str | os.PathLike[str]) -> Path:
    # os.path.realpath (strict=False) follows every symlink it meets, including dangling
    # ones, collapses ``..`` against the already resolved prefix and appends components
    # that do not exist: exactly "resolve the nearest existing parent".
    return Path(os.path.realpath(path))


def _convert_roots(roots: Sequence[str | os.PathLike[str]]) -> tuple[Path, ...]:
    if isinstance(roots, str | os.PathLike):
        roots = [roots]
    converted = tuple(_realpath(os.path.abspath(r)) for r in roots)
    if not converted:
        raise ValueError("a workspace needs at least one root")
    return converted


@attrs.frozen
class Workspace:
    """The directories the agent's file tools may touch."""

    roots: tuple[Path, ...] = attrs.field(converter=_convert_roots)
    """Absolute, fully resolved roots; the first one is the default for relative paths."""
    deny_read: tuple[Path, ...] = attrs.field(default=(), converter=lambda ps: tuple(_realpath(p) for p in ps))
    """Places the OS sandbox keeps unreadable (``agent.sandbox.denyRead`` and its defaults): the
    file tools refuse them too, so no tool is a way around the sandbox."""

    def denied(self, resolved: Path) -> Path | None:
        """The unreadable place an already resolved path lies in, or None."""
        return next((d for d in self.deny_read if resolved == d or resolved.is_relative_to(d)), None)

    @property
    def root(self) -> Path:
        """The first root: where relative paths and ``bash`` start."""
        return self.roots[0]

    def contains(self, resolved: Path) -> bool:
        """Whether an already resolved absolute path lies inside one of the roots."""
        return any(resolved == root or resolved.is_relative_to(root) for root in self.roots)

    def resolve(self, path: str | os.PathLike[str]) -> Path:
        """The fully resolved path, or :class:`PathOutsideWorkspace` if it leaves the roots.

        Raises :class:`WorkspacePathError` for malformed paths (NUL bytes).
        """
        text = os.fspath(path)
        if "\x00" in text:
            raise WorkspacePathError(f"Path {text!r} contains a NUL byte")
        candidate = Path(text)
        if not candidate.is_absolute():
            candidate = self.root / candidate
        resolved = _realpath(candidate)
        if not self.contains(resolved):
            raise PathOutsideWorkspace(text, resolved, self.roots)
        if (place := self.denied(resolved)) is not None:
            raise DeniedBySandbox(text, place)
        return resolved

    def root_of(self, resolved: Path) -> Path:
        """The root an already resolved path lies in (the deepest one if roots are nested)."""
        inside = [root for root in self.roots if resolved == root or resolved.is_relative_to(root)]
        if not inside:
            raise PathOutsideWorkspace(str(resolved), resolved, self.roots)
        return max(inside, key=lambda root: len(root.parts))

    def open_dir(self, resolved: Path, *, create: bool = False) -> int:
        """A descriptor for the directory at an already resolved path, opened ``openat`` style.

        The root is opened by name; every component below it relative to its parent with
        ``O_NOFOLLOW | O_DIRECTORY``, so a component that is a symlink (swapped in after
        :meth:`resolve`) raises :class:`SymlinkInPath` instead of being followed. With
        ``create``, missing directories are made with ``mkdir(name, dir_fd=parent)`` (mode
        0o777 less the umask, like :meth:`pathlib.Path.mkdir`). Other failures raise the usual
        :class:`OSError` subclasses naming the full path. The caller closes the descriptor.
        """
        root = self.root_of(resolved)
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
        current = root
        try:
            for name in resolved.relative_to(root).parts:
                current = current / name
                parent, fd = fd, -1
                try:
                    fd = self._open_child_dir(parent, name, current, self.display(resolved), create=create)
                finally:
                    os.close(parent)
        except BaseException:
            if fd >= 0:
                os.close(fd)
            raise
        return fd

    def _open_child_dir(self, parent: int, name: str, current: Path, whole: str, *, create: bool) -> int:
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except FileNotFoundError as exc:
            if not create:
                raise _with_path(exc, current) from None
        except OSError as exc:
            raise self._open_error(exc, parent, name, current, whole) from None
        try:
            os.mkdir(name, 0o777, dir_fd=parent)
        except FileExistsError:
            pass  # made in the meantime: opened below with the same checks as any other
        except OSError as exc:
            raise _with_path(exc, current) from None
        try:
            return os.open(name, _DIR_FLAGS, dir_fd=parent)
        except OSError as exc:
            raise self._open_error(exc, parent, name, current, whole) from None

    def _open_error(self, exc: OSError, parent: int, name: str, current: Path, whole: str) -> Exception:
        # O_NOFOLLOW on a symlink fails with ELOOP, or ENOTDIR together with O_DIRECTORY.
        if exc.errno in (errno.ELOOP, errno.ENOTDIR) and _is_symlink_at(parent, name):
            return SymlinkInPath(whole, self.display(current))
        return _with_path(exc, current)

    def open_file(self, resolved: Path, flags: int, mode: int = 0o666, *, create_parents: bool = False) -> int:
        """``os.open`` of an already resolved path inside the workspace, through no symlink.

        The parent is opened with :meth:`open_dir` (``create_parents`` creates the missing
        directories) and the file relative to it with ``flags | O_NOFOLLOW | O_CLOEXEC``: a
        symlink anywhere in the path at this point raises :class:`SymlinkInPath`, even a
        dangling one with ``O_CREAT``. Errors name the full path; the caller closes the
        descriptor.
        """
        self._check_not_root(resolved)
        parent = self.open_dir(resolved.parent, create=create_parents)
        try:
            return self._open_in(parent, resolved, flags, mode)
        finally:
            os.close(parent)

    @contextlib.contextmanager
    def file_opener(self) -> Iterator[Callable[[Path, int, int], int]]:
        """:meth:`open_file` (``flags``, ``mode``; no parents created) for many files in a row.

        For a search over a tree: the descriptor of the last parent directory is kept while
        the following files share it, instead of walking down from the root for each one.
        """
        cached_path: Path | None = None
        cached_fd = -1

        def open_one(resolved: Path, flags: int, mode: int = 0o666) -> int:
            nonlocal cached_path, cached_fd
            self._check_not_root(resolved)
            if resolved.parent != cached_path:
                if cached_fd >= 0:
                    os.close(cached_fd)
                cached_path, cached_fd = None, -1
                cached_fd = self.open_dir(resolved.parent)
                cached_path = resolved.parent
            return self._open_in(cached_fd, resolved, flags, mode)

        try:
            yield open_one
        finally:
            if cached_fd >= 0:
                os.close(cached_fd)

    def _check_not_root(self, resolved: Path) -> None:
        if resolved == self.root_of(resolved):
            raise IsADirectoryError(errno.EISDIR, os.strerror(errno.EISDIR), str(resolved))

    def _open_in(self, parent: int, resolved: Path, flags: int, mode: int) -> int:
        try:
            return os.open(resolved.name, flags | os.O_NOFOLLOW | os.O_CLOEXEC, mode, dir_fd=parent)
        except OSError as exc:
            raise self._open_error(exc, parent, resolved.name, resolved, self.display(resolved)) from None

    def display(self, path: Path) -> str:
        """How to show a path to the model: relative to the first root when inside it."""
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return str(path)
        return rel.as_posix() or "."
