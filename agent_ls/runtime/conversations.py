"""What a conversation is, once for every front end: :class:`Conversations`.

The language server's chat, ``agent-ls acp`` and ``agent-ls chat`` each hold one service per
workspace store and only translate: they parse their input, call it, and shape the answer. It
owns:

- the session store of the folder (open, list, create, delete, rename; titles from the first
  message as the user typed it);
- the model: the settings' choices, the session's own choice kept in the store
  (:meth:`Conversations.set_model`, also within a running turn), and the one "no model"
  message (:data:`NO_MODEL`);
- the live sessions (:class:`~agent_ls.agent.session.Session`, assembled by
  :func:`agent_ls.runtime.sessions.build_session`), rebuilt after a settings or trust change
  with the "allow for this session" answers kept (:meth:`Conversations.settings_changed`);
- one turn at a time per session: a second prompt while one runs is refused with
  :class:`Busy`, everywhere; :meth:`Conversations.cancel` ends the running turn whoever started
  it; ``/compact`` is a turn of its own (the turn itself: :mod:`agent_ls.runtime.turns`);
- notes for the next prompt (the user reverted a change), how a message is shown when that is
  not the text the model got, and the transcript a front end replays on resume
  (:meth:`Conversations.transcript`, read by :mod:`agent_ls.runtime.transcript`);
- the observer points: :class:`TurnObserver` around each turn, and
  :class:`~agent_ls.agent.tool_runner.ToolObserver` around each tool call of every session it
  builds. Checkpoints, hooks and subagents attach there (docs/architecture.md).

Errors a user can act on are :class:`ConversationError` (:mod:`agent_ls.runtime.errors`); each
front end maps them to its protocol's error once.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from agent_ls.core.tasks import BackgroundTasks
from agent_ls.runtime.errors import NO_MODEL as NO_MODEL
from agent_ls.runtime.errors import BadChoice as BadChoice
from agent_ls.runtime.errors import Busy as Busy
from agent_ls.runtime.errors import ConversationError as ConversationError
from agent_ls.runtime.errors import NoModel, UnknownSession
from agent_ls.runtime.jobs import ConversationJobs
from agent_ls.runtime.transcript import Transcript, read_transcript
from agent_ls.runtime.turns import (
    PendingRequests,
    TurnInfo,
    TurnObserver,
    TurnSlot,
    compact_turn,
    observe,
    request_watch,
    run_turn,
    show_hook_runs,
)

if TYPE_CHECKING:
    from agent_ls.agent.checkpoints import Checkpoint, RewindPlan, RewindResult
    from agent_ls.agent.config import AgentSettings
    from agent_ls.agent.editor.changes import ChangeStore
    from agent_ls.agent.events import EventSink
    from agent_ls.agent.permissions import PermissionGate
    from agent_ls.agent.session import Session
    from agent_ls.agent.session import TurnResult as TurnResult
    from agent_ls.agent.store import SessionInfo, SessionStore
    from agent_ls.agent.tool_runner import Shaper, ToolObserver, ToolOutcome, ToolRunner
    from agent_ls.mcp.manager import MCPManager
    from agent_ls.runtime.checkpointing import TurnCheckpoints
    from agent_ls.runtime.display import DisplayStore
    from agent_ls.runtime.pending import PendingHost
    from agent_ls.runtime.sessions import FrontEnd

log = logging.getLogger("agent_ls.runtime")

COMPACT_COMMAND = "/compact"
"""The built-in command every front end offers: compact the conversation now."""

RENAME_MAX_CHARS = 120
"""The longest title a user may give a session (a longer one is cut at a word boundary)."""

APP_CONTEXT_CHARS = 8000
"""What an MCP App's ``ui/update-model-context`` may say to the model (the rest is cut)."""



@attrs.frozen
class ModelChoice:
    """The models a session may use: the settings' choices, its current one and the default."""

    models: list[str]
    current: str | None
    default: str | None
    session_id: str | None = None


