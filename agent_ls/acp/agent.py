"""The ACP agent (``agent-ls acp``): the ``agent-client-protocol`` package's agent side over stdio.

Methods: ``initialize``, ``authenticate`` (accepted and ignored: no auth methods are offered, the
model's keys come from the settings or the environment; some clients call it regardless),
``session/new``, ``session/load``, ``session/list``, ``session/prompt``, ``session/cancel``,
``session/set_config_option`` (the model).
Anything else (``session/set_mode``: the agent has no modes; the unstable methods) is "method
not found".
Each session is a conversation of its folder's :class:`~agent_ls.runtime.conversations.Conversations`
(:mod:`agent_ls.acp.session`): the methods translate.
Errors are the protocol's: invalid params for a malformed request or an unknown session,
invalid request for a prompt while the session answers one, internal error (with the message)
for a turn that failed or no model.
"""

from __future__ import annotations

import asyncio
import logging
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from acp import PROTOCOL_VERSION, RequestError, run_agent
from acp.schema import (
    AgentCapabilities,
    AuthenticateResponse,
    ClientCapabilities,
    Implementation,
    InitializeResponse,
    ListSessionsResponse,
    LoadSessionResponse,
    McpCapabilities,
    NewSessionResponse,
    PromptCapabilities,
    PromptResponse,
    SessionCapabilities,
    SessionInfo,
    SessionListCapabilities,
    SetSessionConfigOptionResponse,
)

from agent_ls import __version__
from agent_ls.acp.host import HostPool
from agent_ls.acp.session import AcpSession
from agent_ls.core.process import ExitWatchdog
from agent_ls.runtime.stored import stored_sessions

log = logging.getLogger("agent_ls.acp")

COMMANDS_WAIT_SECONDS = 10.0
"""How long after a session starts its MCP servers may take before the slash commands their
prompts provide are announced (they are announced again after each turn when they change)."""


def _folder(cwd: str) -> Path:
    path = Path(cwd)
    if not path.is_absolute():
        raise RequestError.invalid_params({"cwd": cwd, "details": "cwd must be an absolute path"})
    if not path.is_dir():
        raise RequestError.invalid_params({"cwd": cwd, "details": "cwd is not a directory"})
    return path.resolve()


def render_prompt(blocks: list[Any]) -> str:
    """ACP content blocks as the text the model gets (embedded resources inline, links named)."""
    parts: list[str] = []
    for b in blocks:
        kind = getattr(b, "type", None)
        if kind == "text":
            parts.append(b.text)
        elif kind == "resource":
            res = b.resource
            text = getattr(res, "text", None)
            if text is not None:
                parts.append(f"File {res.uri}:\n```\n{text}\n```")
            else:
                parts.append(f"[attached binary resource {res.uri} ({res.mime_type or 'data'}) not shown]")
        elif kind == "resource_link":
            parts.append(f"[attached: {b.uri}]")
        else:
            parts.append(f"[{kind or 'unknown'} content omitted: agent-ls takes text]")
    return "\n\n".join(p for p in parts if p)


