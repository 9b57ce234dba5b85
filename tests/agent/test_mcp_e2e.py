"""The agent with a real MCP server (the knob server over stdio) behind the real manager."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_ls.agent.store import SessionStore
from agent_ls.config.settings import load_settings
from agent_ls.mcp.manager import MCPManager
from tests.agent.conftest import Recorder, make_session
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls
from tests.servers.launch import knob_stdio_params
from tests.tooling import TRUST_ALL

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


async def start_manager(tmp: Path, ws: Path, servers: dict) -> MCPManager:  # type: ignore[type-arg]
    user = tmp / "user.json"
    user.write_text(json.dumps({"mcpServers": servers}))
    m = MCPManager(roots=[ws])
    await m.apply(load_settings([ws], user_settings=user, trust=TRUST_ALL))
    await m.wait_ready(30)
    return m


async def test_search_load_call_deferred_tool(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    m = await start_manager(tmp_path, ws, {"knob": knob_stdio_params("--tools", "60",
                                                                     "--instructions", "Knob rules.")})
    try:
        llm.script(
            tool_calls([("tool_search", {"query": "add two numbers"})]),
            tool_calls([("mcp__knob__add", {"a": 20, "b": 22})]),
            text("The sum is 42."),
        )
        s = make_session(llm, ws, mcp=m)
        rec = Recorder()
        result = await s.prompt("what is 20+22?", rec)
        assert result.text == "The sum is 42."
        first, second, third = (r.body for r in llm.requests[-3:])
        names1 = [t["function"]["name"] for t in first["tools"]]
        # deferred: no MCP schema in the first request, but the names in the reminder
        assert "tool_search" in names1 and not any(n.startswith("mcp__") for n in names1)
        system = first["messages"][0]["content"]
        assert "\nknob: add, add_tool, ask," in system and "## knob\nKnob rules." in system
        assert "mcp__knob__add" not in system  # names are listed short, under their server
        names2 = [t["function"]["name"] for t in second["tools"]]
        assert "mcp__knob__add" in names2
        tool_msgs = [msg for msg in third["messages"] if msg["role"] == "tool"]
        assert tool_msgs[-1]["content"] == "42"
        finished = rec.of("tool_call_finished")
        assert finished[0].name == "tool_search" and "mcp__knob__add" in finished[0].content
        # loaded tools stay loaded on the next turn
        llm.script(text("again"))
        await s.prompt("and now?")
        names4 = [t["function"]["name"] for t in llm.requests[-1].body["tools"]]
        assert "mcp__knob__add" in names4
    finally:
        await m.close()


async def test_list_changed_between_turns_shows_in_next_turn(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    m = await start_manager(tmp_path, ws, {"knob": knob_stdio_params()})
    try:
        s = make_session(llm, ws, mcp=m, defer=False)
        llm.script(text("one"))
        await s.prompt("first")
        names = [t["function"]["name"] for t in llm.requests[-1].body["tools"]]
        assert "mcp__knob__fresh_tool" not in names
        frozen_before = llm.requests[-1].body["messages"][0]
        await m.call_tool("knob", "add_tool", {"name": "fresh_tool"})
        for _ in range(100):
            if m.dirty:
                break
            await asyncio.sleep(0.02)
        llm.script(text("two"))
        await s.prompt("second")
        names = [t["function"]["name"] for t in llm.requests[-1].body["tools"]]
        assert "mcp__knob__fresh_tool" in names
        assert llm.requests[-1].body["messages"][0] == frozen_before
    finally:
        await m.close()


async def test_unchanged_refresh_keeps_tool_bytes(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    m = await start_manager(tmp_path, ws, {"knob": knob_stdio_params("--tools", "5")})
    try:
        s = make_session(llm, ws, mcp=m, defer=False)
        llm.script(text("one"), text("two"))
        await s.prompt("first")
        m.dirty = True
        conn = m.connection("knob")
        assert conn is not None
        conn.dirty = True
        await s.prompt("second")
        a, b = (r.body for r in llm.requests[-2:])
        assert json.dumps(a["tools"]) == json.dumps(b["tools"])
        assert a["messages"][0] == b["messages"][0]
    finally:
        await m.close()


def test_session_resumed_by_a_new_process(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    db = tmp_path / "sessions.sqlite3"
    script = f"""
