"""`agent-ls acp` across processes: session/load of a stored session, workspace trust."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
from acp import RequestError, text_block

from tests.acp.conftest import AcpSetup, start_agent
from tests.llm.scripted_server import text, tool_calls
from tests.servers.launch import knob_stdio_params

pytestmark = pytest.mark.e2e


def store_session(setup: AcpSetup) -> str:
    """A session as an earlier agent-ls run stored it (the same store, the same messages)."""
    from agent_ls.agent.store import SessionStore

    with SessionStore.for_workspace(setup.data, setup.ws.resolve()) as store:
        sid = store.create_session(model="openai/scripted").id
        for message in [
            {"role": "user", "content": "read notes"},
            {"role": "assistant", "content": None, "tool_calls": [{"id": "call_read", "type": "function", "function": {
                "name": "read_file", "arguments": json.dumps({"path": "notes.txt"})}}]},
            {"role": "tool", "tool_call_id": "call_read", "content": "     1\tremember me\n"},
            {"role": "assistant", "content": "It says remember me."},
        ]:
            store.append_message(sid, message)
    return sid


async def test_load_session_in_a_new_process(setup: AcpSetup) -> None:
    """session/load of a session stored by an earlier process: the history is replayed as
    session/update before the response, and the next prompt continues it."""
    sid = store_session(setup)
    async with start_agent(setup) as (conn, _proc, client):
        listed = await conn.list_sessions(cwd=str(setup.ws))
        assert [s.session_id for s in listed.sessions] == [sid]
        await asyncio.wait_for(conn.load_session(cwd=str(setup.ws), session_id=sid, mcp_servers=[]), 30)
        # all of it arrived before the load response (the available commands, /compact always among
        # them, are announced on their own)
        replay = [u for u in client.of(sid) if u.session_update != "available_commands_update"]
        kinds = [u.session_update for u in replay]
        assert kinds == ["user_message_chunk", "tool_call", "tool_call_update", "agent_message_chunk",
                         "session_info_update"]
        assert replay[4].title == "read notes"  # the stored title (the first message)
        assert replay[0].content.text == "read notes"
        assert replay[1].tool_call_id == "call_read" and replay[1].kind == "read"
        assert replay[2].status == "completed" and "remember me" in replay[2].content[0].content.text
        assert replay[3].content.text == "It says remember me."

        setup.llm.script(text("Still here."))
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("and now?")]), 60)
        assert result.stop_reason == "end_turn"
        messages = setup.llm.requests[-1].body["messages"]
        assert [m["role"] for m in messages if m["role"] != "system"] == [
            "user", "assistant", "tool", "assistant", "user"]

        with pytest.raises(RequestError) as err:
            await conn.load_session(cwd=str(setup.ws), session_id="no-such-session", mcp_servers=[])
        assert err.value.code == -32602


def tool_messages(body: dict) -> list[dict]:
    return [m for m in body["messages"] if m["role"] == "tool"]


async def test_untrusted_workspace_server_waits_for_trust(setup: AcpSetup) -> None:
    """A workspace-defined stdio server does not start until the user trusts the folder,
    asked through session/request_permission; "trust for this session" is not written down."""
    setup.ws_settings = {"mcpServers": {"wsknob": knob_stdio_params()}}
    setup.write()
    async with start_agent(setup) as (conn, proc, client):
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        client.permission_answers = ["reject_once"]
        setup.llm.script(tool_calls([("mcp__wsknob__echo", {"text": "hi"}, "call_1")]), text("It is not there."))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("echo hi")]), 60)
        question = client.permission_requests[0]
        assert "Trust" in question["toolCall"].title and question["toolCall"].kind == "other"
        assert "wsknob" in question["toolCall"].content[0].content.text
        assert {o.kind for o in question["options"]} == {"allow_once", "allow_always", "reject_once", "reject_always"}
        assert "no tool named" in tool_messages(setup.llm.requests[-1].body)[0]["content"]

        # a new session asks again; trusted for this session, the server starts and its tool runs
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        client.permission_answers = ["allow_once"]
        setup.llm.script(tool_calls([("mcp__wsknob__echo", {"text": "trusted now"}, "call_2")]), text("Done."))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("echo again")]), 60)
        assert len(client.permission_requests) == 2  # the folder question; its server came with it
        assert tool_messages(setup.llm.requests[-1].body)[0]["content"] == "trusted now"
        state = json.loads(setup.state_file.read_text()) if setup.state_file.exists() else {}
        assert not state.get("trust") and not state.get("trustedWorkspaces")  # once: not remembered

        # a trusted folder's new server entry asks on its own; "always" is remembered for the entry
        ws2 = setup.root / "ws2"
        (ws2 / ".agent-ls").mkdir(parents=True)
        (ws2 / ".agent-ls" / "settings.json").write_text(json.dumps({"mcpServers": {"ws2knob": knob_stdio_params()}}))
        trust_folder_only(setup, ws2)
        sid = (await conn.new_session(cwd=str(ws2), mcp_servers=[])).session_id
        client.permission_answers = ["reject_once"]
        setup.llm.script(text("Not yet."))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("hello ws2")]), 60)
        assert client.permission_requests[-1]["toolCall"].title == "Start the workspace MCP server 'ws2knob'?"
        asked = len(client.permission_requests)
        sid = (await conn.new_session(cwd=str(ws2), mcp_servers=[])).session_id  # asked again
        client.permission_answers = ["allow_always"]
        setup.llm.script(tool_calls([("mcp__ws2knob__echo", {"text": "entry trusted"}, "call_3")]), text("Done."))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("echo in ws2")]), 60)
        assert len(client.permission_requests) == asked + 1
        assert client.permission_requests[-1]["toolCall"].title == "Start the workspace MCP server 'ws2knob'?"
        assert tool_messages(setup.llm.requests[-1].body)[0]["content"] == "entry trusted"
        state = json.loads(setup.state_file.read_text())
        assert [r["name"] for r in state["trust"][str(ws2.resolve())].values()] == ["ws2knob"]

        # once trusted, the folder's settings apply in the same turn (here: its model)
        ws3 = setup.root / "ws3"
        (ws3 / ".agent-ls").mkdir(parents=True)
        (ws3 / ".agent-ls" / "settings.json").write_text(json.dumps({"model": "openai/ws-model"}))
        sid = (await conn.new_session(cwd=str(ws3), mcp_servers=[])).session_id
        client.permission_answers = ["allow_once"]
        setup.llm.script(text("from the folder's model"))
        await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("which model?")]), 60)
        assert "model" in client.permission_requests[-1]["toolCall"].content[0].content.text
        assert setup.llm.requests[-1].body["model"] == "ws-model"

        servers = [pid for pid in children(proc.pid) if "knob_server.py" in cmdline(pid)]
        assert len(servers) == 2
        # the client goes away: the agent quits by itself, with 0, however long closing its three
        # hosts takes on a busy machine (the ACP SDK's own exit would SIGTERM it after 2 s)
        proc.stdin.write_eof()
        assert await proc.wait() == 0
    assert not [pid for pid in servers if alive(pid)]  # the agent left no MCP server behind


def trust_folder_only(setup: AcpSetup, folder: Path) -> None:
    """The user trusted the folder's settings earlier, not the server entries it has now."""
    import os

    from agent_ls.config.settings import load_settings
    from agent_ls.config.state import HostState
    from agent_ls.config.trust import TrustPolicy

    state = HostState(setup.state_file)
    request = load_settings([folder], user_settings=setup.config / "settings.json", environ=dict(os.environ),
                            trust=TrustPolicy(state)).workspaces[folder].request
    state.set_workspace_decision(folder, request.digest, True, request.settings_snapshot())


