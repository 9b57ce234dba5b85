"""The MCP host of one ACP session: its folder's settings, the editor's servers, and trust.

- The project scope and the MCP roots are the session's ``cwd``; the user's settings apply as
  everywhere (:func:`agent_ls.config.settings.load_settings`).
- MCP servers the editor passes in ``session/new`` / ``session/load`` join the configured ones
  for that session. They come from the editor, that is from the user, so they count as user
  scope (no trust prompt); an editor server replaces a configured one of the same name.
- Workspace trust holds: a folder whose settings ask for something that needs trust is
  restricted, and a workspace stdio server waits, until the user answers. The questions are
  queued here and asked by the session through ``session/request_permission`` when the next
  prompt starts (ACP clients show permission requests inside a turn). The answers:
  ``allow_always`` is remembered (the same record as the editor's and ``agent-ls trust``),
  ``allow_once`` holds for this process only, ``reject_always`` is remembered as "keep
  restricted", ``reject_once`` leaves it waiting. Nothing is trusted automatically.
- The host starts in the background (issue 46): ``session/new`` waits for the settings only (read
  through the trust policy: an untrusted folder's settings and servers stay out until the
  answer), and the first prompt gets the tools of the servers connected by then, the others
  said to be starting (:class:`~agent_ls.runtime.pending.PendingHost`, as in the language
  server). The MCP SDK's import and the servers' start wait until the first prompt's model
  request has gone out, or no prompt came within a moment of ``session/new`` (``model_first``,
  ``request_first``, as the terminal's): they do not compete with that request. A folder with
  no MCP server configured never loads the MCP SDK (``mcp_on_demand``). A prompt waits for the
  host's start only when one of its servers will ask to be trusted: that question comes before
  the turn.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs

from agent_ls.agent.permissions import ApprovalAnswer
from agent_ls.config.entries import ConfigSource, Scope, ServerConfig
from agent_ls.config.settings import LoadedSettings
from agent_ls.core.tasks import BackgroundTasks
from agent_ls.runtime.host import RuntimeHost
from agent_ls.runtime.lifecycle import HostLifecycle, HostUnavailable, LogListener
from agent_ls.runtime.questions import NoQuestions, TrustAnswer

if TYPE_CHECKING:
    import mcp_types as types

    from agent_ls.agent.config import AgentSettings
    from agent_ls.agent.permissions import ApprovalAnswer, ApprovalHandler, ApprovalRequest, SessionScope
    from agent_ls.agent.sampling import SamplingRequest
    from agent_ls.config.state import HostState
    from agent_ls.config.trust import WorkspaceTrustInfo
    from agent_ls.mcp.manager import MCPManager

log = logging.getLogger("agent_ls.acp")

EDITOR_SOURCE = Path("<editor: session/new mcpServers>")


@attrs.define
class TrustQuestion:
    """A decision the user has to make before something of the workspace runs."""

    key: str
    title: str
    text: str
    answer: Callable[[str | None], Awaitable[None]]
    """Called with the chosen option kind (``allow_once``...), None when cancelled."""


def editor_server_configs(servers: Sequence[Any], folder: Path) -> dict[str, ServerConfig]:
    """The ACP ``mcpServers`` of ``session/new`` as user-scope server configs."""
    out: dict[str, ServerConfig] = {}
    for server in servers or ():
        kind = getattr(server, "type", None) or ("stdio" if hasattr(server, "command") else None)
        name = str(server.name)
        source = ConfigSource(Scope.USER, EDITOR_SOURCE, folder, ("mcpServers", name))
        if kind == "stdio" or hasattr(server, "command"):
            env = {e.name: e.value for e in server.env or []}
            raw: dict[str, Any] = {"command": server.command, "args": list(server.args or []), "env": env}
            out[name] = ServerConfig(name=name, transport="stdio", source=source, command=server.command,
                                     args=tuple(server.args or ()), env=env, cwd=str(folder), raw=raw)
        elif kind in ("http", "sse"):
            headers = {h.name: h.value for h in server.headers or []}
            raw = {"type": kind, "url": server.url, "headers": headers}
            out[name] = ServerConfig(name=name, transport=kind, source=source, url=server.url, headers=headers,
                                     raw=raw)
        else:
            log.warning("ACP: MCP server %r of an unsupported type %r is ignored", name, kind)
    return out


class Asker(Protocol):
    """A session of the host that asks its client (:class:`agent_ls.acp.session.AcpSession`)."""

    @property
    def id(self) -> str: ...

    @property
    def busy(self) -> bool:
        """Its turn is running."""
        ...

    @property
    def approver(self) -> ApprovalHandler: ...

    async def ask_sampling(self, request: SamplingRequest) -> str: ...


KIND_ANSWERS = {"allow_once": TrustAnswer.TRUST_ONCE, "allow_always": TrustAnswer.TRUST,
                "reject_always": TrustAnswer.KEEP_RESTRICTED}
"""ACP's permission option kinds as trust answers (``reject_once``, or none: no decision)."""


