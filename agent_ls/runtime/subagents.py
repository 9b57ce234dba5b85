"""Subagents (issue 42): the built-in ``agent`` tool hands a task to a child conversation.

A child is a session the conversation service builds next to its parent's (:func:`attach`
gives every session the service builds its :class:`AgentTool`):

- its own history (the parent's is not copied), its own system prompt (the definition's prompt
  where the parent has agent-ls's identity, then the same instructions, workspace and project
  instructions), its own output store, context accounting and compaction;
- its own tool set, which only narrows the parent's (the tools the parent's registry offers,
  then the definition's ``tools`` / ``disallowedTools``; ``explore`` keeps the tools that read);
  no ``agent`` tool of its own (depth 1), unless its definition's ``maxDepth`` lets it start
  subagents (never deeper than every agent above it allows, at most ``MAX_DEPTH``): then its
  children are built the same way, their questions asked through its own (one at a time, named
  by the whole chain);
- the parent's permission rules and "allow for this session" grants (one set, shared: what the
  user allows for the session in a child's question holds for the parent too), the same sandbox,
  the same tool hooks and observers (checkpoints: the parent's call waited for the prompt's
  checkpoint before any child started, so a child's changes land in it);
- its questions go to the same front end's :class:`~agent_ls.runtime.questions.Questions`, with
  the agent's name and the task's description (:attr:`ApprovalRequest.agent`, and said first in
  the reason every front end shows), under the parent's session id; questions of children that
  run at once are asked one at a time (a lock per parent session); never answered in the user's
  place.

The model may call ``agent`` several times in one step: it is a tool that only reads (the
delegation itself changes nothing; each of the child's calls is gated on its own), so the turn
loop runs those calls together, and a semaphore per parent session lets
``agent.maxParallelAgents`` (3) run at once; the others wait for a slot. Cancelling the parent's
turn cancels the calls, and so every child. A child's events reach the parent's sink as
:class:`~agent_ls.agent.events.SubagentEvent` (the front ends nest them in the ``agent`` call's
card), and its tool calls as progress lines of that card. The result is the child's final answer
and a handle to its whole transcript in the parent's output store (``read_output``).
"""

from __future__ import annotations

import asyncio
import inspect
import itertools
import json
import logging
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from agent_ls.agent.events import (
    ApprovalRequested,
    Event,
    EventSink,
    SubagentEvent,
    TurnFinished,
    UsageReport,
    tool_events,
    tool_progress,
)
from agent_ls.agent.tool_runner import emit
from agent_ls.config.agents import GENERAL, MAX_DEPTH, AgentCatalog, AgentDefinition
from agent_ls.config.globs import name_matches
from agent_ls.core.tools import Capability, ToolResult, ToolSpec
from agent_ls.core.visible import visible

if TYPE_CHECKING:
    import mcp_types as types

    from agent_ls.agent.config import AgentSettings
    from agent_ls.agent.context import TokenCounter
    from agent_ls.agent.editor.changes import CallContext
    from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, SessionScope
    from agent_ls.agent.sampling import SamplingAnswer, SamplingRequest
    from agent_ls.agent.session import Session, TurnResult
    from agent_ls.agent.tool_runner import ToolObserver
    from agent_ls.config.entries import ServerConfig
    from agent_ls.config.trust import WorkspaceTrustInfo
    from agent_ls.runtime.front import FrontEnd
    from agent_ls.runtime.questions import Questions, TrustAnswer

log = logging.getLogger("agent_ls.runtime")


class Service(Protocol):
    """What a child needs of the conversation service (:class:`agent_ls.runtime.conversations.Conversations`)."""

    tool_observers: list[ToolObserver]

    def agent_settings(self) -> AgentSettings: ...

    def roots(self) -> list[Path]: ...


AGENT_TOOL = "agent"
ALWAYS_OFFERED = ("read_output",)
"""Tools every child keeps whatever its list says (``read_output`` pages its own long results)."""
_ids = itertools.count(1)
RECORD_SUFFIX = "#subagent"
"""The output store keeps a child's record (for the chat on resume) under its agent call's id + this."""
RESULT_CHARS = 500
"""How much of each child call's result its record keeps."""


