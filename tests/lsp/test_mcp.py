"""The MCP methods over stdio against real knob MCP servers: status, restart, enable, trust,
resources, prompts, direct tool calls, elicitation, roots."""

from __future__ import annotations

import base64
import json
from pathlib import Path

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from agent_ls.server.protocol import methods as P
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor, pid_alive, wait_for
from tests.servers.launch import knob_stdio_params

pytestmark = pytest.mark.e2e


async def test_status_and_status_changed(editor: Editor, setup: Setup) -> None:
    knob = await editor.wait_state("knob", "connected")
    assert knob["transport"] == "stdio" and knob["scope"] == "user"
    assert knob["source"] == str(setup.user_file)
    assert knob["toolCount"] > 10 and knob["promptCount"] == 2 and knob["resourceCount"] >= 2
    assert knob["serverInfo"].startswith("knob") and isinstance(knob["pid"], int) and pid_alive(knob["pid"])
    tools = {t["original"]: t for t in knob["tools"]}
    assert tools["echo"]["name"] == "mcp__knob__echo" and tools["echo"]["capability"] == "read"
    assert tools["delete_item"]["capability"] == "write"
    # mcp/statusChanged told the editor about the connection without being asked.
    await wait_for(lambda: any(s["name"] == "knob" and s["state"] == "connected"
                               for change in editor.status_changes for s in change),
                   what="a statusChanged with knob connected")
    # Work-done progress was reported while the servers connected.
    reports = [p for tokens in editor.client.progress_reports.values() for p in tokens]
    assert reports, "no work-done progress"
    # window/logMessage carried the outcome.
    await wait_for(lambda: any("MCP server knob: connected" in m.message for m in editor.client.log_messages),
                   what="a log line about knob")


async def test_restart_one_and_all(setup: Setup) -> None:
    setup.user_settings["mcpServers"]["knob2"] = knob_stdio_params("--name", "knob2")
    ed = await open_editor(setup)
    try:
        a = (await ed.wait_state("knob", "connected"))["pid"]
        b = (await ed.wait_state("knob2", "connected"))["pid"]
        result = await ed.request(P.MCP_RESTART, {"server": "knob"})
        servers = {s["name"]: s for s in result["servers"]}
        assert servers["knob"]["state"] == "connected" and servers["knob"]["pid"] not in (None, a)
        assert servers["knob2"]["pid"] == b
        await wait_for(lambda: not pid_alive(a), what="the old knob process to end")
        a2 = servers["knob"]["pid"]
        result = await ed.request(P.MCP_RESTART, {})
        servers = {s["name"]: s for s in result["servers"]}
        assert servers["knob"]["pid"] not in (None, a2) and servers["knob2"]["pid"] not in (None, b)
        assert all(s["state"] == "connected" for s in servers.values())
        await wait_for(lambda: not pid_alive(a2) and not pid_alive(b), what="the old processes to end")
        with pytest.raises(JsonRpcException, match="no MCP server named 'nope'") as err:
            await ed.request(P.MCP_RESTART, {"server": "nope"})
        assert err.value.code == P.REQUEST_FAILED
    finally:
        await close_editor(ed)


async def test_set_enabled(editor: Editor, setup: Setup) -> None:
    pid = (await editor.wait_state("knob", "connected"))["pid"]
    result = await editor.request(P.MCP_SET_ENABLED, {"server": "knob", "enabled": False})
    knob = next(s for s in result["servers"] if s["name"] == "knob")
    assert knob["state"] == "disabled" and knob["pid"] is None and knob["toolCount"] == 0
    await wait_for(lambda: not pid_alive(pid), what="the disabled server's process to end")
    await wait_for(lambda: any(s["name"] == "knob" and s["state"] == "disabled"
                               for change in editor.status_changes for s in change), what="statusChanged disabled")
    with pytest.raises(JsonRpcException, match="not connected"):
        await editor.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "echo", "arguments": {"text": "x"}})
    result = await editor.request(P.MCP_SET_ENABLED, {"server": "knob", "enabled": True})
    knob = next(s for s in result["servers"] if s["name"] == "knob")
    assert knob["state"] == "connected" and knob["pid"] not in (None, pid)
    out = await editor.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "echo", "arguments": {"text": "back"}})
    assert out["content"] == "back"


