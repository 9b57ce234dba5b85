"""``agent-ls chat``: the agent in the terminal (one-shot or interactive), a conversation of the
service the editor's chat and ACP use (:class:`~agent_ls.runtime.conversations.Conversations`:
sessions, the model and ``/model``, ``/compact``, the turn and its cancel on Ctrl+C; ``/jobs`` and
``/stop N``: :mod:`agent_ls.cli.jobs`); approvals
and MCP sampling consent are asked on the terminal."""

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
from agent_ls.agent.events import Event, compaction_text, context_meter, hook_line
from agent_ls.agent.plan import UPDATE_PLAN
from agent_ls.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    EXIT_USAGE,
    print_diagnostics,
    read_line,
)
from agent_ls.cli.host import ask_servers_first, chat_lifecycle, settle
from agent_ls.cli.jobs import announce_ends, jobs_command, stop_command
from agent_ls.cli.rewind import redo_command, rewind_command
from agent_ls.core.tasks import BackgroundTasks
from agent_ls.core.visible import visible
from agent_ls.runtime.conversations import NO_MODEL, ConversationError, Conversations
from agent_ls.runtime.front import FrontEnd
from agent_ls.runtime.model_library import ModelLibrary, share_model_host

if TYPE_CHECKING:
    from collections.abc import Sequence

    from agent_ls.agent.plan import PlanEntry
    from agent_ls.runtime.conversations import (
        Session,  # the session the service hands out
        TurnResult,
    )
    from agent_ls.runtime.turns import TurnInfo


async def cmd_chat(args: argparse.Namespace) -> int:
    """A terminal chat on the conversation service the editor's chat and ACP use."""
    host, settings = await settle(args)  # the folders' trust questions first: nothing of a folder runs before
    agent = agent_settings(settings)
    print_diagnostics(settings)  # every problem of the settings files at its place, as `agent-ls mcp status`

    # The model library (the user's warm model host, or litellm imported here) loads from now on
    # in the background: the prompt is read meanwhile, and a turn waits for it (issue 46). The
    # MCP host starts in the background too, as in ACP: the first request does not wait for it.
    share_model_host()
    tasks = BackgroundTasks("chat")
    library = ModelLibrary(lambda: attrs.evolve(agent, model=args.model) if args.model else agent, tasks)
    lifecycle = chat_lifecycle(host, library, tasks)
    # approvals are asked on the terminal (TerminalQuestions, the host's questions)
    conversations = lifecycle.conversations(settings=lambda: agent,
                                            front=lambda: FrontEnd(questions=host.questions))
    try:
        if args.list_sessions:
            for info in await conversations.sessions():
                print(f"{info.id}  {info.message_count:>4} messages  {info.title or ''}")
            return EXIT_OK
        if args.delete_session:
            if not await conversations.delete(args.delete_session):
                print(f"error: no session {args.delete_session!r} in this workspace", file=sys.stderr)
                return EXIT_USAGE
            print(f"Deleted session {args.delete_session}")
            return EXIT_OK
        library.prewarm()
        session_id = await conversations.latest() if args.continue_last else args.resume
        # --model, else the resumed session's choice (/model, the editor's picker), else the default.
        model = args.model or (await conversations.models(session_id)).current
        if model is None:
            print(f"error: {NO_MODEL}; or pass --model", file=sys.stderr)
            return EXIT_USAGE
        # MCP sampling: the chat's model (--model included) answers unless agent.sampling.model is set
        host.sampling, host.sampling_settings = True, lambda: attrs.evolve(agent, model=model)
        await ask_servers_first(lifecycle)  # before the host and the first prompt: the terminal is free
        await lifecycle.settings_loaded()  # (starts the host in the background)
        if args.wait > 0 and not lifecycle.idle:  # --wait: the servers' first connection, bounded
            await (await lifecycle.ensure_manager()).wait_ready(timeout=args.wait)

        async def opened() -> Session:
            await library.ready()  # first: the session counts its tokens with the model library
            session = await conversations.open(session_id, args.model)
            assert session is not None  # required: NoModel otherwise
            return session

        return await _chat(args, conversations, asyncio.ensure_future(opened()), lifecycle.quiet)
    except ConversationError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    finally:
        try:
            await conversations.close()
        finally:
            await lifecycle.shutdown()


WAIT_QUIETLY = 0.3
"""Seconds a prompt waits for the model library before :data:`WAITING` is said (a warm model host
answers in a few milliseconds)."""
WAITING = "[starting the model library (first prompt only)…]"
"""Said on stderr while a prompt waits for the model library: in the interactive chat (which took
the prompt meanwhile), and in a one-shot run on a terminal (not into a pipe or a file)."""


