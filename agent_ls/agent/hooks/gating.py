"""What a hook's permission decision may do to the permission gate's.

A hook's ``allow`` (PreToolUse, PermissionRequest) counts like an allow rule for this one call:
it skips the question the capability or a missing allow rule would ask, and nothing more. A
deny rule still denies; an ask rule, a protected path (``.git/``, ``.vscode/``, the user's
secret places) and a shell command that cannot be checked part by part still ask. A hook's
``ask`` asks the user even when the rules would let the call run (a deny rule still denies).
"""

from __future__ import annotations

from typing import Any

import attrs

from agent_ls.agent.permissions import (
    ApprovalAnswer,
    ApprovalRequest,
    Decision,
    PermissionGate,
    Verdict,
)
from agent_ls.core.tools import ToolSpec


def hook_may_allow(gate: object, spec: ToolSpec, arguments: dict[str, Any]) -> bool:
    """Whether a hook's ``allow`` lets this call run unasked (see the module docstring). Only a
    :class:`PermissionGate` can say; any other gate keeps its own decision."""
    if not isinstance(gate, PermissionGate):
        return False
    rules = attrs.evolve(gate.rules, allow=(*gate.rules.allow, spec.name))
    probe = PermissionGate(rules, None, gate.roots)
    probe.session_allowed = gate.session_allowed
    return probe.evaluate(spec, arguments).decision is Decision.ALLOW


def verdict_of(gate: object, spec: ToolSpec, arguments: dict[str, Any]) -> Verdict | None:
    return gate.evaluate(spec, arguments) if isinstance(gate, PermissionGate) else None


async def ask_for_hook(gate: object, spec: ToolSpec, arguments: dict[str, Any], reason: str, *, call_id: str,
                       session_id: str | None) -> tuple[bool, str]:
    """Ask the user about a call a hook wants asked (allow once or deny: no session grant)."""
    verdict = verdict_of(gate, spec, arguments)
    assert isinstance(gate, PermissionGate) and verdict is not None
    if verdict.decision is Decision.DENY:
        return False, f"This call was not run: {verdict.reason}."
    if gate.handler is None:
        return False, f"This call was not run: {reason}, and no approver is attached."
    answer = await gate.handler(ApprovalRequest(spec, arguments, reason, (), verdict.sensitive, call_id, session_id))
    if answer is ApprovalAnswer.DENY:
        return False, "The user denied this call."
    return True, "allowed once"
