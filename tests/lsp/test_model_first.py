"""The model library before the MCP host (issue 30 item 2), through the real language server.

With a model configured, ``initialized`` loads litellm first and starts the MCP servers after it
(their start-up would compete with that load on the same cores, and a prompt sent meanwhile
waits for it). ``AGENT_LS_MODEL_FIRST_LIMIT`` is raised here so that the order does not depend on
how loaded the machine is: only the model library's end, or something that needs the host, lets
the host start.
"""

from __future__ import annotations

import asyncio
import json

import pytest
from lsprotocol import types as lsp

from agent_ls.mcp.status import STILL_STARTING
from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text
from tests.lsp.conftest import Setup, close_editor, open_editor, wait_for
from tests.servers.launch import knob_stdio_params

pytestmark = pytest.mark.e2e

LONG = "600"


def _tool_names(body: dict[str, object]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]  # type: ignore[attr-defined, index]


async def test_a_prompt_sent_at_once_goes_to_the_model_before_the_servers_start(setup: Setup) -> None:
    """A prompt sent right after ``initialize`` is answered as soon as the model library has
    loaded: it does not wait for the MCP SDK nor for the servers, which start afterwards; the
    model is told which server is still starting, and its tools join the next prompt. The prompt
    waits for the whole warm-up (its rehearsal call builds what the first real call needs) rather
    than making a cold first call while the rehearsal runs."""
    setup.extra_env["AGENT_LS_MODEL_FIRST_LIMIT"] = LONG
    setup.extra_env["AGENT_LS_LOG_LEVEL"] = "debug"
    ed = await open_editor(setup)
    try:
        info = await ed.request(P.SERVER_INFO)
        assert info["loadedModules"] == {"litellm": False, "mcp": False}
        # The editor lists MCP prompts as it connects: nothing kept, nothing to list yet, and
        # asking does not start the host before the model library.
        assert (await ed.request(P.MCP_PROMPTS_LIST))["prompts"] == []
        # So does an editor restoring an open file: code actions come without the MCP prompts.
        path = setup.ws / "a.py"
        path.write_text("x = 1\n")
        uri = ed.open_document(path, "x = 1\n")
        found = await ed.client.text_document_code_action_async(lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri), range=lsp.Range(lsp.Position(0, 0), lsp.Position(0, 5)),
            context=lsp.CodeActionContext(diagnostics=[])))
        titles = [a["title"] if isinstance(a, dict) else a.title for a in found or []]
        assert titles and not any(t.startswith("MCP prompt") for t in titles)
        assert (await ed.request(P.SERVER_INFO))["loadedModules"]["mcp"] is False
        setup.llm.script(text("first"), text("second"))
        first_result = await ed.request(P.PROMPT, {"text": "hi"})
        assert first_result["text"] == "first"
        first = setup.llm.requests[0].body
        assert not any(n.startswith("mcp__") for n in _tool_names(first))
        assert "## knob" in json.dumps(first) and STILL_STARTING in json.dumps(first)  # the model is told
        logs = [m.message for m in ed.client.log_messages]
        done = next(i for i, m in enumerate(logs) if "warm-up: done" in m)
        turn = next(i for i, m in enumerate(logs) if "prompt: litellm ready" in m)
        assert done < turn, logs
        await ed.wait_state("knob", "connected")  # the host started once the library had loaded
        assert {"review", "greet"} <= {p["name"] for p in (await ed.request(P.MCP_PROMPTS_LIST))["prompts"]}
        result = await ed.request(P.PROMPT, {"text": "again", "sessionId": first_result["sessionId"]})
        assert result["text"] == "second"
        assert "mcp__knob__echo" in _tool_names(setup.llm.requests[1].body)
    finally:
        await close_editor(ed)


async def test_a_request_that_needs_the_host_starts_it_at_once(setup: Setup) -> None:
    """``mcp/callTool`` right after ``initialize`` does not wait for the model library: it
    starts the host now (else it would wait for the raised limit, ten minutes)."""
    setup.extra_env["AGENT_LS_MODEL_FIRST_LIMIT"] = LONG
    setup.user_settings["agent"]["allow"] = ["mcp__knob__echo"]
    ed = await open_editor(setup)
    try:
        out = await asyncio.wait_for(ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "echo",
                                                                  "arguments": {"text": "now"}}), 60)
        assert out["isError"] is False, out
        assert "now" in json.dumps(out["content"])
    finally:
        await close_editor(ed)


async def test_a_workspace_asking_for_trust_is_asked_without_waiting_for_the_model_library(setup: Setup) -> None:
    """A folder whose settings wait for the user's trust: the question is asked before the host
    starts (it needs none), and the answer starts the host at once; the workspace's server then
    connects."""
    setup.extra_env["AGENT_LS_MODEL_FIRST_LIMIT"] = LONG
    setup.pretrusted = []
    setup.state_file.unlink(missing_ok=True)
    (setup.ws / ".mcp.json").write_text(json.dumps({"mcpServers": {"project": knob_stdio_params("--name", "project")}}))
    ed = await open_editor(setup)
    try:
        await wait_for(lambda: ed.workspace_trust_requests, timeout=60, what="the workspace trust question")
        assert (await ed.request(P.SERVER_INFO))["loadedModules"]["mcp"] is False  # asked before the host
        await ed.wait_state("project", "connected", timeout=60)  # trusted: the host started without the limit
    finally:
        await close_editor(ed)
