"""`agent-ls acp` starts its MCP host in the background (issue 46): ``session/new`` and the first
prompt's model request do not wait for the MCP SDK's import, a folder with no server configured
never imports it, and a folder's trust question still comes before anything of the folder runs.

The agent process gets a ``sitecustomize`` (on its ``PYTHONPATH``) that notes every import of the
MCP SDK (the ``mcp`` package) in a file and holds it until the test creates a gate file: whether
the agent waited for the SDK is then a matter of order, never of timing."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from agent_ls.mcp.status import STILL_STARTING
from tests.acp.conftest import AcpSetup, RecordingClient, start_agent, wait_for
from tests.acp.test_sessions import children, cmdline, tool_messages
from tests.llm.scripted_server import respond, text, tool_calls
from tests.servers.launch import knob_stdio_params
from tests.tooling import REPO_ROOT

pytestmark = pytest.mark.e2e

PROBE = '''
import os, sys, time, traceback

_marker = os.environ.pop("AGENT_LS_TEST_MCP_MARKER", None)  # (not inherited by the agent's children)
_gate = os.environ.pop("AGENT_LS_TEST_MCP_GATE", None)


class _HeldLoader:
    """The SDK's own loader, which waits for the gate before it runs the package (outside the
    global import lock: only importers of the SDK wait)."""

    def __init__(self, loader):
        self.loader = loader

    def create_module(self, spec):
        return self.loader.create_module(spec)

    def exec_module(self, module):
        with open(_marker, "a") as f:
            f.write("".join(traceback.format_stack()))
        while _gate and not os.path.exists(_gate):
            time.sleep(0.02)
        self.loader.exec_module(module)


class _McpProbe:
    """Notes the first import of the MCP SDK (with its stack), and holds it until the gate opens."""

    def find_spec(self, name, path=None, target=None):
        if name != "mcp":
            return None
        sys.meta_path.remove(self)
        for finder in sys.meta_path:
            spec = getattr(finder, "find_spec", lambda *a: None)(name, path, target)
            if spec is not None:
                spec.loader = _HeldLoader(spec.loader)
                return spec
        return None


if _marker:
    sys.meta_path.insert(0, _McpProbe())
'''


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for the module (the same ``PYTHONPATH``: the tests share one model host)."""
    folder = tmp_path_factory.mktemp("mcp-probe")
    (folder / "sitecustomize.py").write_text(PROBE)
    return folder


class ProbedSetup(AcpSetup):
    """An agent process whose MCP SDK import is noted in :attr:`marker` and held until :attr:`gate`
    exists."""

    def __init__(self, root: Path, llm: Any, probe: Path) -> None:
        super().__init__(root, llm)
        self.probe = probe
        self.marker = root / "mcp-imported"
        self.gate = root / "mcp-gate"

    def env(self) -> dict[str, str]:
        e = super().env()
        e.update({"PYTHONPATH": f"{self.probe}{os.pathsep}{REPO_ROOT}", "AGENT_LS_TEST_MCP_MARKER": str(self.marker),
                  "AGENT_LS_TEST_MCP_GATE": str(self.gate),
                  # a prompt that waits for the held host waits longer than the test: seen as a hang
                  "AGENT_LS_SETTLE_LIMIT": "600"})
        return e


@pytest.fixture
def probed(tmp_path: Path, llm_server: Any, probe_dir: Path) -> Iterator[ProbedSetup]:
    llm_server.clear()
    s = ProbedSetup(tmp_path, llm_server, probe_dir)
    s.write()
    yield s
    s.gate.touch()
    llm_server.clear()


async def test_no_server_configured_never_imports_the_mcp_sdk(probed: ProbedSetup) -> None:
    """No MCP server in the settings nor in session/new: the session and its prompt run without
    the MCP SDK (before, session/new imported it and created an empty manager)."""
    async with start_agent(probed) as (conn, _proc, client):
        sid = (await asyncio.wait_for(conn.new_session(cwd=str(probed.ws), mcp_servers=[]), 60)).session_id
        probed.llm.script(tool_calls([("bash", {"command": "echo ran"}, "call_bash")]), text("Done."))
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("run it")]), 60)
        assert result.stop_reason == "end_turn"
        assert tool_messages(probed.llm.requests[-1].body)[0]["content"].startswith("ran\n")
        await wait_for(lambda: client.of(sid, "available_commands_update"), what="available commands")
        assert not probed.marker.exists(), probed.marker.read_text()


@pytest.mark.parametrize("kept", [False, True], ids=["first run", "tools kept from the last run"])
async def test_session_new_and_the_first_prompt_do_not_wait_for_the_mcp_sdk(probed: ProbedSetup, kept: bool) -> None:
    """A configured server: its host starts in the background. session/new answers and the first
    prompt reaches the model while the SDK's import is held, the server said to be starting (also
    when its tools were kept from an earlier run: before, the prompt waited for the host to offer
    them); once the import may go on, the server's tool serves the next prompt."""
    probed.user_settings["mcpServers"] = {"knob": knob_stdio_params()}
    probed.write()
    if kept:  # another command connected the server: its tools are kept in the catalogue
        env = {**probed.env(), "AGENT_LS_TEST_MCP_GATE": "", "AGENT_LS_TEST_MCP_MARKER": ""}
        listed = await asyncio.to_thread(
            subprocess.run, [sys.executable, "-m", "agent_ls.cli", "mcp", "tools", "-w", str(probed.ws)], env=env,
            capture_output=True, text=True, timeout=90, stdin=subprocess.DEVNULL)
        assert "knob" in listed.stdout, listed.stderr
    async with start_agent(probed) as (conn, _proc, client):
        sid = (await asyncio.wait_for(conn.new_session(cwd=str(probed.ws), mcp_servers=[]), 60)).session_id
        probed.llm.script(text("Hello."))
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("hi")]), 60)
        assert result.stop_reason == "end_turn" and client.text(sid) == "Hello."
        assert not probed.gate.exists()  # (the whole prompt ran while the SDK's import was held)
        await wait_for(probed.marker.exists, what="the MCP SDK's import begun (in the background)")
        system = probed.llm.requests[0].body["messages"][0]["content"]
        assert "## knob" in str(system) and STILL_STARTING in str(system)

        probed.gate.touch()
        probed.llm.script(tool_calls([("mcp__knob__echo", {"text": "from knob"}, "call_echo")]), text("Echoed."))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("echo")]), 60)
        assert tool_messages(probed.llm.requests[-1].body)[0]["content"] == "from knob"


