"""A stored history made usable again on resume: every tool call gets a result (a process that
died while a tool ran left calls without one), and the tools ``tool_search`` had loaded stay
loaded. Pure functions over the OpenAI-style message dicts of :mod:`agent_ls.agent.store`."""

from __future__ import annotations

import logging
import re
from collections.abc import Callable, Iterable
from typing import Any

from agent_ls.agent.tools.registry import LOADED_PREFIX, TOOL_SEARCH

log = logging.getLogger(__name__)

INTERRUPTED_RESULT = ("Error: this call never finished: agent-ls stopped (crashed or was closed) while it ran, "
                      "so its outcome is unknown.")
_LOADED_LINE = re.compile(r"^- (\S+) \(server ", re.MULTILINE)


def repair_history(history: list[dict[str, Any]], session_id: str) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Give every tool call of a loaded history a result, so that the next request is valid.

    A process that died while a tool ran (crash, kill, power loss) left an assistant
    message whose calls have no result; providers reject such a history. The missing
    results are added as errors right after the call's other results. Returns the repaired
    history and the results added at its end (the usual case), for the caller to persist.
    """
    out: list[dict[str, Any]] = []
    pending: list[str] = []

    def answer() -> list[dict[str, Any]]:
        added = [{"role": "tool", "tool_call_id": cid, "content": INTERRUPTED_RESULT} for cid in pending]
        pending.clear()
        out.extend(added)
        return added

    for msg in history:
        if msg.get("role") != "tool" and pending:
            answer()
        out.append(msg)
        if msg.get("role") == "assistant":
            pending = [c.get("id", "") for c in msg.get("tool_calls") or []]
        elif msg.get("role") == "tool" and msg.get("tool_call_id") in pending:
            pending.remove(msg["tool_call_id"])
    tail = answer()
    if len(out) != len(history):
        log.warning("session %s: %d tool call(s) without a result were closed as interrupted",
                    session_id, len(out) - len(history))
    return out, tail


def restore_loaded_tools(history: list[dict[str, Any]], load: Callable[[Iterable[str]], Any]) -> None:
    """Tools loaded by tool_search stay loaded on resume (derived from the history): ``load``
    (the registry's) gets the ones its results listed as loaded, and every MCP tool that was called."""
    search_ids: set[str] = set()
    for msg in history:
        for call in msg.get("tool_calls") or []:
            fn = call.get("function", {})
            if fn.get("name") == TOOL_SEARCH:
                search_ids.add(call.get("id", ""))
            else:
                load([fn.get("name", "")])
        if msg.get("role") == "tool" and msg.get("tool_call_id") in search_ids:
            content = msg.get("content")
            if isinstance(content, str) and content.startswith(LOADED_PREFIX):
                load(m.group(1) for m in _LOADED_LINE.finditer(content))
