"""Protected paths: files whose change can run code or loosen trust, so every write asks.

A session grant ("allow write_file for this session") or a glob rule (``write_file``,
``bash(cp:*)``) never covers them; only a rule naming the exact path does
(``write_file(.vscode/settings.json)``). The reason shown in the prompt says why the file matters.

Two kinds: names inside a workspace (``.git/``, ``.vscode/``, ...: :func:`protected_reason` on the
path as written and as resolved), and the user's own places wherever they are (:func:`user_location`:
agent-ls's settings and data folders, ``~/.ssh``, ``~/.aws``, shell rc files, git's global config,
VS Code's settings...), which are never written and, for those holding secrets, never read
without a question naming the path, whatever grant is in force.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence
from pathlib import Path

from agent_ls.config import paths as config_paths

_DIRS = {
    ".git": "git runs commands named in .git/config (core.fsmonitor, core.sshCommand, aliases) and in "
            ".git/hooks on its own, e.g. at the next 'git status'",
    ".vscode": "VS Code runs tasks and launch configurations from .vscode and reads MCP servers from "
               ".vscode/mcp.json (a change re-restricts workspace trust)",
    ".agent-ls": "it holds this workspace's agent-ls settings (a change re-restricts workspace trust)",
    ".claude": "it holds Claude Code's settings, whose hooks agent-ls runs as commands (a change re-restricts "
               "workspace trust)",
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


def looks_like_path(word: str) -> bool:
    """A command argument worth checking against the protected paths (``.git/config``,
    ``--output=.vscode/tasks.json``)."""
    return "." in word or "/" in word


_SECRET = "it holds credentials"
_HOME_PLACES: tuple[tuple[str, str, bool], ...] = (
    # (path under the home folder, why, whether reading it is asking too: it holds secrets)
    (".ssh", "it holds your SSH keys and the hosts and commands ssh trusts", True),
    (".aws", "it holds your AWS credentials and configuration", True),
    (".gnupg", "it holds your GnuPG keys", True),
    (".config/gcloud", "it holds your Google Cloud credentials", True),
    (".kube", "it holds your Kubernetes credentials", True),
    (".netrc", "it holds passwords for remote hosts", True),
    (".git-credentials", "it holds git's stored passwords", True),
    (".docker/config.json", "it holds your registry credentials", True),
    (".npmrc", "it holds your npm tokens and settings (npm runs scripts it names)", True),
    (".pypirc", "it holds your package index passwords", True),
    (".config/gh", "it holds your GitHub CLI token", True),
    (".gitconfig", "git's global configuration runs the programs it names (pager, aliases, "
                   "core.fsmonitor) in every repository", False),
    (".config/git", "git's global configuration runs the programs it names in every repository", False),
    (".bashrc", "your shell runs it at start", False), (".bash_profile", "your shell runs it at start", False),
    (".bash_login", "your shell runs it at start", False), (".bash_logout", "your shell runs it at exit", False),
    (".profile", "your shell runs it at start", False), (".zshrc", "your shell runs it at start", False),
    (".zshenv", "your shell runs it at start", False), (".zprofile", "your shell runs it at start", False),
    (".zlogin", "your shell runs it at start", False), (".config/fish", "your shell runs it at start", False),
    (".vscode", "VS Code runs the extensions installed there", False),
    (".vscode-server", "VS Code's remote server keeps its settings and extensions there", False),
    (".config/Code", "it holds VS Code's settings (tasks, terminal profiles, agent-ls settings)", False),
    (".config/Code - Insiders", "it holds VS Code's settings", False),
    (".config/VSCodium", "it holds VSCodium's settings", False),
    (".local/share/code-server", "it holds code-server's settings and extensions", False),
    ("Library/Application Support/Code", "it holds VS Code's settings", False),
)


def _places() -> tuple[tuple[str, str, bool], ...]:
    """(real absolute path, why, secret) of every user location, for the environment as it is now
    (tests and the user move them with HOME, AGENT_LS_CONFIG_DIR and friends)."""
    env = tuple(os.environ.get(k) for k in ("HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "AGENT_LS_CONFIG_DIR",
                                            "AGENT_LS_USER_SETTINGS", "AGENT_LS_DATA_DIR"))
    return _places_for(env)


@functools.lru_cache(maxsize=8)
def _places_for(_env: tuple[str | None, ...]) -> tuple[tuple[str, str, bool], ...]:
    home = os.path.expanduser("~")
    out = [(os.path.realpath(os.path.join(home, rel)), why, secret) for rel, why, secret in _HOME_PLACES]
    out += [
        (os.path.realpath(config_paths.user_config_dir()), "it holds your agent-ls user settings (allow rules, "
         "servers that run as programs)", True),
        (os.path.realpath(config_paths.user_settings_path()), "it is your agent-ls user settings file (allow "
         "rules, servers that run as programs)", True),
        (os.path.realpath(config_paths.user_data_dir()), "it holds agent-ls's trust decisions, OAuth tokens "
         "and sessions", True),
    ]
    return tuple(out)


def user_location(path: str, base: str | None = None, *, reading: bool = False) -> str | None:
    """Why ``path`` (relative to ``base``, else the current folder) is one of the user's own places
    outside any workspace, or None. ``reading``: only places holding secrets count."""
    if not isinstance(path, str) or not path or "\x00" in path:
        return None
    try:
        joined = path if os.path.isabs(path) else os.path.join(base or os.getcwd(), path)
        real = os.path.realpath(joined)
    except (OSError, ValueError):
        return "its location cannot be resolved"
    for place, why, secret in _places():
        if reading and not secret:
            continue
        if real == place or real.startswith(place.rstrip("/") + "/"):
            return why
    return None


def secrets_below(folder: str) -> str | None:
    """A place holding secrets inside ``folder`` (a search of it would read them), or None."""
    try:
        real = os.path.realpath(folder)
    except (OSError, ValueError):
        return None
    prefix = real.rstrip("/") + "/"
    return next((place for place, _why, secret in _places() if secret and place.startswith(prefix)), None)


def protected_reason(path: str, roots: Sequence[Path] = (), base: str | None = None, *,
                     user_places: bool = False, reading: bool = False) -> str | None:
    """Why writing ``path`` always asks, or None. ``path`` as the tool got it (relative to ``base``,
    else the first root, or absolute); the resolved path is checked too, so a symlink to ``.git``
    counts. ``user_places``: the user's own places outside the workspace count too
    (:func:`user_location`; the path is resolved once for both); ``reading``: only the places
    holding secrets count (and no workspace name)."""
    if not isinstance(path, str) or not path or "\x00" in path:
        return None
    if not reading and (why := _why(path)) is not None:
        return why
    start = base if base is not None else str(roots[0]) if roots else os.getcwd()
    try:
        real = os.path.realpath(path if os.path.isabs(path) else os.path.join(start, path))
    except (OSError, ValueError):
        return "its location cannot be resolved"
    if not reading:
        for root in roots:
            rel = os.path.relpath(real, _real_root(str(root)))
            if not rel.startswith(".."):
                if (why := _why(rel)) is not None:
                    return why
                break
    if not user_places and not reading:
        return None
    for place, why, secret in _places():
        if (secret or not reading) and (real == place or real.startswith(place + "/")):
            return why
    return None


@functools.lru_cache(maxsize=64)
def _real_root(root: str) -> str:
    return os.path.realpath(root)
