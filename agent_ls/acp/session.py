"""One ACP session: a conversation of its folder (:class:`~agent_ls.runtime.conversations.Conversations`,
one per :class:`~agent_ls.acp.host.SessionHost`), its MCP host, approvals through
``session/request_permission`` and events as ``session/update``.

The service builds the agent's session as it does for ``agent-ls chat`` and the language server
(the settings of the folder, the built-in tools confined to the folder, the MCP manager's tools,
the permission gate, the per-workspace session store) and owns the turn slot, cancel,
``/compact``, the model choice and the transcript; this module translates them into ACP.
"""

from __future__ import annotations

import asyncio
import logging
import secrets
from pathlib import Path
from typing import TYPE_CHECKING, Any

from acp import RequestError
from acp.helpers import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_available_commands,
    update_tool_call,
)
from acp.schema import AvailableCommand, AvailableCommandInput, ToolCallUpdate, UnstructuredCommandInput

from agent_ls.acp import updates as U
from agent_ls.acp.files import AcpEditorFiles, with_editor_files
from agent_ls.acp.host import SessionHost, TrustQuestion
from agent_ls.acp.terminal import with_terminal
from agent_ls.agent import events as ev
from agent_ls.agent.events import compaction_text
from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, SessionScope
from agent_ls.core.tasks import BackgroundTasks
from agent_ls.core.visible import visible
from agent_ls.runtime.conversations import (
    COMPACT_COMMAND,
    BadChoice,
    Busy,
    ConversationError,
    Conversations,
    UnknownSession,
)

if TYPE_CHECKING:
    from collections.abc import Coroutine

    from agent_ls.runtime.sessions import FrontEnd

log = logging.getLogger("agent_ls.acp")

STOP_REASONS = {"end": "end_turn", "max_steps": "max_turn_requests", "cancelled": "cancelled"}


class AcpApprover:
    """The gate's approval handler: asks the client with the four ACP options.

    ``allow_always`` is the gate's "allow for session", one option per scope the gate offers
    (``Allow `git status` … for this session``; none for a protected file or a shell command the
    parser cannot account for); ``reject_always`` rejects the tool for the rest of the session
    without asking again.
    """

    def __init__(self, owner: AcpSession) -> None:
        self.owner = owner
        self.rejected: set[str] = set()

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer | SessionScope:
        call_id = request.call_id  # the tool call the client already shows (its tool_call update)
        spec = request.spec
        if spec.name in self.rejected:
            return ApprovalAnswer.DENY
        s = self.owner
        args = s.call_args.get(call_id, request.arguments)
        reason = visible(request.reason) + (f"\n\nProtected file: {visible(request.sensitive)}" if request.sensitive else "")
        command = args.get("command") if spec.source == "builtin" and spec.name == "bash" else None
        if isinstance(command, str):  # the title is shortened: the whole command, uncut, escaped
            reason = f"Command: {visible(command)}\n\n{reason}"
        tool_call = U.permission_tool_call(call_id, spec.name, args, spec, s.folder, reason, s.previews.get(call_id))
        options = U.permission_options(request.scopes)
        try:
            response = await s.conn.request_permission(session_id=s.id, tool_call=tool_call, options=options)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.warning("session/request_permission for %s failed (%s): rejected", spec.name, e)
            return ApprovalAnswer.DENY
        outcome = response.outcome
        option_id = getattr(outcome, "option_id", None) if outcome.outcome == "selected" else None
        kind = {o.option_id: o.kind for o in options}.get(option_id or "")
        if kind == "reject_always":
            self.rejected.add(spec.name)
        if kind not in ("allow_once", "allow_always"):
            return ApprovalAnswer.DENY
        await s.send(update_tool_call(call_id, status="in_progress"))
        if kind == "allow_once":
            return ApprovalAnswer.ALLOW_ONCE
        # allow_always: the scope its option names (the narrowest for plain "allow_always")
        scope = request.scope(option_id.partition(":")[2]) if option_id and ":" in option_id else None
        return scope if scope is not None else request.scopes[0]