class SessionHost:
    """The runtime host (settings, trust, the MCP manager) of one session's folder, and its
    :class:`~agent_ls.runtime.questions.Questions`: trust questions are queued and asked at the
    next prompt; tool approval and sampling consent are asked by the session whose turn runs."""

    def __init__(self, folder: Path, editor_servers: dict[str, ServerConfig]) -> None:
        self.folder = folder
        self.editor_servers = editor_servers
        self.runtime = RuntimeHost(lambda: [folder], self, extra_servers=editor_servers)
        self.questions: list[TrustQuestion] = []
        self._asked_workspace: set[str] = set()
        self._pending_server_questions: set[str] = set()
        """Keys of server questions whose answer the manager still awaits."""
        self.askers: list[Asker] = []
        """The sessions using this host, newest last (they ask the user for sampling consent)."""
        self.tasks = BackgroundTasks(f"ACP host of {folder}", log)
        self._quiet_asked = False
        self.lifecycle = HostLifecycle(self.runtime, LogListener(), self.tasks, preview_first=False,
                                       ask_workspaces=False, mcp_on_demand=True, request_first=True)
        """The host's start, reloads and stop (the runtime's, as the language server's); the
        folder's trust question is this host's own: queued, asked at the next prompt. As the
        terminal's (``model_first``, ``request_first``): the MCP SDK's import and the servers'
        start wait until the first prompt's model request has gone out, or no prompt came within
        a moment of ``session/new`` (:meth:`opened`), so they do not compete with that request; a
        prompt sent while the host starts does not wait for the tools kept from its servers' last
        connection (those servers are said to be starting; ``tool_search`` or a call of their
        tool waits for them). A server that will ask to be trusted starts the host before the
        turn (:meth:`_host_questions`): its question still comes first."""
        self.conversations = self.lifecycle.conversations(settings=self.agent_settings)
        """The conversations of the folder (its session store); each session opens its own with
        its :class:`~agent_ls.runtime.sessions.FrontEnd` (the client's files and terminal)."""

    def agent_settings(self) -> AgentSettings:
        # lazy: +3 modules, ~12 ms at the ACP start-up
        from agent_ls.agent.config import agent_settings

        return agent_settings(self.settings)

    @property
    def settings(self) -> LoadedSettings:
        return self.runtime.settings if self.runtime.settings is not None else LoadedSettings()

    @property
    def manager(self) -> MCPManager | None:
        return self.runtime.manager

    @property
    def state(self) -> HostState:
        return self.runtime.state

    async def start(self) -> None:
        """Read the settings (the host's start goes on in the background), warm the model library
        up, and queue the folder's trust question. The host's start goes on once the front end
        is quiet (:meth:`opened`)."""
        await self.lifecycle.settings_loaded()
        self.lifecycle.models.prewarm()
        self._queue_workspace_question()

    def opened(self) -> None:
        """A session of this host was opened (``session/new``, ``session/load``: the answer goes
        out now): the host's start goes on once the prompt sent next has its request out, or at
        once if none comes within a moment (:meth:`HostLifecycle.quiet_when_idle`)."""
        if not self._quiet_asked:
            self._quiet_asked = True
            self.tasks.spawn(self.lifecycle.quiet_when_idle(self.conversations.requests), "the host's start, quietly")

    async def started_manager(self, timeout: float) -> MCPManager | None:
        """The manager once the host's start has ended (at most ``timeout`` seconds); None while
        it starts, or when it is idle (no server configured)."""
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.lifecycle.started.wait(), timeout)
        return self.manager

    async def _host_questions(self) -> None:
        """While the host starts: wait for it when one of its servers will ask to be trusted (the
        manager asks as it starts the servers), so that the question comes before the turn."""
        if self.manager is not None or self.lifecycle.idle or self.runtime.settings is None:
            return
        if self.lifecycle.servers_asking_trust():
            with contextlib.suppress(HostUnavailable):  # shut down meanwhile
                await self.lifecycle.ensure_manager()

    async def attach(self) -> None:
        """A new session uses this host: what was left undecided "for now" is asked again."""
        self._asked_workspace.clear()
        self._queue_workspace_question()
        manager = self.manager
        if manager is None:
            return
        asked = {q.key for q in self.questions}
        for status in manager.status():
            cfg = self.settings.servers.get(status.name)
            if (status.state == "awaiting-trust" and cfg is not None and not cfg.restricted and cfg.needs_trust
                    and f"server:{cfg.name}:{cfg.trust_key()}" not in asked and not self._waiting(cfg)):
                await manager.restart(cfg.name)  # re-activated: the manager asks again

    def _waiting(self, cfg: ServerConfig) -> bool:
        return any(k == f"server:{cfg.name}:{cfg.trust_key()}" for k in self._pending_server_questions)

    async def reload(self) -> None:
        """Read the settings again (after a trust answer); what worked before and is broken now
        keeps its last valid version, as in the language server."""
        await self.lifecycle.reload()  # the sessions are rebuilt on the folder's settings now
        self._queue_workspace_question()

    async def close(self) -> None:
        try:
            await self.conversations.close()
        finally:
            await self.lifecycle.shutdown()

    # Questions -------------------------------------------------------------------------------------
    def _asker(self, session_id: str | None = None) -> Asker | None:
        """The session ``session_id`` when it is one of this host's, else the session whose turn
        is running, else the newest session (None: nobody to ask)."""
        own = [a for a in self.askers if session_id is not None and a.id == session_id]
        pick = own or [a for a in self.askers if a.busy] or self.askers
        return pick[-1] if pick else None

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer | SessionScope:
        """The session whose turn made the call asks its client (``session/request_permission``,
        :class:`agent_ls.acp.session.AcpApprover`); a call of no session of this host goes to the
        session that would ask (nobody: a deny)."""
        asker = self._asker(request.session_id)
        if asker is None:
            return ApprovalAnswer.DENY
        answer: ApprovalAnswer | SessionScope = await asker.approver(request)
        return answer

    async def sampling_consent(self, request: SamplingRequest) -> str:
        """An MCP server asks the model (``sampling/createMessage``): the session whose turn is
        running asks the user (else the newest session); nobody to ask is a deny."""
        asker = self._asker()
        if asker is None:
            return "deny"
        answer: str = await asker.ask_sampling(request)
        return answer

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        """ACP has no forms: declined (as the MCP host does without an elicitation handler)."""
        return await NoQuestions().elicit(server, params)

    async def trust_workspace(self, info: WorkspaceTrustInfo) -> TrustAnswer | None:
        """Queued and asked at the next prompt (:meth:`ask_pending`)."""
        done: asyncio.Future[TrustAnswer | None] = asyncio.get_running_loop().create_future()

        async def answer(kind: str | None) -> None:
            if not done.done():
                done.set_result(KIND_ANSWERS.get(kind or ""))

        self.questions.append(self._workspace_question(info, answer))
        return await done

    def _workspace_question(self, info: WorkspaceTrustInfo,
                            answer: Callable[[str | None], Awaitable[None]]) -> TrustQuestion:
        # lazy: +1 module, ~1 ms at the ACP start-up
        from agent_ls.config.trust_text import describe

        return TrustQuestion(key=f"workspace:{info.request.digest}",
                             title=f"Trust the agent-ls settings and MCP servers of {self.folder.name}?",
                             text=describe(info, self.state), answer=answer)

    def _queue_workspace_question(self) -> None:
        info = self.settings.workspaces.get(self.folder)
        if info is None or not info.asks or info.request.digest in self._asked_workspace:
            return
        if any(q.key == f"workspace:{info.request.digest}" for q in self.questions):
            return
        self._asked_workspace.add(info.request.digest)
        request = info.request

        async def answer(kind: str | None) -> None:
            decided = KIND_ANSWERS.get(kind or "")
            if decided is None:
                return
            await self.runtime.record_workspace(request, decided)
            log.info("ACP: workspace %s: %s", self.folder, kind)
            await self.reload()

        self.questions.append(self._workspace_question(info, answer))

    async def trust_server(self, cfg: ServerConfig) -> TrustAnswer | None:
        """The manager's per-server question: queued, answered at the next prompt."""
        # lazy: +1 module, ~1 ms at the ACP start-up
        from agent_ls.config.trust_text import entry_lines

        done: asyncio.Future[TrustAnswer | None] = asyncio.get_running_loop().create_future()
        view = cfg.view()
        before = self.state.last_trusted_entry(cfg.source.workspace_folder, cfg.name)

        async def answer(kind: str | None) -> None:
            if not done.done():
                done.set_result(KIND_ANSWERS.get(kind or ""))

        text = "\n".join([f"The workspace file {cfg.source.file} defines an MCP server:",
                          *entry_lines(view, view.changes_since(before), indent="  ")])
        key = f"server:{cfg.name}:{cfg.trust_key()}"
        self.questions.append(TrustQuestion(key=key, title=f"Start the workspace MCP server '{cfg.name}'?",
                                            text=text, answer=answer))
        self._pending_server_questions.add(key)
        try:
            return await done
        finally:
            self._pending_server_questions.discard(key)

    async def ask_pending(self, ask: Callable[[TrustQuestion], Awaitable[str | None]]) -> bool:
        """Ask every queued question (``ask`` returns the chosen option kind); True if any was."""
        await self._host_questions()
        asked = False
        for _ in range(3):  # a reload after an answer may queue the servers it made visible
            await asyncio.sleep(0)
            if not self.questions:
                break
            pending, self.questions = self.questions, []
            for q in pending:
                asked = True
                try:
                    kind = await ask(q)
                except asyncio.CancelledError:
                    await q.answer(None)
                    raise
                await q.answer(kind)
        return asked


class HostPool:
    """One host per folder and set of editor servers, shared by the sessions that use them: a
    new thread in the same project reuses the running MCP servers (an editor may open many
    sessions; ACP has no stable way to close one)."""

    def __init__(self) -> None:
        self._hosts: dict[tuple[Path, str], SessionHost] = {}
        self._lock = asyncio.Lock()

    async def get(self, folder: Path, editor_servers: Sequence[Any]) -> SessionHost:
        configs = await asyncio.to_thread(functools.partial(editor_server_configs, editor_servers, folder))
        key = (folder, json.dumps({n: dict(c.raw) for n, c in sorted(configs.items())}, sort_keys=True))
        async with self._lock:
            host = self._hosts.get(key)
            if host is None:
                host = SessionHost(folder, configs)
                await host.start()
                self._hosts[key] = host
            else:
                await host.attach()
            return host

    async def close(self) -> None:
        hosts, self._hosts = list(self._hosts.values()), {}
        await asyncio.gather(*(h.close() for h in hosts), return_exceptions=True)