async def _chat(args: argparse.Namespace, conversations: Conversations, opening: asyncio.Future[Session],
                quiet: asyncio.Event) -> int:
    """The one-shot prompt of ``args``, or prompts read from the terminal until ``/exit``. The
    session is ``opening`` (after the model library loaded): the interactive chat takes its first
    prompt meanwhile, from the first instant. ``quiet`` is set once the first model request has
    gone out (:class:`QuietOnceSent`) or the chat waits for its user: the MCP host starts then."""
    first: str | None = None
    if not args.prompt and not opening.done():
        first = await read_prompt(quiet)
        if first is None or first.strip() in ("/exit", "/quit"):
            opening.cancel()
            return EXIT_OK
    if first is not None or sys.stderr.isatty():
        await asyncio.wait({opening}, timeout=WAIT_QUIETLY)
        if not opening.done():
            print(WAITING, file=sys.stderr, flush=True)
    session = await opening
    session_id = session.session_id
    print(f"[session {session_id}, model {session.llm.model}]", file=sys.stderr)
    if session.plan:  # a resumed session's plan, as it was left
        print(plan_checklist(session.plan), file=sys.stderr, flush=True)
    printer = TerminalPrinter()
    conversations.turn_observers.append(QuietOnceSent(quiet))
    announce_ends(conversations, session_id)

    roots = conversations.roots()

    async def one(prompt: str) -> str:
        loop = asyncio.get_running_loop()
        task = asyncio.ensure_future(conversations.prompt(session, prompt, printer))

        def interrupt() -> None:  # Ctrl+C: the turn ends (the service cancels it), the chat goes on
            if conversations.turn_running(session_id) is None:
                task.cancel()  # not started yet
            else:
                conversations.tasks.spawn(conversations.cancel(session_id), "cancel the turn")

        loop.add_signal_handler(signal.SIGINT, interrupt)
        printer.compacted = False
        try:
            result = await task
        except asyncio.CancelledError:
            print("\n[cancelled]", file=sys.stderr)
            return "cancelled"
        finally:
            loop.remove_signal_handler(signal.SIGINT)
            quiet.set()
        if result.stop_reason == "compacted" and not printer.compacted:
            print(f"[{result.text}]", file=sys.stderr, flush=True)  # nothing to compact: say so
        return result.stop_reason

    if args.prompt:
        reason = await one(" ".join(args.prompt))
        return EXIT_OK if reason in ("end", "compacted") else EXIT_FAIL
    while True:
        line, first = (first, None) if first is not None else (await read_prompt(quiet), None)
        if line is None or line.strip() in ("/exit", "/quit"):
            return EXIT_OK
        command = line.strip()
        if command == "/model" or command.startswith("/model "):
            print(await model_command(conversations, session_id, session.llm.model, command[len("/model"):].strip()))
        elif command == "/rewind" or command.startswith("/rewind "):
            print(await rewind_command(conversations, session_id, command[len("/rewind"):], roots))
        elif command == "/redo":
            print(await redo_command(conversations, session_id))
        elif command == "/rename" or command.startswith("/rename "):
            print(await rename_command(conversations, session_id, command[len("/rename"):].strip()))
        elif command == "/jobs":
            print(jobs_command(conversations, session_id))
        elif command == "/stop" or command.startswith("/stop "):
            print(await stop_command(conversations, session_id, command[len("/stop"):]))
        elif command:
            reopened = await conversations.open(session_id)  # rebuilt after a rewind of its history
            if reopened is not None:
                session = reopened
            await one(line)


async def read_prompt(quiet: asyncio.Event) -> str | None:
    """The next prompt from the terminal; after :data:`WAIT_QUIETLY` seconds of waiting for the
    user, ``quiet`` is set (the MCP host may start: the interpreter has nothing else to do)."""
    reading = asyncio.ensure_future(read_line("\n> "))
    if not quiet.is_set():
        await asyncio.wait({reading}, timeout=WAIT_QUIETLY)
        quiet.set()
    return await reading


@attrs.define
class QuietOnceSent:
    """A turn observer: the first model request has gone out (handed to the model host, or
    litellm's response began), so the MCP host's start goes on while the model thinks, instead of
    after its first output (the service says so at the model's first output too, if nothing did
    before: :func:`agent_ls.runtime.turns.request_watch`)."""

    quiet: asyncio.Event

    async def before_turn(self, turn: TurnInfo) -> None:
        pass

    def request_sent(self, turn: TurnInfo) -> None:
        self.quiet.set()

    async def after_turn(self, turn: TurnInfo, result: TurnResult | None) -> None:
        pass