class ChildQuestions:
    """The front end's questions as a child asks them: each approval names the agent and its task
    and is asked under the parent's session, one question of the parent's children at a time
    (``lock``); the other questions go to the front end unchanged."""

    def __init__(self, questions: Questions, parent_id: str, label: str, lock: asyncio.Lock) -> None:
        self.questions = questions
        self.parent_id = parent_id
        self.label = label
        self.lock = lock

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer | SessionScope:
        asked = attrs.evolve(request, session_id=self.parent_id, agent=self.label,
                             reason=f"subagent {self.label}: {request.reason}")
        async with self.lock:
            return await self.questions.approve(asked)

    async def trust_server(self, config: ServerConfig) -> TrustAnswer | None:
        return await self.questions.trust_server(config)

    async def trust_workspace(self, info: WorkspaceTrustInfo) -> TrustAnswer | None:
        return await self.questions.trust_workspace(info)

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        async with self.lock:
            return await self.questions.elicit(server, params)

    async def sampling_consent(self, request: SamplingRequest) -> SamplingAnswer | str:
        async with self.lock:
            return await self.questions.sampling_consent(request)


def _describe(catalog: AgentCatalog) -> str:
    lines = ["Hand a task to a subagent: a fresh conversation with its own context that works on it and "
             "answers with what it found or did (only that answer comes back, with a handle to its whole "
             "transcript). Use it for searches and investigations that would fill your context, or for "
             "independent sub-tasks; call it several times in one step to run them in parallel. Give the "
             "subagent everything it needs in `prompt`: it does not see this conversation.",
             "", "Agents:"]
    lines += [f"- {a.name}: {a.description}" for a in catalog.agents]
    return "\n".join(lines)


def agent_spec(catalog: AgentCatalog) -> ToolSpec:
    """The ``agent`` tool as the model sees it: the agents' names and descriptions in its description."""
    names = catalog.names()
    return ToolSpec(
        name=AGENT_TOOL, description=_describe(catalog),
        input_schema={"type": "object", "properties": {
            "agent": {"type": "string", "enum": names, "description": f"which agent (default {GENERAL!r})"},
            "description": {"type": "string", "description": "the task in 3-6 words, shown to the user"},
            "prompt": {"type": "string", "description": "the task, with everything the subagent needs to know"},
        }, "required": ["description", "prompt"], "additionalProperties": False},
        capability=Capability.READ)


def admits(definition: AgentDefinition, parent: Callable[[str], bool], *,
           nested: bool = False) -> Callable[[ToolSpec], bool]:
    """Which tools a child of ``definition`` may have: those the parent has (``parent``: by name),
    narrowed by the definition (``explore``: tools that read only); the ``agent`` tool only when
    the child may start subagents of its own (``nested``) and its tool list names it."""

    def named(spec: ToolSpec, patterns: tuple[str, ...]) -> bool:
        return any(name_matches(spec.name, p) for p in patterns)

    def admit(spec: ToolSpec) -> bool:
        if spec.name == AGENT_TOOL:
            return nested and not named(spec, definition.disallowed) and (
                definition.tools is None or named(spec, definition.tools))
        if not parent(spec.name):
            return False
        if definition.read_only and spec.capability is not Capability.READ:
            return False
        if named(spec, definition.disallowed):
            return False
        return definition.tools is None or spec.name in ALWAYS_OFFERED or named(spec, definition.tools)

    return admit


def child_prompt(parent_text: str, definition: AgentDefinition) -> str:
    """The child's frozen prompt: the definition's prompt in place of agent-ls's identity."""
    from agent_ls.agent.prompt import IDENTITY

    body = parent_text[len(IDENTITY):] if parent_text.startswith(IDENTITY) else "\n\n" + parent_text
    return definition.prompt.strip() + body


def transcript_text(definition: AgentDefinition, description: str, history: list[dict[str, Any]]) -> str:
    """The child's conversation as text (kept in the parent's output store)."""
    out = [f"# Subagent {definition.name}: {description}"]
    for m in history:
        role = m.get("role")
        if role == "user":
            out.append(f"\n## Task\n{m.get('content') or ''}")
        elif role == "assistant":
            if m.get("content"):
                out.append(f"\n## {definition.name}\n{m['content']}")
            for c in m.get("tool_calls") or []:
                fn = c.get("function") or {}
                out.append(f"\n-> {fn.get('name')}({fn.get('arguments') or ''})  [{c.get('id')}]")
        elif role == "tool":
            out.append(f"<- [{m.get('tool_call_id')}]\n{m.get('content') or ''}")
    return "\n".join(out)


