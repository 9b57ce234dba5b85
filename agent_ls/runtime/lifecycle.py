"""The host's life, once for every front end (:class:`HostLifecycle`): start it (the settings, a
preview of the status, the trust questions of pending folders, the model library's warm-up, then
the MCP SDK and the servers), reload it when the settings or a trust decision change (the last
valid configuration kept), follow decisions made in another window, and stop it.

The front end supplies a small listener (:class:`HostListener`), as it supplies
:class:`~agent_ls.runtime.questions.Questions`: the status changed, the settings were read (their
diagnostics), progress, open a URL, show an error. The language server's listener notifies the
editor (``mcp/statusChanged``, diagnostics, work-done progress, ``window/showDocument``); ACP and
the terminal log.

The order of the start (issue 30 item 2): when a model is configured and ``model_first`` is on,
the model library loads before the MCP SDK's import and the servers' start (they compete for the
same cores, and a prompt sent meanwhile waits for the model library), for
:data:`MODEL_FIRST_LIMIT` seconds at most, or until something needs the host
(:meth:`HostLifecycle.want`). A session built meanwhile gets a
:class:`~agent_ls.runtime.pending.PendingHost` (:meth:`HostLifecycle.session_host`). The terminal
and ACP (``request_first``) also hold the start until their first model request has gone out or
they wait for their user (:attr:`HostLifecycle.quiet`; ACP: :meth:`HostLifecycle.quiet_when_idle`,
no prompt within :data:`QUIET_AFTER` seconds of ``session/new``): on a busy machine the SDK's
import, in a thread, otherwise slowed a first request by seconds. Nothing of this decides
anything: a server that asks to be trusted, or a call of a starting server's tool, wants the
host (:meth:`HostLifecycle.want`) and its start goes on at once, with its questions.

With ``mcp_on_demand`` (ACP, the terminal), a host whose settings configure no MCP server does
not import the MCP SDK at all: its start ends with the settings (:attr:`HostLifecycle.idle`,
sessions get no MCP host), and the manager is created when a reload brings a server or something
asks for it (:meth:`HostLifecycle.ensure_manager`).

Server trust: a workspace server never decided on asks to be trusted when the host takes it up
(:meth:`HostLifecycle.servers_asking_trust` tells which will, without the MCP SDK). The language
server asks the editor as the host starts; ACP waits for the host at the next prompt and asks its
client before the turn; the terminal asks before its first prompt and before the host starts
(:meth:`HostLifecycle.ask_servers_first`): no question competes with the chat for the terminal,
and the first request never waits for the MCP SDK.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from agent_ls.core.imports import import_quietly
from agent_ls.core.tasks import BackgroundTasks, in_daemon_thread
from agent_ls.runtime.host import RuntimeHost, log_diagnostics, settle_trust
from agent_ls.runtime.model_library import ModelLibrary, Progress
from agent_ls.runtime.pending import PendingHost

if TYPE_CHECKING:
    from agent_ls.agent.config import AgentSettings
    from agent_ls.config.entries import ServerConfig
    from agent_ls.config.settings import LoadedSettings
    from agent_ls.config.state import HostState
    from agent_ls.config.trust import WorkspaceTrustInfo
    from agent_ls.mcp.manager import MCPManager
    from agent_ls.mcp.status import ServerStatus
    from agent_ls.runtime.conversations import Conversations
    from agent_ls.runtime.front import FrontEnd
    from agent_ls.runtime.turns import PendingRequests

log = logging.getLogger("agent_ls.runtime")

MODEL_FIRST_LIMIT = 3.0
"""Seconds the MCP host's start waits at most for the model library (``AGENT_LS_MODEL_FIRST_LIMIT``
seconds if set)."""

QUIET_AFTER = 0.3
"""Seconds :meth:`HostLifecycle.quiet_when_idle` gives a prompt sent right after a session opened."""

SHUTDOWN_LIMIT = 20.0
"""Seconds a shutdown waits for the MCP servers to stop before the caller kills what is left."""


class HostUnavailable(Exception):
    """The host is shut down (or never started and cannot be now)."""


class HostListener(Protocol):
    """What the front end is told about the host (each method returns at once; none raises)."""

    def status_changed(self) -> None:
        """The servers' status, or a workspace's trust, changed."""
        ...

    def settings_read(self, settings: LoadedSettings, broken: Sequence[Path]) -> None:
        """The settings were (re)read: their diagnostics; ``broken``: files that stopped parsing
        (their last valid configuration stays in force)."""
        ...

    async def progress(self, kind: str, title: str, message: str | None = None) -> Progress | None:
        """Begin a progress indicator (None: the front end shows none)."""
        ...

    async def open_url(self, server: str, url: str) -> None:
        """An MCP server's sign-in page."""
        ...

    def show_error(self, text: str) -> None:
        """A problem the user must see now."""
        ...