class AgentLsAcp:
    """The ACP ``Agent``: sessions over the agent-ls agent and MCP host."""

    def __init__(self) -> None:
        self.conn: Any = None
        self.client_capabilities = ClientCapabilities()
        self.sessions: dict[str, AcpSession] = {}
        self.hosts = HostPool()

    def on_connect(self, conn: Any) -> None:
        self.conn = conn

    async def initialize(self, protocol_version: int, client_capabilities: ClientCapabilities | None = None,
                         client_info: Implementation | None = None, **kwargs: Any) -> InitializeResponse:
        if client_capabilities is not None:
            self.client_capabilities = client_capabilities
        if client_info is not None:
            log.info("ACP client %s %s", client_info.name, client_info.version)
        return InitializeResponse(
            protocol_version=min(protocol_version, PROTOCOL_VERSION),
            agent_capabilities=AgentCapabilities(
                load_session=True,
                prompt_capabilities=PromptCapabilities(embedded_context=True),
                mcp_capabilities=McpCapabilities(http=True, sse=True),
                session_capabilities=SessionCapabilities(list=SessionListCapabilities()),
            ),
            agent_info=Implementation(name="agent-ls", title="agent-ls", version=__version__),
            auth_methods=[],
        )

    async def authenticate(self, method_id: str, **kwargs: Any) -> AuthenticateResponse:
        log.info("ACP authenticate %r: nothing to do (keys come from the settings or the environment)", method_id)
        return AuthenticateResponse()

    def _fs(self) -> tuple[bool, bool]:
        fs = self.client_capabilities.fs
        return (bool(fs and fs.read_text_file), bool(fs and fs.write_text_file))

    async def _open(self, cwd: str, mcp_servers: list[Any] | None, session_id: str | None) -> AcpSession:
        folder = _folder(cwd)
        host = await self.hosts.get(folder, mcp_servers or [])
        session = AcpSession(self.conn, folder, host, self._fs(), terminal=bool(self.client_capabilities.terminal))
        try:
            await session.build(session_id)
        except BaseException:
            await session.close()
            raise
        self.sessions[session.id] = session
        host.opened()
        return session

    async def new_session(self, cwd: str, mcp_servers: list[Any] | None = None, **kwargs: Any) -> NewSessionResponse:
        session = await self._open(cwd, mcp_servers, None)
        session.spawn(session.publish_commands(wait=COMMANDS_WAIT_SECONDS), "available commands")
        options = session.options_sent = await session.config_options()
        return NewSessionResponse(session_id=session.id, config_options=options)

    async def load_session(self, cwd: str, session_id: str, mcp_servers: list[Any] | None = None,
                           **kwargs: Any) -> LoadSessionResponse:
        old = self.sessions.pop(session_id, None)
        if old is not None:  # loaded again (e.g. a reconnecting editor): start afresh from the store
            await old.close()
        session = await self._open(cwd, mcp_servers, session_id)
        await session.replay_history()
        await session.publish_title()
        session.spawn(session.publish_commands(wait=COMMANDS_WAIT_SECONDS), "available commands")
        options = session.options_sent = await session.config_options()
        return LoadSessionResponse(config_options=options)

    async def list_sessions(self, cwd: str | None = None, cursor: str | None = None,
                            **kwargs: Any) -> ListSessionsResponse:
        """The stored sessions of ``cwd``, or of every folder without it (newest first)."""
        found = await stored_sessions(_folder(cwd) if cwd is not None else None)
        return ListSessionsResponse(sessions=[
            SessionInfo(session_id=i.id, cwd=str(root), title=i.title,
                        updated_at=datetime.fromtimestamp(i.updated, UTC).isoformat())
            for root, i in found])

    async def set_config_option(self, config_id: str, session_id: str, value: str | bool,
                                **kwargs: Any) -> SetSessionConfigOptionResponse:
        session = self._session(session_id)
        options = await session.set_config_option(config_id, value)
        return SetSessionConfigOptionResponse(config_options=options)

    def _session(self, session_id: str) -> AcpSession:
        session = self.sessions.get(session_id)
        if session is None:
            raise RequestError.invalid_params({"sessionId": session_id, "details": f"unknown session {session_id!r}"})
        return session

    async def prompt(self, session_id: str, prompt: list[Any], **kwargs: Any) -> PromptResponse:
        session = self._session(session_id)
        task = asyncio.ensure_future(session.run_turn(render_prompt(prompt)))  # a second one: invalid request
        try:
            stop_reason = await task
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.cancelled() and not (current is not None and current.cancelling()):
                return PromptResponse(stop_reason="cancelled")  # session/cancel ended the turn
            raise
        return PromptResponse(stop_reason=stop_reason)  # type: ignore[arg-type]

    async def cancel(self, session_id: str, **kwargs: Any) -> None:
        session = self.sessions.get(session_id)
        if session is None:
            log.info("session/cancel for an unknown session %r", session_id)
            return
        await session.conversations.cancel(session_id)

    async def shutdown(self) -> None:
        sessions, self.sessions = list(self.sessions.values()), {}
        await asyncio.gather(*(s.close() for s in sessions), return_exceptions=True)
        await self.hosts.close()


async def serve(channel_fd: int) -> None:
    # lazy: +1 module, ~2 ms for importers of this module (tests, the CLI's help)
    from agent_ls.acp.stdio import StrictNdjsonTransport, open_stdio

    reader, writer = await open_stdio(channel_fd)
    agent = AgentLsAcp()
    try:
        await run_agent(agent, StrictNdjsonTransport(reader, writer))  # type: ignore[arg-type]
    finally:
        try:
            await agent.shutdown()
        finally:
            # asyncio now cancels what is left and main() ends the process; if anything holds
            # it, the watchdog ends it (and any child) a few seconds later.
            ExitWatchdog().arm(0)