def children(pid: int) -> list[int]:
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                stat = (entry / "stat").read_text()
            except OSError:
                continue
            if int(stat.rsplit(")", 1)[1].split()[1]) == pid:
                out.append(int(entry.name))
    return out


def cmdline(pid: int) -> str:
    try:
        return Path(f"/proc/{pid}/cmdline").read_text().replace("\0", " ")
    except OSError:
        return ""


def alive(pid: int) -> bool:
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except OSError:
        return False
    return state not in ("Z", "X")



async def test_slash_rename_names_the_session_for_every_front_end(setup: AcpSetup) -> None:
    """Issue 39: `/rename` is an available command; it names the session in the store every
    front end lists (no model request), and the client is told with session_info_update."""
    sid = store_session(setup)
    async with start_agent(setup) as (conn, _proc, client):
        await asyncio.wait_for(conn.load_session(cwd=str(setup.ws), session_id=sid, mcp_servers=[]), 30)
        asked = len(setup.llm.requests)
        result = await asyncio.wait_for(conn.prompt(session_id=sid, prompt=[text_block("/rename  Notes   reader ")]), 60)
        assert result.stop_reason == "end_turn"
        assert len(setup.llm.requests) == asked  # a command, not a prompt to the model
        assert "[session named 'Notes reader']" in client.text(sid)
        assert client.of(sid, "session_info_update")[-1].title == "Notes reader"
        commands = client.of(sid, "available_commands_update")[-1].available_commands
        assert {"compact", "rename"} <= {c.name for c in commands}
        listed = await conn.list_sessions(cwd=str(setup.ws))
        assert [s.title for s in listed.sessions] == ["Notes reader"]
