"""A turn of a conversation, as the conversation service runs it for every front end
(:meth:`agent_ls.runtime.conversations.Conversations.prompt`).

- :class:`TurnSlot`: one turn at a time per conversation (a second prompt is refused with
  :class:`~agent_ls.runtime.errors.Busy`), held by the task that runs it, cancelled whoever
  started it;
- :class:`TurnInfo` and :class:`TurnObserver`: what checkpoints, hooks and subagents are told
  around each turn (:func:`observe`; an observer that fails is logged, the turn goes on), and
  when its model request has gone out (:func:`request_watch`);
- :class:`PendingRequests`: which turns still wait for their model request to go out, so that work
  that would compete with it for the interpreter (the first checkpoint's snapshot, the MCP SDK's
  import) waits for it or pauses (issue 46);
- :func:`run_turn`: the prompt itself, with the conversation hooks when the settings have any
  (``UserPromptSubmit``, ``Stop``); :func:`compact_turn`: ``/compact`` as a turn of its own;
  :func:`show_hook_runs`: the SessionStart hooks' runs, shown at the next turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import inspect
import logging
import threading
import time
from collections.abc import AsyncIterator, Callable, Iterable, Iterator
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from agent_ls.runtime.errors import Busy

if TYPE_CHECKING:
    from agent_ls.agent.events import EventSink
    from agent_ls.agent.session import Session, TurnResult

log = logging.getLogger("agent_ls.runtime")


@attrs.frozen
class TurnInfo:
    """One turn as observers see it."""

    session_id: str
    text: str
    """What the model gets (attachments rendered, notes said); ``/compact`` for a compaction."""
    compact: bool = False
    index: int = 0
    """The prompt's index in the session (0: its first user message)."""
    hooks: bool = False
    """The session has conversation hooks: a ``UserPromptSubmit`` or ``PreToolUse`` hook may change
    files before the model's first output, so an observer that must come before every change of
    the turn (the checkpoint) does its work in :meth:`TurnObserver.before_turn`."""


class TurnObserver(Protocol):
    """Told around each turn of every conversation of the service (checkpoints, hooks,
    subagents). An observer that raises is logged; the turn goes on."""

    async def before_turn(self, turn: TurnInfo) -> None: ...

    def request_sent(self, turn: TurnInfo) -> None:
        """The turn's first model request has gone out (the LLM adapter handed it over,
        :data:`agent_ls.agent.llm.request_sent`; else the model's first output or the turn's end,
        whichever comes first). Nothing of the turn (no tool call) ran before this. Returns at
        once (work it starts runs in the background)."""
        ...

    async def after_turn(self, turn: TurnInfo, result: TurnResult | None) -> None:
        """``result``: None when the turn was cancelled."""
        ...


async def observe(observers: Iterable[TurnObserver], point: str, *args: Any) -> None:
    """Tell each observer ``point`` (``before_turn``, ``after_turn``)."""
    for observer in observers:
        try:
            await getattr(observer, point)(*args)
        except asyncio.CancelledError:
            raise
        except Exception:  # an observer must not break the turn
            log.exception("turn observer %s failed", point)


def request_watch(turn: TurnInfo, observers: Iterable[TurnObserver], requests: PendingRequests,
                  sink: EventSink | None) -> tuple[Callable[[], None], EventSink]:
    """``(sent, sink)`` for a turn: ``sent()`` tells ``requests`` and each observer, once, that the
    turn's first model request has gone out (give it to :data:`agent_ls.agent.llm.request_sent`);
    ``sink`` (``sink`` passed on; None: no sink) calls it at the turn's first event that tells the
    request went out (the model's first output, or the turn's end) in case nothing did before."""
    # lazy: the events module (loaded with the session by then)
    from agent_ls.agent.events import TextDelta, ThinkingDelta, ToolCallStarted, TurnError, TurnFinished

    output = (TextDelta, ThinkingDelta, ToolCallStarted, TurnError, TurnFinished)
    told = False

    def sent() -> None:
        nonlocal told
        if told:
            return
        told = True
        requests.sent(turn.session_id)
        for observer in observers:
            try:
                observer.request_sent(turn)
            except Exception:  # an observer must not break the turn
                log.exception("turn observer request_sent failed")

    async def watched(event: Any) -> None:
        if isinstance(event, output):
            sent()
        if sink is not None:
            out = sink(event)
            if inspect.isawaitable(out):
                await out

    return sent, watched


