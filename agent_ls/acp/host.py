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
"""

from __future__ import annotations

import asyncio
import functools
import importlib
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from agent_ls.config.entries import ConfigSource, Scope, ServerConfig
from agent_ls.config.paths import host_state_path
from agent_ls.config.reload import keep_last_valid
from agent_ls.config.settings import LoadedSettings, load_settings
from agent_ls.config.state import HostState
from agent_ls.config.trust import TrustPolicy, TrustState, WorkspaceRequest, WorkspaceTrustInfo

if TYPE_CHECKING:
    from agent_ls.mcp.manager import MCPManager

log = logging.getLogger("agent_ls.acp")

EDITOR_SOURCE = Path("<editor: session/new mcpServers>")


class SessionTrustState(HostState):
    """The remembered decisions plus the entries the user trusted once (this process only)."""

    def __init__(self, path: Path) -> None:
        super().__init__(path)
        self.once: set[tuple[str, str]] = set()

    def trust_once(self, workspace: Path | None, key: str) -> None:
        self.once.add((self._ws(workspace), key))

    def trust(self, workspace: Path | None, key: str) -> bool | None:
        if (self._ws(workspace), key) in self.once:
            return True
        return super().trust(workspace, key)

    def set_trust(self, workspace: Path | None, key: str, trusted: bool, *, name: str | None = None,
                  entry: dict[str, Any] | None = None) -> None:
        if trusted and (self._ws(workspace), key) in self.once:
            return  # trusted once: not written down
        super().set_trust(workspace, key, trusted, name=name, entry=entry)


class SessionTrustPolicy(TrustPolicy):
    """:class:`TrustPolicy` plus folders the user trusted once (this process only)."""

    def __init__(self, store: SessionTrustState) -> None:
        super().__init__(store)
        self.once_folders: set[Path] = set()

    def explicit(self, folder: Path) -> bool:
        return folder.resolve() in self.once_folders or super().explicit(folder)

    def evaluate(self, request: WorkspaceRequest) -> WorkspaceTrustInfo:
        info = super().evaluate(request)
        if request.folder.resolve() in self.once_folders and not info.trusted:
            return attrs.evolve(info, state=TrustState.TRUSTED)
        return info


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


class SessionHost:
    """Settings, trust and the MCP manager for one session's folder."""

    def __init__(self, folder: Path, editor_servers: dict[str, ServerConfig]) -> None:
        self.folder = folder
        self.editor_servers = editor_servers
        self.state = SessionTrustState(host_state_path())
        self.policy = SessionTrustPolicy(self.state)
        self.settings = LoadedSettings()
        self.manager: MCPManager | None = None
        self.questions: list[TrustQuestion] = []
        self._asked_workspace: set[str] = set()
        self._pending_server_questions: set[str] = set()
        """Keys of server questions whose answer the manager still awaits."""
        self.askers: list[Any] = []
        """The sessions using this host, newest last (they ask the user for sampling consent)."""

    def _load(self) -> LoadedSettings:
        settings = load_settings([self.folder], trust=self.policy)
        for name in self.editor_servers:
            if name in settings.servers:
                log.info("ACP: the editor's MCP server %r replaces the configured one", name)
            settings.failed.pop(name, None)
        settings.servers.update(self.editor_servers)
        return settings

    async def start(self) -> None:
        self.settings = await asyncio.to_thread(self._load)
        for d in self.settings.diagnostics:
            log.log(logging.INFO if d.severity == "information" else logging.WARNING, "settings: %s", d)
        host = await asyncio.to_thread(importlib.import_module, "agent_ls.mcp.host")
        from agent_ls.agent.config import agent_settings
        from agent_ls.agent.sampling import Sampler

        sampler = Sampler(lambda: agent_settings(self.settings), self._sampling_consent)
        self.manager = host.create_manager([self.folder], self.settings, state=self.state,
                                           trust_handler=self._server_trust, sampling_handler=sampler)
        await self.manager.apply(self.settings)
        self._queue_workspace_question()

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
        new = await asyncio.to_thread(self._load)
        keep_last_valid(self.settings, new)
        for d in new.diagnostics:
            log.log(logging.INFO if d.severity == "information" else logging.WARNING, "settings: %s", d)
        self.settings = new
        if self.manager is not None:
            await self.manager.apply(self.settings)
        self._queue_workspace_question()

    async def close(self) -> None:
        if self.manager is not None:
            await self.manager.close()

    async def _sampling_consent(self, request: Any) -> str:
        """An MCP server asks the model (``sampling/createMessage``): the session whose turn is
        running asks the user (else the newest session); nobody to ask is a deny."""
        busy = [a for a in self.askers if a.busy]
        asker = busy[-1] if busy else (self.askers[-1] if self.askers else None)
        if asker is None:
            return "deny"
        answer: str = await asker.ask_sampling(request)
        return answer

    # trust -----------------------------------------------------------------------------------------
    def _queue_workspace_question(self) -> None:
        info = self.settings.workspaces.get(self.folder)
        if info is None or not info.asks or info.request.digest in self._asked_workspace:
            return
        if any(q.key == f"workspace:{info.request.digest}" for q in self.questions):
            return
        self._asked_workspace.add(info.request.digest)
        from agent_ls.config.trust_text import describe

        request = info.request

        async def answer(kind: str | None) -> None:
            if kind in ("allow_always", "reject_always"):
                await asyncio.to_thread(self.policy.record, request, kind == "allow_always")
            elif kind == "allow_once":
                self.policy.once_folders.add(self.folder.resolve())
                for entry in request.servers:
                    self.state.trust_once(self.folder, entry.key)
            else:
                return
            log.info("ACP: workspace %s: %s", self.folder, kind)
            await self.reload()

        self.questions.append(TrustQuestion(
            key=f"workspace:{request.digest}",
            title=f"Trust the agent-ls settings and MCP servers of {self.folder.name}?",
            text=describe(info, self.state), answer=answer))

    async def _server_trust(self, cfg: ServerConfig) -> bool | None:
        """The manager's per-server question: queued, answered at the next prompt."""
        from agent_ls.config.trust_text import entry_lines

        done: asyncio.Future[bool | None] = asyncio.get_running_loop().create_future()
        view = cfg.view()
        before = self.state.last_trusted_entry(cfg.source.workspace_folder, cfg.name)

        async def answer(kind: str | None) -> None:
            if kind == "allow_once":
                self.state.trust_once(cfg.source.workspace_folder, cfg.trust_key())
            result = {"allow_once": True, "allow_always": True, "reject_always": False}.get(kind or "")
            if not done.done():
                done.set_result(result)

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