class AgentTool:
    """The ``agent`` tool of one parent session (see the module docstring)."""

    def __init__(self, service: Service, parent: Session, front: FrontEnd, host: Any,
                 agent: AgentSettings, *, depth: int = 1, limit: int = MAX_DEPTH) -> None:
        self.service = service
        self.depth = depth
        """The depth of the children it starts (the conversation's session's children: 1)."""
        self.limit = limit
        """The deepest a child of a child may go (what the agents above it allow: ``maxDepth``)."""
        """Where the settings, the roots and the tool observers come from."""
        self.parent = parent
        self.front = front
        self.host = host
        self.catalog = agent.agents
        self.slots = asyncio.Semaphore(max(1, agent.max_parallel_agents))
        self.asking = asyncio.Lock()
        self.running = 0
        self._counters: dict[str, TokenCounter] = {}
        self._spec = agent_spec(self.catalog)

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, arguments: dict[str, Any]) -> ToolResult:
        name = arguments.get("agent") or GENERAL
        prompt, description = arguments.get("prompt"), arguments.get("description") or ""
        if not isinstance(name, str) or not isinstance(description, str):
            return ToolResult.error("agent: `agent` and `description` must be strings")
        if not isinstance(prompt, str) or not prompt.strip():
            return ToolResult.error("agent: `prompt` (the task) is required")
        definition = self.catalog.get(name)
        if definition is None:
            return ToolResult.error(f"agent: there is no agent named {visible(name)!r}; the agents are "
                                    f"{', '.join(self.catalog.names())}")
        description = description.strip() or prompt.strip().splitlines()[0][:60]
        from agent_ls.agent.editor.changes import current_call

        scope = current_call.get()
        events, progress = tool_events.get(), tool_progress.get()

        async def say(message: str) -> None:
            if progress is not None:
                out = progress(message)
                if inspect.isawaitable(out):
                    await out

        if self.slots.locked():
            await say(f"{name}: waiting for a free slot ({self.running} subagents running, "
                      "agent.maxParallelAgents)")
        async with self.slots:
            self.running += 1
            try:
                return await self._run(definition, description, prompt, scope, events, say)
            finally:
                self.running -= 1

    async def _run(self, definition: AgentDefinition, description: str, prompt: str, scope: CallContext | None,
                   events: Callable[[Event], Awaitable[None]] | None,
                   say: Callable[[str], Awaitable[None]]) -> ToolResult:
        child = await self.build(definition, description)
        child.owner_call = scope  # its file changes are this call's, in the parent's turn
        call_id = scope.call_id if scope is not None else ""
        if definition.tools is not None:
            await child.registry.before_prompt()  # (the MCP tools it may name)
        if definition.tools is not None and all(t.spec.name in ALWAYS_OFFERED for t in child.registry.visible()):
            return ToolResult.error(f"agent: {definition.name}'s tool list ({', '.join(definition.tools or ())}) "
                                    "names no tool this conversation has")
        label = definition.name

        async def sink(event: Event) -> None:
            if events is not None:
                await events(SubagentEvent(call_id, label, description, event))
            if isinstance(event, ApprovalRequested):
                await say(f"{label}: {event.name} waits for your approval")

        result = await self._turn(child, definition, prompt, sink, say)
        return self._result(definition, description, child, result, call_id)

    async def _turn(self, child: Session, definition: AgentDefinition, prompt: str, sink: EventSink,
                    say: Callable[[str], Awaitable[None]]) -> TurnResult:
        """The child's turn, then its ``SubagentStop`` hooks as ``Stop``'s for a conversation: a hook
        that blocks sends the child back to work with its reason (at most
        :data:`~agent_ls.agent.hooks.turns.MAX_STOP_CONTINUES` times)."""
        result: TurnResult = await child.prompt(prompt, sink)
        hooks = self.parent.hooks
        if hooks is None or not hooks.has("SubagentStop"):
            return result
        from agent_ls.agent.hooks.turns import MAX_STOP_CONTINUES, with_context

        async def report(run: Any) -> None:
            await say(f"[hook] {run.line()}")

        continues = 0
        while result.stop_reason == "end":
            data = {"agent_type": definition.name, "agent_id": child.session_id, "stop_hook_active": continues > 0,
                    "last_assistant_message": result.text}
            stopped = await hooks.run("SubagentStop", data, report=report)
            if not stopped.blocked or continues >= MAX_STOP_CONTINUES:
                break
            continues += 1
            result = await child.prompt(with_context(stopped.message, stopped.context), sink)
        return result

    async def build(self, definition: AgentDefinition, description: str) -> Session:
        """The child session of ``definition`` (see the module docstring)."""
        # lazy: the session layer (the parent's session has loaded it already)
        from agent_ls.agent.hooks import hooks_for
        from agent_ls.agent.permissions import PermissionGate
        from agent_ls.agent.prompt import FrozenPrompt
        from agent_ls.agent.session import Session
        from agent_ls.runtime.sessions import permission_gate, tool_registry

        agent = self.service.agent_settings()
        roots = self.service.roots()
        parent = self.parent
        front = self.front
        if front.questions is not None:
            front = attrs.evolve(front, questions=ChildQuestions(
                front.questions, parent.session_id, f"{definition.name} ({visible(description)})", self.asking))
        llm = (agent.llm_config(definition.model) if definition.model else None) or parent.llm
        registry = tool_registry(agent, roots, self.host, front)
        deepest = min(self.limit, definition.max_depth)
        nested = self.depth < deepest  # it may start subagents of its own (its definition's maxDepth)
        registry.admit = admits(definition, lambda n: parent.registry.get(n) is not None or n in ALWAYS_OFFERED,
                                nested=nested)
        gate = permission_gate(agent, front.questions, roots)
        if isinstance(parent.gate, PermissionGate):
            gate.session_allowed = parent.gate.session_allowed  # one set: the user's grants for the session
        child_id = f"{parent.session_id}/{definition.name}-{next(_ids)}"
        # built on the loop: no store to read (a worker thread's hand-off cost more than the few small
        # project files the prompt reads; scripts/bench_subagents.py)
        child = Session(llm=llm, registry=registry, gate=gate, roots=roots, session_id=child_id,
                        max_steps=definition.max_turns or agent.max_steps, extra_instructions=agent.instructions,
                        context_window=agent.context_window, compact_at=agent.compact_at,
                        compact_llm=agent.compact_llm(), tool_observers=self.service.tool_observers)
        child.frozen = FrozenPrompt(child_prompt(child.frozen.text, definition))
        counter = self._counters.get(llm.model)
        if counter is None:
            counter = self._counters[llm.model] = child.compactor.counter
        child.compactor.counter = counter  # the same prompt and tools are counted once, not per child
        child.hooks = hooks_for(agent.hooks, roots, child_id, agent.shell_env_passthrough, sandbox=agent.sandbox)
        if nested:
            child.registry.add_builtin(AgentTool(self.service, child, front, self.host, agent,
                                                 depth=self.depth + 1, limit=deepest))
        return child

    def _result(self, definition: AgentDefinition, description: str, child: Session, result: TurnResult,
                call_id: str) -> ToolResult:
        handle = None
        outputs = self.parent.outputs
        if outputs is not None:
            try:
                handle = outputs.put(transcript_text(definition, description, child.history), AGENT_TOOL,
                                     call_id).handle
            except Exception:
                log.exception("could not keep the transcript of subagent %s", definition.name)
        usage = result.usage
        tokens = usage.input_tokens + usage.output_tokens
        if outputs is not None:
            try:  # what the chat shows of it on resume (with_subagents)
                outputs.put(json.dumps(subagent_record(definition, description, child.history, tokens,
                                                       result.stop_reason), ensure_ascii=False),
                            AGENT_TOOL, call_id + RECORD_SUFFIX)
            except Exception:
                log.exception("could not keep the record of subagent %s", definition.name)
        facts = f"{result.steps} step(s), {tokens} tokens"
        where = f"; its whole transcript: read_output(handle=\"{handle}\")" if handle else ""
        if result.stop_reason == "error":
            why = result.error.message if result.error is not None else "it failed"
            return ToolResult.error(f"The subagent {definition.name} failed: {why}\n\n[subagent {definition.name}: "
                                    f"{facts}{where}]")
        text = result.text.strip() or "(the subagent gave no answer)"
        if result.stop_reason == "max_steps":
            text += f"\n\n(The subagent stopped at its limit of {child.max_steps} steps before it finished.)"
        return ToolResult(f"{text}\n\n[subagent {definition.name}: {facts}{where}]",
                          structured={"agent": definition.name, "usage": attrs.asdict(usage),
                                      "transcript": handle, "stopReason": result.stop_reason})


