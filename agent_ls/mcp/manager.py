"""The MCP host's manager: every configured server, in parallel, never blocking the caller.

- ``apply(settings)`` starts or reconfigures: unchanged servers are kept, changed ones
  restarted, removed ones stopped, new ones started (each in its own owner task).
- Partial failure is normal: each server keeps its state and the reason it failed.
- ``list_changed`` notifications only mark a server dirty; ``refresh_if_dirty()`` (called by
  the single writer, right before a prompt) re-lists the dirty servers once.
- Tools come out sorted by server then tool name, so identical tool sets give identical bytes.
- ``status()`` reads plain fields: no lock, no I/O.

OAuth sign-in lives in :mod:`agent_ls.mcp.sign_in`, the trust decisions for workspace servers
in :mod:`agent_ls.mcp.trust_decisions`.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import mcp_types as types

from agent_ls.config.entries import FailedEntry
from agent_ls.config.sandbox import server_sandbox_label
from agent_ls.config.settings import LoadedSettings
from agent_ls.config.state import HostState
from agent_ls.core import naming
from agent_ls.core.redact import add_secrets, install_log_redaction
from agent_ls.core.tasks import BackgroundTasks
from agent_ls.core.tools import ToolResult
from agent_ls.mcp.adapter import MCPTool, make_spec
from agent_ls.mcp.apps import AppError, AppResource, AppResources
from agent_ls.mcp.catalogue import CatalogueStore
from agent_ls.mcp.connection.client_handlers import ElicitationHandler, HostCallbacks, SamplingHandler
from agent_ls.mcp.connection.connection import ServerConnection
from agent_ls.mcp.connection.failures import RestartPolicy, ServerUnavailable
from agent_ls.mcp.connection.transports import with_sandbox
from agent_ls.mcp.oauth.redirect import AuthOpener
from agent_ls.mcp.oauth.session import OAuthSession
from agent_ls.mcp.oauth.store import OAuthStore
from agent_ls.mcp.results import DEFAULT_MAX_OUTPUT_CHARS
from agent_ls.mcp.sign_in import SignIns
from agent_ls.mcp.status import (
    STILL_STARTING,
    Phase,
    ServerStatus,
    State,
    ToolInfo,
    activation,
    error_dict,
)
from agent_ls.mcp.tasks import TaskStarted
from agent_ls.mcp.trust_decisions import TrustDecisions, TrustHandler

log = logging.getLogger(__name__)

CONNECT_SLACK = 2.0
"""Seconds a wait for a starting server adds to its ``connectTimeout`` (spawning the process comes
before the handshake's deadline)."""


class ToolUnavailable(Exception):
    """A tool that cannot be called now, and why (:meth:`MCPManager.resolve_tool`)."""


class MCPManager(SignIns, TrustDecisions):
    """Every configured server of the host (its OAuth sign-ins: :class:`SignIns`; its trust
    decisions: :class:`TrustDecisions`)."""

    def __init__(
        self,
        *,
        roots: Sequence[Path] = (),
        state: HostState | None = None,
        trust_handler: TrustHandler | None = None,
        elicitation_handler: ElicitationHandler | None = None,
        sampling_handler: SamplingHandler | None = None,
        max_output_chars: int = DEFAULT_MAX_OUTPUT_CHARS,
        restart_policy: RestartPolicy | None = None,
        on_change: Callable[[], None] | None = None,
        auth_opener: AuthOpener | None = None,
        oauth_store: OAuthStore | None = None,
        sign_in_timeout: float | None = None,
        catalogue: CatalogueStore | None = None,
        task_started: TaskStarted | None = None,
    ) -> None:
        self._roots: list[Path] = [Path(r) for r in roots]
        self.auth_opener = auth_opener
        """Shows authorization URLs to the user (None: log the URL and try a graphical browser)."""
        self._oauth_store = oauth_store
        self.sign_in_timeout = sign_in_timeout
        """Overrides every server's ``oauth.signInTimeout`` when set."""
        self._auth: dict[str, OAuthSession] = {}
        self._sign_ins: dict[str, asyncio.Task[None]] = {}
        install_log_redaction()
        self.state_store = state
        self.trust_handler = trust_handler
        self.max_output_chars = max_output_chars
        self.apps = AppResources()
        """MCP Apps: whether the front end renders them, their loaded resources."""
        self.restart_policy = restart_policy or RestartPolicy()
        self.on_change = on_change
        self.callbacks = HostCallbacks(
            roots=lambda: list(self._roots),
            elicitation=elicitation_handler,
            sampling=sampling_handler,
            on_change=self._changed,
            on_dirty=self._mark_dirty,
            eras=state,
            catalogue=catalogue,
            task_started=task_started,
        )
        self._conns: dict[str, ServerConnection] = {}
        self._failed: dict[str, FailedEntry] = {}
        self._refresh_lock = asyncio.Lock()
        self._tools_key: tuple[Any, ...] | None = None
        self._tools: list[MCPTool] = []
        self._background = BackgroundTasks("MCP host", log)
        self._closed = False
        self._overrides: dict[str, bool] = {}
        self._applied = False
        self._first_start: set[ServerConnection] = set()
        """Servers starting with the host (its first :meth:`apply`), until something starts them again."""
        self.dirty = False

    # handlers the editor plugs in -----------------------------------------------------
    def set_elicitation_handler(self, handler: ElicitationHandler | None) -> None:
        self.callbacks.elicitation = handler

    def set_auth_opener(self, opener: AuthOpener | None) -> None:
        """How authorization URLs reach the user: ``await opener(server_name, url)``."""
        self.auth_opener = opener

    # lifecycle --------------------------------------------------------------------------
    async def apply(self, settings: LoadedSettings) -> None:
        """Start or reconfigure from loaded settings. Returns once stopped servers are gone;
        new servers connect in the background."""
        self._failed = dict(settings.failed)
        wanted = with_sandbox(settings)
        for cfg in wanted.values():
            add_secrets(*cfg.secrets)  # masked in every log record from now on
        to_close: list[ServerConnection] = []
        to_start: list[ServerConnection] = []
        for name, conn in list(self._conns.items()):
            new = wanted.get(name)
            if new is None or new.fingerprint() != conn.config.fingerprint() or (
                new.needs_trust and new.trust_key() != conn.config.trust_key()
            ):
                to_close.append(self._conns.pop(name))
            else:
                conn.config = new  # same effective config; keep the live connection
        for name, cfg in wanted.items():
            if name not in self._conns:
                conn = ServerConnection(cfg, self.callbacks, restart_policy=self.restart_policy,
                                        auth=self._auth_session(cfg))
                # Starting from now on, not "stopped", while the connections it replaces close:
                # a prompt or a call meanwhile waits for it (settle, settle_tool) instead of
                # missing its tools; _activate sets what it really becomes.
                conn.state = State.STARTING
                self._conns[name] = conn
                to_start.append(conn)
            elif self._conns[name].auth is not None:
                self._conns[name].auth.update_config(cfg)  # type: ignore[union-attr]
        for name in list(self._auth):
            if name not in wanted or wanted[name].oauth is None:
                self._auth.pop(name)
        self._first_start.difference_update(to_close)
        log.debug("MCP servers applied: closing %s, starting %s, kept %s", sorted(c.name for c in to_close),
                  sorted(c.name for c in to_start), sorted(n for n in self._conns if n not in {c.name for c in to_start}))
        if to_close:
            await asyncio.gather(*(c.close() for c in to_close), return_exceptions=True)
        for conn in to_start:
            self._activate(conn)
        if not self._applied:
            self._applied = True
            self._first_start = set(to_start)
        self.dirty = True
        self._changed(None)

    def _activate(self, conn: ServerConnection) -> None:
        self._first_start.discard(conn)  # started again: by the user's doing (trust, restart, enable, settings)
        cfg = conn.config
        decided = activation(cfg, self._overrides.get(cfg.name), self.state_store)
        if decided.state is not State.STARTING:
            conn.state = decided.state
            conn.error = decided.error
            self._changed(cfg.name)
            if decided.ask_trust and self.trust_handler is not None:
                self._spawn(self._ask_trust(conn))
            return
        conn.start()

    def _status_of(self, name: str) -> ServerStatus:
        for s in self.status():
            if s.name == name:
                return s
        raise ServerUnavailable(f"no MCP server named {name!r} is configured")

    async def set_enabled(self, name: str, enabled: bool) -> None:
        """Turn a server on or off; remembered per workspace when a state store is attached."""
        conn = self._get(name)
        self._overrides[name] = enabled
        if self.state_store is not None:
            self.state_store.set_enabled(conn.config.source.workspace_folder, name, enabled)
        await conn.close()
        self._activate(conn)
        self.dirty = True
        self._changed(name)

    async def restart(self, name: str | None = None) -> None:
        conns = [self._get(name)] if name else list(self._conns.values())
        await asyncio.gather(*(c.close() for c in conns), return_exceptions=True)
        for c in conns:
            c.restarts = 0
            c.error = None
            self._activate(c)
        self.dirty = True

    async def wait_ready(self, timeout: float | None = None) -> None:
        """Wait (bounded) for pending trust answers and every started server's first attempt."""
        await self._background.wait(timeout)
        waits = [c.wait_ready() for c in self._conns.values() if c.state in (State.STARTING, State.RESTARTING)]
        if waits:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.gather(*waits), timeout)

    async def settle(self, timeout: float) -> None:
        """Wait (at most ``timeout`` s) for the servers that are starting or restarting by the
        user's doing (a settings change, a trust decision, a restart): a prompt then sees their
        tools. Not for the servers starting with the host (the editor just opened: the first
        prompt goes to the model at once, issue 30 item 2; the model reaches their tools through
        ``tool_search``, which waits for them, :meth:`settle_servers`, or by calling one,
        :meth:`settle_tool`; issue 44), nor for servers that offer their kept catalogue meanwhile."""
        await self._wait_settled([c for c in self._conns.values() if c not in self._first_start], timeout)

    async def settle_tool(self, name: str, timeout: float) -> None:
        """Wait (at most ``timeout`` s) for the starting or restarting servers that could own the
        model-facing tool name ``name`` (:func:`agent_ls.core.naming.could_name`): the model
        called a tool not known yet. No such server starting: no wait (``mcp__typo__x`` is
        nobody's tool, and waiting for the others would not change that)."""
        await self._wait_settled([c for c in self._conns.values() if naming.could_name(c.name, name)], timeout)

    def starting(self) -> list[str]:
        """The servers starting whose tools are not known yet (no catalogue kept from their last
        connection), sorted: ``tool_search`` is offered for them and waits for them."""
        return sorted(c.name for c in self._conns.values() if c.settling and not c.from_catalogue)

    async def settle_servers(self, names: Sequence[str], timeout: float) -> None:
        """Wait for the servers ``names`` while they start, each at most its ``connectTimeout``
        (a little more: its own deadline ends the start) and all at most ``timeout``."""
        await self._wait_settled([c for n in names if (c := self._conns.get(n)) is not None], timeout)

    def server_problem(self, name: str) -> str | None:
        """Why the server ``name`` offers no tools, as its status says (None when it serves them)."""
        conn = self._conns.get(name)
        if conn is None:
            failed = self._failed.get(name)
            return f"failed ({Phase.CONFIG.value}: {failed.reason})" if failed is not None else "is not configured"
        if conn.serving:
            return None
        if conn.settling:
            return f"is still starting (its connectTimeout is {conn.config.connect_timeout:g}s)"
        if conn.state is State.NEEDS_SIGN_IN:
            return f"needs sign-in ({conn.auth_problem() or 'sign-in required'}): ask the user to sign in to it"
        return f"{'failed' if conn.state is State.FAILED else 'is ' + conn.state.value}" + (
            f" ({conn.error})" if conn.error else "")

    @staticmethod
    async def _wait_settled(conns: list[ServerConnection], timeout: float) -> None:
        waits = [c.wait_settled(min(timeout, c.config.connect_timeout + CONNECT_SLACK))
                 for c in conns if c.settling and not c.from_catalogue]
        if waits:
            log.debug("waiting for MCP servers %s", sorted(c.name for c in conns if c.settling and not c.from_catalogue))
            await asyncio.gather(*waits)

    async def close(self) -> None:
        self._closed = True
        self._background.cancel()
        for t in self._sign_ins.values():
            t.cancel()
        await asyncio.gather(*(c.close() for c in self._conns.values()), return_exceptions=True)

    # roots -------------------------------------------------------------------------------
    @property
    def roots(self) -> list[Path]:
        return list(self._roots)

    async def set_roots(self, roots: Sequence[Path]) -> None:
        new = [Path(r) for r in roots]
        if new == self._roots:
            return
        self._roots = new
        await asyncio.gather(*(c.send_roots_changed() for c in self._conns.values() if c.connected),
                             return_exceptions=True)

    # tools ---------------------------------------------------------------------------------
    def _mark_dirty(self, _name: str) -> None:
        self.dirty = True

    async def refresh_if_dirty(self) -> bool:
        """Re-list dirty servers once; True when the tool/prompt/resource sets changed.

        Single writer: concurrent callers wait for the refresh under way instead of
        starting another, and a notification that arrives while listing marks the server
        dirty again for the next call (compare-and-set on each server's flag).
        """
        async with self._refresh_lock:
            if not self.dirty:
                return False
            self.dirty = False
            dirty = [c for c in self._conns.values() if c.dirty and c.connected]
            if not dirty:
                return True  # a reconfigure or state change: the caller rebuilds its view
            results = await asyncio.gather(*(c.refresh() for c in dirty), return_exceptions=True)
            for conn, res in zip(dirty, results, strict=True):
                if isinstance(res, BaseException):
                    log.warning("refreshing %s failed: %s", conn.name, res)
            return True

    def tools(self) -> list[MCPTool]:
        """Every tool of every connected server (and of a starting one, from the catalogue of its
        last connection) that the model may call, sorted by server then tool name (a tool whose
        ``_meta.ui.visibility`` leaves out ``model`` is for its app only: :meth:`app_tool`)."""
        return [t for t in self._all_tools() if "model" in t.spec.visibility]

    def _all_tools(self) -> list[MCPTool]:
        live = sorted((c for c in self._conns.values() if c.serving), key=lambda c: c.name)
        key = tuple((c.name, c.list_version, id(c)) for c in live)
        if key != self._tools_key:
            pairs = [(c.name, t.name) for c in live for t in c.listing.tools]
            names = naming.assign_names(pairs)
            tools: list[MCPTool] = []
            for c in live:
                for t in c.listing.tools:
                    spec = make_spec(c.name, t, names[(c.name, t.name)])
                    tools.append(MCPTool(spec, c, max_output_chars=lambda: self.max_output_chars, apps=self.apps))
            self._tools = tools
            self._tools_key = key
        return list(self._tools)

    def find_tool(self, server: str, tool: str) -> MCPTool | None:
        for t in self.tools():
            if t.server == server and (t.spec.display_name == tool or t.spec.name == tool):
                return t
        return None

    async def resolve_tool(self, server: str, tool: str) -> MCPTool:
        """The tool ``tool`` (its MCP name or its model-facing name) of ``server``, ready to call.

        The tool set is refreshed first if a change was announced; a server that is (re)connecting
        is waited for, bounded by its ``connectTimeout``, and looked at again. Raises
        :class:`ToolUnavailable` saying why not: not configured, not connected (its state and
        error), waiting for sign-in, or no such tool.
        """
        if server not in self._conns and server not in self._failed:
            raise ToolUnavailable(f"no MCP server named {server!r} is configured")
        await self.refresh_if_dirty()
        found = self.find_tool(server, tool)
        conn = self._conns.get(server)
        if found is None and conn is not None and await conn.settle():
            await self.refresh_if_dirty()
            found = self.find_tool(server, tool)
        if found is not None:
            return found
        if conn is None:
            raise ToolUnavailable(f"MCP server {server!r} is not connected (failed: {self._failed[server].reason})")
        if conn.state is State.NEEDS_SIGN_IN:
            raise ToolUnavailable(f"MCP server {server!r} needs sign-in ({conn.auth_problem() or 'sign-in required'});"
                                  " ask the user to sign in to it")
        if conn.settling:
            raise ToolUnavailable(f"MCP server {server!r} is not connected (still starting after "
                                  f"{conn.config.connect_timeout:g}s, its connectTimeout)")
        if not conn.connected:
            raise ToolUnavailable(f"MCP server {server!r} is not connected ({conn.state.value}"
                                  + (f"; {conn.error}" if conn.error else "") + ")")
        raise ToolUnavailable(f"MCP server {server!r} has no tool named {tool!r}")

    async def app_tool(self, server: str, tool: str) -> MCPTool:
        """The tool ``tool`` (its name on ``server``) that an app of ``server`` asks to call.

        Refused (:class:`AppError`, nothing asked, nothing run) when the server has no such tool or
        its visibility leaves out ``app`` (a model-only tool: the spec's MUST). An app reaches
        only its own server's tools: the caller passes the app's server, never one the app names."""
        await self.refresh_if_dirty()
        for t in self._all_tools():
            if t.server == server and t.spec.display_name == tool:
                if "app" not in t.spec.visibility:
                    raise AppError(f"the tool {tool!r} of MCP server {server!r} is not callable by its app "
                                   "(its visibility is model only)")
                return t
        raise AppError(f"MCP server {server!r} has no tool named {tool!r}")

    async def app_resource(self, server: str, tool: str, timeout: float = 10.0) -> AppResource:
        """The app of tool ``tool`` (its name on ``server``) read again for a resumed chat, whatever the tool's visibility. Waits for a starting server
        (at most ``timeout``); :class:`AppError` saying why not (the server is not running, has no
        such tool, the tool has no app any more, the read failed)."""
        await self.settle_servers([server], timeout)
        await self.refresh_if_dirty()
        for t in self._all_tools():
            if t.server == server and t.spec.display_name == tool:
                return await t.app_resource()
        problem = self.server_problem(server)
        raise AppError(f"MCP server {server!r} {problem}" if problem else f"MCP server {server!r} has no tool named {tool!r}")

    async def call_tool(self, server: str, tool: str, arguments: dict[str, Any]) -> ToolResult:
        """Call a tool without the agent (``agent-ls mcp call``, the demo): why it cannot be
        called is an error result, like any failure of the call."""
        try:
            found = await self.resolve_tool(server, tool)
        except ToolUnavailable as e:
            return ToolResult.error(str(e))
        return await found.call(arguments)

    def instructions(self) -> str:
        """Server instructions as sorted ``## <server>`` sections (empty when none); a server
        starting with the host that a prompt did not wait for says so (:meth:`settle`)."""
        parts = []
        for name in sorted(self._conns):
            c = self._conns[name]
            said = c.handshake.instructions
            if c.connected and said and said.strip():
                parts.append(f"## {name}\n{said.strip()}\n")
            elif c.settling and not c.from_catalogue and c in self._first_start:
                parts.append(f"## {name}\n{STILL_STARTING}\n")
        return "\n".join(parts)

    # resources and prompts -------------------------------------------------------------
    def prompts(self) -> list[tuple[str, types.Prompt]]:
        return [(c.name, p) for c in sorted(self._conns.values(), key=lambda c: c.name) if c.serving
                for p in c.listing.prompts]

    def resources(self) -> list[tuple[str, types.Resource]]:
        return [(c.name, r) for c in sorted(self._conns.values(), key=lambda c: c.name) if c.serving
                for r in c.listing.resources]

    def resource_templates(self) -> list[tuple[str, types.ResourceTemplate]]:
        return [(c.name, r) for c in sorted(self._conns.values(), key=lambda c: c.name) if c.serving
                for r in c.listing.resource_templates]

    async def read_resource(self, server: str, uri: str) -> types.ReadResourceResult:
        return await self._get(server).read_resource(uri)

    async def get_prompt(self, server: str, name: str, arguments: dict[str, str] | None = None
                         ) -> types.GetPromptResult:
        return await self._get(server).get_prompt(name, arguments)

    # status --------------------------------------------------------------------------------
    def connection(self, name: str) -> ServerConnection | None:
        return self._conns.get(name)

    def server_names(self) -> list[str]:
        return sorted(set(self._conns) | set(self._failed))

    def status(self) -> list[ServerStatus]:
        out: list[ServerStatus] = []
        tool_infos: dict[str, list[ToolInfo]] = {}
        for t in self.tools():
            tool_infos.setdefault(t.server, []).append(
                ToolInfo(t.spec.name, t.spec.display_name or t.spec.name, t.spec.capability.value,
                         t.spec.description)
            )
        for name in self.server_names():
            conn = self._conns.get(name)
            if conn is None:
                f = self._failed[name]
                out.append(ServerStatus(
                    name=name, state=State.FAILED.value, transport="?", scope=f.source.scope.value,
                    source=str(f.source.file), error={"phase": Phase.CONFIG.value, "message": f.reason},
                ))
                continue
            info = None
            if (server_info := conn.handshake.server_info) is not None:
                info = f"{server_info.name} {server_info.version}".strip()
            connected = conn.serving
            out.append(ServerStatus(
                name=name,
                state=conn.state.value,
                transport=conn.config.transport,
                scope=conn.config.source.scope.value,
                source=str(conn.config.source.file),
                tool_count=len(conn.listing.tools) if connected else 0,
                prompt_count=len(conn.listing.prompts) if connected else 0,
                resource_count=len(conn.listing.resources) if connected else 0,
                error=error_dict(conn.error),
                stderr_tail=tuple(conn.redact(line) for line in conn.stderr.tail(40)),
                server_info=info,
                protocol_version=conn.handshake.protocol_version,
                restarts=conn.restarts,
                tools=tuple(tool_infos.get(name, ())),
                pid=conn.pid,
                auth=conn.auth.status() if conn.auth is not None else None,
                sandbox=server_sandbox_label(conn.config.transport, conn.config.sandbox),
            ))
        return out

    # internals -----------------------------------------------------------------------------
    def _get(self, name: str) -> ServerConnection:
        conn = self._conns.get(name)
        if conn is None:
            raise ServerUnavailable(f"no MCP server named {name!r} is configured")
        return conn

    def _changed(self, _name: str | None) -> None:
        if self.on_change is not None and not self._closed:
            try:
                self.on_change()
            except Exception:  # a listener must never break the host
                log.exception("status listener failed")

    def _spawn(self, coro: Any) -> None:
        self._background.spawn(coro, getattr(coro, "__qualname__", "task"))
