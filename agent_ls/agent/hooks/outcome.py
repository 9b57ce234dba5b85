"""What a hook run means: its exit code and stdout read the way Claude Code reads them.

- exit 0: go on. stdout may be a JSON object (below); for ``UserPromptSubmit`` and
  ``SessionStart`` plain text on stdout is context for the model.
- exit 2: block. stderr is the reason: the model gets it (``PreToolUse``, ``UserPromptSubmit``,
  ``PostToolUse``, ``Stop``), or the user (the other events, which cannot be blocked).
- any other exit code, a timeout, a command that cannot start, output that is not usable: a
  non-blocking error shown to the user; the call or the turn goes on.

The JSON object (every key optional)::

    {"decision": "allow" | "deny" | "ask" | "approve" | "block", "reason": "...",
     "continue": false, "stopReason": "...", "systemMessage": "shown to the user",
     "additionalContext": "for the model",
     "hookSpecificOutput": {"hookEventName": "PreToolUse", "permissionDecision": "allow" | "deny" | "ask",
                            "permissionDecisionReason": "...", "additionalContext": "...",
                            "decision": {"behavior": "allow" | "deny", "message": "..."}}}

``approve`` is ``allow`` and ``block`` is ``deny`` (Claude Code's older words);
``"continue": false`` blocks with ``stopReason``. The runs of one event are combined: any block
blocks, and deny beats ask beats allow.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import Any

import attrs

from agent_ls.agent.hooks.process import MAX_OUTPUT_BYTES, ProcessResult
from agent_ls.config.hooks import HookSpec

MAX_MESSAGE_CHARS = 4000
"""What of a hook's stderr or reason reaches the model or the user (the rest is cut, with a marker)."""

_BLOCKABLE = frozenset({"PreToolUse", "PermissionRequest", "UserPromptSubmit", "PostToolUse", "Stop", "SubagentStop",
                        "PreCompact"})
"""Events a hook can block (exit 2); on the others exit 2 is shown to the user."""
_TEXT_IS_CONTEXT = frozenset({"UserPromptSubmit", "SessionStart"})
_DECISIONS = {"allow": "allow", "approve": "allow", "deny": "deny", "block": "deny", "ask": "ask"}
_RANK = {"deny": 3, "ask": 2, "allow": 1}


def _cut(text: str, limit: int = MAX_MESSAGE_CHARS) -> str:
    text = text.strip()
    return text if len(text) <= limit else f"{text[:limit]}… [{len(text) - limit} more characters cut]"


def command_words(command: str, n: int = 4) -> str:
    """The command's first words, for one-line reports."""
    words = command.split()
    return " ".join(words[:n]) + (" …" if len(words) > n else "")


@attrs.frozen
class HookRun:
    """One hook command's run and what it said."""

    hook: HookSpec
    process: ProcessResult
    blocked: bool = False
    message: str = ""
    """Why it blocked (its stderr or reason), or its non-blocking error."""
    decision: str | None = None
    """``allow`` / ``deny`` / ``ask`` (PreToolUse, PermissionRequest), or None."""
    reason: str = ""
    context: str = ""
    """Added for the model."""
    notice: str = ""
    """For the user: a non-blocking error or the hook's ``systemMessage``."""
    failed: bool = False
    """A non-blocking error (in :attr:`notice`): it could not start, timed out, exited with another
    code than 0 or 2 (or 2 where nothing can be blocked), or printed what cannot be read."""

    @property
    def outcome(self) -> str:
        if self.blocked:
            return "blocked"
        if self.decision is not None:
            return self.decision
        if self.failed:
            return "error"
        return "ok"

    def line(self) -> str:
        """One line for the chat and the terminal: event, command's first words, outcome, time."""
        text = (f"[hook] {self.hook.event} `{command_words(self.hook.command)}` {self.outcome} "
                f"({self.process.duration_ms:.0f} ms)")
        detail = (self.message or self.notice).splitlines()
        return text + (f": {detail[0]}" if detail else "")


def read_run(hook: HookSpec, result: ProcessResult) -> HookRun:
    """What one process result means for ``hook.event`` (see the module docstring)."""
    event = hook.event
    who = f"The {event} hook `{command_words(hook.command)}`"
    if result.start_error is not None:
        return HookRun(hook, result, notice=f"{who} could not start: {result.start_error}", failed=True)
    if result.timed_out:
        return HookRun(hook, result, notice=f"{who} did not finish within its timeout of {hook.timeout:g} s; it was "
                                            "stopped (with everything it started) and the work went on", failed=True)
    code = result.exit_code
    if code == 2:
        reason = _cut(result.stderr) or f"{who} exited with code 2 and no message on stderr"
        if result.stderr_dropped:
            reason += f" [{result.stderr_dropped} more bytes of stderr dropped]"
        if event in _BLOCKABLE:
            return HookRun(hook, result, blocked=True, message=reason)
        return HookRun(hook, result, notice=f"{who} exited with code 2 (this event cannot be blocked): {reason}", failed=True)
    if code != 0:
        tail = _cut(result.stderr or result.stdout, 1000)
        hint = " (command not found)" if code == 127 else ""
        return HookRun(hook, result, notice=f"{who} failed with exit code {code}{hint}" + (f": {tail}" if tail else ""), failed=True)
    return _read_stdout(hook, result, who)


