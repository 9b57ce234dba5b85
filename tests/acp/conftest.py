"""Fixtures for `agent-ls acp`: the real agent process over stdio, driven by the ACP package's
own client side (``acp.spawn_agent_process`` / ``ClientSideConnection``), with the scripted
OpenAI-compatible LLM on loopback as the model (through litellm) and real MCP servers.

:class:`RecordingClient` is the editor: it records every ``session/update``, answers
``session/request_permission`` from a list of option ids, and serves ``fs/*`` from in-memory
buffers when the test advertises the fs capability.
"""

from __future__ import annotations

import asyncio
import functools
import sys
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager
from pathlib import Path
from typing import Any

import pytest
import pytest_asyncio
from acp import RequestError, spawn_agent_process
from acp.schema import (
    AllowedOutcome,
    ClientCapabilities,
    DeniedOutcome,
    FileSystemCapabilities,
    ReadTextFileResponse,
    RequestPermissionResponse,
    WriteTextFileResponse,
)

from tests import harness
from tests.harness import ProcessSetup, fresh_setup
from tests.harness import llm_server as llm_server  # the session's scripted LLM (a fixture)
from tests.llm.scripted_server import ScriptedLLM

AGENT_COMMAND = [sys.executable, "-m", "agent_ls.cli", "acp"]

wait_for = functools.partial(harness.wait_for, timeout=20.0)  # 20 s by default for ACP's conditions


class AcpSetup(ProcessSetup):
    """Workspace, user settings and environment for one agent process; its stderr goes to a file."""

    def __init__(self, root: Path, llm: ScriptedLLM) -> None:
        super().__init__(root, llm)
        self.stderr_file = root / "agent-stderr.log"

    def stderr_text(self) -> str:
        return self.stderr_file.read_text(errors="replace") if self.stderr_file.exists() else ""


@pytest.fixture
def setup(tmp_path: Path, llm_server: ScriptedLLM) -> Iterator[AcpSetup]:
    yield from fresh_setup(AcpSetup, tmp_path, llm_server)


class RecordingClient:
    """The editor side: records updates, answers permission requests, serves fs/* buffers."""

    def __init__(self) -> None:
        self.updates: list[tuple[str, Any]] = []
        self.permission_requests: list[Any] = []
        self.permission_answers: list[Any] = []
        """Option ids used in order (or async functions of the session id and the tool call that
        return one); ``default_answer`` after that (None: cancelled)."""
        self.default_answer: str | None = "allow_once"
        self.hold_permissions = False
        self.buffers: dict[str, str] = {}
        """fs/read_text_file answers by absolute path (others: "not found")."""
        self.reads: list[str] = []
        self.writes: list[tuple[str, str]] = []
        self.init: Any = None
        """The agent's initialize result."""
        self.messages: list[dict[str, Any]] = []
        """Every raw JSON-RPC message from the agent (a stream observer)."""

    # the ACP Client methods ---------------------------------------------------------------------
    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any],
                                 **kwargs: Any) -> RequestPermissionResponse:
        self.permission_requests.append({"sessionId": session_id, "toolCall": tool_call, "options": options})
        if self.hold_permissions:
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                raise
        answer = self.permission_answers.pop(0) if self.permission_answers else self.default_answer
        if callable(answer):  # decides from the request, when it likes (answers in any order)
            answer = await answer(session_id, tool_call)
        if answer is None:
            return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))
        return RequestPermissionResponse(outcome=AllowedOutcome(outcome="selected", option_id=answer))

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        self.updates.append((session_id, update))

    async def read_text_file(self, session_id: str, path: str, line: int | None = None, limit: int | None = None,
                             **kwargs: Any) -> ReadTextFileResponse:
        self.reads.append(path)
        if path not in self.buffers:
            raise RequestError.resource_not_found(path)
        return ReadTextFileResponse(content=self.buffers[path])

    async def write_text_file(self, session_id: str, path: str, content: str, **kwargs: Any) -> WriteTextFileResponse:
        self.writes.append((path, content))
        self.buffers[path] = content
        return WriteTextFileResponse()

    # helpers ------------------------------------------------------------------------------------
    def of(self, session_id: str, kind: str | None = None) -> list[Any]:
        return [u for s, u in self.updates if s == session_id and (kind is None or u.session_update == kind)]

    def text(self, session_id: str, kind: str = "agent_message_chunk") -> str:
        return "".join(u.content.text for u in self.of(session_id, kind))


@asynccontextmanager
async def start_agent(setup: AcpSetup, client: RecordingClient | None = None, *, fs: bool = False,
                      terminal: bool = False) -> AsyncIterator[tuple[Any, Any, RecordingClient]]:
    """``agent-ls acp`` as a subprocess with a connected, initialized client."""
    client = client or RecordingClient()

    def observe(event: Any) -> None:
        if event.direction.value == "incoming":
            client.messages.append(event.message)

    with open(setup.stderr_file, "ab") as err:
        async with spawn_agent_process(client, AGENT_COMMAND[0], *AGENT_COMMAND[1:], env=setup.env(),
                                       cwd=setup.ws, transport_kwargs={"stderr": err.fileno()},
                                       observers=[observe]) as (conn, process):
            caps = ClientCapabilities(fs=FileSystemCapabilities(read_text_file=fs, write_text_file=fs),
                                      terminal=terminal)
            init = await asyncio.wait_for(conn.initialize(protocol_version=1, client_capabilities=caps), 30)
            client.init = init
            try:
                yield conn, process, client
            finally:
                await conn.close()


class Shared:
    """One agent process for a whole test module (fs capability on, at most 4 steps per turn);
    each test opens its own session and resets the client and the scripted LLM."""

    def __init__(self, setup: AcpSetup, conn: Any, process: Any, client: RecordingClient) -> None:
        self.setup = setup
        self.conn = conn
        self.process = process
        self.client = client

    def fresh(self) -> tuple[AcpSetup, Any, RecordingClient]:
        self.setup.llm.clear()
        c = self.client
        c.permission_answers = []
        c.default_answer = "allow_once"
        c.hold_permissions = False
        c.buffers.clear()
        c.reads.clear()
        c.writes.clear()
        c.permission_requests.clear()
        return self.setup, self.conn, c


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def shared(tmp_path_factory: pytest.TempPathFactory, llm_server: ScriptedLLM) -> AsyncIterator[Shared]:
    setup = AcpSetup(tmp_path_factory.mktemp("acp-shared"), llm_server)
    setup.user_settings["agent"]["maxSteps"] = 4
    setup.write()
    async with start_agent(setup, fs=True) as (conn, process, client):
        yield Shared(setup, conn, process, client)
