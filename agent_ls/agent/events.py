"""Typed events a turn emits to its sink as they happen (the LSP layer forwards them)."""

from __future__ import annotations

import contextvars
import inspect
from collections.abc import Awaitable, Callable
from typing import Any

import attrs

from agent_ls.agent.plan import PlanEntry


@attrs.frozen
class TurnStarted:
    session_id: str
    turn: int
    type: str = "turn_started"


@attrs.frozen
class TextDelta:
    text: str
    """A piece of the assistant's reply, as it streams."""
    type: str = "text"


@attrs.frozen
class ThinkingDelta:
    text: str
    """A piece of the model's reasoning, as it streams (models that think aloud). Shown, never
    sent back to the model, never stored."""
    type: str = "thinking"


@attrs.frozen
class ToolCallStarted:
    call_id: str
    name: str
    """Model-facing tool name."""
    arguments: dict[str, Any]
    server: str | None = None
    display_name: str | None = None
    type: str = "tool_call_started"


@attrs.frozen
class ToolCallProgress:
    call_id: str
    name: str
    message: str
    """What the call is doing while it has not finished (e.g. waiting for an MCP server to start)."""
    type: str = "tool_call_progress"


@attrs.frozen
class ApprovalRequested:
    call_id: str
    name: str
    arguments: dict[str, Any]
    reason: str
    type: str = "approval_requested"


@attrs.frozen
class ToolCallFinished:
    call_id: str
    name: str
    is_error: bool
    content: str
    duration_ms: float
    denied: bool = False
    attachments: tuple[dict[str, Any], ...] = ()
    output_handle: str | None = None
    """The output was longer than a page: kept whole in the session's output store under this
    handle (``content`` is its first page); the chat offers it (``agent/toolOutput``)."""
    sandbox: dict[str, Any] | None = None
    """Where a command ran (:class:`agent_ls.core.tools.SandboxMark` as a record: ``mode``,
    ``mechanism``, ``network``, ``hosts``, ``paths``); the chat marks the card with it."""
    app: dict[str, Any] | None = None
    """The call's MCP App (:meth:`agent_ls.core.tools.AppView.to_json`): a front end that renders
    apps shows it under the card (when it has ``html``); others say the tool has an app they
    cannot show."""
    type: str = "tool_call_finished"


@attrs.frozen
class FileChange:
    """An agent change to a file and what became of it (issue 16: review in the editor).

    Emitted once per change, when its outcome is known; the chat shows it as a file card
    (path, +/- line counts, outcome) and, while it is undecided, offers Review / Keep / Revert.
    The texts before and after are kept in the session database
    (:class:`agent_ls.agent.editor.changes.ChangeStore`), not in the event.
    """

    change_id: str
    call_id: str | None
    path: str
    """The absolute path."""
    shown: str
    """The path as the workspace shows it (relative to its folder)."""
    added: int
    """Lines added."""
    removed: int
    """Lines removed."""
    status: str
    """``applied`` (in the editor's buffer, not reviewed yet: the user may keep or revert it),
    ``accepted`` (the user accepted it in the review, then it was applied), ``rejected`` (the
    user rejected it: nothing changed), ``failed`` (the editor did not apply it), ``written``
    (written to the disk: no editor applies edits)."""
    created: bool = False
    """The change creates the file."""
    reason: str | None = None
    """Why it was rejected or failed."""
    turn: int = 0
    """The session's turn (1 for the first prompt)."""
    uri: str | None = None
    """The file's URI (``file://``)."""
    type: str = "file_change"


@attrs.frozen
class PlanUpdated:
    """The session's plan changed (the model called ``update_plan``): the whole list, in order
    (empty: the plan was cleared)."""

    entries: tuple[PlanEntry, ...]
    type: str = "plan"


