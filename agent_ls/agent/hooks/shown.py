"""A hook run as the user sees it: the typed ``hook`` event of a turn
(:class:`agent_ls.agent.events.HookRan`).

Every front end shows the same event: the VS Code chat a line that opens on its output, the
terminal ``[hook] ...`` on stderr (:func:`agent_ls.agent.events.hook_line`), ACP a tool call of
its own. Whoever runs the hooks with a sink passes :func:`reporter` as their ``report``: the tool
runner for the tool events (with the call's id), the conversation service and the session for
the conversation's.
"""

from __future__ import annotations

import inspect

from agent_ls.agent.events import EventSink, HookRan
from agent_ls.agent.hooks.hooks import Report
from agent_ls.agent.hooks.outcome import HookRun, command_words
from agent_ls.core.redact import redact_live

MAX_SHOWN_OUTPUT = 8000
"""Characters of a hook's output the event carries (stdout and stderr together; the rest is cut
with a marker: the process kept at most 256 KiB of each)."""


def shown_outcome(run: HookRun) -> str:
    """``blocked`` (a block, or a deny decision), ``error`` (a non-blocking failure) or ``ran``."""
    if run.blocked or run.decision == "deny":
        return "blocked"
    return "error" if run.failed else "ran"


def _output(run: HookRun) -> str:
    p = run.process
    parts = []
    if p.stdout.strip():
        parts.append(p.stdout.rstrip() + (f"\n[{p.stdout_dropped} more bytes dropped]" if p.stdout_dropped else ""))
    if p.stderr.strip():
        head = "stderr:\n" if parts else ""
        parts.append(head + p.stderr.rstrip() + (f"\n[{p.stderr_dropped} more bytes dropped]" if p.stderr_dropped else ""))
    text = "\n".join(parts)
    if len(text) > MAX_SHOWN_OUTPUT:
        text = f"{text[:MAX_SHOWN_OUTPUT]}\n[… {len(text) - MAX_SHOWN_OUTPUT} more characters not shown]"
    return redact_live(text)


def hook_ran(run: HookRun, call_id: str | None = None, tool: str | None = None) -> HookRan:
    """The event of one hook run (``call_id`` / ``tool``: the call it ran for)."""
    message = "\n".join(m for m in (run.message, run.notice) if m)
    if not message and run.reason:
        message = run.reason
    return HookRan(run.hook.event, command_words(run.hook.command), shown_outcome(run),
                   round(run.process.duration_ms, 1), redact_live(message), _output(run), run.decision, call_id, tool)


def reporter(sink: EventSink | None, *, call_id: str | None = None, tool: str | None = None) -> Report | None:
    """A :data:`~agent_ls.agent.hooks.hooks.Report` that sends each run to ``sink`` as a ``hook``
    event (None without a sink)."""
    if sink is None:
        return None

    async def report(run: HookRun) -> None:
        out = sink(hook_ran(run, call_id, tool))
        if inspect.isawaitable(out):
            await out

    return report