async def test_disabled_is_remembered_per_workspace(setup: Setup) -> None:
    ed = await open_editor(setup)
    try:
        await ed.wait_state("knob", "connected")
        await ed.request(P.MCP_SET_ENABLED, {"server": "knob", "enabled": False})
    finally:
        await close_editor(ed)
    ed = await open_editor(setup)
    try:
        await ed.wait_state("knob", "disabled")
    finally:
        await close_editor(ed)


async def test_resources_list_and_read(editor: Editor) -> None:
    await editor.wait_state("knob", "connected")
    listed = await editor.request(P.MCP_RESOURCES_LIST)
    by_uri = {r["uri"]: r for r in listed["resources"]}
    assert by_uri["knob://readme"]["server"] == "knob" and by_uri["knob://readme"]["mimeType"] == "text/plain"
    assert "knob://blob" in by_uri
    assert any(t["uriTemplate"] == "knob://items/{item_id}" for t in listed["templates"])
    assert (await editor.request(P.MCP_RESOURCES_LIST, {"server": "knob"}))["resources"] == listed["resources"]
    read = await editor.request(P.MCP_RESOURCES_READ, {"server": "knob", "uri": "knob://readme"})
    assert read["contents"][0]["text"].startswith("# knob server")
    blob = await editor.request(P.MCP_RESOURCES_READ, {"server": "knob", "uri": "knob://blob"})
    assert base64.b64decode(blob["contents"][0]["blob"]) == bytes(range(256))
    item = await editor.request(P.MCP_RESOURCES_READ, {"server": "knob", "uri": "knob://items/42"})
    assert "42" in item["contents"][0]["text"]
    with pytest.raises(JsonRpcException) as err:
        await editor.request(P.MCP_RESOURCES_READ, {"server": "knob", "uri": "knob://nothing-here"})
    assert err.value.code == P.REQUEST_FAILED
    with pytest.raises(JsonRpcException, match="no MCP server named"):
        await editor.request(P.MCP_RESOURCES_READ, {"server": "ghost", "uri": "knob://readme"})


async def test_prompts_list_and_get(editor: Editor) -> None:
    await editor.wait_state("knob", "connected")
    listed = await editor.request(P.MCP_PROMPTS_LIST)
    prompts = {p["name"]: p for p in listed["prompts"]}
    assert prompts["review"]["server"] == "knob"
    assert [(a["name"], a["required"]) for a in prompts["greet"]["arguments"]] == [("name", True), ("style", False)]
    got = await editor.request(P.MCP_PROMPTS_GET, {"server": "knob", "name": "greet", "arguments": {"name": "Ada"}})
    assert got["messages"] and "Ada" in got["messages"][0]["text"] and got["messages"][0]["role"] == "user"
    review = await editor.request(P.MCP_PROMPTS_GET, {"server": "knob", "name": "review",
                                                      "arguments": {"code": "x = 1"}})
    assert "x = 1" in review["messages"][0]["text"]
    with pytest.raises(JsonRpcException) as err:
        await editor.request(P.MCP_PROMPTS_GET, {"server": "knob", "name": "greet"})  # missing required arg
    assert err.value.code == P.REQUEST_FAILED