@attrs.frozen
class UsageReport:
    input_tokens: int = 0
    output_tokens: int = 0
    cache_read_tokens: int = 0
    cache_write_tokens: int = 0
    context_tokens: int = 0
    """Tokens of the conversation in the model's context after this response (the request plus
    the answer; 0: not known). Not summed: a total carries the last one."""
    context_window: int = 0
    """The model's context window in tokens (``agent.contextWindow``; 0: not known)."""
    context_source: str = ""
    """Where ``context_tokens`` comes from: ``provider`` (the provider's own count of the request
    plus the answer, from the response's usage) or ``estimate`` (agent-ls's count with litellm's
    tokenizer: before the first answer of a session, after ``/compact``, and for a provider that
    reports no usage); empty when ``context_tokens`` is 0."""
    type: str = "usage"

    def __add__(self, other: UsageReport) -> UsageReport:
        last = other if other.context_tokens else self
        return UsageReport(
            self.input_tokens + other.input_tokens,
            self.output_tokens + other.output_tokens,
            self.cache_read_tokens + other.cache_read_tokens,
            self.cache_write_tokens + other.cache_write_tokens,
            last.context_tokens,
            other.context_window or self.context_window,
            last.context_source,
        )


@attrs.frozen
class ContextCompacted:
    """The conversation was compacted to fit the model's context window (issue 26). Nothing is
    lost: cleared tool results stay readable through their handles, and the history keeps
    every message; only the model's view is shorter."""

    reason: str
    """``auto`` (near the window), ``overflow`` (the provider said the request was too long) or
    ``manual`` (``/compact``)."""
    cleared: int
    """Tool results replaced by a stub naming their handle."""
    summarized: int
    """Older messages replaced by a summary (0: none)."""
    handles: tuple[str, ...]
    """The output handles the compacted part keeps (``read_output`` reads them)."""
    tokens_before: int
    tokens_after: int
    context_window: int
    note: str = ""
    """Something the user should know (a summary that failed and was replaced by a digest)."""
    type: str = "compaction"


@attrs.frozen
class HookRan:
    """A hook command ran (issue 43): the chat shows it as one line (event, command, outcome,
    time), its output when the line is opened. Made by :func:`agent_ls.agent.hooks.hook_ran`."""

    event: str
    """The hook event (``PreToolUse``, ``UserPromptSubmit``, ``PreCompact``...)."""
    command: str
    """The command's first words (the settings hold it whole)."""
    outcome: str
    """``ran`` (it went on), ``blocked`` (exit 2, a block or deny decision: what it stopped
    did not happen) or ``error`` (it failed, timed out or printed something unusable; the work
    went on)."""
    duration_ms: float
    message: str = ""
    """Why it blocked, its error, or the message it has for the user (may be several lines)."""
    output: str = ""
    """What it printed (stdout, then stderr), cut to a few thousand characters with a marker."""
    decision: str | None = None
    """Its permission decision (``allow``, ``ask``, ``deny``: PreToolUse, PermissionRequest)."""
    call_id: str | None = None
    """The tool call it ran for (the tool events), else None."""
    tool: str | None = None
    """That call's tool (model-facing name)."""
    type: str = "hook"


@attrs.frozen
class TurnError:
    kind: str
    """``auth``, ``missing_key``, ``rate_limit``, ``context_window``, ``connection``, ``provider``,
    ``bad_request``, ``internal`` or ``hook_blocked`` (a hook stopped the turn before it began)."""
    message: str
    type: str = "error"


@attrs.frozen
class TurnFinished:
    stop_reason: str
    """``end``, ``max_steps``, ``cancelled`` or ``error``."""
    usage: UsageReport
    steps: int
    text: str
    type: str = "turn_finished"
    subagents: UsageReport | None = None
    """The tokens the turn's subagents used, when it ran any (already counted in :attr:`usage`)."""


@attrs.frozen
class SubagentEvent:
    """An event of a subagent (a child session the ``agent`` tool runs,
    :mod:`agent_ls.runtime.subagents`), said within the parent's turn: the front end shows it
    inside the card of the parent's ``agent`` call ``call_id``."""

    call_id: str
    """The parent's ``agent`` call that runs the child."""
    agent: str
    """The agent's name (``explore``, ``general``, a custom agent's)."""
    description: str
    """The short description the model gave the task."""
    event: Any
    """The child's own event (its tool calls, text, usage, its ``turn_finished``)."""
    type: str = "subagent"


