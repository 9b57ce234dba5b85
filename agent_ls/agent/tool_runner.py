"""One tool call, run the same way wherever it comes from.

The agent's turns (:meth:`agent_ls.agent.session.Session.prompt`) and the calls a front end makes
for the user directly (the editor's ``mcp/callTool`` and tool code actions) run each call through
:meth:`ToolRunner.run`, which goes:

1. ``tool_call_started`` to the sink (again, with its server, when the tool was not known yet
   and was found once its MCP server had started: :attr:`ToolRunner.resolve`);
2. ``approval_requested`` when the permission gate will ask the user, then the gate's check; its
   question (:class:`agent_ls.agent.permissions.ApprovalRequest`) carries the call's id and its
   session, so a front end ties it to the right card however many calls ask at once;
3. the call (a tool that raises becomes an error result, never an exception), inside the
   caller's :data:`CallScope` (the session sets the context its file and plan tools read);
4. the result shaped for its reader (:data:`Shaper`: the session pages it into its output store,
   a direct call caps it);
5. ``tool_call_finished`` with the duration (also when the call is cancelled, with the
   cancellation as its result) and the run record (:data:`Recorder`).

With :attr:`ToolRunner.hooks` (:mod:`agent_ls.agent.hooks`), the ``PreToolUse`` hooks run before
step 2 (exit 2 or a ``deny`` decision: the call is not run and the model gets the hook's reason;
``allow`` skips the question but never a deny rule, an ask rule or a protected path; ``ask``
asks), the ``PermissionRequest`` hooks when the gate is about to ask (they may answer in the
user's place, within the same limits), and ``PostToolUse`` / ``PostToolUseFailure`` after step
3 (what they add, or block with, goes to the model with the result). Each hook run is a ``hook``
event with the call's id (:mod:`agent_ls.agent.hooks.shown`: the chat's hook line).
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from agent_ls.agent.events import (
    ApprovalRequested,
    Event,
    EventSink,
    ToolCallFinished,
    ToolCallProgress,
    ToolCallStarted,
    tool_events,
    tool_progress,
)
from agent_ls.agent.hooks.gating import ask_for_hook, hook_may_allow, verdict_of
from agent_ls.agent.hooks.shown import reporter
from agent_ls.agent.store import ToolRun
from agent_ls.core.tools import Tool, ToolResult, cap_text

if TYPE_CHECKING:
    from agent_ls.agent.hooks import HookOutcome, Hooks, Report

log = logging.getLogger(__name__)

CANCELLED_RESULT = "The call was cancelled by the user before it finished."


class Gate(Protocol):
    """The permission gate as the runner uses it (:class:`agent_ls.agent.permissions.PermissionGate`)."""

    async def check(self, spec: Any, arguments: dict[str, Any], *, call_id: str = "",
                    session_id: str | None = None) -> tuple[bool, str]: ...

    def runs_without_asking(self, spec: Any, arguments: dict[str, Any] | None = None) -> bool: ...

    def approval_reason(self, spec: Any, arguments: dict[str, Any] | None = None) -> str | None: ...


async def emit(sink: EventSink | None, event: Event) -> None:
    """Send ``event`` to ``sink`` (sync or async); a broken listener is logged, never raised."""
    if sink is None:
        return
    try:
        out = sink(event)
        if inspect.isawaitable(out):
            await out
    except Exception:  # a broken listener must not break the turn
        log.exception("event sink failed")


@attrs.frozen
class ToolCall:
    """One call to run: its id (the card's), the model-facing tool name and its arguments."""

    id: str
    name: str
    arguments: dict[str, Any] | str
    """The arguments, or why the ones given cannot be used (not JSON, not an object): the call
    then ends with that error without asking or running anything."""


@attrs.frozen
class ToolOutcome:
    """What a run ended with (the result as shaped for its reader)."""

    result: ToolResult
    denied: bool = False
    """The permission gate (a rule or the user) refused the call."""
    duration_ms: float = 0.0
    output_handle: str | None = None
    """Where the whole output is kept when ``result`` holds its first page only."""


Shaper = Callable[[ToolCall, ToolResult], Awaitable[tuple[ToolResult, str | None]]]
"""The result as its reader gets it, and the output store's handle of the whole when it was kept."""
Recorder = Callable[[ToolRun], Awaitable[None]]
"""Keeps the record of a run (the session store's ``tool_runs``)."""
CallScope = Callable[[ToolCall, EventSink | None], contextlib.AbstractContextManager[Any]]
"""The context the tool runs in (the session's :data:`agent_ls.agent.editor.changes.current_call`...)."""


class ToolObserver(Protocol):
    """Told around each call that the gate let run (the conversation service's observer point:
    checkpoints, hooks and subagents attach here). An observer that raises is logged; the call
    goes on."""

    async def before_call(self, session_id: str | None, call: ToolCall, tool: Tool) -> None: ...

    async def after_call(self, session_id: str | None, call: ToolCall, tool: Tool, result: ToolResult) -> None: ...


def capped(max_chars: int) -> Shaper:
    """A shaper that cuts the text to ``max_chars`` with a clear marker (a direct call's result
    is shown, not paged)."""

    async def shape(call: ToolCall, result: ToolResult) -> tuple[ToolResult, str | None]:
        if len(result.content) <= max_chars:
            return result, None
        content, cut = cap_text(result.content, max_chars)
        return attrs.evolve(result, content=content, truncated_chars=result.truncated_chars + cut), None

    return shape


def app_record(app: dict[str, Any] | None) -> dict[str, Any] | None:
    """What the store keeps of a call's MCP App for a resumed chat: who serves it and the call's data,
    never its HTML (read from the server again on resume)."""
    if app is None:
        return None
    return {k: app.get(k) for k in ("server", "tool", "resourceUri", "arguments", "result")}


@attrs.frozen
class ToolRunner:
    """Runs tool calls through ``gate`` (None: everything runs) for ``session_id`` (None: direct
    calls from a front end), see the module docstring."""

    gate: Gate | None
    session_id: str | None = None
    shape: Shaper | None = None
    record: Recorder | None = None
    scope: CallScope | None = None
    resolve: Callable[[str], Awaitable[Tool | None]] | None = None
    """A tool not known when the call starts (an MCP server still starting): the tool once it is
    (the wait is the call's progress), or None."""
    missing: Callable[[str], str] | None = None
    """Why there is no tool of that name (the error result; default: there is no such tool)."""
    hooks: Hooks | None = None
    """The tool hooks to run around each call (None: none configured)."""
    observers: tuple[ToolObserver, ...] = ()
    """Told before and after each call that runs (:class:`ToolObserver`)."""

    async def run(self, call: ToolCall, tool: Tool | None, sink: EventSink | None = None) -> ToolOutcome:
        started = time.perf_counter()
        spec = tool.spec if tool is not None else None
        args = call.arguments if isinstance(call.arguments, dict) else {}
        server, display = (spec.server, spec.display_name) if spec is not None else (None, None)
        await emit(sink, ToolCallStarted(call.id, call.name, args, server, display))
        denied = False
        progress = tool_progress.set(lambda message: emit(sink, ToolCallProgress(call.id, call.name, message)))
        events = tool_events.set(lambda event: emit(sink, event))
        try:
            if tool is None and self.resolve is not None:
                tool = await self.resolve(call.name)
                if tool is not None:  # found late: the start again, now with its server and own name
                    server, display = tool.spec.server, tool.spec.display_name
                    await emit(sink, ToolCallStarted(call.id, call.name, args, server, display))
            if tool is None:
                result = ToolResult.error(self.missing(call.name) if self.missing is not None
                                          else f"there is no tool named {call.name!r}")
            elif isinstance(call.arguments, str):
                result = ToolResult.error(f"{call.name}: {call.arguments}")
            else:
                result, denied = await self._gated(tool, call, args, sink)
        except asyncio.CancelledError:
            # cancelled while waiting for approval or while the tool ran: the UI still gets the end,
            # and a resumed session's card still says who ran it, how long and how it ended
            cancelled_ms = (time.perf_counter() - started) * 1e3

            async def finish() -> None:
                await emit(sink, ToolCallFinished(call.id, call.name, True, CANCELLED_RESULT, cancelled_ms))
                await self._record(ToolRun(call.id, call.name, server, display, round(cancelled_ms, 1), True, False))

            await asyncio.shield(finish())
            raise
        finally:
            tool_events.reset(events)
            tool_progress.reset(progress)
        handle = None
        if self.shape is not None:
            result, handle = await self.shape(call, result)
        duration_ms = (time.perf_counter() - started) * 1e3
        attachments = tuple(attrs.asdict(a) for a in result.attachments)
        mark = attrs.asdict(result.sandbox) if result.sandbox is not None else None
        app = result.app.to_json() if result.app is not None else None
        await emit(sink, ToolCallFinished(call.id, call.name, result.is_error, result.content, duration_ms, denied,
                                          attachments, output_handle=handle, sandbox=mark, app=app))
        await self._record(ToolRun(call.id, call.name, server, display, round(duration_ms, 1), result.is_error, denied,
                                   app_record(app)))
        return ToolOutcome(result, denied, duration_ms, handle)

    async def _gated(self, tool: Tool, call: ToolCall, args: dict[str, Any],
                     sink: EventSink | None) -> tuple[ToolResult, bool]:
        """The call through its hooks and the gate: the result, and whether it was refused."""
        hooks = self.hooks
        report = reporter(sink, call_id=call.id, tool=call.name)
        pre: HookOutcome | None = None
        context: list[str] = []
        if hooks is not None and hooks.has("PreToolUse"):
            pre = await hooks.pre_tool_use(call.name, args, call.id, report=report)
            context.append(pre.context)
            if pre.decision == "deny":
                why = pre.reason or "it gave no reason"
                return ToolResult.error(f"This call was not run: a PreToolUse hook blocked it: {why}"), True
        allowed, reason = await self._permit(tool, call, args, sink, pre, report)
        if not allowed:
            return ToolResult.error(reason or "the call was denied"), True
        await self._observe("before_call", call, tool)
        result = await self._call(tool, call, args, sink)
        await self._observe("after_call", call, tool, result)
        if hooks is not None:
            if result.is_error:
                post = await hooks.post_tool_use_failure(call.name, args, call.id, result.content, report=report)
            else:
                response = {"content": result.content, "is_error": False}
                post = await hooks.post_tool_use(call.name, args, call.id, response, report=report)
            context.append(post.context)
            if post.blocked:
                context.append(f"A {post.event} hook says: {post.message}")
        extra = "\n".join(c for c in context if c)
        if extra:
            result = attrs.evolve(result, content=f"{result.content}\n\n[from the hooks]\n{extra}")
        return result, False

    async def _permit(self, tool: Tool, call: ToolCall, args: dict[str, Any], sink: EventSink | None,
                      pre: HookOutcome | None, report: Report | None) -> tuple[bool, str]:
        """Whether the call may run: the gate, within what the hooks decided (module docstring)."""
        gate, spec = self.gate, tool.spec
        if gate is None:
            return True, ""
        decision = pre.decision if pre is not None else None
        if decision == "allow" and hook_may_allow(gate, spec, args):
            return True, "allowed by a PreToolUse hook"
        if decision == "ask" and verdict_of(gate, spec, args) is not None:
            asks = f"a PreToolUse hook asks first: {pre.reason if pre is not None and pre.reason else 'no reason given'}"
            await emit(sink, ApprovalRequested(call.id, call.name, args, asks))
            return await ask_for_hook(gate, spec, args, asks, call_id=call.id, session_id=self.session_id)
        why = gate.approval_reason(spec, args)
        if why is not None and self.hooks is not None and self.hooks.has("PermissionRequest"):
            asked = await self.hooks.permission_request(call.name, args, call.id, why, report=report)
            if asked.decision == "deny":
                return False, f"This call was not run: a PermissionRequest hook denied it: {asked.reason or 'no reason'}"
            if asked.decision == "allow" and hook_may_allow(gate, spec, args):
                return True, "allowed by a PermissionRequest hook"
        if why is not None:
            await emit(sink, ApprovalRequested(call.id, call.name, args, why))
        return await gate.check(spec, args, call_id=call.id, session_id=self.session_id)

    async def _call(self, tool: Tool, call: ToolCall, args: dict[str, Any], sink: EventSink | None) -> ToolResult:
        scope = self.scope(call, sink) if self.scope is not None else contextlib.nullcontext()
        try:
            with scope:
                return await tool.call(args)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a tool bug must not end the turn (nor the editor's request)
            log.exception("tool %s raised", call.name)
            return ToolResult.error(f"{call.name} failed: {type(e).__name__}: {e}")

    async def _observe(self, point: str, *args: Any) -> None:
        for observer in self.observers:
            try:
                await getattr(observer, point)(self.session_id, *args)
            except asyncio.CancelledError:
                raise
            except Exception:  # an observer must not break the call
                log.exception("tool observer %s failed", point)

    async def _record(self, run: ToolRun) -> None:
        if self.record is not None:
            await self.record(run)
