"""Workspace roots and the confinement of file access to them.

Every path a built-in tool touches goes through :meth:`Workspace.resolve`: relative paths
are taken against the first root, then the path is fully resolved (symlinks followed,
``..`` collapsed; for a path that does not exist yet, its nearest existing parent is
resolved and the rest appended) and must lie inside one of the roots. A symlink inside the
workspace that points outside is therefore refused, and one that stays inside is allowed.

The check is made on the path as it is when :meth:`~Workspace.resolve` runs; it guards
against the model wandering off, not against a local attacker racing symlinks.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
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
        return resolved

    def display(self, path: Path) -> str:
        """How to show a path to the model: relative to the first root when inside it."""
        try:
            rel = path.relative_to(self.root)
        except ValueError:
            return str(path)
        return rel.as_posix() or "."