def _read_stdout(hook: HookSpec, result: ProcessResult, who: str) -> HookRun:
    text = result.stdout.strip()
    if result.stdout_dropped:
        return HookRun(hook, result, notice=f"{who} printed more than {MAX_OUTPUT_BYTES // 1024} KiB "
                                            f"({result.stdout_dropped + MAX_OUTPUT_BYTES} bytes); its output was "
                                            "cut and not read", failed=True)
    if not text:
        return HookRun(hook, result)
    if not text.startswith("{"):
        return HookRun(hook, result, context=_cut(text) if hook.event in _TEXT_IS_CONTEXT else "")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as e:
        return HookRun(hook, result, notice=f"{who} printed invalid JSON ({e.msg} at line {e.lineno} column "
                                            f"{e.colno}); its output was ignored", failed=True)
    if not isinstance(data, dict):
        return HookRun(hook, result, notice=f"{who} printed JSON that is not an object; its output was ignored", failed=True)
    return _read_object(hook, result, data, who)


def _text(value: Any) -> str:
    return _cut(value) if isinstance(value, str) else ""


def _read_object(hook: HookSpec, result: ProcessResult, data: dict[str, Any], who: str) -> HookRun:
    specific = data.get("hookSpecificOutput")
    specific = specific if isinstance(specific, dict) else {}
    notices = [m] if (m := _text(data.get("systemMessage"))) else []
    context = _text(specific.get("additionalContext")) or _text(data.get("additionalContext"))
    if data.get("continue") is False:
        reason = _text(data.get("stopReason")) or f"{who} said not to continue"
        if hook.event not in _BLOCKABLE:
            return HookRun(hook, result, context=context,
                           notice="\n".join([*notices, f"{reason} (this event cannot be blocked)"]))
        return HookRun(hook, result, blocked=True, message=reason, context=context, notice="\n".join(notices))
    raw = specific.get("permissionDecision", data.get("decision"))
    reason = _text(specific.get("permissionDecisionReason")) or _text(data.get("reason"))
    nested = specific.get("decision")
    if isinstance(nested, dict):  # PermissionRequest: {"behavior": "allow" | "deny", "message": ...}
        raw, reason = nested.get("behavior"), _text(nested.get("message")) or reason
    decision = _DECISIONS.get(raw) if isinstance(raw, str) else None
    if raw is not None and decision is None:
        notices.append(f"{who} gave an unknown decision {raw!r}; it was ignored")
    blocked = False
    if decision == "deny" and hook.event not in ("PreToolUse", "PermissionRequest"):
        blocked = hook.event in _BLOCKABLE  # "decision": "block" on PostToolUse, UserPromptSubmit, Stop
        decision = None
    elif decision is not None and hook.event not in ("PreToolUse", "PermissionRequest"):
        decision = None  # allow/ask mean nothing here
    message = reason if blocked else ""
    if blocked and not message:
        message = f"{who} blocked without a reason"
    return HookRun(hook, result, blocked=blocked, message=message, decision=decision, reason=reason,
                   context=context, notice="\n".join(notices))


@attrs.frozen
class HookOutcome:
    """The runs of one event's hooks, combined."""

    event: str
    runs: tuple[HookRun, ...] = ()

    @property
    def blocked(self) -> bool:
        return any(r.blocked for r in self.runs)

    @property
    def message(self) -> str:
        """Why it blocked (each blocking hook's message), or empty."""
        return "\n".join(r.message for r in self.runs if r.blocked)

    @property
    def decision(self) -> str | None:
        """The strongest decision: deny beats ask beats allow (a block counts as deny)."""
        if self.blocked:
            return "deny"
        found = [r.decision for r in self.runs if r.decision is not None]
        return max(found, key=lambda d: _RANK[d]) if found else None

    @property
    def reason(self) -> str:
        """The reason given with :attr:`decision`."""
        if self.blocked:
            return self.message
        decision = self.decision
        return "\n".join(r.reason for r in self.runs if r.decision == decision and r.reason)

    @property
    def context(self) -> str:
        """What the hooks add for the model (empty: nothing)."""
        return "\n".join(r.context for r in self.runs if r.context)

    @property
    def notices(self) -> tuple[str, ...]:
        """For the user: non-blocking errors and the hooks' messages."""
        return tuple(r.notice for r in self.runs if r.notice)

    def lines(self) -> list[str]:
        return [r.line() for r in self.runs]


def combine(event: str, runs: Sequence[HookRun]) -> HookOutcome:
    return HookOutcome(event, tuple(runs))
