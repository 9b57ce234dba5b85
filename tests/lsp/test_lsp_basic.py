"""The language server end to end over stdio (pytest-lsp)."""

from __future__ import annotations

import pytest

from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Session, Setup, wait_for

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")


async def test_status_and_prompt_stream(lsp_session: Session, setup: Setup) -> None:
    status = await lsp_session.request("mcp/status")
    await wait_for(lambda: True)
    for _ in range(200):
        status = await lsp_session.request("mcp/status")
        if status["servers"] and status["servers"][0]["state"] == "connected":
            break
        import asyncio
        await asyncio.sleep(0.05)
    assert status["servers"][0]["name"] == "knob" and status["servers"][0]["state"] == "connected"
    setup.llm.script(tool_calls([("tool_search", {"query": "select:mcp__knob__echo"})]),
                     tool_calls([("mcp__knob__echo", {"text": "ping"})]), text("pong done"))
    result = await lsp_session.request("agent/prompt", {"text": "echo ping"})
    assert result["stopReason"] == "end" and result["text"] == "pong done"
    types = lsp_session.event_types()
    assert types[0] == "turn_started" and types[-1] == "turn_finished"
    assert "tool_call_started" in types and "text" in types
    finished = [e["event"] for e in lsp_session.events if e["event"]["type"] == "tool_call_finished"]
    assert finished[-1]["content"] == "ping"
