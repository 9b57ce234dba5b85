"""A chat session and its turn loop.

One turn: refresh the tool set (the single writer for MCP changes), stream the model's reply
through litellm, run the tool calls it asked for (read-only ones from one response
concurrently, the others in order, each through the permission gate), feed the results back,
and repeat until the model stops or the step limit is reached. Every completed message is
written to the session store as it completes. Cancelling the awaiting task stops the stream
and the running tool calls (MCP calls send notifications/cancelled) and leaves the history
consistent: every tool call gets a result.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections.abc import Awaitable, Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import attrs

from agent_ls.agent.context import CLEARABLE_CHARS, Compaction, Compactor, CompactState, ContextTooLarge
from agent_ls.agent.editor.changes import CallContext, ChangeStore, Report, current_call
from agent_ls.agent.events import (
    ContextCompacted,
    Event,
    EventSink,
    FileChange,
    PlanUpdated,
    TextDelta,
    ThinkingDelta,
    TurnError,
    TurnFinished,
    TurnStarted,
    UsageReport,
)
from agent_ls.agent.history import repair_history, restore_loaded_tools
from agent_ls.agent.hooks import Hooks, reporter
from agent_ls.agent.llm import LLMConfig, LLMError, ToolCallAcc, check_credentials, stream_completion
from agent_ls.agent.plan import PlanEntry, current_plan_listener, plan_from_json, plan_to_json
from agent_ls.agent.prompt import FrozenPrompt, dynamic_text, system_messages, tool_definitions
from agent_ls.agent.store import SessionStore, ToolRun
from agent_ls.agent.titles import title_in_background
from agent_ls.agent.tool_runner import CANCELLED_RESULT, Gate, ToolCall, ToolObserver, ToolRunner
from agent_ls.agent.tool_runner import emit as _emit
from agent_ls.agent.tools.output_store import DEFAULT_PAGE_CHARS, READ_OUTPUT, OutputStore, ReadOutputTool
from agent_ls.agent.tools.registry import ToolRegistry
from agent_ls.core.tools import Capability, Tool, ToolResult, cap_text

log = logging.getLogger(__name__)


@attrs.frozen
class TurnResult:
    stop_reason: str
    text: str
    usage: UsageReport
    steps: int
    error: TurnError | None = None


class _CompactionDue(Exception):
    """A request sent with its count (:meth:`Session._stream_step`) was not sent: it passes the
    compaction threshold."""

    def __init__(self, tokens: int) -> None:
        super().__init__(f"the request is {tokens} tokens: a compaction is due")
        self.tokens = tokens


def _parse_arguments(raw: str) -> dict[str, Any] | str:
    if not raw.strip():
        return {}
    try:
        value = json.loads(raw)
    except json.JSONDecodeError as e:
        return f"the arguments are not valid JSON ({e.msg} at position {e.pos})"
    if not isinstance(value, dict):
        return "the arguments must be a JSON object"
    return value


class Session:
    """A conversation with the agent, persisted message by message."""

    compactor: Compactor
    hooks: Hooks | None = None
    """The tool hooks its calls run through (set by whoever builds the session: :mod:`agent_ls.agent.hooks`)."""

    @property
    def llm(self) -> LLMConfig:
        """The session's model; a front end may change it between (or within) turns."""
        return self._llm

    @llm.setter
    def llm(self, value: LLMConfig) -> None:
        self._llm = value
        if "compactor" in self.__dict__:  # the window and the tokenizer follow the model
            self.compactor.use(value)

    def __init__(
        self,
        *,
        llm: LLMConfig,
        registry: ToolRegistry,
        gate: Gate | None = None,
        roots: Sequence[Path] = (),
        store: SessionStore | None = None,
        session_id: str | None = None,
        max_steps: int = 25,
        extra_instructions: str = "",
        outputs: OutputStore | None = None,
        changes: ChangeStore | None = None,
        title_llm: LLMConfig | None = None,
        context_window: int | None = None,
        compact_at: float | None = None,
        compact_llm: LLMConfig | None = None,
        tool_observers: Sequence[ToolObserver] = (),
    ) -> None:
        """``outputs``: where oversized tool output is kept (default: the store of the
        registry's ``read_output`` tool, see :meth:`_page`). ``context_window``, ``compact_at``
        and ``compact_llm``: ``agent.contextWindow``, ``agent.compactAt`` and the model of
        ``agent.compactModel`` (:mod:`agent_ls.agent.context`)."""
        self.llm = llm
        self.tool_observers = tuple(tool_observers)
        """Told around each tool call that runs (:class:`agent_ls.agent.tool_runner.ToolObserver`)."""
        self.title_llm = title_llm
        """The model that titles the session after its first turn (:mod:`agent_ls.agent.titles`)."""
        self.changes = changes
        """Where the file tools' changes are recorded (default: the session database's)."""
        self.owner_call: CallContext | None = None
        """A subagent's session: the parent's ``agent`` call it runs for. Its file changes are the
        parent's (reviewed, recorded and shown in the parent's turn: :attr:`CallContext.changes`)."""
        self.registry = registry
        self.gate = gate
        self.store = store
        self.max_steps = max_steps
        self.frozen = FrozenPrompt.build(list(roots), extra_instructions)
        self.history: list[dict[str, Any]] = []
        self.turns = 0
        self.reminders: list[str] = []
        self.plan: tuple[PlanEntry, ...] = ()
        """The model's plan (``update_plan``), kept with the session."""
        if store is not None:
            if session_id is None:
                session_id = store.create_session(model=llm.model).id
            else:
                self.history, added = repair_history(store.load_messages(session_id), session_id)
                for message in added:
                    store.append_message(session_id, message)
                restore_loaded_tools(self.history, self.registry.load)
                self.turns = sum(1 for m in self.history if m.get("role") == "user")
                self.plan = plan_from_json(store.load_plan(session_id))
        self.session_id = session_id or "memory"
        if outputs is None:
            reader = registry.get(READ_OUTPUT)
            outputs = reader.store if isinstance(reader, ReadOutputTool) else None
        self.outputs = outputs
        self.notices: list[str] = []
        """Problems to tell the user at the next turn (a corrupt persisted record)."""
        self.inbox: Callable[[], list[str]] | None = None
        """What happened in the background since the model's last request (a background command
        ended: :mod:`agent_ls.agent.jobs`), said to it with its next request (:meth:`_background_news`)."""
        self.provider_counted = False
        """The provider has reported a response's usage in this session: from then on the context
        meter shows the provider's count, never our estimate (see :meth:`_meter`)."""
        if outputs is not None:  # handles of an earlier run are never reused
            outputs.skip_handles_in(m.get("content") for m in self.history if m.get("role") == "tool")
            if store is not None and self.session_id != "memory" and outputs.backend is None:
                outputs.attach(store.outputs_for(self.session_id, outputs.max_chars))
                outputs.defer_saves = True  # written by _run_one in a worker thread, not on the loop
        self.compactor = Compactor(llm, window=context_window, compact_at=compact_at, compact_llm=compact_llm,
                                   outputs=outputs, state=self._load_compaction())

    def _load_compaction(self) -> CompactState:
        """The compacted view a resumed session continues from (a corrupt record: uncompacted,
        and the next compaction starts over; the user is told)."""
        if self.store is None or self.session_id == "memory":
            return CompactState()
        try:
            text = self.store.last_compaction(self.session_id)
            state = CompactState() if text is None else CompactState.from_json(text)
        except Exception as e:
            log.warning("session %s: the compaction record could not be read: %s", self.session_id, e)
            self.notices.append(f"the record of this session's last compaction could not be read ({e}); the "
                                "conversation will be compacted again as needed")
            return CompactState()
        if state.summary_upto > len(self.history):
            self.notices.append("the record of this session's last compaction does not match its history; "
                                "the conversation will be compacted again as needed")
            return CompactState()
        return state

    # history ---------------------------------------------------------------------------
    def _append(self, message: dict[str, Any]) -> None:
        self.history.append(message)
        if self.store is not None:
            try:
                self.store.append_message(self.session_id, message)
            except Exception:
                log.exception("could not persist a message")

    async def _append_async(self, message: dict[str, Any]) -> None:
        self.history.append(message)
        if self.store is not None:
            try:
                await asyncio.to_thread(self.store.append_message, self.session_id, message)
            except Exception:
                log.exception("could not persist a message")

    def build_request(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """The messages and tools of the next model call (exposed for tests and benchmarks)."""
        cache = self.llm.supports_cache_control
        dynamic = dynamic_text(self.registry.deferred_specs(), self.registry.server_instructions(),
                               [self.registry.skill_catalogue(), *self.reminders],
                               starting=self.registry.starting_servers())
        messages = system_messages(self.frozen, dynamic, cache_control=cache) + self.compactor.view(self.history)
        tools = tool_definitions(self.registry.visible_specs(), cache_control=cache)
        return messages, tools

    def _request_parts(self) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        messages, tools = self.build_request()
        return messages[: len(messages) - len(self.compactor.view(self.history))], tools

    async def _fit(self, sink: EventSink | None, reason: str = "auto", defer: bool = False) -> bool:
        """Compact the model's view when the next request needs it (before every request). A
        compaction of its own (not ``/compact``, whose hooks the conversation service runs)
        first runs the ``PreCompact`` hooks with trigger ``auto`` (:meth:`_pre_compact`).

        ``defer``: when part of the request is not counted yet (what the last tool step added),
        decide nothing now and say so (True): the count rides with the model request, which is
        sent only when no compaction is due (:meth:`_stream_step`), one round trip to the model
        host instead of a count and then the request."""
        system, tools = self._request_parts()
        if defer and reason == "auto" and self.compactor.tally(system, self.compactor.view(self.history), tools).items:
            return True
        ask = self._pre_compact(sink) if reason != "manual" else None
        done = await self.compactor.fit(self.history, system, tools, reason=reason, ask=ask)
        if done is not None:
            await self._compacted(done, sink)
        return False

    def _pre_compact(self, sink: EventSink | None) -> Callable[[], Awaitable[bool]] | None:
        """Asked once an automatic compaction is due: the ``PreCompact`` hooks (trigger ``auto``),
        each run a ``hook`` event; False when one blocks (honoured while the request fits)."""
        hooks = self.hooks
        if hooks is None or not hooks.has("PreCompact"):
            return None

        async def ask() -> bool:
            outcome = await hooks.pre_compact("auto", report=reporter(sink))
            return not outcome.blocked

        return ask

    async def _compacted(self, done: Compaction, sink: EventSink | None) -> None:
        if self.store is not None and self.session_id != "memory":
            try:
                await asyncio.to_thread(self.store.record_compaction, self.session_id, self.compactor.state.to_json())
            except Exception:
                log.exception("could not record a compaction")
        await _emit(sink, ContextCompacted(done.reason, done.cleared, done.summarized, done.handles,
                                           done.tokens_before, done.tokens_after, self.compactor.limits.window,
                                           done.note))

    async def compact(self, sink: EventSink | None = None) -> ContextCompacted | None:
        """``/compact``: clear every tool result seen and summarize the conversation now."""
        events: list[ContextCompacted] = []

        async def keep(event: Event) -> None:
            if isinstance(event, ContextCompacted):
                events.append(event)
            await _emit(sink, event)

        try:
            check_credentials(self.llm)
            await self.registry.before_prompt()
            await self._fit(keep, "manual")
        except (LLMError, ContextTooLarge) as e:
            await _emit(sink, TurnError("context_window" if isinstance(e, ContextTooLarge) else e.kind, str(e)))
            return None
        system, tools = self._request_parts()
        used = self.compactor.count(system, self.compactor.view(self.history), tools)
        # the provider has not seen the compacted view yet: our count, said to be one
        await _emit(sink, UsageReport(context_tokens=used, context_window=self.compactor.limits.window,
                                      context_source="estimate"))
        return events[-1] if events else None

    # the turn ----------------------------------------------------------------------------
    async def prompt(self, text: str, sink: EventSink | None = None) -> TurnResult:
        self.turns += 1
        await _emit(sink, TurnStarted(self.session_id, self.turns))
        usage = UsageReport()
        final_text = ""
        steps = 0
        try:
            check_credentials(self.llm)
            await self.registry.before_prompt()
            for notice in self.notices:
                await _emit(sink, ContextCompacted("notice", 0, 0, (), 0, 0, 0, notice))
            self.notices.clear()
            if self.outputs is not None and self.outputs.problem:
                await _emit(sink, ContextCompacted("notice", 0, 0, (), 0, 0, 0, self.outputs.problem))
                self.outputs.problem = None
            # what ended in the background goes before the prompt, in its message (never a user
            # message of its own: one user message per prompt, which rewind and resume count)
            news = self._background_news()
            user = {"role": "user", "content": f"{news}\n\n{text}" if news else text}
            system, tools = self._request_parts()
            self.compactor.check_message(user, system, tools)  # a message that can never fit is not kept
            await self._append_async(user)
            while True:
                if steps >= self.max_steps:
                    msg = f"stopped after {self.max_steps} steps (the step limit); ask again to continue"
                    await _emit(sink, TurnError("max_steps", msg))
                    await _emit(sink, TurnFinished("max_steps", usage, steps, final_text))
                    return TurnResult("max_steps", final_text, usage, steps)
                steps += 1
                if steps > 1:
                    await self.registry.before_prompt()
                try:
                    step_text, calls, step_usage = await self._step(sink)
                except LLMError as e:
                    if e.kind != "context_window":
                        raise
                    # the provider counts differently: compact hard once, retry once (never a loop)
                    await self._fit(sink, "overflow")
                    step_text, calls, step_usage = await self._stream_step(sink)
                step_usage = self._meter(step_usage)
                usage = usage + step_usage
                if step_usage != UsageReport():
                    await _emit(sink, step_usage)
                final_text = step_text or final_text
                if not calls:
                    await _emit(sink, TurnFinished("end", usage, steps, final_text))
                    if self.turns == 1 and self.title_llm is not None and self.store is not None:
                        title_in_background(self.title_llm, self.store, self.session_id, text)
                    return TurnResult("end", final_text, usage, steps)
                await self._run_calls(calls, sink)
        except (LLMError, ContextTooLarge) as e:
            err = TurnError(e.kind, e.message) if isinstance(e, LLMError) else TurnError("context_window", str(e))
            await _emit(sink, err)
            await _emit(sink, TurnFinished("error", usage, steps, final_text))
            return TurnResult("error", final_text, usage, steps, err)
        except asyncio.CancelledError:
            await asyncio.shield(_emit(sink, TurnFinished("cancelled", usage, steps, final_text)))
            raise

    def _background_news(self) -> str:
        """The :attr:`inbox`'s news (what ended in the background), worded for the model's next
        request: before the prompt at the start of a turn, after the step's last tool result within
        it (never a message of its own: the history keeps one user message per prompt)."""
        news = self.inbox() if self.inbox is not None else []
        if not news:
            return ""
        lines = "\n".join(f"- {n}" for n in news)
        return f"[Background jobs, not typed by the user:\n{lines}]"

    def _meter(self, usage: UsageReport) -> UsageReport:
        """``usage`` of a response with the context meter's figure: the provider's count of the
        request plus the answer when it reported one (issue 44: litellm's tokenizer counted 19%
        where the provider said 15%), else our count of the request plus the answer, marked as an
        estimate. Compaction still goes by our count (it decides before the request is sent)."""
        window = self.compactor.limits.window
        if usage.input_tokens:
            self.provider_counted = True
            return attrs.evolve(usage, context_tokens=usage.input_tokens + usage.output_tokens,
                                context_window=window, context_source="provider")
        if not self.compactor.last_tokens:
            return usage
        last = self.history[-1] if self.history else None
        answer = usage.output_tokens or (self.compactor.counter.message(last) if last is not None else 0)
        return attrs.evolve(usage, context_tokens=self.compactor.last_tokens + answer, context_window=window,
                            context_source="estimate")

    async def _step(self, sink: EventSink | None) -> tuple[str, list[ToolCallAcc], UsageReport]:
        """One model request, the model's view compacted first when it needs it. What the last
        tool step added is counted with the request itself (:meth:`_fit`'s ``defer``); when that
        count shows a compaction is due, the request was not sent: compact, then send it."""
        deferred = await self._fit(sink, defer=True)
        try:
            return await self._stream_step(sink, deferred)
        except _CompactionDue:
            await self._fit(sink)  # every part is counted now: decided here, as for any request
            return await self._stream_step(sink)

    async def _counted(self, used: int, sink: EventSink | None) -> None:
        """The request of ``used`` tokens is about to be sent: the meter before the first answer."""
        if not self.provider_counted:  # our count, said to be one
            await _emit(sink, UsageReport(context_tokens=used, context_window=self.compactor.limits.window,
                                          context_source="estimate"))

    async def _stream_step(self, sink: EventSink | None,
                           deferred: bool = False) -> tuple[str, list[ToolCallAcc], UsageReport]:
        """Stream one model request. ``deferred``: :meth:`_fit` left the decision to the count of
        what is not counted yet, which rides with the request (:class:`agent_ls.agent.token_count.CountFirst`
        against the compaction threshold); :class:`_CompactionDue` when the request was not sent."""
        messages, tools = self.build_request()
        system = len(messages) - len(self.history) + self.compactor.state.summary_upto
        view = messages[system:]
        tally = self.compactor.tally(messages[:system], view, tools)
        first = self.compactor.count_first(tally) if deferred and tally.items else None
        if first is None:
            used = self.compactor.settle(tally, view, self.compactor.counter.counts(tally.items))
            if used > self.compactor.limits.limit:  # never sent: the compaction before could not make room
                raise ContextTooLarge(used, self.compactor.limits)
            await self._counted(used, sink)
        text_parts: list[str] = []
        accs: dict[int, ToolCallAcc] = {}
        usage = UsageReport()
        due: int | None = None
        try:
            async for d in stream_completion(self.llm, messages, tools, first):
                if d.counted is not None:  # the first delta of a request sent with its count
                    used = self.compactor.settle(tally, view, d.counted.counts)
                    if not d.counted.sent:  # nothing follows
                        due = used
                        continue
                    await self._counted(used, sink)
                if d.reasoning:
                    await _emit(sink, ThinkingDelta(d.reasoning))
                if d.text:
                    text_parts.append(d.text)
                    await _emit(sink, TextDelta(d.text))
                if d.tool_index is not None:
                    acc = accs.setdefault(d.tool_index, ToolCallAcc())
                    if d.tool_id:
                        acc.id = d.tool_id
                    if d.tool_name and not acc.name:
                        acc.name = d.tool_name
                    acc.arguments += d.tool_args
                if d.usage is not None:
                    usage = d.usage
        except asyncio.CancelledError:
            # Keep what the user already saw; drop half-streamed tool calls (they never ran).
            partial = "".join(text_parts)
            if partial:
                self._append({"role": "assistant", "content": partial + "\n\n[interrupted by the user]"})
            raise
        if due is not None:
            raise _CompactionDue(due)
        calls = [accs[i] for i in sorted(accs)]
        for n, c in enumerate(calls):
            if not c.id:
                c.id = f"call_{self.turns}_{n}_{int(time.time() * 1000) % 100000}"
        text = "".join(text_parts)
        message: dict[str, Any] = {"role": "assistant", "content": text or None}
        if calls:
            message["tool_calls"] = [
                {"id": c.id, "type": "function", "function": {"name": c.name, "arguments": c.arguments or "{}"}}
                for c in calls
            ]
        await self._append_async(message)
        return text, calls, usage

    def _read_only(self, tool: Tool | None) -> bool:
        if tool is None or tool.spec.capability is not Capability.READ:
            return False
        return self.gate is None or self.gate.runs_without_asking(tool.spec)

    async def _run_calls(self, calls: list[ToolCallAcc], sink: EventSink | None) -> None:
        results: dict[str, ToolResult] = {}
        # Consecutive read-only calls run together; anything else runs alone, in order.
        groups: list[list[ToolCallAcc]] = []
        for c in calls:
            ro = self._read_only(self.registry.get(c.name))
            if ro and groups and groups[-1] and self._read_only(self.registry.get(groups[-1][0].name)):
                groups[-1].append(c)
            else:
                groups.append([c])
        written: set[str] = set()
        runner = self.runner()
        try:
            for group in groups:
                if len(group) == 1:
                    results[group[0].id] = await self._run_one(runner, group[0], sink)
                else:
                    outs = await asyncio.gather(*(self._run_one(runner, c, sink) for c in group))
                    for c, r in zip(group, outs, strict=True):
                        results[c.id] = r
                for c in group:  # each result is persisted as soon as its group completes
                    written.add(c.id)  # before the await: history is appended synchronously
                    message = self._tool_message(c, results[c.id])
                    if group is groups[-1] and c is group[-1] and (news := self._background_news()):
                        message["content"] += f"\n\n{news}"  # what ended meanwhile, with the step's last result
                    await self._append_async(message)
        except asyncio.CancelledError:
            for c in calls:
                if c.id not in written:
                    done = results.get(c.id)
                    self._append(self._tool_message(c, done or ToolResult.error(CANCELLED_RESULT)))
            raise

    @staticmethod
    def _tool_message(call: ToolCallAcc, result: ToolResult) -> dict[str, Any]:
        content = result.content
        if result.is_error and not content.startswith("Error"):
            content = "Error: " + content
        return {"role": "tool", "tool_call_id": call.id, "content": content}

    def _page(self, name: str, result: ToolResult, call_id: str = "") -> ToolResult:
        """One mechanism for every tool (built-in and MCP): a result longer than a page is kept
        whole in the output store and the model gets its first page and the handle to read on
        with ``read_output``. Without a store (or with ``read_output`` not offered) it is cut."""
        if name == READ_OUTPUT:  # already a page
            return result
        store = self.outputs
        if store is not None and self.registry.get(READ_OUTPUT) is not None:
            return store.keep(result, name, call_id, CLEARABLE_CHARS)
        page = store.page_chars if store is not None else DEFAULT_PAGE_CHARS
        content, cut = cap_text(result.content, page)
        if not cut:
            return result
        return attrs.evolve(result, content=content, truncated_chars=result.truncated_chars + cut)

    def _reporter(self, sink: EventSink | None) -> Report:
        """How the file tools report a change (:mod:`agent_ls.agent.editor.changes`): recorded in the
        session database with its texts, and sent to the sink as a ``file_change`` event."""

        async def report(change: FileChange, before: str | None, after: str | None, notify: bool) -> None:
            if self.store is not None and self.session_id != "memory":
                try:
                    if self.changes is None:
                        self.changes = await asyncio.to_thread(ChangeStore.for_path, self.store.path)
                    await asyncio.to_thread(self.changes.record, self.session_id, change, before, after)
                except Exception:
                    log.exception("could not record the change to %s", change.shown)
            if notify:
                await _emit(sink, change)

        return report

    def runner(self) -> ToolRunner:
        """The tool runner of this session's calls: its gate, its output store's pages, the context
        of its file and plan tools and its run records (:mod:`agent_ls.agent.tool_runner`)."""
        return ToolRunner(self.gate, self.session_id, shape=self._shape, record=self._record_run,
                          scope=self._call_scope, resolve=self.registry.resolve, missing=self.registry.missing,
                          observers=self.tool_observers, hooks=self.hooks)

    async def _run_one(self, runner: ToolRunner, call: ToolCallAcc, sink: EventSink | None) -> ToolResult:
        run = ToolCall(call.id, call.name, _parse_arguments(call.arguments))
        return (await runner.run(run, self.registry.get(call.name), sink)).result

    @contextlib.contextmanager
    def _call_scope(self, call: ToolCall, sink: EventSink | None) -> Iterator[None]:
        """What the file and plan tools read while they run: the call they belong to and where
        their changes and plans go."""
        token = current_call.set(CallContext(self.session_id, call.id, self.turns, self._reporter(sink),
                                             owner=self.owner_call))
        plan_token = current_plan_listener.set(lambda entries: self._set_plan(entries, sink))
        try:
            yield
        finally:
            current_plan_listener.reset(plan_token)
            current_call.reset(token)

    async def _shape(self, call: ToolCall, result: ToolResult) -> tuple[ToolResult, str | None]:
        """The result paged (:meth:`_page`), and the handle of the whole when it was stored."""
        paged = self._page(call.name, result, call.id)
        handle = self._stored_handle(result, paged)  # before any await: it reads the store's last output
        if self.outputs is not None and self.outputs.defer_saves:
            await asyncio.to_thread(self.outputs.flush)
        return paged, handle

    def _stored_handle(self, whole: ToolResult, paged: ToolResult) -> str | None:
        """The output store's handle of ``whole`` when :meth:`_page` stored it (the chat offers
        the full output through it)."""
        store = self.outputs
        if paged is whole or store is None or store.last is None or self.registry.get(READ_OUTPUT) is None:
            return None
        return store.last.handle  # _page stored it just now (no await in between)

    async def _set_plan(self, entries: tuple[PlanEntry, ...], sink: EventSink | None) -> None:
        """The model's new plan (:mod:`agent_ls.agent.plan`): kept, stored, sent to the front end."""
        self.plan = entries
        if self.store is not None and self.session_id != "memory":
            try:
                await asyncio.to_thread(self.store.set_plan, self.session_id, plan_to_json(entries))
            except Exception:
                log.exception("could not store the plan")
        await _emit(sink, PlanUpdated(entries))

    async def _record_run(self, run: ToolRun) -> None:
        """Keep the server, duration and outcome of a call next to the history (the chat's tool
        cards on resume); never sent to the model."""
        if self.store is not None and self.session_id != "memory":
            try:
                await asyncio.to_thread(self.store.record_tool_run, self.session_id, run)
            except Exception:
                log.exception("could not record the run of %s", run.name)
