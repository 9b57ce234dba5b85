"""Permissions: rules from settings, then the tool's capability, then the user.

Rules are glob patterns over model-facing tool names (``mcp__github__*``,
``mcp__*__delete_*``, ``bash``; the name-pattern syntax of :mod:`agent_ls.config.globs`).
Deny beats ask beats allow. With no matching rule the capability decides: read runs; write,
network and unknown ask. Asking goes to an injectable
approval handler (the editor or the terminal) that answers allow once, allow for the
session, or deny. A denied call becomes an error result for the model, never an exception.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from typing import Any, Protocol

import attrs

from agent_ls.config.globs import first_match
from agent_ls.core.tools import Capability, ToolSpec


class Decision(enum.StrEnum):
    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class ApprovalAnswer(enum.StrEnum):
    ALLOW_ONCE = "allow_once"
    ALLOW_SESSION = "allow_session"
    DENY = "deny"


@attrs.frozen
class PermissionRules:
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()


def merge_rules(*layers: PermissionRules) -> PermissionRules:
    return PermissionRules(
        allow=tuple(p for r in layers for p in r.allow),
        ask=tuple(p for r in layers for p in r.ask),
        deny=tuple(p for r in layers for p in r.deny),
    )


def _match(patterns: Sequence[str], name: str, *, restricting: bool = False) -> str | None:
    return first_match(tuple(patterns), name, unusable_matches=restricting)


def decide(rules: PermissionRules, spec: ToolSpec) -> tuple[Decision, str]:
    """The decision for a tool and why. A deny or ask rule whose pattern is unusable applies to
    every tool until it is fixed (fail closed; the settings file shows the diagnostic); an
    unusable allow rule allows nothing."""
    if (p := _match(rules.deny, spec.name, restricting=True)) is not None:
        return Decision.DENY, f"denied by the rule {p!r} in the permissions settings"
    if (p := _match(rules.ask, spec.name, restricting=True)) is not None:
        return Decision.ASK, f"the rule {p!r} in the permissions settings asks first"
    if (p := _match(rules.allow, spec.name)) is not None:
        return Decision.ALLOW, f"allowed by the rule {p!r}"
    if spec.capability is Capability.READ:
        return Decision.ALLOW, "read-only tool"
    what = {Capability.WRITE: "it can change files or data", Capability.NETWORK: "it reaches the network",
            Capability.UNKNOWN: "what it does is not known"}[spec.capability]
    return Decision.ASK, f"{spec.name} needs approval: {what}"


@attrs.frozen
class ApprovalRequest:
    spec: ToolSpec
    arguments: dict[str, Any]
    reason: str


class ApprovalHandler(Protocol):
    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer: ...


class PermissionGate:
    """Rules + the approval handler + what the user allowed for this session."""

    def __init__(self, rules: PermissionRules | None = None, handler: ApprovalHandler | None = None) -> None:
        self.rules = rules or PermissionRules()
        self.handler = handler
        self.session_allowed: set[str] = set()

    def runs_without_asking(self, spec: ToolSpec) -> bool:
        decision, _ = decide(self.rules, spec)
        return decision is Decision.ALLOW or (decision is Decision.ASK and spec.name in self.session_allowed
                                              and _match(self.rules.ask, spec.name) is None)

    def approval_reason(self, spec: ToolSpec) -> str | None:
        """Why the user will be asked before this tool runs, or None when nobody is asked."""
        decision, reason = decide(self.rules, spec)
        if decision is not Decision.ASK or spec.name in self.session_allowed or self.handler is None:
            return None
        return reason

    async def check(self, spec: ToolSpec, arguments: dict[str, Any]) -> tuple[bool, str]:
        decision, reason = decide(self.rules, spec)
        if decision is Decision.DENY:
            return False, f"This call was not run: {reason}."
        if decision is Decision.ALLOW:
            return True, reason
        if spec.name in self.session_allowed:
            return True, "allowed for this session"
        if self.handler is None:
            return False, f"This call was not run: {reason}, and no approver is attached."
        answer = await self.handler(ApprovalRequest(spec, arguments, reason))
        if answer is ApprovalAnswer.ALLOW_SESSION:
            self.session_allowed.add(spec.name)
            return True, "allowed for this session"
        if answer is ApprovalAnswer.ALLOW_ONCE:
            return True, "allowed once"
        return False, "The user denied this call."
