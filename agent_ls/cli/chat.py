"""``agent-ls chat``: the agent in the terminal (one-shot or interactive), on the session the
editor's chat uses (:func:`agent_ls.runtime.sessions.build_session`); approvals and MCP sampling
consent are asked on the terminal."""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import signal
import sys
from typing import TYPE_CHECKING, Any

import attrs

from agent_ls.agent import events as ev
from agent_ls.agent.config import agent_settings
from agent_ls.agent.events import Event, compaction_text, context_meter
from agent_ls.agent.plan import UPDATE_PLAN
from agent_ls.agent.sampling import Sampler
from agent_ls.agent.store import SessionStore
from agent_ls.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    EXIT_USAGE,
    print_diagnostics,
    read_line,
    workspace_folders,
)
from agent_ls.cli.host import settle, start
from agent_ls.config.paths import user_data_dir
from agent_ls.core.visible import visible
from agent_ls.runtime.conversations import COMPACT_COMMAND
from agent_ls.runtime.sessions import FrontEnd, build_session

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agent_ls.agent.config import AgentSettings
    from agent_ls.agent.plan import PlanEntry
    from agent_ls.agent.session import Session
    from agent_ls.mcp.manager import MCPManager
    from agent_ls.runtime.questions import Questions


async def cmd_chat(args: argparse.Namespace) -> int:
    """A terminal chat on the same session code the editor uses."""
    folders = workspace_folders(args)
    host, settings = await settle(args)
    agent = agent_settings(settings)
    print_diagnostics(settings)  # every problem of the settings files at its place, as `agent-ls mcp status`
    store = SessionStore.for_workspace(user_data_dir(), folders[0])
    if args.list_sessions:
        for info in store.list_sessions():
            print(f"{info.id}  {info.message_count:>4} messages  {info.title or ''}")
        return EXIT_OK
    if args.delete_session:
        if not store.delete_session(args.delete_session):
            print(f"error: no session {args.delete_session!r} in this workspace", file=sys.stderr)
            return EXIT_USAGE
        print(f"Deleted session {args.delete_session}")
        return EXIT_OK
    session_id = args.resume
    if args.continue_last:
        sessions = store.list_sessions()
        session_id = sessions[0].id if sessions else None
    stored = store.get_session(session_id) if session_id else None
    # --model, else the resumed session's choice (/model, the editor's picker), else the default.
    llm = agent.llm_config(args.model or agent.session_model(stored.model if stored else None))
    if llm is None:
        print("error: no model is configured. Pass --model, set AGENT_LS_MODEL, or put \"model\" in "
              "settings.json (any litellm model, e.g. anthropic/claude-sonnet-4-5, or ollama/qwen3 with "
              "\"apiBase\": \"http://127.0.0.1:11434\").", file=sys.stderr)
        return EXIT_USAGE

    manager = await start(host, args)
    _attach_terminal_sampling(manager, host.questions, agent, llm.model)
    try:
        # approvals are asked on the terminal (TerminalQuestions, the host's questions)
        session = await build_session(agent, llm, roots=folders, front=FrontEnd(questions=host.questions),
                                      manager=manager, store=store, session_id=session_id)
        print(f"[session {session.session_id}, model {llm.model}]", file=sys.stderr)
        if session.plan:  # a resumed session's plan, as it was left
            print(plan_checklist(session.plan), file=sys.stderr, flush=True)

        started: set[str] = set()

        def sink(event: Event) -> None:
            if isinstance(event, ev.TextDelta):
                print(event.text, end="", flush=True)
            elif isinstance(event, ev.PlanUpdated):
                print(f"\n{plan_checklist(event.entries)}", file=sys.stderr, flush=True)
            elif isinstance(event, (ev.ToolCallStarted, ev.ToolCallFinished)) and event.name == UPDATE_PLAN and not (
                    isinstance(event, ev.ToolCallFinished) and event.is_error):
                pass  # the checklist says it
            elif isinstance(event, ev.ToolCallStarted) and event.call_id not in started:
                started.add(event.call_id)  # (started again when found once its server started: one line)
                print(f"\n{tool_line(event.name, event.arguments)}", file=sys.stderr, flush=True)
            elif isinstance(event, ev.ToolCallStarted):
                pass
            elif isinstance(event, ev.ToolCallProgress):
                print(f"[tool {visible(event.name)}: {visible(event.message)}]", file=sys.stderr, flush=True)
            elif isinstance(event, ev.ToolCallFinished):
                first = (event.content.strip().splitlines() or [""])[0]
                print(f"[tool {'error' if event.is_error else 'ok'}] {clip(first, RESULT_LINE_CHARS)}",
                      file=sys.stderr, flush=True)
            elif isinstance(event, ev.TurnError):
                print(f"\n[error] {event.message}", file=sys.stderr, flush=True)
            elif isinstance(event, ev.ContextCompacted):
                print(f"\n[{compaction_text(event)}]", file=sys.stderr, flush=True)
            elif isinstance(event, ev.TurnFinished):
                u = event.usage
                context = f", {context_meter(u)}" if u.context_window else ""
                print(f"\n[{event.stop_reason}; tokens in {u.input_tokens}, out {u.output_tokens}, "
                      f"cache read {u.cache_read_tokens}{context}]", file=sys.stderr, flush=True)

        async def compact() -> str:
            done = await session.compact(sink)  # the sink prints what it did
            if done is None:
                print(f"[{compaction_text(None)}]", file=sys.stderr, flush=True)
            return "end"

        async def one(prompt: str) -> str:
            loop = asyncio.get_running_loop()
            if prompt.strip() == COMPACT_COMMAND:
                return await compact()
            task = asyncio.ensure_future(session.prompt(prompt, sink))
            loop.add_signal_handler(signal.SIGINT, task.cancel)
            try:
                result = await task
                return result.stop_reason
            except asyncio.CancelledError:
                print("\n[cancelled]", file=sys.stderr)
                return "cancelled"
            finally:
                loop.remove_signal_handler(signal.SIGINT)

        if args.prompt:
            reason = await one(" ".join(args.prompt))
            return EXIT_OK if reason == "end" else EXIT_FAIL
        while True:
            line = await read_line("\n> ")
            if line is None or line.strip() in ("/exit", "/quit"):
                return EXIT_OK
            if line.strip() == "/model" or line.strip().startswith("/model "):
                print(model_command(agent, store, session, line.strip()[len("/model"):].strip()))
            elif line.strip():
                await one(line)
    finally:
        await manager.close()
        store.close()