@attrs.define
class _Live:
    """What the service keeps of a conversation between requests."""

    slot: TurnSlot
    """Its turn slot: one turn at a time."""
    session: Session | None = None
    front: FrontEnd | None = None
    stale: bool = False
    """Built on settings that have changed since: rebuilt at its next use."""
    allowed: set[str] = attrs.field(factory=set)
    """What the user allowed "for the session" (the gate adds to it; a rebuilt session keeps it)."""
    notes: list[str] = attrs.field(factory=list)
    shown: list[Any] = attrs.field(factory=list)
    """Events to show at the start of the next turn: the ``hook`` events of the SessionStart
    hooks, which run when the session opens (no turn streams yet)."""
    started: bool = False
    """Its SessionStart hooks ran."""
    turned: bool = False
    """It had a turn in this process (SessionStart no longer applies)."""
    start_source: str = "startup"
    """SessionStart's ``source``: ``startup`` (a new conversation) or ``resume``."""
    start_context: str = ""
    """What SessionStart's hooks added for the model: kept for every rebuild of the session."""
    app_context: dict[str, str] = attrs.field(factory=dict)
    """What each MCP App (by its server and resource) set for the model with
    ``ui/update-model-context``: said at the start of the next prompt (a later update replaces)."""


SessionHost = Callable[[], Awaitable["MCPManager | PendingHost | None"]]


