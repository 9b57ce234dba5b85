"""Issue 26 over ACP: compaction under a small window, the context meter as ``usage_update``,
``/compact`` as an available command (always offered; an MCP prompt named ``compact`` keeps a
server-qualified name), and handles that read back after a restart and ``session/load``."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace
from typing import Any

import pytest
from acp import text_block

from agent_ls.acp.session import AcpSession
from tests.acp.conftest import AcpSetup, start_agent, wait_for
from tests.agent.test_context import agent_model, write_files

WINDOW = 12_000


@pytest.mark.e2e
async def test_compaction_meter_slash_compact_and_handles_after_a_restart(setup: AcpSetup) -> None:
    write_files(setup.ws, 5)
    setup.user_settings["agent"]["contextWindow"] = WINDOW
    setup.write()
    setup.llm.window = WINDOW
    setup.llm.script(*(agent_model() for _ in range(40)))
    async with start_agent(setup) as (conn, _proc, client):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        await wait_for(lambda: client.of(sid, "available_commands_update"), what="available commands")
        names = {c.name for c in client.of(sid, "available_commands_update")[-1].available_commands}
        assert "compact" in names  # offered with no MCP prompt at all
        for i in range(5):
            result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block(f"read f{i}")]), 60)
            assert result.stop_reason == "end_turn"
        assert not [r for r in setup.llm.requests if r.rejected]
        meters = client.of(sid, "usage_update")
        assert len(meters) >= 10 and all(m.size == WINDOW and 0 < m.used <= WINDOW for m in meters)
        # issue 44: the same figure as the editor's meter, the provider's count of the last request and answer
        last = [r for r in setup.llm.requests if not r.rejected][-1]
        assert meters[-1].used == last.prompt_tokens + max(1, len(last.turn.chunks))
        assert meters[-1].field_meta == {"agentLs": {"contextSource": "provider"}}
        assert meters[0].field_meta == {"agentLs": {"contextSource": "estimate"}}  # before the first answer
        before = meters[-1].used
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("/compact")]), 60)
        assert result.stop_reason == "end_turn"
        assert "Compacted the conversation" in client.text(sid)
        assert client.of(sid, "usage_update")[-1].used < before
    # a restart: session/load in a new process, then the first output reads back through its handle
    async with start_agent(setup) as (conn, _proc, client):
        await asyncio.wait_for(conn.load_session(cwd=str(setup.ws), session_id=sid, mcp_servers=[]), 30)
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("read back out-1")]), 60)
        assert result.stop_reason == "end_turn"
        messages = setup.llm.requests[-1].body["messages"]
        assert messages[-1]["role"] == "tool" and "1\tF0 " in messages[-1]["content"]
        assert messages[1]["content"].startswith("<conversation-summary>")  # it continues compacted
    assert not [r for r in setup.llm.requests if r.rejected]


def test_the_builtin_compact_wins_over_an_mcp_prompt_of_that_name() -> None:
    session: Any = AcpSession.__new__(AcpSession)
    prompts = [("docs", SimpleNamespace(name="compact")), ("docs", SimpleNamespace(name="review"))]
    session.host = SimpleNamespace(manager=SimpleNamespace(prompts=lambda: prompts))
    commands = session._collect_commands()
    assert set(commands) == {"docs.compact", "review"}