async def test_call_tool_through_the_approval_gate(setup: Setup) -> None:
    setup.user_settings["permissions"] = {"deny": ["mcp__knob__fetch_url"]}
    ed = await open_editor(setup)
    try:
        await ed.wait_state("knob", "connected")
        # Read-only: runs without asking (original or model-facing name).
        out = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "echo", "arguments": {"text": "hi"}})
        assert out == {"isError": False, "content": "hi", "denied": False, "structured": None,
                       "truncatedChars": 0, "attachments": [], "title": None, "applied": None}
        out = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "mcp__knob__add",
                                                 "arguments": {"a": 2, "b": 3}})
        assert out["content"] == "5"
        assert ed.approvals == []
        # Write: asks; deny -> an error result, the tool did not run.
        ed.approval_answers = ["deny"]
        out = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "delete_item", "arguments": {"id": "1"}})
        assert out["isError"] and out["denied"] and "denied" in out["content"]
        assert len(ed.approvals) == 1
        ask = ed.approvals[0]
        assert ask["tool"] == "mcp__knob__delete_item" and ask["arguments"] == {"id": "1"}
        assert ask["sessionId"] is None and ask["server"] == "knob" and ask["reason"]
        # allow_session: runs, and the next call does not ask again.
        ed.approval_answers = ["allow_session"]
        out = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "delete_item", "arguments": {"id": "2"}})
        assert out["content"] == "deleted item 2" and not out["isError"]
        ed.default_approval = "deny"
        out = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "delete_item", "arguments": {"id": "3"}})
        assert out["content"] == "deleted item 3" and len(ed.approvals) == 2
        # A permission rule denies without asking.
        out = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "fetch_url",
                                                 "arguments": {"url": "http://x"}})
        assert out["denied"] and "rule" in out["content"] and len(ed.approvals) == 2
        # Tool failures are results, unknown tools and servers are errors.
        ed.default_approval = "allow_once"
        out = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "mcp__knob__fail"})
        assert out["isError"] and not out["denied"]
        with pytest.raises(JsonRpcException, match="no tool named"):
            await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "nope"})
        with pytest.raises(JsonRpcException, match="no MCP server named"):
            await ed.request(P.MCP_CALL_TOOL, {"server": "ghost", "tool": "echo"})
        # Structured output and attachments come through.
        out = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "structured"})
        assert out["structured"]["city"] == "Lisbon"
        out = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "image"})
        assert out["attachments"][0]["kind"] == "image" and out["attachments"][0]["mimeType"] == "image/png"
    finally:
        await close_editor(ed)


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_elicitation_round_trip(setup: Setup, protocol: str) -> None:
    """mcp/elicit reaches the editor with the form schema; the answer reaches the MCP server
    (with the schema's defaults filled in); decline comes back as decline. The same in both eras:
    an input_required round (2026-07-28, the default) and a server-to-client request (legacy)."""
    setup.user_settings["mcpServers"]["knob"]["protocol"] = protocol
    editor = await open_editor(setup)
    try:
        await _elicitation_round_trip(editor, "2026-07-28" if protocol == "auto" else "2025-11-25")
    finally:
        await close_editor(editor)


async def _elicitation_round_trip(editor: Editor, era: str) -> None:
    assert (await editor.wait_state("knob", "connected"))["protocolVersion"] == era
    editor.elicit_answer = {"action": "accept", "content": {"ok": True, "name": "zed"}}
    out = await editor.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "ask",
                                                 "arguments": {"question": "Who are you?"}})
    assert not out["isError"], out
    assert len(editor.elicitations) == 1
    asked = editor.elicitations[0]
    assert asked["server"] == "knob" and asked["message"] == "Who are you?"
    schema = asked["requestedSchema"]
    assert schema["required"] == ["ok"] and schema["properties"]["color"]["enum"] == ["red", "green", "blue"]
    seen = json.loads(out["content"])
    assert seen == {"action": "accept", "content": {"ok": True, "name": "zed", "count": 3, "color": "blue"}}
    editor.elicit_answer = {"action": "decline"}
    out = await editor.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "ask", "arguments": {"question": "?"}})
    assert json.loads(out["content"])["action"] == "decline"
    editor.elicit_answer = {"action": "whatever"}  # a broken answer is a cancel, never an accept
    out = await editor.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "ask", "arguments": {"question": "?"}})
    assert json.loads(out["content"])["action"] == "cancel"


async def test_elicitation_during_a_turn(editor: Editor, setup: Setup) -> None:
    from tests.llm.scripted_server import text, tool_calls

    await editor.wait_state("knob", "connected")
    editor.elicit_answer = {"action": "accept", "content": {"ok": False, "color": "red"}}
    setup.llm.script(tool_calls([("mcp__knob__ask", {"question": "favourite colour?"})]), text("noted"))
    result = await editor.request(P.PROMPT, {"text": "ask me"})
    assert result["text"] == "noted" and editor.elicitations[0]["message"] == "favourite colour?"
    finished = next(e for e in editor.session_events() if e["type"] == "tool_call_finished")
    assert json.loads(finished["content"])["content"]["color"] == "red"


def _ws_server(setup: Setup) -> None:
    setup.ws_settings = {"mcpServers": {"wsknob": knob_stdio_params("--name", "wsknob")}}


