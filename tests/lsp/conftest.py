"""pytest-lsp fixtures: the real `agent-ls` language server over stdio."""

from __future__ import annotations

import json
import os
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from tests.llm.scripted_server import ScriptedLLM
from tests.servers.launch import knob_stdio_params


@pytest.fixture(scope="session")
def llm_server() -> Any:
    with ScriptedLLM() as server:
        yield server


class Setup:
    """Workspace + user settings + environment for one language-server process."""

    def __init__(self, root: Path, llm: ScriptedLLM) -> None:
        self.root = root
        self.ws = root / "ws"
        (self.ws / ".agent-ls").mkdir(parents=True)
        self.config = root / "config"
        self.config.mkdir()
        self.data = root / "data"
        self.llm = llm
        self.user_settings: dict[str, Any] = {
            "model": "openai/scripted", "apiBase": llm.openai_base, "agent": {"maxRetries": 0},
            "mcpServers": {"knob": knob_stdio_params()},
        }

    def write(self) -> None:
        (self.config / "settings.json").write_text(json.dumps(self.user_settings, indent=2))

    def env(self) -> dict[str, str]:
        e = dict(os.environ)
        e.update({"AGENT_LS_CONFIG_DIR": str(self.config), "AGENT_LS_DATA_DIR": str(self.data),
                  "OPENAI_API_KEY": "x"})
        return e


@pytest.fixture
def setup(tmp_path: Path, llm_server: ScriptedLLM) -> Setup:
    llm_server.clear()
    llm_server.requests.clear()
    s = Setup(tmp_path, llm_server)
    s.write()
    return s


SERVER_COMMAND = [sys.executable, "-m", "agent_ls.cli"]


def plain(value: Any) -> Any:
    """Client-side payloads arrive as namedtuples: back to plain JSON values."""
    if hasattr(value, "_asdict"):
        return {k: plain(v) for k, v in value._asdict().items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    return value


class Session:
    """A started language server plus what it sent us."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.events: list[dict[str, Any]] = []
        self.status_changes: list[Any] = []
        self.approvals: list[dict[str, Any]] = []
        self.approval_answer = "allow_once"
        self.trust_answer: bool | None = True
        self.trust_requests: list[dict[str, Any]] = []
        self.elicit_answer: dict[str, Any] = {"action": "accept", "content": {}}

    async def request(self, method: str, params: Any = None) -> Any:
        return plain(await self.client.protocol.send_request_async(method, params or {}))

    def event_types(self) -> list[str]:
        return [e["event"]["type"] for e in self.events]


async def open_session(setup: Setup, folders: list[Path] | None = None) -> Session:
    config = ClientServerConfig(server_command=SERVER_COMMAND, server_env=setup.env())
    client: LanguageClient = await config.start()  # type: ignore[assignment]
    sess = Session(client)

    @client.feature("agent/event")
    def on_event(params: Any) -> None:
        sess.events.append(plain(params))

    @client.feature("mcp/statusChanged")
    def on_status(params: Any) -> None:
        sess.status_changes.append(plain(params))

    @client.feature("agent/approve")
    def on_approve(params: Any) -> dict[str, Any]:
        sess.approvals.append(plain(params))
        return {"answer": sess.approval_answer}

    @client.feature("mcp/trustServer")
    def on_trust(params: Any) -> dict[str, Any]:
        sess.trust_requests.append(plain(params))
        return {"trusted": sess.trust_answer}

    @client.feature("mcp/elicit")
    def on_elicit(params: Any) -> dict[str, Any]:
        return sess.elicit_answer

    @client.feature(lsp.CLIENT_REGISTER_CAPABILITY)
    def on_register(params: Any) -> None:
        return None

    @client.feature(lsp.WORKSPACE_APPLY_EDIT)
    def on_apply(params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        sess.applied = params  # type: ignore[attr-defined]
        return lsp.ApplyWorkspaceEditResult(applied=True)

    await client.initialize_session(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(
            window=lsp.WindowClientCapabilities(work_done_progress=True),
            workspace=lsp.WorkspaceClientCapabilities(
                workspace_folders=True, apply_edit=True,
                did_change_watched_files=lsp.DidChangeWatchedFilesClientCapabilities(dynamic_registration=True)),
        ),
        workspace_folders=[lsp.WorkspaceFolder(uri=f.as_uri(), name=f.name) for f in (folders or [setup.ws])],
    ))
    return sess


@pytest.fixture
async def lsp_session(setup: Setup) -> AsyncIterator[Session]:
    sess = await open_session(setup)
    yield sess
    await sess.client.shutdown_session()
    await sess.client.stop()


async def wait_for(pred: Any, timeout: float = 20.0) -> None:
    import asyncio

    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        if loop.time() > end:
            raise AssertionError("condition not met in time")
        await asyncio.sleep(0.05)