Event = (TurnStarted | TextDelta | ThinkingDelta | ToolCallStarted | ToolCallProgress | ApprovalRequested
         | ToolCallFinished | FileChange | PlanUpdated | UsageReport | ContextCompacted | HookRan | TurnError
         | TurnFinished | SubagentEvent)
EventSink = Callable[[Event], Awaitable[None] | None]

ProgressReporter = Callable[[str], Awaitable[None] | None]
tool_progress: contextvars.ContextVar[ProgressReporter | None] = contextvars.ContextVar("tool_progress", default=None)
"""Where the tool call running in this context reports its progress (set by the tool runner around
the lookup and the call; None outside a call)."""
tool_events: contextvars.ContextVar[Callable[[Event], Awaitable[None]] | None] = contextvars.ContextVar(
    "tool_events", default=None)
"""The sink of the turn whose tool call runs in this context (set by the tool runner with
:data:`tool_progress`): the ``agent`` tool says its child's events there."""


async def report_progress(message: str) -> None:
    """Report ``message`` as the progress of the tool call running in this context (nothing
    outside a call)."""
    reporter = tool_progress.get()
    if reporter is not None:
        out = reporter(message)
        if inspect.isawaitable(out):
            await out


def to_dict(event: Event) -> dict[str, Any]:
    """JSON-ready camelCase payload of an event."""
    def camel(name: str) -> str:
        head, *rest = name.split("_")
        return head + "".join(p.title() for p in rest)

    if isinstance(event, SubagentEvent):  # the child's event in the same shape
        return {"callId": event.call_id, "agent": event.agent, "description": event.description,
                "event": to_dict(event.event), "type": event.type}
    return {camel(k): v for k, v in attrs.asdict(event, recurse=True).items()}


def app_notice(app: dict[str, Any] | None) -> str | None:
    """What a front end that does not render MCP Apps says under a tool call that has one (None:
    the call has no app). The text result is shown as for any tool."""
    if not app:
        return None
    notice = app.get("notice")
    if isinstance(notice, str) and notice:
        return notice
    tool, server, uri = (str(app.get(k) or "?") for k in ("tool", "server", "resourceUri"))
    return (f"The tool {tool!r} of MCP server {server!r} has an interactive app ({uri}) that this client "
            "cannot show; its text result is shown instead.")


def compaction_text(done: Any) -> str:
    """What a compaction (a ``ContextCompacted`` event, or None: nothing done) did, in a sentence
    for the chat, the terminal and ACP."""
    if done is None:
        return "Nothing to compact yet."
    if done.reason == "notice":
        return f"Note: {done.note}."
    kept = ""
    if done.handles:
        more = ", ..." if len(done.handles) > 8 else ""
        kept = f" (kept whole as {', '.join(done.handles[:8])}{more}: read_output reads them)"
    window = done.context_window or 1
    text = (f"Compacted the conversation: {done.cleared} tool result(s) cleared, {done.summarized} message(s) "
            f"summarized{kept}; context {round(100 * done.tokens_before / window)}% -> "
            f"{round(100 * done.tokens_after / window)}% of {done.context_window} tokens.")
    return text + (f" Note: {done.note}." if done.note else "")


def hook_line(run: HookRan) -> str:
    """A hook run in one line, for the terminal and ACP: ``[hook] PreToolUse `./check.sh`
    blocked (12 ms): no force pushes``."""
    how = f"{run.outcome}, {run.decision}" if run.decision and run.outcome == "ran" else run.outcome
    first = (run.message.strip().splitlines() or [""])[0]
    return f"[hook] {run.event} `{run.command}` {how} ({run.duration_ms:.0f} ms)" + (f": {first}" if first else "")


def context_meter(usage: Any) -> str:
    """The context meter of a ``UsageReport`` in words, for the terminal: ``"15% of context (4800 of
    32000 tokens, reported by the provider)"`` (or ``estimated``)."""
    window = usage.context_window or 1
    source = {"provider": ", reported by the provider", "estimate": ", estimated"}.get(usage.context_source, "")
    return (f"{round(100 * usage.context_tokens / window)}% of context "
            f"({usage.context_tokens} of {usage.context_window} tokens{source})")
