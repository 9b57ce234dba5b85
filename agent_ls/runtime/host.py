"""The host every front end runs: the settings, workspace trust and the MCP manager of a set of
workspace folders, wired to the front end's :class:`~agent_ls.runtime.questions.Questions`.

- Settings: :meth:`RuntimeHost.load` reads every scope through the trust policy;
  :meth:`RuntimeHost.reread` reads them again keeping the last valid values
  (:func:`agent_ls.config.reload.keep_last_valid`) and reconfigures the manager (unchanged
  servers keep running).
- Trust: the user's remembered decisions (``host-state.json``) plus what was trusted once, for
  this process only (ACP's ``allow_once``: :class:`OnceTrustState`, :class:`OnceTrustPolicy`);
  the editor's own trust (``editor_trusted``) restricts every folder it does not trust.
  :meth:`RuntimeHost.record_workspace` records an answer to a workspace question.
- The MCP manager (:meth:`RuntimeHost.start_manager`): the MCP SDK is imported off the event
  loop (it takes a while); workspace servers ask ``questions.trust_server``, forms go to
  ``questions.elicit``, sampling goes through :class:`agent_ls.agent.sampling.Sampler` with
  ``questions.sampling_consent``, and an MCP task a tool call starts goes to
  :attr:`RuntimeHost.task_owner` (the conversation service's jobs: a job of the conversation
  whose turn made the call), wired once by the front end that builds the host and its
  conversations, whenever the manager is (re)made.

What differs between the front ends stays with them: when to ask about a folder, progress and
status notifications, diagnostics of the settings files.
"""

from __future__ import annotations

import asyncio
import importlib
import logging
from collections.abc import Awaitable, Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_ls.runtime.questions import NoQuestions, Questions, TrustAnswer

if TYPE_CHECKING:
    from types import ModuleType

    from agent_ls.agent.config import AgentSettings
    from agent_ls.config.entries import ServerConfig
    from agent_ls.config.settings import LoadedSettings
    from agent_ls.config.state import HostState
    from agent_ls.config.trust import TrustPolicy, WorkspaceRequest, WorkspaceTrustInfo
    from agent_ls.mcp.manager import MCPManager
    from agent_ls.mcp.tasks import TaskHandle

# The settings modules (agent_ls.config.settings, .state, .reload, .trust: ~65 ms with
# platformdirs, filelock and the typed sections) are imported where they are used: the language
# server creates its host before `initialize`, and imports them only after the result has been
# sent (server/preload.py, issue 30 item 3).

log = logging.getLogger("agent_ls.runtime")


def log_diagnostics(settings: LoadedSettings) -> None:
    for d in settings.diagnostics:
        log.log(logging.INFO if d.severity == "information" else logging.WARNING, "settings: %s", d)