class PendingRequests:
    """The turns of a conversation service whose model request has not gone out yet: from the
    start of the turn (its slot taken, before the model library is waited for) until the LLM
    adapter handed the request over (or the model's first output, or the turn's end). On a
    2-core machine, work started meanwhile (the first checkpoint's snapshot, the MCP SDK's
    import) delays that request: it waits (:meth:`idle`) or, in a worker thread, pauses
    (:meth:`pause`)."""

    PAUSE_LIMIT = 10.0
    """Seconds a worker thread's :meth:`pause` waits at most (a request that never goes out holds
    nothing forever)."""

    def __init__(self) -> None:
        self._depth: dict[str, int] = {}
        self._waiting: set[str] = set()
        self._free = asyncio.Event()
        self._free.set()
        self._thread_free = threading.Event()
        self._thread_free.set()

    @contextlib.contextmanager
    def turn(self, session_id: str) -> Iterator[None]:
        """Around a turn of ``session_id`` (nested: counted once, the outermost ends it)."""
        depth = self._depth.get(session_id, 0)
        self._depth[session_id] = depth + 1
        if depth == 0:
            self._waiting.add(session_id)
            self._changed()
        try:
            yield
        finally:
            if depth == 0:
                self._depth.pop(session_id, None)
                self.sent(session_id)
            else:
                self._depth[session_id] = depth

    def sent(self, session_id: str) -> None:
        """The turn's model request has gone out."""
        self._waiting.discard(session_id)
        self._changed()

    def _changed(self) -> None:
        if self._waiting:
            self._free.clear()
            self._thread_free.clear()
        else:
            self._free.set()
            self._thread_free.set()

    async def idle(self, after: float = 0.0) -> None:
        """Return after ``after`` seconds once no turn waits for its request (a prompt sent right
        after a session opened goes first)."""
        if after > 0:
            await asyncio.sleep(after)
        while self._waiting:
            await self._free.wait()

    def pause(self, stop: Callable[[], bool] | None = None) -> None:
        """From a worker thread: wait while a turn waits for its request, at most
        :attr:`PAUSE_LIMIT` seconds, or until ``stop()`` says to go on."""
        deadline = time.monotonic() + self.PAUSE_LIMIT
        while not self._thread_free.wait(0.05):
            if (stop is not None and stop()) or time.monotonic() > deadline:
                return


@attrs.define
class TurnSlot:
    """The turn slot of one conversation: the task that holds it runs its turn."""

    session_id: str
    lock: asyncio.Lock = attrs.field(factory=asyncio.Lock)
    task: asyncio.Task[Any] | None = None

    @property
    def busy(self) -> bool:
        return self.lock.locked()

    @contextlib.asynccontextmanager
    async def hold(self) -> AsyncIterator[None]:
        """Hold the slot for a whole turn: refused with :class:`Busy` while another task holds
        it; the holder's own nested :meth:`hold` goes ahead."""
        task = asyncio.current_task()
        if self.lock.locked() and self.task is task:
            yield  # the holder's own prompt
            return
        if self.lock.locked():
            raise Busy(self.session_id)
        async with self.lock:
            self.task = task
            try:
                yield
            finally:
                if self.task is task:
                    self.task = None

    def running(self) -> asyncio.Task[Any] | None:
        """The task that runs the turn now (None: no turn runs)."""
        return self.task if self.task is not None and not self.task.done() else None

    async def cancel(self, timeout: float) -> bool:
        """Cancel the running turn and wait until it has ended (its ``turn_finished``,
        ``cancelled``, is sent before this returns). False when no turn runs, or when the caller
        is the turn itself."""
        task = self.running()
        if task is None or task is asyncio.current_task():
            return False
        task.cancel()
        done, _ = await asyncio.wait({task}, timeout=timeout)
        if not done:
            log.warning("the turn of session %s did not end within %.0f s of its cancellation", self.session_id,
                        timeout)
        return True


