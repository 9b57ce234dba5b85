"""Glob patterns, one documented syntax on wcmatch (no hand-written matcher).

Two kinds of pattern share the syntax below:

- **name patterns** match a whole name that is not a path: tool names in ``permissions``
  (``mcp__github__*``), server names in ``agent.sampling.allowedServers`` / ``autoApprove``;
- **path globs** match ``/``-separated relative paths: the ``glob`` tool and ``grep``'s
  ``glob`` filter.

Syntax (both kinds; always case-sensitive, on every platform):

=========  ===================================================================================
``*``      any run of characters, none in a path glob crossing ``/``
``?``      one character (never ``/`` in a path glob)
``[abc]``  one of the characters; ranges ``[a-z]``; ``[!abc]`` or ``[^abc]``: none of them.
           In a path glob a set never matches ``/`` (``a[!x]b`` does not match ``a/b``)
``{a,b}``  brace expansion: either alternative (nesting and ``{1..3}`` ranges work)
``**``     path globs only, as a whole component: any number of directories, zero included
           (``**/*.py`` matches ``x.py`` and ``a/b/x.py``; ``src/**`` everything under ``src``)
``\\x``     the character ``x`` literally (``\\*``, ``\\[``)
=========  ===================================================================================

Names starting with ``.`` are matched like any other (``*`` matches ``.env``). An unclosed
``[`` is a literal ``[``. Nothing else is special: no ``!`` negation of a whole pattern, no
extended ``@(a|b)`` groups. A pattern that expands to more than :data:`PATTERN_LIMIT`
alternatives is refused with :class:`GlobError`, whose message says why.
"""

from __future__ import annotations

import functools
import shlex
from typing import Any

from wcmatch import fnmatch as _wcfnmatch
from wcmatch import glob as _wcglob

PATTERN_LIMIT = 1000
"""Most alternatives one pattern may expand to (``{a,b}{c,d}`` is 4)."""

NAME_FLAGS = _wcfnmatch.CASE | _wcfnmatch.BRACE | _wcfnmatch.DOTMATCH
PATH_FLAGS = _wcglob.GLOBSTAR | _wcglob.BRACE | _wcglob.DOTGLOB | _wcglob.CASE


class GlobError(ValueError):
    """A pattern that cannot be used; the message names the pattern and the reason."""


def _reason(exc: Exception) -> str:
    if type(exc).__name__ == "PatternLimitException":
        return f"it expands to more than {PATTERN_LIMIT} alternatives (too many {{a,b}} groups or ranges)"
    return str(exc) or type(exc).__name__


class NamePattern:
    """A compiled name pattern: :meth:`match` is True when the whole name matches."""

    def __init__(self, pattern: str) -> None:
        if not isinstance(pattern, str):
            raise GlobError(f"the pattern {pattern!r} is not a string")
        if "\x00" in pattern:
            raise GlobError(f"the pattern {pattern!r} contains a NUL character")
        self.pattern = pattern
        try:
            self._matcher = _wcfnmatch.compile(pattern, flags=NAME_FLAGS, limit=PATTERN_LIMIT)
        except Exception as e:  # wcmatch raises its own exception types
            raise GlobError(f"the pattern {pattern!r} is not usable: {_reason(e)}") from e

    def match(self, name: str) -> bool:
        return bool(self._matcher.match(name))

    def __repr__(self) -> str:
        return f"NamePattern({self.pattern!r})"


class PathGlob:
    """A compiled path glob over ``/``-separated relative paths.

    Empty and ``.`` components are dropped (``./src//*.py`` is ``src/*.py``); the pattern must
    be relative and must not climb out with ``..``.
    """

    def __init__(self, pattern: str) -> None:
        if not isinstance(pattern, str):
            raise GlobError(f"the glob {pattern!r} is not a string")
        if "\x00" in pattern:
            raise GlobError("the pattern contains a NUL byte")
        if pattern.startswith("/") or (len(pattern) > 1 and pattern[1] == ":"):
            raise GlobError("the pattern must be relative; use the path argument to choose the directory")
        parts = [p for p in pattern.split("/") if p not in ("", ".")]
        if ".." in parts:
            raise GlobError("the pattern must not contain '..'; use the path argument to choose the directory")
        if not parts or not pattern.strip("/. "):
            raise GlobError("the pattern is empty")
        self.pattern = pattern
        self.normalized = "/".join(parts)
        self.has_slash = "/" in pattern.strip("/")
        """True when the glob names directories (``grep`` then matches it against the whole
        relative path, otherwise against the file name at any depth)."""
        try:
            self._matcher = _wcglob.compile(self.normalized, flags=PATH_FLAGS, limit=PATTERN_LIMIT)
        except Exception as e:
            raise GlobError(_reason(e)) from e

    def match(self, rel_path: str) -> bool:
        """True when the whole ``/``-separated relative path matches."""
        return bool(self._matcher.match(rel_path))

    def __repr__(self) -> str:
        return f"PathGlob({self.pattern!r})"