class Conversations:
    """Every conversation of one workspace store (see the module docstring).

    ``folders``: the workspace roots (the first one's store; the current directory without
    any); ``settings``: the agent's settings now; ``host``: the MCP host a session gets (the
    manager, a :class:`~agent_ls.runtime.pending.PendingHost` while it starts, or None);
    ``front``: what the front end gives a session it builds (:class:`FrontEnd`), unless
    :meth:`open` is given one; ``prepare``: awaited before each turn (the model library's load,
    with the front end's progress); ``store``: an open store (default: the first folder's, opened
    when first needed).
    """

    def __init__(self, *, folders: Callable[[], Sequence[Path]], settings: Callable[[], AgentSettings],
                 host: SessionHost, front: Callable[[], FrontEnd] | None = None,
                 prepare: Callable[[], Awaitable[None]] | None = None, store: SessionStore | None = None,
                 tasks: BackgroundTasks | None = None, checkpoints: bool = False) -> None:
        self._folders = folders
        self._settings = settings
        self._host = host
        self._front = front
        self._prepare = prepare
        self._store = store
        self._display: DisplayStore | None = None
        self._live: dict[str, _Live] = {}
        self.tasks = tasks if tasks is not None else BackgroundTasks("conversations", log)
        self.turn_observers: list[TurnObserver] = []
        self.tool_observers: list[ToolObserver] = []
        self._direct_gate: PermissionGate | None = None
        self.requests = PendingRequests()
        """The turns whose model request has not gone out yet (background work waits for them)."""
        self.checkpoints: TurnCheckpoints | None = None
        """A checkpoint before each turn, rewind and redo (``checkpoints``: on)."""
        if checkpoints:
            from agent_ls.runtime.checkpointing import TurnCheckpoints

            self.checkpoints = TurnCheckpoints(self.roots, self.requests)
            self.turn_observers.append(self.checkpoints)
            self.tool_observers.append(self.checkpoints)  # a turn's first tool call waits for its checkpoint
        self._warmed = False
        self.jobs = ConversationJobs()
        """The background jobs of each conversation (:mod:`agent_ls.runtime.jobs`)."""

    def agent_settings(self) -> AgentSettings:
        """The agent's settings now."""
        return self._settings()

    # the store ---------------------------------------------------------------------------------
    def roots(self) -> list[Path]:
        return list(self._folders()) or [Path.cwd()]

    async def store(self) -> SessionStore:
        """The session store of the first workspace folder (opened off the event loop)."""
        if self._store is None:
            # lazy: sqlite3 and platformdirs, +24 modules, ~15 ms at start-up
            from agent_ls.agent.store import SessionStore
            from agent_ls.config.paths import user_data_dir

            self._store = await asyncio.to_thread(SessionStore.for_workspace, user_data_dir(), self.roots()[0])
        return self._store

    async def _call(self, fn: Callable[..., Any], *args: Any) -> Any:
        return await asyncio.to_thread(fn, *args)

    async def sessions(self) -> list[SessionInfo]:
        """The stored sessions, newest first."""
        store = await self.store()
        infos: list[SessionInfo] = await self._call(store.list_sessions)
        return infos

    async def info(self, session_id: str) -> SessionInfo:
        store = await self.store()
        found: SessionInfo | None = await self._call(store.get_session, session_id)
        if found is None:
            raise UnknownSession(session_id)
        return found

    async def create(self, title: str | None = None, model: str | None = None) -> SessionInfo:
        """A new stored session (``model``: its own choice; None: the settings' default, whatever
        it is when a turn starts)."""
        store = await self.store()
        info: SessionInfo = await self._call(store.create_session, title, model)
        return info

    async def latest(self) -> str | None:
        """The most recently used session's id (None: there is none)."""
        found = await self.sessions()
        return found[0].id if found else None

    async def delete(self, session_id: str) -> bool:
        """Delete a stored session (refused while it answers a prompt)."""
        if self.busy(session_id):
            raise Busy(session_id, "; cancel it first")
        store = await self.store()
        self._live.pop(session_id, None)
        await self.jobs.drop(session_id)
        deleted: bool = await self._call(store.delete_session, session_id)
        return deleted

    async def rename(self, session_id: str, title: str | None) -> str | None:
        """The user names a session (every front end's rename): one line, whitespace collapsed,
        at most :data:`RENAME_MAX_CHARS`; empty or None clears the title (the list shows the
        session without one). Returns the title kept."""
        # lazy: the store (sqlite3), +10 modules
        from agent_ls.agent.store import session_title

        kept = session_title(title, RENAME_MAX_CHARS) if title is not None else ""
        store = await self.store()
        try:
            await self._call(store.rename, session_id, kept or None)
        except KeyError:
            raise UnknownSession(session_id) from None
        return kept or None

    async def title(self, session_id: str, typed: str) -> None:
        """Title a session from its first user message as the user typed it; a later message
        never renames it (the title model may improve it after the first turn)."""
        if not typed.strip():
            return  # the store titles it from the message itself
        try:
            store = await self.store()
            await self._call(store.title_if_unset, session_id, typed)
        except Exception as e:  # the title is cosmetic
            log.warning("could not title session %s: %s", session_id, e)

    def pending_title(self, session_id: str) -> asyncio.Task[None] | None:
        """The title model's call for ``session_id`` while it runs."""
        # lazy: +2 modules, ~7 ms at start-up
        from agent_ls.agent.titles import pending_title

        return pending_title(session_id)

    async def changes(self) -> ChangeStore:
        """The agent's file changes, in the session database."""
        # lazy: sqlite3 and difflib, +10 modules, ~20 ms at start-up
        from agent_ls.agent.editor.changes import ChangeStore

        store = await self.store()
        changes: ChangeStore = await self._call(ChangeStore.for_path, store.path)
        return changes

    async def _display_store(self) -> DisplayStore:
        store = await self.store()
        if self._display is None:
            from agent_ls.runtime.display import DisplayStore

            self._display = await self._call(DisplayStore, store.path)
        return self._display

    async def remember_display(self, session_id: str, sent: str, display: dict[str, Any]) -> None:
        """How the chat shows the user message ``sent`` (the text typed, attachment chips):
        returned with it by :meth:`transcript`, never sent to the model."""
        try:
            store = await self._display_store()
            await self._call(store.put, session_id, sent, display)
        except Exception as e:  # the chat still works; a resume would show the model-facing text
            log.warning("could not store how session %s shows a message: %s", session_id, e)

    def note(self, session_id: str, note: str) -> None:
        """Something the model must hear at the start of the next prompt (the user reverted one
        of its changes in the editor)."""
        self._entry(session_id).notes.append(note)

    # MCP Apps ----------------------------------------------------------------------------------
    async def app_call(self, session_id: str, server: str, tool: str, arguments: dict[str, Any], call_id: str,
                       sink: EventSink | None = None) -> ToolOutcome:
        """A tool call an MCP App of ``server`` asks for in conversation ``session_id``: the same
        runner, permission gate, hooks and approvals as the model's calls of that session (its
        events to ``sink``: the call is a card in the chat like any other). Refused with
        :class:`agent_ls.mcp.apps.AppError` (nothing asked) when the tool is not the server's or
        is model only."""
        # lazy: the MCP SDK (a host with apps has it loaded already)
        from agent_ls.agent.tool_runner import ToolCall
        from agent_ls.mcp.apps import APP_INITIATED, AppError

        host = await self._host()
        app_tool = getattr(host, "app_tool", None)
        if app_tool is None:
            raise AppError("the MCP host is not running")
        found = await app_tool(server, tool)
        session = await self.open(session_id)
        assert session is not None  # required=True: a session or NoModel
        token = APP_INITIATED.set(True)  # its result goes back to the app: no second app of its own
        try:
            return await session.runner().run(ToolCall(call_id, found.spec.name, arguments), found, sink)
        finally:
            APP_INITIATED.reset(token)

    async def app_resource(self, server: str, tool: str) -> Any:
        """The app of ``tool`` of ``server`` read from that server again, for a resumed chat
        (an :class:`agent_ls.mcp.apps.AppResource`); :class:`agent_ls.mcp.apps.AppError` or
        :class:`LookupError` saying why it cannot be shown."""
        from agent_ls.mcp.apps import AppError

        host = await self._host()
        app_resource = getattr(host, "app_resource", None)
        if app_resource is None:
            raise AppError("the MCP host is not running")
        return await app_resource(server, tool)

    def app_context(self, session_id: str, app: str, text: str) -> None:
        """``ui/update-model-context`` of the MCP App ``app`` (its server and resource): said to the
        model at the start of the next prompt, replacing what that app set before (empty: cleared)."""
        entry = self._entry(session_id)
        if text.strip():
            entry.app_context[app] = text[:APP_CONTEXT_CHARS]
        else:
            entry.app_context.pop(app, None)

    # the model ---------------------------------------------------------------------------------
    def choice(self, chosen: str | None, session_id: str | None = None) -> ModelChoice:
        agent = self._settings()
        return ModelChoice(models=list(agent.model_choices()), current=agent.session_model(chosen),
                           default=agent.model, session_id=session_id)

    async def models(self, session_id: str | None = None) -> ModelChoice:
        """The settings' models and the one ``session_id`` uses (its own choice, else the default)."""
        chosen = (await self.info(session_id)).model if session_id is not None else None
        return self.choice(chosen, session_id)

    async def set_model(self, session_id: str, name: str) -> ModelChoice:
        """The model for the next request of ``session_id`` (also within a running turn), kept
        with it in the store."""
        agent = self._settings()
        try:
            model = agent.check_model_choice(name)
        except ValueError as e:
            raise BadChoice(str(e)) from None
        store = await self.store()
        try:
            await self._call(store.set_model, session_id, model)
        except KeyError:
            raise UnknownSession(session_id) from None
        live = self._live.get(session_id)
        llm = agent.llm_config(model)
        if live is not None and live.session is not None and llm is not None:
            live.session.llm = llm
        log.info("session %s: model %s", session_id, model)
        return self.choice(model, session_id)

    # live sessions -----------------------------------------------------------------------------
    def _entry(self, session_id: str) -> _Live:
        live = self._live.get(session_id)
        if live is None:
            live = self._live[session_id] = _Live(TurnSlot(session_id))
        return live

    def live(self, session_id: str) -> Session | None:
        """The session as built now (None: not built in this process, or no model)."""
        live = self._live.get(session_id)
        return live.session if live is not None else None

    async def open(self, session_id: str | None = None, model: str | None = None, *, front: FrontEnd | None = None,
                   required: bool = True) -> Session | None:
        """The session ``session_id`` (a new one for None) ready for a turn: the live one, or
        built on the current settings (its history from the store) when it is not live, its
        settings changed or ``model`` names a model for it. ``front``: what this front end
        gives the session (kept for rebuilds). Without a model: :class:`NoModel`, or None when
        not ``required`` (the conversation exists; a trust decision may bring its model)."""
        if session_id is not None:
            live = self._live.get(session_id)
            if (live is not None and live.session is not None and not live.stale and model is None
                    and (front is None or front is live.front)):
                return live.session
        host = await self._host()  # (the language server's: the settings are loaded first)
        store = await self.store()
        info = None
        if session_id is not None:
            info = await self._call(store.get_session, session_id)
            if info is None:
                raise UnknownSession(session_id)
        agent = self._settings()
        for problem in agent.problems:
            log.debug("settings: %s", problem)
        # the model the request names, else the session's own choice, else the default
        llm = agent.llm_config(model or agent.session_model(info.model if info else None))
        if llm is None:
            if required:
                raise NoModel()
            if session_id is None:
                session_id = (await self.create()).id
            entry = self._entry(session_id)
            if front is not None:
                entry.front = front
            return None
        # lazy: the session layer, +81 modules (sqlite3, wcmatch, re2), ~160 ms at start-up
        from agent_ls.agent.permissions import PermissionGate
        from agent_ls.runtime.sessions import FrontEnd, build_session

        previous = self._live.get(session_id) if session_id is not None else None
        front = front or (previous.front if previous is not None else None) or (
            self._front() if self._front is not None else FrontEnd())
        allowed = previous.allowed if previous is not None else set()
        jobs = self.jobs.table(session_id, max_jobs=agent.max_background_commands, timeout=agent.background_timeout)
        session = await build_session(agent, llm, roots=self.roots(), front=front, manager=host, store=store,
                                      session_id=session_id, session_allowed=allowed,
                                      tool_observers=self.tool_observers, jobs=jobs)
        self.jobs.bind(session.session_id, jobs)
        # lazy: +1 module; every session the service builds may hand tasks to subagents
        from agent_ls.runtime.subagents import attach

        attach(self, session, front, host, agent)
        entry = self._entry(session.session_id)
        first = entry.session is None
        entry.session, entry.front, entry.stale = session, front, False
        if first:
            self.warm_checkpoints()
        if first:
            entry.start_source = "resume" if session_id is not None else "startup"
        await self._session_start(entry, session)
        if isinstance(session.gate, PermissionGate):
            entry.allowed = session.gate.session_allowed  # the gate adds to it
        return session

    @staticmethod
    async def _session_start(entry: _Live, session: Session) -> None:
        """SessionStart, once per conversation before its first turn: at its first open, or at
        the first rebuild that has hooks (a folder trusted at the first prompt); its context joins
        the session's reminders, and every rebuilt session's after it. Its runs are shown at the
        start of the next turn."""
        if session.hooks is not None and not entry.started and not entry.turned:
            # lazy: the hook runner, only when hooks are configured
            from agent_ls.agent.hooks.turns import start_context

            entry.started = True
            outcome = await start_context(session, session.hooks, entry.start_source, report=entry.shown.append)
            entry.start_context = outcome.context
        elif entry.start_context and entry.start_context not in session.reminders:
            session.reminders.append(entry.start_context)

    def settings_changed(self) -> None:
        """The settings or a trust decision changed: each session is rebuilt at its next use
        (model, rules and instructions as they are now; "allow for this session" kept), direct
        calls get a new gate."""
        for live in self._live.values():
            live.stale = True
        self._direct_gate = None

    def direct_gate(self) -> PermissionGate:
        """The gate of calls the user makes directly (``mcp/callTool``, tool actions): one for all
        of them, so "allow for session" lasts until the settings change."""
        if self._direct_gate is None:
            # lazy: the session layer, +81 modules (sqlite3, wcmatch, re2), ~160 ms at start-up
            from agent_ls.runtime.sessions import FrontEnd, permission_gate

            front = self._front() if self._front is not None else FrontEnd()
            self._direct_gate = permission_gate(self._settings(), front.questions)
        return self._direct_gate

    def direct_runner(self, shape: Shaper | None = None) -> ToolRunner:
        """The tool runner of the user's direct calls: the direct gate, the settings' tool hooks,
        the observers (``shape``: how the result is cut for its reader)."""
        # lazy: sqlite3 (+10 modules, ~20 ms)
        from agent_ls.agent.hooks import hooks_for
        from agent_ls.agent.tool_runner import ToolRunner

        agent = self._settings()
        return ToolRunner(self.direct_gate(), shape=shape, observers=tuple(self.tool_observers),
                          hooks=hooks_for(agent.hooks, self.roots(), "", agent.shell_env_passthrough,
                                          sandbox=agent.sandbox))

    # turns ------------------------------------------------------------------------------------
    def busy(self, session_id: str) -> bool:
        """The session is answering a prompt."""
        live = self._live.get(session_id)
        return live is not None and live.slot.busy

    async def prompt(self, session: Session, text: str, sink: EventSink | None = None, *, typed: str | None = None,
                     display: dict[str, Any] | None = None) -> TurnResult:
        """One turn of ``session`` (from :meth:`open`): ``/compact`` compacts; otherwise the
        notes for the next prompt go first, then the turn. Refused with :class:`Busy` while
        another turn of the session runs; :meth:`cancel` ends it.

        ``typed``: what the user typed (the session's title comes from the first; default:
        ``text``); ``display``: how the chat shows the message, kept with it when the text the
        model gets differs from ``typed`` (attachments rendered in, notes said first)."""
        compact = text.strip() == COMPACT_COMMAND
        live = self._entry(session.session_id)
        async with self.turn_slot(session.session_id):
            if self._prepare is not None:
                await self._prepare()
            runs, live.shown = live.shown, []
            await show_hook_runs(runs, sink)
            log.debug("prompt: litellm ready, the turn starts")
            if not compact:
                if live.notes:
                    text = f"[From the editor: {'; '.join(live.notes)}.]\n\n{text}"
                    live.notes.clear()
                if live.app_context:
                    said = "\n".join(f"[Context set by the MCP app {who} (the user sees it in the chat): {what}]"
                                     for who, what in sorted(live.app_context.items()))
                    text = f"{said}\n\n{text}"
                    live.app_context.clear()
                shown = typed if typed is not None else text
                if display is not None and text != shown:
                    await self.remember_display(session.session_id, text, display)
                await self.title(session.session_id, shown)
            # lazy: the LLM adapter (loaded with the session); +1 module (loaded with the session's agent tool)
            from agent_ls.agent.llm import request_sent
            from agent_ls.runtime.subagents import counting_subagents

            turn = TurnInfo(session.session_id, text, compact, session.turns, hooks=session.hooks is not None)
            sent, sink = request_watch(turn, self.turn_observers, self.requests, counting_subagents(sink))
            await observe(self.turn_observers, "before_turn", turn)
            result: TurnResult | None = None
            told = request_sent.set(sent)  # the adapter says when the request has gone out
            try:
                live.turned = True
                result = await (compact_turn(session, sink) if compact else run_turn(session, text, sink))
            finally:
                request_sent.reset(told)
                await asyncio.shield(observe(self.turn_observers, "after_turn", turn, result))
            return result

    @contextlib.asynccontextmanager
    async def turn_slot(self, session_id: str) -> AsyncIterator[None]:
        """Hold the turn slot of ``session_id`` for a front end's whole turn, when it does work
        of its own around :meth:`prompt` (ACP asks its trust questions and expands an MCP prompt
        first): refused with :class:`Busy` while another task holds it; :meth:`prompt` in the
        task that holds it goes ahead, and :meth:`cancel` cancels that task."""
        async with self._entry(session_id).slot.hold():
            with self.requests.turn(session_id):
                yield

    def turn_running(self, session_id: str) -> asyncio.Task[Any] | None:
        live = self._live.get(session_id)
        return live.slot.running() if live is not None else None

    async def cancel(self, session_id: str, timeout: float = 30.0) -> bool:
        """Cancel the running turn of ``session_id`` (whoever started it) and wait until it has
        ended: its ``turn_finished`` (``cancelled``) is sent before this returns. False when the
        session runs no turn."""
        live = self._live.get(session_id)
        return live is not None and await live.slot.cancel(timeout)

    # checkpoints ------------------------------------------------------------------------------
    def warm_checkpoints(self) -> None:
        """Take the workspace's first snapshot in the background (once): the first checkpoint
        then costs what a later one does. The language server calls it once its host has settled
        (it must not compete with the first prompt); otherwise a session's first open does."""
        if self.checkpoints is not None and not self._warmed:
            self._warmed = True
            self.tasks.spawn(self.checkpoints.warm(), "first checkpoint snapshot")

    def _checkpoints(self) -> TurnCheckpoints:
        if self.checkpoints is None:
            raise ConversationError("checkpoints are off")
        return self.checkpoints

    async def checkpoint_list(self, session_id: str | None = None) -> list[Checkpoint]:
        """The checkpoints of ``session_id`` (of every session without it), oldest first."""
        return await self._checkpoints().list(session_id)

    async def plan_rewind(self, checkpoint_id: str) -> RewindPlan:
        """What a rewind to ``checkpoint_id`` would do to each file (show it before :meth:`rewind`)."""
        from agent_ls.agent.checkpoints import CheckpointError

        try:
            return await self._checkpoints().plan_rewind(checkpoint_id)
        except CheckpointError as e:
            raise ConversationError(str(e)) from None

    async def rewind(self, target: str | RewindPlan, *, code: bool = True, conversation: bool = True,
                     overwrite: bool = False) -> RewindResult:
        """The user's rewind to before the prompt of ``target`` (a checkpoint id, or the plan of
        :meth:`plan_rewind` the user was shown: not computed twice; the engine checks it against
        the disk again): the files the later turns changed (a file the user changed since is
        left alone unless ``overwrite``), and/or the conversation (kept for a :meth:`redo`). All or
        nothing; refused while the session's turn runs. The session is rebuilt from the store at
        its next use."""
        from agent_ls.agent.checkpoints import CheckpointError, RewindError

        plan = await self.plan_rewind(target) if isinstance(target, str) else target
        session_id = plan.checkpoint.session_id
        if self.busy(session_id):
            raise Busy(session_id, "; cancel it before rewinding")
        store = await self.store() if conversation else None
        try:
            result = await self._checkpoints().rewind(plan, code=code, conversation=conversation, store=store,
                                                      overwrite=overwrite)
        except (CheckpointError, RewindError) as e:
            raise ConversationError(str(e)) from None
        if conversation:
            self._rebuild(session_id)
        return result

    async def plan_redo(self, session_id: str) -> RewindPlan:
        """What undoing the latest rewind of ``session_id`` would do to each file, and whether it
        puts the conversation back (show it before :meth:`redo`)."""
        from agent_ls.agent.checkpoints import CheckpointError

        try:
            return await self._checkpoints().plan_redo(session_id)
        except CheckpointError as e:
            raise ConversationError(str(e)) from None

    async def redo(self, target: str | RewindPlan, *, overwrite: bool = False) -> RewindResult:
        """Undo the latest rewind of a session (until its next prompt): ``target`` is its id, or
        the plan of :meth:`plan_redo` the user was shown (the engine checks it against the disk
        again). A file changed since the rewind is left alone unless ``overwrite``."""
        from agent_ls.agent.checkpoints import CheckpointError, RewindError

        plan = await self.plan_redo(target) if isinstance(target, str) else target
        session_id = plan.checkpoint.session_id
        if self.busy(session_id):
            raise Busy(session_id)
        try:
            result = await self._checkpoints().redo(plan, store=await self.store(), overwrite=overwrite)
        except (CheckpointError, RewindError) as e:
            raise ConversationError(str(e)) from None
        self._rebuild(session_id)
        return result

    def _rebuild(self, session_id: str) -> None:
        """The session's history changed in the store: rebuilt from it at its next use (its
        "allow for this session" answers kept)."""
        live = self._live.get(session_id)
        if live is not None:
            live.stale = True

    # resume ------------------------------------------------------------------------------------
    async def transcript(self, session_id: str) -> Transcript:
        """The stored session as a front end replays it (:class:`~agent_ls.runtime.transcript.Transcript`)."""
        store = await self.store()
        if await self._call(store.get_session, session_id) is None:
            raise UnknownSession(session_id)
        entry = self._live.get(session_id)
        live = entry.session if entry is not None and not entry.stale else None  # (stale: the store has changed)
        return await read_transcript(store, session_id, live, self._display_store, self.changes)

    def output(self, session_id: str, handle: str) -> Any:
        """A tool's whole output kept in ``session_id``'s output store (``read_output``'s handle)."""
        session = self.live(session_id)
        outputs = getattr(session, "outputs", None)
        if outputs is None:
            raise ConversationError(
                f"the outputs of session {session_id!r} are not kept any more: stored output lives in memory "
                "only, and agent-ls restarted (or the session was deleted)")
        found = outputs.get(handle)
        if isinstance(found, str):
            raise ConversationError(found)
        return found

    async def release(self, session_id: str) -> None:
        """The front end is done with ``session_id`` (ACP loads it again for a reconnecting
        client): its running turn is cancelled and what the service keeps of it live (the built
        session, "allow for this session" answers, notes) is dropped; the store keeps it."""
        await self.cancel(session_id)
        self._live.pop(session_id, None)

    # shutdown ----------------------------------------------------------------------------------
    async def close(self) -> None:
        """Cancel the running turns and background work (``SessionEnd`` hooks run, bounded);
        close the stores."""
        ends = [live.session.hooks.session_end("other") for live in self._live.values()
                if live.session is not None and live.session.hooks is not None]
        if ends:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*ends, return_exceptions=True), 10)
        await self.tasks.close()
        await self.jobs.close()
        for live in self._live.values():
            running = live.slot.running()
            if running is not None:
                running.cancel()
        self._live.clear()
        self.close_now()

    def close_now(self) -> None:
        """Close the stores without waiting (the language server's shutdown)."""
        self.tasks.cancel()
        self.jobs.kill_now()
        if self.checkpoints is not None:
            self.checkpoints.close()
        if self._display is not None:
            self._display.close()
            self._display = None
        if self._store is not None:
            self._store.close()
            self._store = None