async def test_trust_flow_trusted(setup: Setup) -> None:
    _ws_server(setup)
    ed = await open_editor(setup)
    try:
        status = await ed.wait_state("wsknob", "connected")
        assert status["scope"] == "workspace"
        assert len(ed.trust_requests) == 1
        asked = ed.trust_requests[0]
        assert asked["server"] == "wsknob" and asked["source"] == str(setup.ws_file)
        assert asked["command"] == setup.user_settings["mcpServers"]["knob"]["command"]
        assert asked["args"][-2:] == ["--name", "wsknob"]
        # User-scope servers are never asked about.
        assert [t["server"] for t in ed.trust_requests] == ["wsknob"]
    finally:
        await close_editor(ed)
    # Remembered: the next start does not ask and connects.
    ed = await open_editor(setup)
    try:
        await ed.wait_state("wsknob", "connected")
        assert ed.trust_requests == []
    finally:
        await close_editor(ed)


async def test_trust_flow_denied_then_trusted(setup: Setup) -> None:
    _ws_server(setup)
    ed = await open_editor(setup, configure=lambda e: setattr(e, "trust_answer", False))
    try:
        status = await ed.wait_state("wsknob", "untrusted")
        assert status["pid"] is None and status["error"]["phase"] == "trust"
        assert len(ed.trust_requests) == 1
        result = await ed.request(P.MCP_TRUST, {"server": "wsknob", "trusted": True})
        assert next(s for s in result["servers"] if s["name"] == "wsknob")["state"] == "connected"
        out = await ed.request(P.MCP_CALL_TOOL, {"server": "wsknob", "tool": "echo", "arguments": {"text": "ok"}})
        assert out["content"] == "ok"
        result = await ed.request(P.MCP_TRUST, {"server": "wsknob", "trusted": False})
        assert next(s for s in result["servers"] if s["name"] == "wsknob")["state"] == "untrusted"
        with pytest.raises(JsonRpcException, match="needs no trust"):
            await ed.request(P.MCP_TRUST, {"server": "knob", "trusted": True})
    finally:
        await close_editor(ed)


async def test_trust_no_answer_keeps_waiting(setup: Setup) -> None:
    _ws_server(setup)
    ed = await open_editor(setup, configure=lambda e: setattr(e, "trust_answer", None))
    try:
        await wait_for(lambda: ed.trust_requests, what="the trust question")
        status = await ed.wait_state("wsknob", "awaiting-trust")
        assert status["pid"] is None
    finally:
        await close_editor(ed)


async def test_workspace_folders_change_roots_and_scopes(setup: Setup) -> None:
    """didChangeWorkspaceFolders: a real MCP server sees the new root (and gets roots/list_changed
    on a handshake-era session); the new folder's settings file becomes a config scope (its server asks for trust)."""
    ed = await open_editor(setup)
    try:
        await ed.wait_state("knob", "connected")

        async def roots() -> list[str]:
            out = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "roots"})
            assert not out["isError"], out
            return [r["uri"] for r in json.loads(out["content"])["roots"]]

        async def changed() -> int:
            out = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "roots_changed_count"})
            return int(out["content"])

        assert await roots() == [setup.ws.as_uri()]
        other = setup.root / "other"
        (other / ".agent-ls").mkdir(parents=True)
        (other / ".agent-ls" / "settings.json").write_text(json.dumps(
            {"mcpServers": {"otherknob": knob_stdio_params("--name", "otherknob")}}))
        ed.client.workspace_did_change_workspace_folders(lsp.DidChangeWorkspaceFoldersParams(
            event=lsp.WorkspaceFoldersChangeEvent(added=[lsp.WorkspaceFolder(uri=other.as_uri(), name="other")],
                                                  removed=[])))
        status = await ed.wait_state("otherknob", "connected")
        assert status["source"] == str(other / ".agent-ls" / "settings.json")
        # the new folder was never trusted: one workspace prompt lists its server, and trusting the
        # folder trusts that entry (no second, per-server question)
        asked = [r for r in ed.workspace_trust_requests if r["folder"] == str(other)]
        assert [[e["server"] for e in r["servers"]] for r in asked] == [["otherknob"]]
        assert ed.trust_requests == []
        # roots/list_changed on a handshake-era session; 2026-07-28 has no such notification (the
        # server asks for the roots in each request that needs them, and sees the new one below)
        era = (await ed.status())["knob"]["protocolVersion"]
        assert await changed() == (0 if era == "2026-07-28" else 1)
        assert await roots() == [setup.ws.as_uri(), other.as_uri()]
        info = await ed.request(P.SERVER_INFO)
        assert info["workspaceFolders"] == [str(setup.ws), str(other)]
        # Removing the folder removes its scope (and its server) and the root.
        ed.client.workspace_did_change_workspace_folders(lsp.DidChangeWorkspaceFoldersParams(
            event=lsp.WorkspaceFoldersChangeEvent(added=[], removed=[lsp.WorkspaceFolder(uri=other.as_uri(),
                                                                                         name="other")])))
        await wait_for(lambda: True)

        async def gone() -> bool:
            return "otherknob" not in await ed.status()

        for _ in range(200):
            if await gone():
                break
            import asyncio
            await asyncio.sleep(0.05)
        assert await gone()
        assert await changed() == (0 if era == "2026-07-28" else 2) and await roots() == [setup.ws.as_uri()]
    finally:
        await close_editor(ed)