@functools.lru_cache(maxsize=512)
def name_pattern(pattern: str) -> NamePattern:
    """The compiled (and cached) name pattern; raises :class:`GlobError`."""
    return NamePattern(pattern)


def check_name_pattern(pattern: str) -> str | None:
    """Why ``pattern`` cannot be used as a name pattern, or None when it can."""
    try:
        name_pattern(pattern)
    except GlobError as e:
        return str(e)
    return None


def name_matches(name: str, pattern: str) -> bool:
    """``name`` matches the name pattern; an unusable pattern matches nothing (settings report
    it as a diagnostic when they are loaded, see :func:`check_name_pattern`)."""
    try:
        return name_pattern(pattern).match(name)
    except GlobError:
        return False


def first_match(patterns: tuple[str, ...] | list[str], name: str, *, unusable_matches: bool = False) -> str | None:
    """The first pattern that ``name`` matches, or None. ``unusable_matches``: an unusable
    pattern matches every name (fail closed, for rules that restrict: deny and ask)."""
    for p in patterns:
        if name_matches(name, p):
            return p
        if unusable_matches:
            try:
                name_pattern(p)
            except GlobError:
                return p
    return None


GLOB_SETTINGS: tuple[tuple[str, ...], ...] = (
    ("permissions", "allow"), ("permissions", "ask"), ("permissions", "deny"),
    ("agent", "sampling", "allowedServers"), ("agent", "sampling", "autoApprove"),
)
"""Where a settings file holds lists of name patterns."""


def settings_glob_problems(root: Any) -> list[tuple[tuple[str | int, ...], str]]:
    """(JSON path, message) for every unusable name pattern in one settings file's object
    (wrong types are reported by the settings' own checks, not here)."""
    out: list[tuple[tuple[str | int, ...], str]] = []
    for path in GLOB_SETTINGS:
        value: Any = root
        for key in path:
            value = value.get(key) if isinstance(value, dict) else None
        if not isinstance(value, list):
            continue
        for index, pattern in enumerate(value):
            if not isinstance(pattern, str):
                continue
            if path[0] == "permissions" and (why := check_call_rule(pattern)) is not None:
                out.append(((*path, index), why))
            elif (why := check_name_pattern(pattern)) is not None:
                out.append(((*path, index), f"{why}; it matches nothing"))
    return out


CALL_RULE_TOOLS = {"bash": "a command", "write_file": "a path", "edit_file": "a path"}
"""Tools a permission rule may qualify with what a call does: ``bash(git status:*)``,
``write_file(.vscode/settings.json)`` (matched in :mod:`agent_ls.agent.permissions`)."""


def check_call_rule(rule: str) -> str | None:
    """Why a ``tool(...)`` permission rule cannot be used, or None (also None for a plain name
    pattern, which :func:`check_name_pattern` checks)."""
    if not (rule.endswith(")") and "(" in rule):
        return None
    tool, _, body = rule[:-1].partition("(")
    if tool not in CALL_RULE_TOOLS:
        if any(c in tool for c in "*?[{"):
            return None  # a name pattern that happens to contain parentheses
        return (f"the rule {rule!r} qualifies {tool!r}, but only {', '.join(CALL_RULE_TOOLS)} take "
                "(...): it matches nothing (an ask or deny rule applies to every call of the tool)")
    if not body.strip():
        return f"the rule {rule!r} names no {CALL_RULE_TOOLS[tool]} in (...): it matches nothing"
    if tool == "bash" and body.strip().endswith(":*"):
        try:
            if not shlex.split(body.strip()[:-2]):
                return f"the rule {rule!r} names no command words before ':*'"
        except ValueError as e:
            return f"the command prefix in {rule!r} is not usable ({e})"
    return None


__all__ = ["CALL_RULE_TOOLS", "PATTERN_LIMIT", "GlobError", "check_call_rule", "NamePattern", "PathGlob", "check_name_pattern", "first_match",
           "name_matches", "name_pattern", "settings_glob_problems"]