def attach(service: Service, session: Session, front: FrontEnd, host: Any, agent: AgentSettings) -> None:
    """Give ``session`` its ``agent`` tool (a session the service builds; never a child's)."""
    session.registry.add_builtin(AgentTool(service, session, front, host, agent))



def counting_subagents(sink: EventSink | None) -> EventSink | None:
    """``sink`` with the turn's subagents' tokens in its ``turn_finished``: counted in its usage and
    said apart (:attr:`TurnFinished.subagents`). Their context meters are their own: not summed."""
    if sink is None:
        return None
    used = [UsageReport()]

    async def counted(event: Event) -> None:
        if isinstance(event, SubagentEvent) and isinstance(event.event, TurnFinished):
            u = event.event.usage
            used[0] = used[0] + UsageReport(u.input_tokens, u.output_tokens, u.cache_read_tokens, u.cache_write_tokens)
        elif isinstance(event, TurnFinished) and used[0] != UsageReport():
            event = attrs.evolve(event, usage=event.usage + used[0], subagents=used[0])
            used[0] = UsageReport()
        await emit(sink, event)

    return counted


def subagent_record(definition: AgentDefinition, description: str, history: list[dict[str, Any]], tokens: int,
                    stop_reason: str) -> dict[str, Any]:
    """What the chat shows of a finished child when its session is resumed: its agent and task,
    its tool calls (arguments, outcome, the start of each result), its tokens and how it ended."""
    calls: list[dict[str, Any]] = []
    by_id: dict[str, dict[str, Any]] = {}
    for m in history:
        for c in m.get("tool_calls") or [] if m.get("role") == "assistant" else []:
            fn = c.get("function") or {}
            try:
                args = json.loads(fn.get("arguments") or "{}")
            except ValueError:
                args = {"arguments": fn.get("arguments")}
            call = {"callId": c.get("id"), "tool": fn.get("name"), "args": args if isinstance(args, dict) else {},
                    "isError": False, "result": None}
            calls.append(call)
            by_id[str(c.get("id"))] = call
        done = by_id.get(str(m.get("tool_call_id"))) if m.get("role") == "tool" else None
        if done is not None:
            content = str(m.get("content") or "")
            done["isError"] = content.startswith("Error")
            done["result"] = content[:RESULT_CHARS]
    return {"agent": definition.name, "description": description, "tokens": tokens, "stopReason": stop_reason,
            "calls": calls}


