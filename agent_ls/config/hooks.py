"""The ``hooks`` setting: commands the user or the project runs around tool calls and prompts.

Claude Code's schema, so an existing configuration works as written::

    "hooks": {
      "PreToolUse": [
        {"matcher": "Bash|edit_file", "hooks": [{"type": "command", "command": "./check.sh", "timeout": 30}]}
      ],
      "Stop": [{"hooks": [{"type": "command", "command": "notify-send done"}]}]
    }

Read from the user ``settings.json``, a folder's ``.agent-ls/settings.json``, its
``.claude/settings.json`` and its ``.claude/settings.local.json`` (only the ``hooks`` key of
those two). Hooks of every file apply
together (they are not replaced by a higher scope); a folder's hooks only once the folder is
trusted (:mod:`agent_ls.config.trust`).

``matcher`` is a regular expression matched against the whole tool name (``""``, ``"*"`` or no
matcher: every tool). A tool matches by its agent-ls name and by its Claude Code name
(:data:`CLAUDE_TOOL_NAMES`: ``Bash`` is ``bash``, ``Edit`` is ``edit_file``...); MCP tools are
``mcp__<server>__<tool>`` in both. For ``SessionStart`` the matcher is matched against the
source (``startup``, ``resume``, ``clear``, ``compact``), for ``PreCompact`` against the trigger
(``manual``, ``auto``); other events have no matcher.

Every malformed entry is a diagnostic at its place and is left out; the other hooks still apply.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import attrs

from agent_ls.config import jsonc
from agent_ls.config.diagnostics import Problems, type_name
from agent_ls.config.structure import did_you_mean, get_close_matches

TOOL_EVENTS = ("PreToolUse", "PermissionRequest", "PostToolUse", "PostToolUseFailure")
"""Events about one tool call (their matcher is matched against the tool's name)."""
SESSION_EVENTS = ("SessionStart", "UserPromptSubmit", "PreCompact", "Stop", "SubagentStop", "SessionEnd")
"""Events of the conversation (run by the runtime's conversation service)."""
EVENTS = TOOL_EVENTS + SESSION_EVENTS
_MATCHED = frozenset({*TOOL_EVENTS, "SessionStart", "PreCompact"})
"""Events whose groups have a ``matcher``."""

DEFAULT_TIMEOUT = 60.0
"""Seconds a hook may run when its entry gives no ``timeout``."""
MAX_TIMEOUT = 3600.0

CLAUDE_TOOL_NAMES: Mapping[str, str] = {
    "Bash": "bash",
    "Edit": "edit_file",
    "MultiEdit": "edit_file",
    "Write": "write_file",
    "Read": "read_file",
    "Grep": "grep",
    "Glob": "glob",
}
"""Claude Code's tool names and the agent-ls tool each means (a matcher may use either)."""

_GROUP_KEYS = {"matcher", "hooks"}
_HOOK_KEYS = {"type", "command", "timeout"}


@attrs.frozen
class HookSpec:
    """One hook command, as a settings file defines it."""

    event: str
    command: str
    matcher: str | None = None
    """As written (None, ``""`` and ``"*"``: everything)."""
    timeout: float = DEFAULT_TIMEOUT
    source: Path | None = None
    """The settings file (None: made in code)."""
    scope: str = "user"
    """``user``, ``workspace`` (``.agent-ls/settings.json``) or ``claude`` (``.claude/settings.json`` or ``.claude/settings.local.json``)."""
    path: jsonc.JsonPath = ()
    """Where the hook object is in its file."""
    folder: Path | None = None
    """The workspace folder whose file defines it (None: the user's file)."""

    def matches(self, name: str | None) -> bool:
        """Whether the hook applies to a tool (or SessionStart source, PreCompact trigger) ``name``."""
        if self.matcher in (None, "", "*") or name is None:
            return True
        pattern = _compiled(self.matcher)
        if pattern is None:
            return False
        names = {name, *(claude for claude, ours in CLAUDE_TOOL_NAMES.items() if ours == name)}
        return any(pattern.fullmatch(n) for n in names)

    @property
    def where(self) -> str:
        """Where it is defined, for lists and messages (``file``, ``hooks.PreToolUse[0].hooks[1]``)."""
        return f"{self.source or '(code)'}: {jsonc.format_path(self.path)}"

    def trust_value(self) -> dict[str, Any]:
        """What decides what runs and when (a change re-asks trust)."""
        return {"event": self.event, "matcher": self.matcher, "command": self.command, "timeout": self.timeout}


def _compiled(matcher: str) -> re.Pattern[str] | None:
    try:
        return re.compile(matcher)
    except re.error:
        return None


def parse_hooks(value: Any, source: Path | None, *, scope: str = "user", folder: Path | None = None,
                problems: Problems | None = None) -> list[HookSpec]:
    """The hooks of one file's ``hooks`` value; every malformed part goes to ``problems`` and is
    left out (the rest still counts)."""

    def problem(path: jsonc.JsonPath, message: str, *, severity: str = "error", key: bool = False) -> None:
        if problems is not None:
            problems.add(path, message, severity=severity, key=key,
                         summary=f"{jsonc.format_path(path)}: {message}")

    if value is None:
        return []
    if not isinstance(value, dict):
        problem(("hooks",), f"must be an object mapping event names to lists of matcher groups, not {type_name(value)}")
        return []
    out: list[HookSpec] = []
    for event, groups in value.items():
        where: jsonc.JsonPath = ("hooks", event)
        if event not in EVENTS:
            hint = get_close_matches(str(event), list(EVENTS))
            problem(where, f"unknown hook event {event!r} is ignored{did_you_mean(hint)} (events: {', '.join(EVENTS)})",
                    severity="warning", key=True)
            continue
        if not isinstance(groups, list):
            problem(where, f"must be a list of matcher groups ({{\"matcher\": ..., \"hooks\": [...]}}), not "
                           f"{type_name(groups)}")
            continue
        for i, group in enumerate(groups):
            out += _group(event, group, (*where, i), source, scope, folder, problem)
    return out


def _group(event: str, group: Any, where: jsonc.JsonPath, source: Path | None, scope: str, folder: Path | None,
           problem: Any) -> list[HookSpec]:
    if not isinstance(group, dict):
        problem(where, f"a matcher group must be an object with \"hooks\", not {type_name(group)}")
        return []
    for key in group:
        if key not in _GROUP_KEYS:
            problem((*where, key), f"unknown key {key!r} is ignored (a matcher group has \"matcher\" and \"hooks\")",
                    severity="warning", key=True)
    matcher = group.get("matcher")
    if matcher is not None:
        if not isinstance(matcher, str):
            problem((*where, "matcher"), f"must be a string (a regular expression), not {type_name(matcher)}; "
                                         "the group is ignored")
            return []
        if event not in _MATCHED and matcher not in ("", "*"):
            problem((*where, "matcher"), f"{event} hooks have no matcher: it is ignored and the hooks run every time",
                    severity="warning")
            matcher = None
        elif matcher not in ("", "*"):
            try:
                re.compile(matcher)
            except re.error as e:
                problem((*where, "matcher"), f"not a valid regular expression ({e}); the group is ignored")
                return []
    hooks = group.get("hooks")
    if not isinstance(hooks, list):
        problem((*where, "hooks") if "hooks" in group else where,
                "must be a list of hooks ({\"type\": \"command\", \"command\": ...})" if "hooks" in group
                else "a matcher group needs \"hooks\": a list of {\"type\": \"command\", \"command\": ...}")
        return []
    out: list[HookSpec] = []
    for j, hook in enumerate(hooks):
        path = (*where, "hooks", j)
        if not isinstance(hook, dict):
            problem(path, f"a hook must be an object ({{\"type\": \"command\", \"command\": ...}}), not {type_name(hook)}")
            continue
        for key in hook:
            if key not in _HOOK_KEYS:
                problem((*path, key), f"unknown key {key!r} is ignored", severity="warning", key=True)
        kind = hook.get("type", "command")
        if kind != "command":
            problem((*path, "type"), f"only \"command\" hooks are supported, not {kind!r}; the hook is ignored")
            continue
        command = hook.get("command")
        if not isinstance(command, str) or not command.strip():
            problem((*path, "command") if "command" in hook else path,
                    "needs \"command\": a non-empty string (run with bash -c in the workspace folder)")
            continue
        if "\x00" in command:
            problem((*path, "command"), "contains a NUL byte; the hook is ignored")
            continue
        timeout = hook.get("timeout", DEFAULT_TIMEOUT)
        if isinstance(timeout, bool) or not isinstance(timeout, int | float) or not 0 < timeout <= MAX_TIMEOUT:
            problem((*path, "timeout"), f"must be a number of seconds above 0 and at most {MAX_TIMEOUT:g}, got "
                                        f"{timeout!r}; {DEFAULT_TIMEOUT:g} is used")
            timeout = DEFAULT_TIMEOUT
        out.append(HookSpec(event, command, matcher, float(timeout), source, scope, path, folder))
    return out