async def test_stdio_server_failure_is_reported(setup: Setup) -> None:
    """A broken server fails alone, with its reason, and the others keep working."""
    setup.user_settings["mcpServers"]["broken"] = {"command": str(Path("/nonexistent/mcp-server"))}
    setup.user_settings["mcpServers"]["dies"] = knob_stdio_params("--exit-during-handshake", "7")
    ed = await open_editor(setup)
    try:
        await ed.wait_state("knob", "connected")
        broken = await ed.wait_state("broken", "failed")
        assert broken["error"]["phase"] == "spawn" and broken["error"].get("errno") == 2
        dies = await ed.wait_state("dies", "failed")
        assert dies["error"]["phase"] == "handshake" and dies["error"].get("exitCode") == 7
        out = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "echo", "arguments": {"text": "fine"}})
        assert out["content"] == "fine"
        await wait_for(lambda: any("broken" in m.message and m.type == lsp.MessageType.Warning
                                   for m in ed.client.log_messages), what="a warning about the broken server")
        # The user sees each failure once (window/showMessage), with its phase.
        await wait_for(lambda: len([m for m in ed.client.messages if "failed" in m.message]) == 2,
                       what="two failure messages")
        shown = sorted(m.message for m in ed.client.messages)
        assert "'broken' failed (spawn)" in shown[0] and "'dies' failed (handshake)" in shown[1]
    finally:
        await close_editor(ed)


async def test_oauth_sign_in_and_out_through_the_editor(setup: Setup) -> None:
    """mcp/signIn: the authorization page goes to the editor (window/showDocument, external);
    once the user allows it the server connects. mcp/signOut forgets the tokens."""
    from tests.servers.oauth_server import OAuthTestServers

    async with OAuthTestServers() as servers:
        setup.user_settings["mcpServers"]["remote"] = {"type": "http", "url": servers.mcp_url}
        ed = await open_editor(setup)
        try:
            before = await ed.wait_state("remote", "needs-sign-in")
            assert before["auth"]["state"] == "needs-sign-in" and ed.shown_documents == []
            status = await ed.request(P.MCP_SIGN_IN, {"server": "remote"})
            assert status["name"] == "remote" and status["state"] == "connected", status
            assert status["auth"]["state"] == "signed-in"
            assert len(ed.shown_documents) == 1 and ed.shown_documents[0].external is True
            assert "code_challenge" in ed.shown_documents[0].uri
            out = await ed.request(P.MCP_CALL_TOOL, {"server": "remote", "tool": "whoami"})
            assert json.loads(out["content"])["client_id"] in servers.state.clients
            status = await ed.request(P.MCP_SIGN_OUT, {"server": "remote"})
            assert status["state"] == "needs-sign-in" and status["auth"]["state"] == "needs-sign-in"
            with pytest.raises(JsonRpcException, match="does not use OAuth") as err:
                await ed.request(P.MCP_SIGN_IN, {"server": "knob"})
            assert err.value.code == P.REQUEST_FAILED
        finally:
            await close_editor(ed)


async def test_a_tool_run_from_the_editor_returns_at_most_a_card_of_text(editor: Editor) -> None:
    """The agent keeps long MCP results whole and pages them; a call from the editor
    (mcp/callTool, a tool code action) gets the head and tail with an explicit marker."""
    await editor.wait_state("knob", "connected")
    out = await editor.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "huge", "arguments": {"chars": 400_000}})
    assert not out["isError"]
    assert 100_000 <= len(out["content"]) < 101_000 and "characters cut" in out["content"]