class AcpSession:
    """One ACP session: a conversation of its folder's :class:`Conversations` (the host's),
    opened with this session's :class:`FrontEnd`; the turn slot, cancel, ``/compact``, the model
    and the transcript are the service's, translated here into ACP."""

    def __init__(self, conn: Any, folder: Path, host: SessionHost, client_fs: tuple[bool, bool],
                 terminal: bool = False) -> None:
        self.conn = conn
        self.folder = folder
        self.host = host
        self.conversations: Conversations = host.conversations
        self.id = ""
        self.files = AcpEditorFiles(conn, "", can_read=client_fs[0], can_write=client_fs[1])
        self.approver = AcpApprover(self)
        host.askers.append(self)
        self.front: FrontEnd | None = None
        self.call_args: dict[str, dict[str, Any]] = {}
        self.subagent_calls: dict[str, ev.SubagentEvent] = {}
        """The tool calls of subagents (their call id -> the event that started them)."""
        self.previews: dict[str, U.Preview] = {}
        """The whole-file change of each running file tool call (its diff)."""
        self.terminals: dict[str, str] = {}
        """The client terminal each running ``bash`` call runs in (call id -> terminal id)."""
        self.terminal = terminal
        """The client runs ``bash`` in its terminal (``clientCapabilities.terminal``)."""
        self.terminal_unavailable: str | None = None
        """Why the client's terminal is not used any more (it refused or did not answer)."""
        self.commands: dict[str, tuple[str, Any]] = {}
        self._commands_sent: list[str] | None = None
        self.tasks = BackgroundTasks("ACP session", log)
        self._title_sent: str | None = None
        self.options_sent: Any = None

    @property
    def session(self) -> Any:
        """The agent's session as built now (None: no model yet)."""
        return self.conversations.live(self.id)

    # building --------------------------------------------------------------------------------
    async def build(self, session_id: str | None) -> None:
        """Open the conversation (a stored one when ``session_id`` is given, else a new one).

        Without a model in the settings the session still exists (its id is the store's):
        the folder may set the model once the user trusts it, which is asked at the first
        prompt; the prompt fails with the reason if there is still none then.
        """
        try:
            if session_id is None:
                session_id = (await self.conversations.create()).id
            else:
                await self.conversations.info(session_id)
        except UnknownSession as e:
            raise RequestError.invalid_params({"sessionId": session_id,
                                               "details": f"no stored session {session_id!r} for {self.folder}"}
                                              ) from e
        self.id = session_id
        self.files.session_id = session_id
        self.front = self._front_end()
        await self.open(required=False)

    def _front_end(self) -> FrontEnd:
        """What this session gives its agent session: approvals through the host (asked by the
        session whose call it is), the client's files and, when it offers one, its terminal."""
        # lazy: the session layer (re2) +24 modules, ~50 ms at the ACP start-up
        from agent_ls.runtime.sessions import FrontEnd

        files = self.files

        def wrap(tools: list[Any], workspace: Any) -> list[Any]:
            tools = with_editor_files(tools, files, workspace)
            return with_terminal(tools, self) if self.terminal else tools

        return FrontEnd(questions=self.host, editor=files if (files.can_read or files.can_write) else None,
                        wrap_tools=wrap)

    async def open(self, *, required: bool) -> Any:
        """The agent's session on the current settings (rebuilt after a trust decision, with
        "allow for session" answers kept); without a model: None, or -32603 saying what to set
        when ``required``."""
        try:
            return await self.conversations.open(self.id, front=self.front, required=required)
        except ConversationError as e:
            raise request_error(e) from None

    def spawn(self, coro: Coroutine[Any, Any, Any], what: str) -> None:
        self.tasks.spawn(coro, what)

    async def close(self) -> None:
        if self in self.host.askers:
            self.host.askers.remove(self)
        await self.tasks.close()
        if self.id:
            await self.conversations.release(self.id)

    # updates ---------------------------------------------------------------------------------
    async def send(self, update: Any) -> None:
        try:
            await self.conn.session_update(session_id=self.id, update=update)
        except (ConnectionError, OSError) as e:
            log.info("session/update not sent: %s", e)

    async def replay_history(self) -> None:
        """The stored conversation as updates (``session/load``), then its plan."""
        transcript = await self.conversations.transcript(self.id)
        session = self.session
        specs = {t.spec.name: t.spec for t in session.registry.visible()} if session is not None else {}
        for update in U.history_updates(transcript.messages, self.folder, specs):
            await self.send(update)
        if transcript.plan:  # the stored plan, as the client last saw it
            await self.send(U.plan_update(transcript.plan))

    async def sink(self, event: Any) -> None:
        if isinstance(event, ev.SubagentEvent):
            # a subagent's tool calls are tool calls of the session too, titled with the agent's name
            # (ACP has no nesting yet: its subagent shapes are proposals); its text is its answer,
            # which comes back as the result of the agent call
            if isinstance(event.event, (ev.ToolCallStarted, ev.ToolCallProgress, ev.ToolCallFinished)):
                self.subagent_calls.setdefault(event.event.call_id, event)
                await self.sink(event.event)
                if isinstance(event.event, ev.ToolCallFinished):
                    self.subagent_calls.pop(event.event.call_id, None)
        elif isinstance(event, ev.TurnStarted):
            # the first message's title is stored by now: sent before the title model's (started
            # as the turn ends) can replace it in the store
            await self.publish_title()
        elif isinstance(event, ev.TextDelta):
            await self.send(update_agent_message_text(event.text))
        elif isinstance(event, ev.ThinkingDelta):
            await self.send(update_agent_thought_text(event.text))
        elif isinstance(event, ev.ToolCallStarted) and event.call_id in self.call_args:
            # found once its MCP server had started: the card gets its title and kind
            tool = self.session.registry.get(event.name)
            spec = tool.spec if tool is not None else None
            await self.send(update_tool_call(event.call_id, title=U.tool_title(event.name, event.arguments, spec),
                                             kind=U.tool_kind(event.name, spec)))
        elif isinstance(event, ev.ToolCallStarted):
            tool = self.session.registry.get(event.name)
            spec = tool.spec if tool is not None else None
            asks = spec is not None and self.session.gate.approval_reason(spec, event.arguments) is not None
            self.call_args[event.call_id] = event.arguments
            preview = await self._preview(event.name, event.arguments, spec)
            if preview is not None:
                self.previews[event.call_id] = preview
            update = U.tool_started(event.call_id, event.name, event.arguments, spec, self.folder,
                                    "pending" if asks else "in_progress", preview)
            if (child := self.subagent_calls.get(event.call_id)) is not None:
                update.title = f"{child.agent}: {update.title}"
                update.field_meta = {"agentLs": {"subagent": {"agent": child.agent, "description": child.description,
                                                              "parentToolCallId": child.call_id}}}
            await self.send(update)
        elif isinstance(event, ev.ToolCallProgress):
            await self.send(U.tool_progress(event.call_id, event.message))
        elif isinstance(event, ev.PlanUpdated):
            await self.send(U.plan_update(event.entries))
        elif isinstance(event, ev.ToolCallFinished):
            args = self.call_args.pop(event.call_id, {})
            await self.send(U.tool_finished(event.call_id, event.name, args, self.folder, event.is_error,
                                            event.content, self.previews.pop(event.call_id, None),
                                            self.terminals.pop(event.call_id, None), ev.app_notice(event.app)))
        elif isinstance(event, ev.UsageReport) and event.context_window:
            await self.send(U.usage_update(event.context_tokens, event.context_window, event.context_source))
        elif isinstance(event, ev.ContextCompacted) and event.note:
            await self.send(update_agent_message_text(f"\n\n[{compaction_text(event)}]\n\n"))
        elif isinstance(event, ev.HookRan):
            await self.send(U.hook_call(f"hook-{secrets.token_hex(6)}", event))

    async def _preview(self, name: str, args: dict[str, Any], spec: Any) -> U.Preview | None:
        """A built-in file tool's change as whole texts (the editor's text when it has the file)."""
        if spec is None or spec.server is not None:
            return None
        path = U.preview_path(name, args, self.folder)
        if path is None:
            return None
        before = await self.files.current_text(path)
        if before is None and await asyncio.to_thread(path.exists):
            return None  # a file not to show (binary, too large): no diff rather than a wrong one
        return U.edit_preview(name, args, path, before)

    # model choice (session config options) ------------------------------------------------------
    async def config_options(self) -> list[Any] | None:
        """The session's config options: the model, a select over the settings' ``model`` and
        ``models`` (None when no model is configured)."""
        choice = await self.conversations.models(self.id)
        return U.model_options(tuple(choice.models), choice.default, choice.current)

    async def set_config_option(self, config_id: str, value: Any) -> list[Any]:
        """Apply ``session/set_config_option``: the model for the next request of this session,
        kept with it in the store. Unknown options and values are invalid params."""
        if config_id != U.MODEL_OPTION:
            raise RequestError.invalid_params({"configId": config_id,
                                               "details": f"unknown config option {config_id!r} (there is "
                                                          f"{U.MODEL_OPTION!r})"})
        if not isinstance(value, str):
            raise RequestError.invalid_params({"configId": config_id, "value": value,
                                               "details": "the model option takes a model name (a string)"})
        try:
            choice = await self.conversations.set_model(self.id, value)
        except BadChoice as e:
            raise RequestError.invalid_params({"configId": config_id, "value": value, "details": str(e)}) from None
        except ConversationError as e:
            raise request_error(e) from None
        options = U.model_options(tuple(choice.models), choice.default, choice.current) or []
        self.options_sent = options
        return options

    async def publish_options(self) -> None:
        """``config_option_update`` when the choices changed (the folder's settings after trust)."""
        options = await self.config_options()
        if options != self.options_sent:
            self.options_sent = options
            await self.send(U.options_update(options or []))

    # titles ------------------------------------------------------------------------------------
    async def publish_title(self) -> None:
        """``session_info_update`` with the stored title when it is new to the client (the
        first-message title, later the title model's: :mod:`agent_ls.agent.titles`)."""
        try:
            info = await self.conversations.info(self.id)
        except UnknownSession:
            return
        if not info.title or info.title == self._title_sent:
            return
        self._title_sent = info.title
        await self.send(U.info_update(info.title, info.updated))

    async def rename(self, title: str) -> None:
        """``/rename TITLE``: the session's name in every front end's list (the store's), told to
        the client as ``session_info_update``."""
        kept = await self.conversations.rename(self.id, title)
        await self.send(update_agent_message_text(f"[session named {kept!r}]" if kept else "[session name cleared]"))
        await self.publish_title()

    async def publish_titles(self) -> None:
        """The title now (before the prompt's answer), and the title model's once its
        background call ends."""
        await self.publish_title()
        pending = self.conversations.pending_title(self.id)
        if pending is not None:

            async def later() -> None:
                await asyncio.wait({pending})
                await self.publish_title()

            self.spawn(later(), "session title")

    # trust questions -----------------------------------------------------------------------------
    async def ask_trust(self, question: TrustQuestion) -> str | None:
        call_id = f"trust-{secrets.token_hex(6)}"
        content: list[Any] = [tool_content(text_block(question.text))]
        await self.send(start_tool_call(call_id, question.title, kind="other", status="pending", content=content))

        tool_call = ToolCallUpdate(tool_call_id=call_id, title=question.title, kind="other", status="pending",
                                   content=content)
        kind: str | None = None
        try:
            response = await self.conn.request_permission(session_id=self.id, tool_call=tool_call,
                                                          options=U.TRUST_OPTIONS)
            if response.outcome.outcome == "selected":
                kind = {o.option_id: o.kind for o in U.TRUST_OPTIONS}.get(response.outcome.option_id)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.warning("the trust question could not be asked (%s): nothing is trusted", e)
        allowed = kind in ("allow_once", "allow_always")
        await self.send(update_tool_call(call_id, status="completed" if allowed else "failed",
                                         content=[tool_content(text_block(_TRUST_ANSWERS.get(kind or "", "")))]))
        return kind

    # MCP sampling consent ------------------------------------------------------------------------
    @property
    def busy(self) -> bool:
        return self.conversations.busy(self.id)

    async def ask_sampling(self, request: Any) -> str:
        """``allow_once`` / ``allow_session`` / ``deny`` for a server's sampling request."""
        lines = [f"MCP server '{request.server}' asks the model {request.model} for a completion "
                 f"(at most {request.max_tokens} tokens)" + (f" at {request.endpoint}" if request.endpoint else "")]
        if request.system_prompt:
            lines.append(f"system: {request.system_prompt}")
        if request.omitted_messages:
            lines.append(f"({request.omitted_messages} earlier messages not shown)")
        lines += [f"{m.role}: {m.text}" for m in request.messages]
        call_id = f"sampling-{secrets.token_hex(6)}"
        title = f"Let MCP server '{request.server}' use the model?"
        content: list[Any] = [tool_content(text_block("\n".join(lines)))]
        await self.send(start_tool_call(call_id, title, kind="other", status="pending", content=content))
        kind: str | None = None
        try:
            response = await self.conn.request_permission(
                session_id=self.id, options=U.SAMPLING_OPTIONS,
                tool_call=ToolCallUpdate(tool_call_id=call_id, title=title, kind="other", status="pending",
                                         content=content))
            if response.outcome.outcome == "selected":
                kind = {o.option_id: o.kind for o in U.SAMPLING_OPTIONS}.get(response.outcome.option_id)
        except asyncio.CancelledError:
            await self.send(update_tool_call(call_id, status="failed"))
            raise
        except Exception as e:
            log.warning("sampling consent could not be asked (%s): denied", e)
        answer = {"allow_once": "allow_once", "allow_always": "allow_session"}.get(kind or "", "deny")
        await self.send(update_tool_call(call_id, status="completed" if answer != "deny" else "failed"))
        return answer

    # slash commands from MCP prompts -----------------------------------------------------------------
    def _collect_commands(self) -> dict[str, tuple[str, Any]]:
        manager = self.host.manager
        if manager is None:
            return {}
        prompts = manager.prompts()
        counts: dict[str, int] = {}
        for _server, p in prompts:
            counts[p.name] = counts.get(p.name, 0) + 1
        out: dict[str, tuple[str, Any]] = {}
        for server, p in prompts:
            # the built-in /compact wins: an MCP prompt of that name keeps a server-qualified name
            unique = counts[p.name] == 1 and p.name not in BUILTIN_COMMANDS
            name = p.name if unique else f"{server}.{p.name}"
            out[name.replace(" ", "_")] = (server, p)
        return out

    async def publish_commands(self, wait: float = 0.0) -> None:
        """``available_commands_update`` when the commands changed; ``wait``: for the host's start
        and its servers' first connection, at most that long."""
        if wait and (manager := await self.host.started_manager(wait)) is not None:
            await manager.settle(wait)
        self.commands = self._collect_commands()
        names = sorted([*self.commands, *BUILTIN_COMMANDS])
        if names == (self._commands_sent or []):
            return
        self._commands_sent = names
        commands = [AvailableCommand(name=COMPACT_COMMAND[1:], description=(
            "Compact the conversation now: clear old tool results (kept, readable by handle) and summarize")),
                    AvailableCommand(name="rename", description="Name this session (no name: clear it)",
                                     input=AvailableCommandInput(UnstructuredCommandInput(hint="title")))]
        for name in names:
            if name not in self.commands:
                continue
            server, p = self.commands[name]
            args = [a.name for a in (p.arguments or [])]
            commands.append(AvailableCommand(
                name=name, description=f"{p.description or p.name} (MCP prompt from {server})",
                input=AvailableCommandInput(UnstructuredCommandInput(hint=" ".join(args))) if args else None))
        await self.send(update_available_commands(commands))

    async def expand_command(self, text: str) -> str:
        """``/name rest`` of an MCP prompt: the prompt's messages (``rest`` fills its first argument)."""
        if not text.startswith("/"):
            return text
        head, _, rest = text[1:].partition(" ")
        found = self.commands.get(head)
        if found is None or self.host.manager is None:
            return text
        server, p = found
        arguments: dict[str, str] = {}
        names = [a.name for a in (p.arguments or [])]
        if names and rest.strip():
            arguments[names[0]] = rest.strip()
        result = await self.host.manager.get_prompt(server, p.name, arguments)
        parts = [getattr(m.content, "text", None) or "" for m in result.messages]
        return "\n\n".join(x for x in parts if x) or text

    # the turn ------------------------------------------------------------------------------------
    async def run_turn(self, text: str) -> str:
        """One ``session/prompt`` in the session's turn slot: the trust questions queued for the
        folder first (the folder's settings may apply now), then the turn (``/compact``, an MCP
        prompt's command expanded, or the text). A second prompt meanwhile is refused."""
        try:
            async with self.conversations.turn_slot(self.id):
                if await self.host.ask_pending(self.ask_trust):
                    await self.open(required=False)  # the folder's settings may apply now
                    await self.publish_commands()
                    await self.publish_options()
                if text.strip() == RENAME_COMMAND or text.strip().startswith(RENAME_COMMAND + " "):
                    await self.rename(text.strip()[len(RENAME_COMMAND):])
                    return "end_turn"
                session = await self.open(required=True)
                compact = text.strip() == COMPACT_COMMAND
                if not compact:
                    text = await self.expand_command(text)
                result = await self.conversations.prompt(session, text, self.sink)
        except ConversationError as e:
            raise request_error(e) from None
        if result.error is not None:
            await self.send(update_agent_message_text(f"\n\n[error: {result.error.message}]"))
            raise RequestError(-32603, result.error.message, {"kind": result.error.kind})
        if compact:
            await self.send(update_agent_message_text(result.text))
            return "end_turn"
        await self.publish_titles()
        self.spawn(self.publish_commands(), "available commands")
        return STOP_REASONS.get(result.stop_reason, "end_turn")


RENAME_COMMAND = "/rename"
BUILTIN_COMMANDS = (COMPACT_COMMAND[1:], RENAME_COMMAND[1:])
"""The commands agent-ls offers itself (an MCP prompt of such a name keeps a server-qualified name)."""


def request_error(e: ConversationError) -> RequestError:
    """The service's refusal as ACP's error: a session answering a prompt is an invalid
    request, an unknown session or model invalid params, anything else (no model) an internal
    error with the message."""
    if isinstance(e, Busy):
        return RequestError.invalid_request({"sessionId": e.session_id,
                                             "details": "this session is already answering a prompt"})
    if isinstance(e, UnknownSession):
        return RequestError.invalid_params({"sessionId": e.session_id, "details": f"unknown session {e.session_id!r}"})
    if isinstance(e, BadChoice):
        return RequestError.invalid_params({"details": str(e)})
    return RequestError(-32603, str(e))


_TRUST_ANSWERS = {
    "allow_once": "Trusted for this session.",
    "allow_always": "Trusted: remembered for this folder.",
    "reject_once": "Kept restricted for now.",
    "reject_always": "Kept restricted: remembered for this folder.",
    "": "No answer: kept restricted.",
}