def with_subagents(messages: list[dict[str, Any]], outputs: Any) -> list[dict[str, Any]]:
    """The ``agent`` calls' results of a resumed history with ``run.subagent`` (their records,
    :func:`subagent_record`; copies, never sent to the model). ``outputs``: the session's output
    store (an :class:`~agent_ls.agent.tools.output_store.OutputStore`)."""
    out = []
    for m in messages:
        handle = outputs.handle_for(f"{m.get('tool_call_id')}{RECORD_SUFFIX}") if m.get("role") == "tool" else None
        found = outputs.get(handle) if handle is not None else None
        text = getattr(found, "text", None)
        if isinstance(text, str):
            try:
                record = json.loads(text)
            except ValueError:
                record = None
            if isinstance(record, dict):
                m = {**m, "run": {**(m.get("run") or {}), "subagent": record}}
        out.append(m)
    return out


def session_outputs(store: Any, session_id: str, live: Any) -> Any:
    """The output store of ``session_id``: the live session's, else one reading the stored outputs."""
    if live is not None and getattr(live, "outputs", None) is not None:
        return live.outputs
    from agent_ls.agent.tools.output_store import OutputStore

    outputs = OutputStore()
    outputs.attach(store.outputs_for(session_id, outputs.max_chars))
    return outputs