class RuntimeHost:
    """Settings, trust and the MCP manager of the folders ``folders()`` names.

    ``extra_servers``: servers that join the configured ones and replace one of the same name
    (ACP's ``mcpServers`` of ``session/new``, user scope). ``state``: the remembered decisions
    (default: the user's ``host-state.json``, read when first needed).
    """

    def __init__(self, folders: Callable[[], Sequence[Path]], questions: Questions | None = None, *,
                 state: HostState | None = None, extra_servers: Mapping[str, ServerConfig] | None = None,
                 sampling: bool = True) -> None:
        self._folders = folders
        self.questions: Questions = questions if questions is not None else NoQuestions()
        self._state = state
        self.extra_servers = dict(extra_servers or {})
        self.editor_trusted = True
        """The editor's own workspace trust (the language server's ``workspaceTrusted`` option)."""
        self.once_folders: set[Path] = set()
        """Folders trusted once (this process only)."""
        self.settings: LoadedSettings | None = None
        self.manager: MCPManager | None = None
        self.sampling = sampling
        """MCP sampling goes to the model (with ``questions.sampling_consent``); False: the manager
        refuses it (a headless ``agent-ls mcp`` command has no model to offer)."""
        self.sampling_settings: Callable[[], AgentSettings] = self.agent_settings
        """The agent's settings a sampling request is answered with (``agent-ls chat``: its
        ``--model``)."""
        self.renders_apps = False
        """The front end renders MCP Apps (the editor's chat says so at ``initialize``): a tool's
        app is loaded and carried by its result; otherwise the app is only named."""
        self.task_owner: Callable[[TaskHandle], str | None] | None = None
        """Takes over an MCP task a tool call started (:data:`agent_ls.mcp.tasks.TaskStarted`):
        the conversation service's :meth:`~agent_ls.runtime.jobs.ConversationJobs.task_started`,
        which makes it a job of the conversation whose turn made the call. None (a headless
        command): the call waits for its task."""

    def _task_started(self, handle: TaskHandle) -> str | None:
        owner = self.task_owner
        return owner(handle) if owner is not None else None

    # trust -----------------------------------------------------------------------------------------
    @property
    def state(self) -> HostState:
        """The user's remembered decisions (``host-state.json``), plus what was trusted once."""
        if self._state is None:
            # lazy: filelock, decimal, platformdirs: +40 modules, ~33 ms at server start-up
            from agent_ls.config.paths import host_state_path
            from agent_ls.runtime.trust import OnceTrustState

            self._state = OnceTrustState(host_state_path())
        return self._state

    @property
    def loaded_state(self) -> HostState | None:
        """:attr:`state` if it was read already (None: nothing has needed it yet)."""
        return self._state

    def policy(self) -> TrustPolicy:
        # lazy: filelock and decimal, +40 modules, ~33 ms at server start-up
        from agent_ls.runtime.trust import OnceTrustPolicy

        return OnceTrustPolicy(self.state, self.once_folders, editor_trusted=self.editor_trusted)

    async def record_workspace(self, request: WorkspaceRequest, answer: TrustAnswer) -> None:
        """Record an answer about a folder (the caller reloads the settings)."""
        # lazy: filelock and decimal, +40 modules, ~33 ms at server start-up
        from agent_ls.runtime.trust import OnceTrustState

        if answer is TrustAnswer.TRUST_ONCE:
            self.once_folders.add(request.folder.resolve())
            if isinstance(self.state, OnceTrustState):
                for entry in request.servers:
                    self.state.trust_once(request.folder, entry.key)
        else:
            await asyncio.to_thread(self.policy().record, request, answer is TrustAnswer.TRUST)
        said = {TrustAnswer.TRUST: "trusted", TrustAnswer.TRUST_ONCE: "trusted once (this process only)",
                TrustAnswer.KEEP_RESTRICTED: "kept restricted"}
        log.info("workspace %s: %s", request.folder, said[answer])

    async def _trust_server(self, cfg: ServerConfig) -> bool | None:
        """The manager's question about a workspace server, through the front end's questions."""
        # lazy: filelock and decimal, +40 modules, ~33 ms at server start-up
        from agent_ls.runtime.trust import OnceTrustState

        answer = await self.questions.trust_server(cfg)
        if answer is TrustAnswer.TRUST_ONCE and isinstance(self.state, OnceTrustState):
            self.state.trust_once(cfg.source.workspace_folder, cfg.trust_key())
        return None if answer is None else answer is not TrustAnswer.KEEP_RESTRICTED

    async def decide_server_trust(self, cfg: ServerConfig) -> bool | None:
        """Ask about a workspace server before the manager takes it up, and remember the answer as
        the manager would (:meth:`agent_ls.mcp.manager.MCPManager.set_trust`): the manager then
        starts it, or keeps it stopped, without asking. None: no answer, nothing remembered."""
        trusted = await self._trust_server(cfg)
        if trusted is not None:
            await asyncio.to_thread(self.state.set_trust, cfg.source.workspace_folder, cfg.trust_key(), trusted,
                                    name=cfg.name, entry=cfg.view().snapshot())
            log.info("MCP server %s: %s", cfg.name, "trusted" if trusted else "kept stopped (not trusted)")
        return trusted

    # settings --------------------------------------------------------------------------------------
    def folders(self) -> list[Path]:
        return list(self._folders())

    def read_settings(self) -> LoadedSettings:
        """Every scope's settings for the folders, through the trust policy (blocking: files)."""
        # lazy: the settings loader, +39 modules, ~50 ms at server start-up
        from agent_ls.config.settings import load_settings

        settings = load_settings(self.folders(), trust=self.policy())
        for name in self.extra_servers:
            if name in settings.servers:
                log.info("the front end's MCP server %r replaces the configured one", name)
            settings.failed.pop(name, None)
        settings.servers.update(self.extra_servers)
        return settings

    async def load(self) -> LoadedSettings:
        """Read the settings (off the event loop); they are :attr:`settings` from now on."""
        self.settings = await asyncio.to_thread(self.read_settings)
        return self.settings

    @property
    def current_settings(self) -> LoadedSettings:
        """:attr:`settings`, or none at all before they are loaded."""
        # lazy: the settings loader, +39 modules, ~50 ms at server start-up
        from agent_ls.config.settings import LoadedSettings

        return self.settings if self.settings is not None else LoadedSettings()

    def agent_settings(self) -> AgentSettings:
        """The agent's sections of the current settings (the defaults before they are loaded)."""
        # lazy: the settings loader and agent config, +44 modules, ~100 ms at server start-up
        from agent_ls.agent.config import agent_settings
        from agent_ls.config.settings import LoadedSettings

        return agent_settings(self.settings or LoadedSettings())

    async def reread(self) -> tuple[LoadedSettings, list[Path]]:
        """Read the settings again; what worked before and is broken now keeps its last valid
        version. The manager (if started) gets the new roots and settings. Returns the new
        settings and the files that became unreadable."""
        # lazy: the settings loader, +40 modules, ~59 ms at server start-up
        from agent_ls.config.reload import keep_last_valid, unreadable_files

        new = await asyncio.to_thread(self.read_settings)
        old = self.settings
        broken = sorted(unreadable_files(new) - (unreadable_files(old) if old is not None else set()))
        if old is not None:
            keep_last_valid(old, new)
        self.settings = new
        if self.manager is not None:
            await self.manager.set_roots(self.folders())
            await self.manager.apply(new)
        return new, broken

    # the MCP manager -------------------------------------------------------------------------------
    async def start_manager(self, *, import_host: Callable[[], Awaitable[ModuleType]] | None = None,
                            on_change: Callable[[], None] | None = None, **options: Any) -> MCPManager:
        """Create the MCP manager on the current settings (loaded first if they are not), wired to
        the questions. ``import_host``: how to import :mod:`agent_ls.mcp.host` (default: a worker
        thread). The servers are not started: :meth:`apply` does that."""
        settings = self.settings if self.settings is not None else await self.load()
        host = await (import_host() if import_host is not None else
                      asyncio.to_thread(importlib.import_module, "agent_ls.mcp.host"))
        kwargs: dict[str, Any] = {"state": self.state, "trust_handler": self._trust_server,
                                  "elicitation_handler": self.questions.elicit, "task_started": self._task_started}
        if self.sampling:
            from agent_ls.agent.sampling import Sampler  # the MCP SDK's types: imported with the host

            kwargs["sampling_handler"] = Sampler(self.sampling_settings, self.questions.sampling_consent)
        if on_change is not None:
            kwargs["on_change"] = on_change
        manager: MCPManager = host.create_manager(self.folders(), settings, **kwargs, **options)
        manager.apps.renders = self.renders_apps
        self.manager = manager
        return manager

    async def apply(self) -> None:
        """Start (or reconfigure) every server of the current settings."""
        if self.manager is not None and self.settings is not None:
            await self.manager.apply(self.settings)

    async def start(self, **options: Any) -> MCPManager:
        """Load the settings, create the manager and start every server in the background."""
        await self.load()
        manager = await self.start_manager(**options)
        await self.apply()
        return manager

    async def close(self, limit: float | None = None) -> None:
        """Stop every MCP server (waiting at most ``limit`` seconds: each server gets its own
        grace inside; the caller ends what is left)."""
        manager, self.manager = self.manager, None
        if manager is None:
            return
        closing = asyncio.ensure_future(manager.close())
        _, pending = await asyncio.wait({closing}, timeout=limit)
        if pending:
            log.warning("the MCP servers did not all stop within %g s; ending them", limit)


async def settle_trust(host: RuntimeHost, info: WorkspaceTrustInfo) -> bool:
    """Ask the host's questions about one folder and record the answer; True if one was given."""
    answer = await host.questions.trust_workspace(info)
    if answer is None:
        return False
    await host.record_workspace(info.request, answer)
    return True