class TerminalPrinter:
    """A turn's events on the terminal: the answer on stdout, the rest (tools, plan, usage,
    errors) on stderr, every text from the model or a tool escaped."""

    def __init__(self) -> None:
        self.started: set[str] = set()
        self.compacted = False
        """A compaction was printed (``/compact`` that did nothing says so itself)."""

    def __call__(self, event: Event) -> None:
        if isinstance(event, ev.SubagentEvent):
            self.subagent(event)
        elif isinstance(event, ev.TextDelta):
            print(event.text, end="", flush=True)
        elif isinstance(event, ev.PlanUpdated):
            print(f"\n{plan_checklist(event.entries)}", file=sys.stderr, flush=True)
        elif isinstance(event, (ev.ToolCallStarted, ev.ToolCallFinished)) and event.name == UPDATE_PLAN and not (
                isinstance(event, ev.ToolCallFinished) and event.is_error):
            pass  # the checklist says it
        elif isinstance(event, ev.ToolCallStarted) and event.call_id not in self.started:
            self.started.add(event.call_id)  # (started again when found once its server started: one line)
            print(f"\n{tool_line(event.name, event.arguments)}", file=sys.stderr, flush=True)
        elif isinstance(event, ev.ToolCallStarted):
            pass
        elif isinstance(event, ev.ToolCallProgress):
            print(f"[tool {visible(event.name)}: {visible(event.message)}]", file=sys.stderr, flush=True)
        elif isinstance(event, ev.ToolCallFinished):
            first = (event.content.strip().splitlines() or [""])[0]
            print(f"[tool {'error' if event.is_error else 'ok'}] {clip(first, RESULT_LINE_CHARS)}",
                  file=sys.stderr, flush=True)
            if (notice := ev.app_notice(event.app)) is not None:
                print(f"[app] {visible(notice)}", file=sys.stderr, flush=True)
        elif isinstance(event, ev.HookRan):
            print(visible(hook_line(event)), file=sys.stderr, flush=True)
        elif isinstance(event, ev.TurnError):
            print(f"\n[error] {event.message}", file=sys.stderr, flush=True)
        elif isinstance(event, ev.ContextCompacted):
            self.compacted = True
            print(f"\n[{compaction_text(event)}]", file=sys.stderr, flush=True)
        elif isinstance(event, ev.TurnFinished):
            u = event.usage
            context = f", {context_meter(u)}" if u.context_window else ""
            children = (f" (subagents: in {event.subagents.input_tokens}, out {event.subagents.output_tokens})"
                        if event.subagents is not None else "")
            print(f"\n[{event.stop_reason}; tokens in {u.input_tokens}, out {u.output_tokens}{children}, "
                  f"cache read {u.cache_read_tokens}{context}]", file=sys.stderr, flush=True)

    def subagent(self, wrapped: ev.SubagentEvent) -> None:
        """A subagent's tool calls and its end, indented under the ``agent`` call with its name
        (its answer is the call's result)."""
        event, who = wrapped.event, f"  [{visible(wrapped.agent)}]"
        if isinstance(event, ev.ToolCallStarted) and event.call_id not in self.started:
            self.started.add(event.call_id)
            print(f"{who} {tool_line(event.name, event.arguments)}", file=sys.stderr, flush=True)
        elif isinstance(event, ev.ToolCallFinished):
            first = (event.content.strip().splitlines() or [""])[0]
            print(f"{who} [tool {'error' if event.is_error else 'ok'}] {clip(first, RESULT_LINE_CHARS)}",
                  file=sys.stderr, flush=True)
        elif isinstance(event, ev.ToolCallProgress):
            print(f"{who} [tool {visible(event.name)}: {visible(event.message)}]", file=sys.stderr, flush=True)
        elif isinstance(event, ev.TurnError):
            print(f"{who} [error] {visible(event.message)}", file=sys.stderr, flush=True)
        elif isinstance(event, ev.TurnFinished):
            u = event.usage
            print(f"{who} [{event.stop_reason}; {event.steps} step(s), tokens in {u.input_tokens}, out "
                  f"{u.output_tokens}]", file=sys.stderr, flush=True)


async def model_command(conversations: Conversations, session_id: str, current: str, name: str) -> str:
    """``/model``: the models the settings offer, the session's current one (``current``)
    marked; ``/model NAME``: that one for the session's next requests, kept in its store (as the
    editor's picker, ``agent/setModel``)."""
    if not name:
        choice = await conversations.models(session_id)
        lines = [f"{'*' if m == current else ' '} {m}{'  (default)' if m == choice.default else ''}"
                 for m in choice.models]
        if current not in choice.models:
            lines.insert(0, f"* {current}  (--model)")
        hint = "/model NAME picks one" if len(choice.models) > 1 else 'list more in "models" in the settings'
        return "\n".join([*lines, f"({hint})"])
    try:
        picked = await conversations.set_model(session_id, name)
    except ConversationError as e:
        return f"error: {e}"
    return f"[model {picked.current}]"


async def rename_command(conversations: Conversations, session_id: str, title: str) -> str:
    """``/rename TITLE``: the session's name in every front end's list (``/rename`` alone clears it)."""
    kept = await conversations.rename(session_id, title)
    return f"[session named {visible(kept)!r}]" if kept else "[session name cleared]"


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