import asyncio, sys
sys.path.insert(0, {str(Path(__file__).resolve().parents[2])!r})
from pathlib import Path
from agent_ls.agent.store import SessionStore
from tests.agent.conftest import make_session
from tests.llm.scripted_server import ScriptedLLM
class L: openai_base = {llm.openai_base!r}
store = SessionStore(Path({str(db)!r}))
s = make_session(L(), Path({str(ws)!r}), store=store)
r = asyncio.run(s.prompt("remember the word banana"))
print(s.session_id)
"""
    llm.script(text("I will remember banana."))
    out = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, out.stderr
    sid = out.stdout.strip().splitlines()[-1]
    store = SessionStore(db)
    assert [x.id for x in store.list_sessions()] == [sid]
    s = make_session(llm, ws, store=store, session_id=sid)
    assert [m["role"] for m in s.history] == ["user", "assistant"]
    llm.script(text("banana"))
    asyncio.run(s.prompt("what was the word?"))
    sent = llm.requests[-1].body["messages"]
    assert any(m.get("content") == "I will remember banana." for m in sent)
    assert len(store.load_messages(sid)) == 4


async def test_cancel_mid_mcp_tool_sends_cancelled_and_keeps_history(llm: ScriptedLLM, ws: Path,
                                                                      tmp_path: Path) -> None:
    probe = tmp_path / "cancel.log"
    m = await start_manager(tmp_path, ws, {"knob": knob_stdio_params("--cancel-file", str(probe))})
    store = SessionStore(tmp_path / "s.sqlite3")
    try:
        s = make_session(llm, ws, mcp=m, store=store)
        llm.script(
            tool_calls([("tool_search", {"query": "select:mcp__knob__cancel_probe,mcp__knob__echo"})]),
            tool_calls([("mcp__knob__cancel_probe", {}), ("mcp__knob__echo", {"text": "never"})]),
        )
        rec = Recorder()
        task = asyncio.create_task(s.prompt("probe it", rec))
        for _ in range(500):
            if probe.exists() and "started" in probe.read_text():
                break
            await asyncio.sleep(0.02)
        assert "started" in probe.read_text()
        task.cancel()
        with pytest.raises(asyncio.CancelledError):
            await task
        # the server saw notifications/cancelled for that very request
        for _ in range(250):
            if "cancelled" in probe.read_text():
                break
            await asyncio.sleep(0.02)
        lines = probe.read_text().split()
        assert lines[0] == "started" and lines[2] == "cancelled" and lines[1] == lines[3]
        # every tool call has a result, in the same order, in memory and in the store
        for history in (s.history, store.load_messages(s.session_id)):
            calls = [m for m in history if m.get("tool_calls")][-1]["tool_calls"]
            results = [m for m in history if m["role"] == "tool"][-2:]
            assert [r["tool_call_id"] for r in results] == [c["id"] for c in calls]
            assert all("cancelled" in r["content"] for r in results)
            assert history[-1]["role"] == "tool"
        assert rec.events[-1].type == "turn_finished" and rec.events[-1].stop_reason == "cancelled"
        fin = [e for e in rec.of("tool_call_finished") if e.name == "mcp__knob__cancel_probe"]
        assert fin and fin[0].is_error and "cancelled" in fin[0].content
        # the session and the server go on: the next turn is well formed and the tool still works
        llm.script(tool_calls([("mcp__knob__echo", {"text": "after"})]), text("fine"))
        result = await s.prompt("again")
        assert result.stop_reason == "end"
        sent = llm.requests[-1].body["messages"]
        ids = [c["id"] for msg in sent if msg.get("tool_calls") for c in msg["tool_calls"]]
        answered = [msg["tool_call_id"] for msg in sent if msg["role"] == "tool"]
        assert ids == answered
        assert sent[-1]["role"] == "tool" and sent[-1]["content"] == "after"
    finally:
        store.close()
        await m.close()


async def test_permissions_from_settings_and_annotations_in_a_real_turn(llm: ScriptedLLM, ws: Path,
                                                                       tmp_path: Path) -> None:
    from agent_ls.agent.config import agent_settings
    from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, PermissionGate, PermissionRules

    (ws / ".agent-ls").mkdir()
    (ws / ".agent-ls" / "settings.json").write_text(json.dumps({"permissions": {"deny": ["mcp__*__delete_*"]}}))
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"mcpServers": {"knob": knob_stdio_params()},
                                "permissions": {"allow": ["mcp__knob__delete_*"]}}))
    settings = load_settings([ws], user_settings=user, environ={}, trust=TRUST_ALL)
    agent = agent_settings(settings, environ={})
    m = MCPManager(roots=[ws])
    await m.apply(settings)
    await m.wait_ready(30)
    asked: list[str] = []

    async def handler(req: ApprovalRequest) -> ApprovalAnswer:
        asked.append(req.spec.name)
        return ApprovalAnswer.DENY

    try:
        gate = PermissionGate(PermissionRules(agent.allow, agent.ask, agent.deny), handler)
        llm.script(tool_calls([("mcp__knob__echo", {"text": "hi"}),          # readOnlyHint: runs
                               ("mcp__knob__delete_item", {"id": "7"}),      # denied by the workspace rule
                               ("mcp__knob__fetch_url", {"url": "http://x"}),  # openWorldHint: asks
                               ("mcp__knob__no_annotations_write_file", {"path": "p"})]),  # inferred write: asks
                   text("done"))
        s = make_session(llm, ws, mcp=m, gate=gate, defer=False)
        rec = Recorder()
        await s.prompt("go", rec)
        fin = {e.name: e for e in rec.of("tool_call_finished")}
        assert not fin["mcp__knob__echo"].is_error and fin["mcp__knob__echo"].content == "hi"
        assert fin["mcp__knob__delete_item"].denied and "mcp__*__delete_*" in fin["mcp__knob__delete_item"].content
        assert asked == ["mcp__knob__fetch_url", "mcp__knob__no_annotations_write_file"]
        assert fin["mcp__knob__fetch_url"].denied and "denied" in fin["mcp__knob__fetch_url"].content
        assert [e.name for e in rec.of("approval_requested")] == asked
    finally:
        await m.close()


async def test_open_world_and_run_words_ask_closed_read_only_runs(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    """Issue 25, finding 4: a tool annotated only readOnlyHint (openWorldHint defaults to true)
    and an unannotated ``query`` described "Run a SQL statement" ran unasked; read-only and
    closed-world still runs unasked."""
    from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, PermissionGate

    m = await start_manager(tmp_path, ws, {"knob": knob_stdio_params("--hinted-tools")})
    asked: list[str] = []

    async def handler(req: ApprovalRequest) -> ApprovalAnswer:
        asked.append(req.spec.name)
        return ApprovalAnswer.DENY

    try:
        llm.script(tool_calls([("mcp__knob__lookup_docs", {"q": "DB_PASSWORD=hunter2"}),
                               ("mcp__knob__query", {"sql": "DROP TABLE users"}),
                               ("mcp__knob__count_lines", {"text": "a\nb"}),
                               ("mcp__knob__echo", {"text": "hi"})]),
                   text("done"))
        s = make_session(llm, ws, mcp=m, gate=PermissionGate(handler=handler), defer=False)
        rec = Recorder()
        await s.prompt("go", rec)
        fin = {e.name: e for e in rec.of("tool_call_finished")}
        assert asked == ["mcp__knob__lookup_docs", "mcp__knob__query"]
        assert fin["mcp__knob__lookup_docs"].denied and fin["mcp__knob__query"].denied
        assert not fin["mcp__knob__count_lines"].is_error and fin["mcp__knob__count_lines"].content == "2"
        assert not fin["mcp__knob__echo"].is_error
    finally:
        await m.close()


async def test_refreshes_that_end_with_the_same_tools_keep_every_byte(llm: ScriptedLLM, ws: Path,
                                                                       tmp_path: Path) -> None:
    (ws / "AGENTS.md").write_text("House rules.\n")
    m = await start_manager(tmp_path, ws, {"knob": knob_stdio_params("--tools", "3", "--instructions", "Rules.")})
    try:
        for defer in (True, False):
            llm.clear()
            s = make_session(llm, ws, mcp=m, defer=defer)
            llm.script(text("one"), text("two"))
            await s.prompt("first")
            # two real list_changed notifications whose net effect is no change
            await m.call_tool("knob", "add_tool", {"name": "transient"})
            await m.call_tool("knob", "remove_tool", {"name": "transient"})
            for _ in range(100):
                if m.dirty:
                    break
                await asyncio.sleep(0.02)
            assert m.dirty
            await s.prompt("second")
            assert not m.dirty  # the refresh ran before the second prompt
            a, b = (r.body for r in llm.requests[-2:])
            assert json.dumps(a["tools"]) == json.dumps(b["tools"]), defer
            assert a["messages"][0] == b["messages"][0], defer  # frozen + dynamic system text
            assert "House rules." in a["messages"][0]["content"]
    finally:
        await m.close()


async def test_filtered_tool_set_gets_new_mcp_tools_after_list_changed(llm: ScriptedLLM, ws: Path,
                                                                      tmp_path: Path) -> None:
    m = await start_manager(tmp_path, ws, {"knob": knob_stdio_params()})
    try:
        s = make_session(llm, ws, mcp=m, defer=False)
        s.registry.set_active(["read_file", "grep", "mcp__knob__echo"])
        llm.script(text("one"), text("two"))
        await s.prompt("first")
        names = [t["function"]["name"] for t in llm.requests[-1].body["tools"]]
        assert names == ["grep", "read_file", "mcp__knob__echo"]
        await m.call_tool("knob", "add_tool", {"name": "fresh_tool"})
        for _ in range(100):
            if m.dirty:
                break
            await asyncio.sleep(0.02)
        await s.prompt("second")
        names = [t["function"]["name"] for t in llm.requests[-1].body["tools"]]
        assert names[:2] == ["grep", "read_file"] and "bash" not in names
        assert "mcp__knob__fresh_tool" in names and "mcp__knob__add" in names  # the MCP layer, swapped in
    finally:
        await m.close()