def model_command(agent: AgentSettings, store: SessionStore, session: Session, name: str) -> str:
    """``/model``: the models the settings offer, the session's current one marked; ``/model
    NAME``: that one for the session's next requests, kept in its store (as the editor's picker,
    ``agent/setModel``)."""
    current = session.llm.model
    if not name:
        choices = agent.model_choices()
        lines = [f"{'*' if m == current else ' '} {m}{'  (default)' if m == agent.model else ''}" for m in choices]
        if current not in choices:
            lines.insert(0, f"* {current}  (--model)")
        hint = "/model NAME picks one" if len(choices) > 1 else 'list more in "models" in the settings'
        return "\n".join([*lines, f"({hint})"])
    try:
        model = agent.check_model_choice(name)
    except ValueError as e:
        return f"error: {e}"
    llm = agent.llm_config(model)
    if llm is None:
        return f"error: no settings for the model {model!r}"
    store.set_model(session.session_id, model)
    session.llm = llm
    return f"[model {model}]"


TOOL_LINE_CHARS = 200
"""The ``[tool]`` progress line shows this many characters of the arguments (the approval
shows them all)."""
RESULT_LINE_CHARS = 160
"""The ``[tool ok]`` / ``[tool error]`` line shows this much of the result's first line."""
_ESCAPE = re.compile(r"\\(?:u[0-9A-Fa-f]{4}|.)", re.DOTALL)
"""An escape in JSON or :func:`~agent_ls.core.visible.visible` text (``\\n``, ``\\\\``, ``\\u001B``):
a cut never splits one."""


def clip(text: str, limit: int) -> str:
    """``text`` with hidden characters escaped (:func:`~agent_ls.core.visible.visible`), cut after
    ``limit`` characters with a marker that says how many are left: ``… [+N characters]``."""
    shown = visible(text)
    if len(shown) <= limit:
        return shown
    cut = limit
    for m in _ESCAPE.finditer(shown):
        if m.start() >= limit:
            break
        if m.end() > limit:
            cut = m.start()
    head = shown[:cut]
    return f"{head}… [+{len(shown) - len(head)} characters]"


def tool_line(name: str, arguments: Any) -> str:
    """The ``[tool]`` progress line: the tool's name and its arguments as JSON, cut explicitly."""
    return f"[tool] {visible(name)} {clip(json.dumps(arguments, ensure_ascii=False), TOOL_LINE_CHARS)}"

_PLAN_MARKS = {"completed": "[x]", "in_progress": "[>]", "pending": "[ ]"}


def plan_checklist(entries: Sequence[PlanEntry]) -> str:
    """The agent's plan as a compact checklist (``[x]`` done, ``[>]`` in progress, ``[ ]`` to
    do), the steps' text escaped (:func:`~agent_ls.core.visible.visible`: no terminal control)."""
    if not entries:
        return "[plan] cleared"
    done = sum(e.status == "completed" for e in entries)
    lines = [f"[plan] {done} of {len(entries)} done"]
    lines += [f"  {_PLAN_MARKS.get(e.status, '[ ]')} {visible(e.content)}" for e in entries]
    return "\n".join(lines)


def _attach_terminal_sampling(manager: MCPManager, questions: Questions, agent: AgentSettings, model: str) -> None:
    """MCP sampling in ``agent-ls chat``: consent is asked on the terminal, like approvals;
    the chat's model (``--model`` included) answers unless ``agent.sampling.model`` is set."""
    settings = attrs.evolve(agent, model=model)
    manager.set_sampling_handler(Sampler(lambda: settings, questions.sampling_consent))
