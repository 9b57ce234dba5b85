"""A turn of a session with its conversation hooks: ``UserPromptSubmit`` before the prompt goes,
``Stop`` when the model ends its turn. For the runtime's conversation service, which owns turns
(it may call this, or call the events itself the same way).

- ``UserPromptSubmit`` blocked: the prompt is not sent (nor kept in the history); the turn is
  :attr:`HookedTurn.blocked` with the hooks' message for the user.
- ``UserPromptSubmit`` context: appended to the prompt the model receives, in a
  ``<hook-context>`` block (kept in the history, so a resumed session shows what the model saw).
- ``Stop`` blocked: the turn goes on with the hooks' reason as the next user message, at most
  ``max_continues`` times (a hook that always blocks cannot keep the model busy forever); the
  next ``Stop`` has ``stop_hook_active`` true.

SessionStart's context belongs in the session's reminders (the dynamic part of the system
prompt, every request): :func:`start_context`.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol

import attrs

from agent_ls.agent.hooks.outcome import HookOutcome

if TYPE_CHECKING:
    from agent_ls.agent.events import EventSink
    from agent_ls.agent.hooks.hooks import Hooks, Report


class TurnResult(Protocol):
    """What a turn ended with (:class:`agent_ls.agent.session.TurnResult`)."""

    @property
    def stop_reason(self) -> str: ...

    @property
    def text(self) -> str: ...


class Session(Protocol):
    """The session as the turn needs it (:class:`agent_ls.agent.session.Session`; the hooks
    package sits below the session, which runs its tool hooks)."""

    reminders: list[str]

    async def prompt(self, text: str, sink: EventSink | None = None) -> TurnResult: ...

MAX_STOP_CONTINUES = 3
"""How many times Stop hooks may send the model back to work within one prompt."""


@attrs.frozen
class HookedTurn:
    result: TurnResult | None
    """The last turn's result (None: the prompt was blocked and never sent)."""
    outcomes: tuple[HookOutcome, ...] = ()
    """Every event's outcome, in order (their ``notices`` are for the user)."""
    blocked: HookOutcome | None = None
    """The UserPromptSubmit outcome that blocked the prompt."""


def with_context(prompt: str, context: str) -> str:
    """The prompt as the model receives it with what the hooks added."""
    return f"{prompt}\n\n<hook-context>\n{context}\n</hook-context>" if context else prompt


async def start_context(session: Session, hooks: Hooks | None, source: str = "startup", *,
                        report: Report | None = None) -> HookOutcome:
    """Run SessionStart; its context joins the session's reminders (every request's dynamic part)."""
    if hooks is None:
        return HookOutcome("SessionStart")
    outcome = await hooks.session_start(source, report=report)
    if outcome.context:
        session.reminders.append(outcome.context)
    return outcome


async def prompt_with_hooks(session: Session, hooks: Hooks | None, text: str, sink: EventSink | None = None, *,
                            report: Report | None = None, max_continues: int = MAX_STOP_CONTINUES) -> HookedTurn:
    """One prompt through ``session`` with the UserPromptSubmit and Stop hooks (module docstring)."""
    if hooks is None:
        return HookedTurn(await session.prompt(text, sink))
    outcomes: list[HookOutcome] = []
    submitted = await hooks.user_prompt_submit(text, report=report)
    outcomes.append(submitted)
    if submitted.blocked:
        return HookedTurn(None, tuple(outcomes), submitted)
    result = await session.prompt(with_context(text, submitted.context), sink)
    continues = 0
    while result.stop_reason == "end" and hooks.has("Stop"):
        stopped = await hooks.stop(stop_hook_active=continues > 0, last_message=result.text, report=report)
        outcomes.append(stopped)
        if not stopped.blocked or continues >= max_continues:
            break
        continues += 1
        result = await session.prompt(with_context(stopped.message, stopped.context), sink)
    return HookedTurn(result, tuple(outcomes))