async def run_turn(session: Session, text: str, sink: EventSink | None) -> TurnResult:
    """The turn, with the conversation hooks when the settings have any: ``UserPromptSubmit``
    before the prompt goes (it may block it or add context), ``Stop`` when the model ends
    (it may send it back to work); each hook run is a ``hook`` event."""
    hooks = session.hooks
    if hooks is None:
        return await session.prompt(text, sink)
    # lazy: the hook runner, only when hooks are configured
    from agent_ls.agent.hooks.turns import prompt_with_hooks

    turned = await prompt_with_hooks(session, hooks, text, sink, report=_hook_report(sink))
    if turned.blocked is not None:
        return await _blocked(sink, turned.blocked.message or "a UserPromptSubmit hook blocked the prompt")
    assert turned.result is not None
    return turned.result  # type: ignore[return-value]  # the session's own TurnResult


async def compact_turn(session: Session, sink: EventSink | None) -> TurnResult:
    """``/compact``: a turn whose answer is what the compaction did (``stop_reason``
    ``"compacted"``, or ``"error"`` with the error); a ``PreCompact`` hook may block it."""
    # lazy: +2 modules, ~8 ms at start-up
    from agent_ls.agent.events import TurnError, UsageReport, compaction_text
    from agent_ls.agent.session import TurnResult
    from agent_ls.agent.tool_runner import emit

    errors: list[TurnError] = []
    usage: list[UsageReport] = []

    async def keep(event: Any) -> None:
        if isinstance(event, TurnError):
            errors.append(event)
        elif isinstance(event, UsageReport):
            usage.append(event)
        await emit(sink, event)

    if session.hooks is not None:
        pre = await session.hooks.pre_compact("manual", report=_hook_report(sink))
        if pre.blocked:
            return await _blocked(sink, pre.message)
    done = await session.compact(keep)
    total = usage[-1] if usage else UsageReport()
    if errors:
        return TurnResult("error", errors[0].message, total, 0, errors[0])
    return TurnResult("compacted", compaction_text(done), total, 0)


async def show_hook_runs(runs: list[Any], sink: EventSink | None) -> None:
    """The ``hook`` events of hooks that ran while no turn streamed (SessionStart, at open)."""
    if not runs:
        return
    # lazy: the hook runner, only when hooks are configured
    from agent_ls.agent.hooks import hook_ran
    from agent_ls.agent.tool_runner import emit

    for run in runs:
        await emit(sink, hook_ran(run))


def _hook_report(sink: EventSink | None) -> Any:
    """Each hook run as a ``hook`` event (the chat's hook line; the terminal prints it, ACP
    sends it as a tool call of its own)."""
    # lazy: the hook runner, only when hooks are configured
    from agent_ls.agent.hooks import reporter

    return reporter(sink)


async def _blocked(sink: EventSink | None, message: str) -> TurnResult:
    """A turn a hook stopped before it began: said as the turn's error."""
    # lazy: +2 modules, ~8 ms at start-up
    from agent_ls.agent.events import TurnError, TurnFinished, UsageReport
    from agent_ls.agent.session import TurnResult
    from agent_ls.agent.tool_runner import emit

    error = TurnError("hook_blocked", message)
    await emit(sink, error)
    await emit(sink, TurnFinished("error", UsageReport(), 0, ""))
    return TurnResult("error", "", UsageReport(), 0, error)
