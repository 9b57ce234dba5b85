"""The first prompt can use the MCP tools (issue 44 item 1), through the real language server.

The knob server is made to start late on purpose (``--start-gate``: it serves only once the test
creates the gate file), and ``AGENT_LS_MODEL_FIRST_LIMIT`` is raised so that the host's start waits
for the model library: a prompt sent right after ``initialize`` meets the servers starting (and
usually the host not started yet). Nothing here depends on timing: the gate opens when the chat
has been shown the wait, or never.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor, wait_for
from tests.servers.launch import knob_stdio_params

pytestmark = pytest.mark.e2e

LONG = "600"


def _tool_names(body: dict[str, Any]) -> list[str]:
    return [t["function"]["name"] for t in body.get("tools") or []]


def _late_knob(setup: Setup) -> Path:
    gate = setup.root / "knob-gate"
    setup.extra_env["AGENT_LS_MODEL_FIRST_LIMIT"] = LONG
    setup.user_settings["mcpServers"] = {"knob": {**knob_stdio_params("--start-gate", gate), "connectTimeout": 120}}
    return gate


async def _open_gate_on_progress(ed: Editor, gate: Path) -> None:
    await wait_for(lambda: any(e["event"]["type"] == "tool_call_progress" for e in ed.events), timeout=120,
                   what="the wait shown in the chat")
    gate.touch()


async def test_a_prompt_sent_at_once_searches_waits_for_the_starting_server_and_uses_its_tool(setup: Setup) -> None:
    gate = _late_knob(setup)
    setup.llm.script(
        tool_calls([("tool_search", {"query": "select:mcp__knob__add"})]),
        tool_calls([("mcp__knob__add", {"a": 2, "b": 3})]),
        text("2 + 3 = 5"),
    )
    ed = await open_editor(setup)
    try:
        opener = asyncio.ensure_future(_open_gate_on_progress(ed, gate))
        result = await ed.request(P.PROMPT, {"text": "use the add tool to add 2 and 3"}, timeout=180)
        await opener
        assert result["text"] == "2 + 3 = 5"
        first = setup.llm.requests[0].body
        assert "tool_search" in _tool_names(first)  # on main: built-ins only, and "from your next step on"
        assert "knob" in json.dumps(first)
        events = ed.session_events(result["sessionId"])
        calls = [(e["type"], e.get("name")) for e in events if e["type"].startswith("tool_call")]
        assert calls == [("tool_call_started", "tool_search"), ("tool_call_progress", "tool_search"),
                         ("tool_call_finished", "tool_search"), ("tool_call_started", "mcp__knob__add"),
                         ("tool_call_finished", "mcp__knob__add")], calls
        progress = next(e for e in events if e["type"] == "tool_call_progress")
        assert "'knob'" in progress["message"] and "start" in progress["message"]
        search, add = [e for e in events if e["type"] == "tool_call_finished"]
        assert not search["isError"] and "mcp__knob__add" in search["content"], search
        assert not add["isError"] and "5" in add["content"], add
        assert "mcp__knob__add" in _tool_names(setup.llm.requests[1].body)  # loaded in the same turn
    finally:
        await close_editor(ed)


async def test_a_prompt_that_needs_no_tool_does_not_wait_for_the_starting_server(setup: Setup) -> None:
    """The server never starts in this test: the prompt is answered all the same, with
    tool_search offered, while the server is still starting."""
    _late_knob(setup)
    setup.llm.script(text("hello"))
    ed = await open_editor(setup)
    try:
        result = await ed.request(P.PROMPT, {"text": "say hello"}, timeout=180)
        assert result["text"] == "hello"
        assert "tool_search" in _tool_names(setup.llm.requests[0].body)
        assert (await ed.status())["knob"]["state"] == "starting"  # answered while it starts
    finally:
        await close_editor(ed)
