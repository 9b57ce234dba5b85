"""A stored conversation as a front end replays it on resume (:class:`Transcript`): the history
with how each user message was shown and how each tool ran, the subagents' cards, the file
changes and the plan. What cannot be read is left out and logged: the history is what matters."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any

import attrs

if TYPE_CHECKING:
    from agent_ls.agent.editor.changes import ChangeStore
    from agent_ls.agent.plan import PlanEntry
    from agent_ls.agent.session import Session
    from agent_ls.agent.store import SessionStore
    from agent_ls.runtime.display import DisplayStore

log = logging.getLogger("agent_ls.runtime")


@attrs.frozen
class Transcript:
    """A stored session as a front end replays it: the history (user messages with how they
    were shown, ``display``; tool results with how they ran, ``run``), the file changes and the
    plan."""

    session_id: str
    messages: list[dict[str, Any]]
    changes: list[dict[str, Any]]
    plan: tuple[PlanEntry, ...]


async def read_transcript(store: SessionStore, session_id: str, live: Session | None,
                          display: Callable[[], Awaitable[DisplayStore]],
                          changes: Callable[[], Awaitable[ChangeStore]]) -> Transcript:
    """The transcript of ``session_id`` (``live``: the session as built now, whose history is
    newer than the store's; ``display``, ``changes``: the stores of how messages are shown and of
    the file changes, opened when first needed). Reads run off the event loop."""
    messages: list[dict[str, Any]] = (list(live.history) if live is not None
                                      else await asyncio.to_thread(store.load_messages, session_id))
    try:
        shown = await display()
        messages = await asyncio.to_thread(shown.annotate, session_id, messages)
    except Exception as e:  # the history itself is what matters
        log.warning("could not read how session %s shows its messages: %s", session_id, e)
    try:
        messages = with_tool_runs(messages, await asyncio.to_thread(store.tool_runs, session_id))
    except Exception as e:
        log.warning("could not read how the tools of session %s ran: %s", session_id, e)
    try:  # the subagents' cards
        from agent_ls.runtime.subagents import session_outputs, with_subagents

        outputs = await asyncio.to_thread(session_outputs, store, session_id, live)
        messages = await asyncio.to_thread(with_subagents, messages, outputs)
    except Exception as e:
        log.warning("could not read the subagents of session %s: %s", session_id, e)
    changed: list[dict[str, Any]] = []
    try:
        change_store = await changes()
        changed = await asyncio.to_thread(change_store.list, session_id)
    except Exception as e:  # the history itself is what matters
        log.warning("could not read the file changes of session %s: %s", session_id, e)
    plan: tuple[PlanEntry, ...] = ()
    try:
        if live is not None:
            plan = live.plan
        else:
            # lazy: ~2 ms at start-up
            from agent_ls.agent.plan import plan_from_json

            plan = plan_from_json(await asyncio.to_thread(store.load_plan, session_id))
    except Exception as e:  # the history itself is what matters
        log.warning("could not read the plan of session %s: %s", session_id, e)
    return Transcript(session_id, messages, changed, plan)


def with_tool_runs(messages: list[dict[str, Any]], runs: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results of a resumed history with ``run``: ``{server, displayName, durationMs,
    isError, denied}`` (how the call ran, for the chat's tool cards; copies, never sent to the model),
    and ``app`` when the call showed an MCP App (``{server, tool, resourceUri, arguments, result}``:
    the chat reads the app itself again with ``agent/appResource``)."""
    if not runs:
        return messages
    out = []
    for m in messages:
        run = runs.get(m.get("tool_call_id") or "") if m.get("role") == "tool" else None
        if run is not None:
            m = {**m, "run": {"server": run.server, "displayName": run.display_name, "durationMs": run.duration_ms,
                              "isError": run.is_error, "denied": run.denied}}
            if run.app is not None:
                m["run"]["app"] = run.app
        out.append(m)
    return out
