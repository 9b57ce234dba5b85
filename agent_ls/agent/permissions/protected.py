"""Protected paths: files whose change can run code or loosen trust, so every write asks.

A session grant ("allow write_file for this session") or a glob rule (``write_file``,
``bash(cp:*)``) never covers them; only a rule naming the exact path does
(``write_file(.vscode/settings.json)``). The reason shown in the prompt says why the file matters.
"""

from __future__ import annotations

import os
import posixpath
from collections.abc import Sequence
from pathlib import Path

_DIRS = {
    ".git": "git runs commands named in .git/config (core.fsmonitor, core.sshCommand, aliases) and in "
            ".git/hooks on its own, e.g. at the next 'git status'",
    ".vscode": "VS Code runs tasks and launch configurations from .vscode and reads MCP servers from "
               ".vscode/mcp.json (a change re-restricts workspace trust)",
    ".agent-ls": "it holds this workspace's agent-ls settings (a change re-restricts workspace trust)",
    ".husky": "it holds git hooks, which run on commit and push",
    ".githooks": "it holds git hooks, which run on commit and push",
}
_FILES = {
    ".mcp.json": "it names MCP servers that run as programs (a change re-restricts workspace trust)",
    ".envrc": "direnv runs it as a shell script when you enter the folder",
    ".gitmodules": "git fetches and checks out what it names",
    ".gitattributes": "git runs the filter and diff drivers it names",
}
_WORKFLOWS = "CI runs it (with the repository's secrets) on the next push"


def _components(path: str) -> list[str]:
    return [c for c in path.replace("\\", "/").split("/") if c not in ("", ".")]


def _why(path: str) -> str | None:
    parts = [c.lower().rstrip(". ") for c in _components(path)]  # case-insensitive file systems
    for i, c in enumerate(parts):
        if c in _DIRS and i < len(parts) - 1:
            return _DIRS[c]
        if c == ".git":  # the .git entry itself (a gitdir file, or replacing the directory)
            return _DIRS[".git"]
        if c == ".github" and i + 1 < len(parts) and parts[i + 1] == "workflows":
            return _WORKFLOWS
    if parts and parts[-1] in _FILES:
        return _FILES[parts[-1]]
    if parts and parts[-1] in _DIRS:  # the directory itself (rm -r .vscode, mv x .agent-ls)
        return _DIRS[parts[-1]]
    return None


def protected_reason(path: str, roots: Sequence[Path] = ()) -> str | None:
    """Why writing ``path`` always asks, or None. ``path`` as the tool got it (relative to the
    first root, or absolute); the resolved path is checked too, so a symlink to ``.git`` counts."""
    if not isinstance(path, str) or not path:
        return None
    if (why := _why(path)) is not None:
        return why
    if roots:
        base = str(roots[0])
        joined = path if posixpath.isabs(path) or os.path.isabs(path) else os.path.join(base, path)
        try:
            real = os.path.realpath(joined)
        except (OSError, ValueError):
            return "its location cannot be resolved"
        for root in roots:
            try:
                rel = os.path.relpath(real, os.path.realpath(root))
            except ValueError:
                continue
            if not rel.startswith(".."):
                return _why(rel)
    return None


def looks_like_path(word: str) -> bool:
    """A command argument worth checking against the protected paths (``.git/config``,
    ``--output=.vscode/tasks.json``)."""
    return "." in word or "/" in word