class OrderClient(RecordingClient):
    """Answers the folder's trust question after noting what had happened by then, then lets the
    MCP SDK's import go on."""

    def __init__(self, setup: ProbedSetup) -> None:
        super().__init__()
        self.setup = setup
        self.pid = 0
        self.at_question: dict[str, Any] = {}

    async def request_permission(self, session_id: str, tool_call: Any, options: list[Any], **kwargs: Any) -> Any:
        if not self.at_question:
            self.at_question = {
                "model requests": len(self.setup.llm.requests),
                "servers": [p for p in children(self.pid) if "knob_server.py" in cmdline(p)],
            }
            self.setup.gate.touch()
        return await super().request_permission(session_id, tool_call, options, **kwargs)


async def test_the_folder_trust_question_comes_first_while_the_host_starts(probed: ProbedSetup) -> None:
    """An untrusted folder whose settings name a model and a stdio server, the user's own server
    starting with the host: the first prompt asks about the folder before any model request and
    while the host cannot have started (the SDK's import is held until the question is
    answered); nothing of the folder has run or applied by then. Once
    trusted (for this session), the folder's model answers and its server's tool runs."""
    probed.user_settings["mcpServers"] = {"userknob": knob_stdio_params()}
    probed.ws_settings = {"model": "openai/folder-model", "mcpServers": {"wsknob": knob_stdio_params()}}
    probed.write()
    client = OrderClient(probed)
    async with start_agent(probed, client) as (conn, proc, client):
        client.pid = proc.pid
        sid = (await asyncio.wait_for(conn.new_session(cwd=str(probed.ws), mcp_servers=[]), 60)).session_id
        client.permission_answers = ["allow_once"]
        probed.llm.script(tool_calls([("mcp__wsknob__echo", {"text": "trusted"}, "call_echo")]), text("Done."))
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("echo")]), 60)
        assert result.stop_reason == "end_turn"
        assert client.at_question == {"model requests": 0, "servers": []}
        assert "Trust" in client.permission_requests[0]["toolCall"].title
        assert {r.body["model"] for r in probed.llm.requests} == {"folder-model"}
        assert tool_messages(probed.llm.requests[-1].body)[0]["content"] == "trusted"


async def test_the_mcp_sdk_is_imported_once_the_first_prompts_request_has_gone_out(
        probed: ProbedSetup, monkeypatch: pytest.MonkeyPatch) -> None:
    """A configured server and a prompt sent right after session/new: the MCP SDK's import (and
    the servers' start) begins only once the model has the prompt's request (``model_first``,
    ``request_first``: before, it began at session/new and competed with that request on a busy
    machine); the server then connects and its tool serves the next prompt. (The model-first
    limit, which bounds the wait for a slow model library, is longer than the test; litellm runs in
    the agent's process, where the request has gone out once litellm's response began: through the
    model host, it is said to have gone out as it is handed over, a moment before the model has it.)"""
    monkeypatch.setenv("AGENT_LS_MODEL_FIRST_LIMIT", "600")
    monkeypatch.setenv("AGENT_LS_MODEL_HOST", "0")
    probed.user_settings["mcpServers"] = {"knob": knob_stdio_params()}
    probed.write()
    probed.gate.touch()  # nothing held: only the order is looked at
    at_request: list[bool] = []

    def answer(body: dict[str, Any]) -> Any:
        at_request.append(probed.marker.exists())
        return text("Hello.")

    async with start_agent(probed) as (conn, _proc, client):
        sid = (await asyncio.wait_for(conn.new_session(cwd=str(probed.ws), mcp_servers=[]), 60)).session_id
        probed.llm.script(respond(answer))
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("hi")]), 60)
        assert result.stop_reason == "end_turn" and client.text(sid) == "Hello."
        assert at_request == [False], probed.marker.read_text()[-3000:]
        await wait_for(probed.marker.exists, what="the MCP SDK's import, after the first request")
        probed.llm.script(tool_calls([("mcp__knob__echo", {"text": "from knob"}, "call_echo")]), text("Echoed."))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("echo")]), 60)
        assert tool_messages(probed.llm.requests[-1].body)[0]["content"] == "from knob"


async def test_with_no_prompt_the_host_starts_a_moment_after_session_new(
        probed: ProbedSetup, monkeypatch: pytest.MonkeyPatch) -> None:
    """No prompt comes (the user is typing): the host's start goes on a moment after session/new,
    not after the model-first limit (here longer than the test), so the servers are up by the
    time the prompt comes."""
    monkeypatch.setenv("AGENT_LS_MODEL_FIRST_LIMIT", "600")
    probed.user_settings["mcpServers"] = {"knob": knob_stdio_params()}
    probed.write()
    probed.gate.touch()
    async with start_agent(probed) as (conn, _proc, _client):
        await asyncio.wait_for(conn.new_session(cwd=str(probed.ws), mcp_servers=[]), 60)
        await wait_for(probed.marker.exists, timeout=60, what="the MCP SDK's import with no prompt")