class LogListener:
    """A front end that shows the host's events in the log only (ACP, the terminal)."""

    def status_changed(self) -> None:
        pass

    def settings_read(self, settings: LoadedSettings, broken: Sequence[Path]) -> None:
        log_diagnostics(settings)
        for file in broken:
            log.error("%s is not valid JSON; the last valid configuration stays in force until it is fixed", file)

    async def progress(self, kind: str, title: str, message: str | None = None) -> Progress | None:
        return None

    async def open_url(self, server: str, url: str) -> None:
        """Logged, and a graphical browser tried when there is one (the MCP host's default)."""
        from agent_ls.mcp.oauth.redirect import default_opener  # the MCP SDK: loaded with the host

        await default_opener(server, url)

    def show_error(self, text: str) -> None:
        log.error("%s", text)


def model_first_limit() -> float:
    try:
        return float(os.environ.get("AGENT_LS_MODEL_FIRST_LIMIT", MODEL_FIRST_LIMIT))
    except ValueError:
        return MODEL_FIRST_LIMIT


class HostLifecycle:
    """Start, reload and stop the :class:`~agent_ls.runtime.host.RuntimeHost` of a front end
    (see the module docstring). ``tasks``: the front end's background tasks (the host's are
    among them, cancelled with them); ``model_first``: load the model library before the MCP
    host when a model is configured; ``preview_first``: the front end answers status requests
    from the preview (the SDK's import waits a moment for the first answer); ``ask_workspaces``:
    the lifecycle asks about folders that wait for trust (False: the front end asks when it
    chooses, as ACP does at the next prompt and the terminal before the host starts);
    ``mcp_on_demand``: no MCP SDK and no manager while no server is configured (see the module
    docstring); ``models``: the front end's model library (default: one on the host's settings;
    the terminal's follows ``--model``); ``request_first``: the first model request comes before
    the host: with ``model_first`` the start waits for the front end to be :attr:`quiet` too, and
    a prompt sent while the host starts does not wait for it to offer the tools kept from the
    servers' last connection (those servers are said to be starting, like the others; a call of
    one of their tools, or ``tool_search``, waits for them)."""

    def __init__(self, runtime: RuntimeHost, listener: HostListener, tasks: BackgroundTasks, *,
                 model_first: bool = True, preview_first: bool = True, ask_workspaces: bool = True,
                 mcp_on_demand: bool = False, models: ModelLibrary | None = None,
                 request_first: bool = False) -> None:
        self.runtime = runtime
        self.listener = listener
        self.tasks = tasks
        self.models = models if models is not None else ModelLibrary(runtime.agent_settings, tasks)
        self.model_first = model_first
        self.preview_first = preview_first
        self.ask_workspaces = ask_workspaces
        self.mcp_on_demand = mcp_on_demand
        self.request_first = request_first
        self.reloaded: list[Callable[[], None]] = []
        """Called after each reload (the conversations rebuild their sessions)."""
        self.settled: list[Callable[[], None]] = []
        """Called once the host has started and the model library's warm-up has ended: work that
        must not compete with the first prompt for the interpreter (the first checkpoint's
        snapshot of the workspace)."""
        self.lock = asyncio.Lock()
        self.wanted = asyncio.Event()
        """Something needs the MCP host now: its start stops waiting for the model library."""
        self.started = asyncio.Event()
        """The host's start has ended (started, or failed to)."""
        self.quiet = asyncio.Event()
        """The front end leaves the interpreter to the host's start (with ``model_first``, the start
        waits for it after the model library): set from the beginning unless ``request_first``;
        the terminal sets it once its first model request has gone out (the model answers), or
        while it waits for its user. A one-shot's first request then never competes with the MCP
        SDK's import, which holds the interpreter for long stretches."""
        if not request_first:
            self.quiet.set()
        self.reload_lock = asyncio.Lock()
        self.preview: list[ServerStatus] | None = None
        """The status the host will report, while it loads (:mod:`agent_ls.mcp.preview`)."""
        self.preview_ready = asyncio.Event()
        """Set once the preview was computed (or could not be)."""
        self.status_answered = asyncio.Event()
        """Set by the front end once it answered a status request from the preview: the MCP SDK's
        import (which holds the interpreter for long stretches) waits a moment for it."""
        self.workspace_prompts: dict[Path, tuple[str, asyncio.Task[Any]]] = {}
        """Pending workspace trust questions: folder -> (digest asked about, task)."""

    # the manager ---------------------------------------------------------------------------------
    @property
    def manager(self) -> MCPManager | None:
        return self.runtime.manager

    def want(self) -> None:
        """Something needs the host now (its start need not wait for the model library)."""
        self.wanted.set()

    async def ensure_manager(self) -> MCPManager:
        """The MCP manager, once the host has started (started now if nothing has yet)."""
        if self.runtime.manager is None:
            self.wanted.set()
            await self.start()
        if self.runtime.manager is None:
            raise HostUnavailable("the MCP host is shut down")
        return self.runtime.manager

    @property
    def starting(self) -> bool:
        """The host's start is under way and has not ended yet."""
        return self.runtime.manager is None and self.lock.locked() and not self.started.is_set()

    @property
    def idle(self) -> bool:
        """The host's start has ended without a manager because no MCP server is configured
        (``mcp_on_demand``): nothing of the MCP SDK is loaded."""
        settings = self.runtime.settings
        return (self.mcp_on_demand and self.runtime.manager is None and self.started.is_set()
                and not self.lock.locked() and settings is not None and not settings.servers)

    def host_starting(self) -> list[ServerStatus] | None:
        """The preview while the host starts and nothing has asked for it (its start may wait for
        the model library); None once it runs, or when something waits for it anyway."""
        return self.preview if self.starting and not self.wanted.is_set() else None

    async def session_host(self) -> MCPManager | PendingHost | None:
        """The MCP host for a session being built: the manager, or while the host is still
        starting, a :class:`PendingHost` that forwards to it once it has started (a prompt sent
        right after the editor opened does not wait for the MCP SDK's import); None while the
        host is :attr:`idle` (no server configured)."""
        await self.settings_loaded()
        if self.idle:
            return None
        if self.starting:
            # lazy: +1 module (the status names, no MCP SDK)
            from agent_ls.mcp.status import State

            preview = self.preview or []
            return PendingHost(lambda: self.runtime.manager, self.started, self.wanted.set,
                               starting=[s.name for s in preview if s.state == State.STARTING],
                               kept=not self.request_first and any(s.state == State.STARTING and s.tools
                                                                   for s in preview))
        return await self.ensure_manager()

    async def quiet_when_idle(self, requests: PendingRequests, after: float = QUIET_AFTER) -> None:
        """Set :attr:`quiet` ``after`` seconds from now once no turn of ``requests`` waits for its
        model request (ACP: no prompt came meanwhile, or its request has gone out): the host's
        start, held by ``model_first`` and ``request_first``, goes on then."""
        await requests.idle(after)
        self.quiet.set()

    async def settings_loaded(self) -> None:
        """Wait until the settings are loaded and, while the host starts, its preview computed (the
        start's first steps: milliseconds), starting the host if nothing has yet. The preview
        too: between the two, :meth:`host_starting` would answer None and a caller that asks
        it would start the host at once, before the model library. (The terminal read the
        settings itself, to settle the folders' trust: its host starts here too, on those
        settings, without reading the files again.)"""
        if not self.started.is_set() and self.runtime.manager is None and not self.lock.locked():
            self.tasks.spawn(self.start(), "start MCP host")
            await self.preview_ready.wait()
        elif self.runtime.settings is None or self.starting:
            await self.preview_ready.wait()

    def conversations(self, *, settings: Callable[[], AgentSettings], front: Callable[[], FrontEnd] | None = None,
                      prepare: Callable[[], Awaitable[None]] | None = None) -> Conversations:
        """The conversations of the host's folders, wired to it: a session gets the MCP host as it
        starts (:meth:`session_host`), a turn waits for the model library (``prepare``, default
        :meth:`ModelLibrary.ready`), sessions are rebuilt after each reload, an MCP task a turn
        starts is a job of its conversation, and a checkpoint is taken before every prompt."""
        # lazy: the conversation service (+ the session store's modules), for the front ends that chat
        from agent_ls.runtime.conversations import Conversations

        conversations = Conversations(folders=self.runtime.folders, settings=settings, host=self.session_host,
                                      front=front, prepare=prepare or self.models.ready, checkpoints=True,
                                      tasks=self.tasks)
        self.reloaded.append(conversations.settings_changed)
        self.runtime.task_owner = conversations.jobs.task_started  # a task a turn starts: a job of its session
        return conversations

    # server trust ----------------------------------------------------------------------------------
    def servers_asking_trust(self) -> list[ServerConfig]:
        """The servers of the current settings that will ask to be trusted when the host takes them
        up (workspace servers never decided on; a restricted folder's servers wait for the folder's
        trust instead), sorted by name. Needs no MCP SDK."""
        settings = self.runtime.settings
        if settings is None:
            return []
        # lazy: the status names (no MCP SDK)
        from agent_ls.mcp.status import activation

        state = self.runtime.state
        return [cfg for _, cfg in sorted(settings.servers.items()) if activation(cfg, None, state).ask_trust]

    async def ask_servers_first(self) -> list[ServerConfig]:
        """Before the host starts: ask the questions about every server that would ask to be
        trusted (:meth:`servers_asking_trust`) and remember each answer as the host would, so that
        the host starts the trusted ones and keeps the others stopped without asking again. Returns
        the servers left undecided (nobody could answer): they wait, stopped, as awaiting-trust."""
        undecided = []
        for cfg in self.servers_asking_trust():
            if await self.runtime.decide_server_trust(cfg) is None:
                undecided.append(cfg)
        return undecided

    # start -----------------------------------------------------------------------------------------
    async def start(self) -> None:
        """Load the settings and start every MCP server in the background (once)."""
        async with self.lock:
            if self.runtime.manager is not None:
                return
            try:
                if self.started.is_set() and self.runtime.settings is not None:
                    await self._start_manager()  # idle until now (no server), or its start failed
                else:
                    await self._start()
            finally:
                self.started.set()

    async def _start(self) -> None:
        try:
            if self.runtime.settings is not None:  # the front end read them (the terminal, to settle trust)
                settings = self.runtime.settings
            else:
                log.debug("MCP host: loading the settings")
                settings = await self.runtime.load()
            # Until the host is loaded, the status is what it will report: every server, and the
            # tools kept from each one's last connection.
            self.preview = await asyncio.to_thread(preview, settings, self.runtime.state)
        finally:
            self.preview_ready.set()
        self.listener.status_changed()
        if self.preview_first:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(self.status_answered.wait(), 0.1)
        self.listener.settings_read(settings, ())
        self.ask_pending_workspaces()  # the questions need no host: asked now, not after the model library
        if self.mcp_on_demand and not settings.servers and not self.wanted.is_set():
            log.debug("MCP host: no server configured; the MCP SDK is not loaded until one is")
            self.preview = None
            return
        await self._model_first()
        await self._start_manager()

    async def _start_manager(self) -> None:
        """Import the MCP SDK (off the event loop), create the manager and start every server."""
        log.debug("MCP host: starting (model library loaded, or the host is wanted)")
        # The MCP SDK takes a while to import: in a daemon thread (an import still running at
        # shutdown does not hold the process), so the front end's requests keep being answered.
        manager = await self.runtime.start_manager(
            import_host=lambda: in_daemon_thread(lambda: import_quietly("agent_ls.mcp.host")),
            on_change=self.listener.status_changed)
        log.debug("MCP host: the SDK imported, the manager started")
        self.preview = None
        manager.set_auth_opener(self.listener.open_url)
        await self.runtime.apply()
        warming = self.models.prewarm()  # unless the model came first: the servers start in their own processes
        self.tasks.spawn(self._connect_progress(manager), "MCP connect progress")
        self.tasks.spawn(self._settle(warming), "after the warm-up")

    async def _settle(self, warming: asyncio.Task[None] | None) -> None:
        if warming is not None:
            with contextlib.suppress(Exception):
                await asyncio.shield(warming)
        for settled in self.settled:
            settled()

    async def _model_first(self) -> None:
        """When a model is configured, load the model library before the MCP host starts, then
        wait until the front end is :attr:`quiet`; for :data:`MODEL_FIRST_LIMIT` seconds at most,
        or until the host is wanted. A workspace that asks to be trusted was asked before this wait."""
        if not self.model_first or self.wanted.is_set():
            return
        warming = self.models.prewarm()
        if warming is None and self.quiet.is_set():
            return
        wanted = asyncio.ensure_future(self.wanted.wait())
        quiet = asyncio.ensure_future(self.quiet.wait())
        try:
            async with asyncio.timeout(model_first_limit()):
                if warming is not None:
                    await asyncio.wait({warming, wanted}, return_when=asyncio.FIRST_COMPLETED)
                await asyncio.wait({quiet, wanted}, return_when=asyncio.FIRST_COMPLETED)
        except TimeoutError:
            log.debug("MCP host: starting after %g s of waiting for the model library and the front end",
                      model_first_limit())
        finally:
            wanted.cancel()
            quiet.cancel()

    async def _connect_progress(self, manager: MCPManager) -> None:
        """Progress while servers connect; one log line per server outcome."""
        names = manager.server_names()
        progress = await self.listener.progress("mcp", "Connecting MCP servers", f"{len(names)} servers")
        done: set[str] = set()
        waiting = {"starting", "restarting"}

        def report() -> None:
            states = {s.name: (s.state, s.error) for s in manager.status()}
            finished = {n for n, (st, _) in states.items() if st not in waiting}
            for n in sorted(finished - done):
                done.add(n)
                st, err = states[n]
                if err and st == "failed":
                    log.warning("MCP server %s: %s [%s] %s", n, st, err.get("phase"), err.get("message"))
                else:
                    log.info("MCP server %s: %s", n, st)
                if progress is not None:
                    progress.report(f"{n}: {st}", int(100 * len(done) / max(1, len(states))))

        try:
            for _ in range(1200):
                report()
                if all(s.state not in waiting for s in manager.status()):
                    break
                await asyncio.sleep(0.1)
            report()
        finally:
            if progress is not None:
                connected = sum(1 for s in manager.status() if s.state == "connected")
                progress.end(f"{connected}/{len(manager.server_names())} connected")

    # reload ----------------------------------------------------------------------------------------
    async def reload(self) -> None:
        """Re-read every scope and reconfigure live (unchanged servers keep running); the last
        valid configuration stays in force while a file does not parse."""
        if self.runtime.manager is None and self.lock.locked():
            self.wanted.set()  # a decision or a changed file: its start need not wait for the model library
            async with self.lock:  # starting: reload once it is up, so a change made meanwhile counts
                pass
        async with self.reload_lock:
            if self.runtime.settings is None:
                return  # nothing read yet: the start reads the files
            new, broken = await self.runtime.reread()  # (no manager: the settings alone)
            for file in broken:
                self.listener.show_error(f"agent-ls: {file} is not valid JSON; the last valid configuration "
                                         "stays in force until it is fixed (see the diagnostics)")
            self.listener.settings_read(new, broken)
            for reloaded in self.reloaded:  # new sessions and direct calls pick up model and permission changes
                reloaded()
            self.listener.status_changed()  # the workspaces' trust may have changed with no server changing
            log.info("settings reloaded: %d servers, %d problems", len(new.servers), len(new.diagnostics))
            self.ask_pending_workspaces()
        if self.mcp_on_demand and self.runtime.manager is None and new.servers and self.started.is_set():
            # the first server (a trust answer made the folder's visible): the MCP SDK and the
            # manager now, before the caller goes on (the servers' own trust questions come with it)
            await self.start()

    async def decisions_changed(self) -> None:
        """The remembered decisions changed (another window, or the terminal, decided): a folder
        whose trust state differs now reloads the settings; servers that waited for a decision
        another process made start (or stay stopped) without a reload."""
        if self.runtime.settings is None:
            return  # nothing read yet: the start reads the decisions with the files
        fresh = await asyncio.to_thread(self.runtime.read_settings)
        before = {f: i.state for f, i in self.runtime.settings.workspaces.items()}
        if {f: i.state for f, i in fresh.workspaces.items()} != before:
            log.info("workspace trust changed in another process: reloading the settings")
            await self.reload()  # (while the host starts, once it is up)
            return
        log.debug("decisions changed in another process; no folder's trust changed")
        if self.runtime.manager is not None:
            await self.runtime.manager.recheck_trust()

    # workspace trust -------------------------------------------------------------------------------
    def ask_pending_workspaces(self) -> None:
        """Ask (through the questions) about every folder that needs a decision now, one question
        per folder and digest; withdraw questions that no longer match what the folder asks for."""
        settings = self.runtime.settings
        if settings is None or not self.ask_workspaces:
            return
        for folder, (digest, task) in list(self.workspace_prompts.items()):
            info = settings.workspaces.get(folder)
            if info is None or not info.asks or info.request.digest != digest:
                task.cancel()
                self.workspace_prompts.pop(folder, None)
        for folder, info in settings.workspaces.items():
            if not info.asks or folder in self.workspace_prompts:
                continue
            log.info("workspace %s asks for trust: %s", folder, info.message)
            task = self.tasks.spawn(self._ask_workspace(info), f"trust prompt for {folder}")
            self.workspace_prompts[folder] = (info.request.digest, task)

    def withdraw_workspace_prompt(self, folder: Path) -> None:
        """The user decided about ``folder`` another way: its open question goes."""
        pending = self.workspace_prompts.pop(folder, None)
        if pending is not None:
            pending[1].cancel()

    async def _ask_workspace(self, info: WorkspaceTrustInfo) -> None:
        folder = info.request.folder
        try:
            decided = await settle_trust(self.runtime, info)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.info("no trust decision for %s (%s); it stays restricted. Trust it with the "
                     "agent-ls.trustWorkspace command, the agent/setWorkspaceTrust request or "
                     "`agent-ls trust --workspace %s`", folder, e, folder)
            return
        finally:
            current = self.workspace_prompts.get(folder)
            if current is not None and current[0] == info.request.digest:
                self.workspace_prompts.pop(folder, None)
        if decided:
            await self.reload()

    # stop ------------------------------------------------------------------------------------------
    async def shutdown(self, limit: float = SHUTDOWN_LIMIT) -> None:
        """Cancel the background tasks and stop every MCP server (waiting at most ``limit``
        seconds; the caller ends what is left)."""
        self.tasks.cancel()
        self.preview = None
        await self.runtime.close(limit)


def preview(settings: LoadedSettings, state: HostState) -> list[ServerStatus] | None:
    """The status the host will report once loaded (None when it cannot be told)."""
    # lazy: platformdirs, tempfile, bz2, lzma: +14 modules, ~17 ms at start-up
    from agent_ls.config.paths import catalogue_path
    from agent_ls.mcp.catalogue import CatalogueStore
    from agent_ls.mcp.preview import preview_status

    try:
        return preview_status(settings, state, CatalogueStore(catalogue_path()))
    except Exception as e:  # noqa: BLE001 - only a head start: the host reports the truth anyway
        log.info("no early MCP status: %s", e)
        return None
