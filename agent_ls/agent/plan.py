"""The agent's plan (issue 27 item 4, issue 28 item 4): a checklist of steps the model keeps.

The model writes the whole list with the ``update_plan`` tool each time it changes (simplest for
models: no ids, no patches). The list is session state: :class:`~agent_ls.agent.session.Session`
keeps it, stores it with the session (:meth:`SessionStore.set_plan
<agent_ls.agent.store.SessionStore.set_plan>`) and sends a
:class:`~agent_ls.agent.events.PlanUpdated` event to the front ends (the VS Code chat's
checklist, ACP's ``plan`` session update, ``agent-ls chat``'s printed checklist).

The tool reaches its session through :data:`current_plan_listener`, a context variable the turn
loop sets around each tool call (a tool set may be shared; the session is per call).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from contextvars import ContextVar
from typing import Any

import attrs

from agent_ls.core.tools import Capability, ToolResult, ToolSpec

UPDATE_PLAN = "update_plan"
PLAN_STATUSES = ("pending", "in_progress", "completed")
PLAN_PRIORITIES = ("high", "medium", "low")
MAX_PLAN_STEPS = 50
MAX_STEP_CHARS = 500


@attrs.frozen
class PlanEntry:
    """One step of the plan (the shape of ACP's plan entries)."""

    content: str
    status: str = "pending"
    """``pending``, ``in_progress`` or ``completed``."""
    priority: str = "medium"
    """``high``, ``medium`` or ``low`` (ACP requires one; the model may leave it out)."""


PlanListener = Callable[[tuple[PlanEntry, ...]], Awaitable[None]]
current_plan_listener: ContextVar[PlanListener | None] = ContextVar("current_plan_listener", default=None)
"""Where ``update_plan`` hands a valid plan: the session running the call (None outside a turn)."""


def parse_plan(raw: Any) -> tuple[PlanEntry, ...] | str:
    """The steps of ``raw`` (a list of ``{content, status, priority?}``) or an error message
    naming every problem (so the model can fix them all at once)."""
    if not isinstance(raw, list):
        return "`steps` must be an array of {content, status} objects"
    if len(raw) > MAX_PLAN_STEPS:
        return f"a plan has at most {MAX_PLAN_STEPS} steps (got {len(raw)}); merge small steps"
    problems: list[str] = []
    entries: list[PlanEntry] = []
    for n, item in enumerate(raw, 1):
        if not isinstance(item, dict):
            problems.append(f"step {n}: expected an object with `content` and `status`")
            continue
        content = item.get("content")
        status = item.get("status", "pending")
        priority = item.get("priority") or "medium"
        if not isinstance(content, str) or not content.strip():
            problems.append(f"step {n}: `content` must be a non-empty string")
            content = ""
        elif len(content) > MAX_STEP_CHARS:
            problems.append(f"step {n}: `content` is longer than {MAX_STEP_CHARS} characters")
        if status not in PLAN_STATUSES:
            problems.append(f"step {n}: unknown status {status!r} (use one of {', '.join(PLAN_STATUSES)})")
        if priority not in PLAN_PRIORITIES:
            problems.append(f"step {n}: unknown priority {priority!r} (use one of {', '.join(PLAN_PRIORITIES)})")
        if not problems:
            entries.append(PlanEntry(" ".join(content.split()), status, priority))
    if problems:
        return "Invalid plan: " + "; ".join(problems)
    return tuple(entries)


def plan_from_json(raw: Any) -> tuple[PlanEntry, ...]:
    """A stored plan (what :func:`plan_to_json` made); anything unreadable is no plan."""
    parsed = parse_plan(raw)
    return parsed if isinstance(parsed, tuple) else ()


def plan_to_json(entries: Sequence[PlanEntry]) -> list[dict[str, str]]:
    return [attrs.asdict(e) for e in entries]


def plan_text(entries: Sequence[PlanEntry]) -> str:
    """The plan as a compact checklist (``[x]`` done, ``[>]`` in progress, ``[ ]`` pending)."""
    marks = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}
    return "\n".join(f"{marks.get(e.status, '[ ]')} {e.content}" for e in entries)


class UpdatePlanTool:
    """``update_plan``: the model replaces the session's plan with the list it sends."""

    def __init__(self) -> None:
        self._spec = ToolSpec(
            name=UPDATE_PLAN,
            description=(
                "Keep a plan for a task with several steps: a checklist the user sees beside the chat. "
                "Send the WHOLE list every time (it replaces the previous one), each step with its "
                "status: pending, in_progress or completed. Mark a step in_progress before working "
                "on it (one at a time) and completed as soon as it is done. Skip it for simple tasks. "
                f"At most {MAX_PLAN_STEPS} steps; an empty list clears the plan."
            ),
            input_schema={
                "type": "object",
                "properties": {
                    "steps": {
                        "type": "array",
                        "maxItems": MAX_PLAN_STEPS,
                        "items": {
                            "type": "object",
                            "properties": {
                                "content": {"type": "string", "description": "What the step does (one line)."},
                                "status": {"type": "string", "enum": list(PLAN_STATUSES)},
                                "priority": {"type": "string", "enum": list(PLAN_PRIORITIES),
                                             "description": "Optional (default medium)."},
                            },
                            "required": ["content", "status"],
                            "additionalProperties": False,
                        },
                    },
                },
                "required": ["steps"],
                "additionalProperties": False,
            },
            capability=Capability.READ,
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {UPDATE_PLAN}>"

    async def call(self, arguments: dict[str, Any]) -> ToolResult:
        if not isinstance(arguments, dict) or "steps" not in arguments:
            return ToolResult.error("update_plan needs `steps`: the whole plan as an array of {content, status}")
        entries = parse_plan(arguments["steps"])
        if isinstance(entries, str):
            return ToolResult.error(entries)
        listener = current_plan_listener.get()
        if listener is not None:
            await listener(entries)
        if not entries:
            return ToolResult(content="The plan is cleared.")
        done = sum(e.status == "completed" for e in entries)
        return ToolResult(content=f"Plan updated ({done} of {len(entries)} steps completed).\n{plan_text(entries)}")
