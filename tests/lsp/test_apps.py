"""MCP Apps over LSP, end to end over stdio: the real language server, the scripted LLM and the
SDK app server (tests/servers/apps_server.py).

A client that declares ``experimental.agentLs.mcpApps`` gets the app (HTML, CSP domains, the
tool's input and result) on the call's ``tool_call_finished``; an app's ``tools/call``
(``agent/appCallTool``) is asked about and run like the model's calls of that session (a card,
an approval), a model-only tool is refused without asking, and ``agent/appContext`` reaches the
model at the next prompt. A client without the capability gets the tool's name and resource only
(it shows the text and says the tool has an app it cannot show). App-only tools never reach the
model's tool list.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor
from tests.servers import apps_server

pytestmark = pytest.mark.e2e

BOARD = "mcp__apps__show_board"


async def start(setup: Setup, renders: bool) -> Editor:
    setup.user_settings["mcpServers"]["apps"] = {"command": sys.executable, "args": [str(Path(apps_server.__file__))],
                                                 "connectTimeout": 20, "callTimeout": 20}

    def configure(ed: Editor) -> None:
        if renders:
            ed.experimental = {"agentLs": {"mcpApps": True}}

    ed = await open_editor(setup, configure=configure)
    await ed.wait_state("apps", "connected")
    return ed


def finished(ed: Editor, sid: str, call_id: str | None = None) -> dict[str, Any]:
    return next(e for e in ed.session_events(sid) if e["type"] == "tool_call_finished"
                and (call_id is None or e["callId"] == call_id))


async def test_the_app_reaches_a_client_that_renders_apps_and_its_calls_are_gated(setup: Setup) -> None:
    ed = await start(setup, renders=True)
    try:
        setup.llm.script(tool_calls([(BOARD, {"title": "q3"})]), text("done"))
        sid = (await ed.request(P.PROMPT, {"text": "show the board"}))["sessionId"]
        app = finished(ed, sid)["app"]
        assert app["server"] == "apps" and app["tool"] == "show_board" and app["resourceUri"] == apps_server.BOARD
        assert "ui/initialize" in app["html"] and app["error"] is None and app["notice"] is None
        assert app["csp"]["connectDomains"] == ["https://api.example.com"]
        assert app["arguments"] == {"title": "q3"}
        assert app["result"]["structuredContent"]["title"] == "q3"
        # the model never saw the app-only tool
        bodies = json.dumps([r.json for r in setup.llm.requests])
        assert "save_choice" not in bodies

        # the app calls its app-only tool: asked like any call of the session, a card in the chat
        asked = len(ed.approvals)
        out = await ed.request(P.APP_CALL_TOOL, {"sessionId": sid, "server": "apps", "tool": "save_choice",
                                                 "arguments": {"choice": "blue"}})
        assert out["content"] == "saved blue" and not out["isError"] and not out["denied"]
        assert len(ed.approvals) == asked + 1
        ask = ed.approvals[-1]
        assert ask["sessionId"] == sid and ask["callId"].startswith("app-")
        card = finished(ed, sid, ask["callId"])
        assert card["content"] == "saved blue"
        assert card["app"] is None  # its result goes back to the app: no second app of its own

        # denied by the user: the app gets a denied result, nothing ran
        ed.approval_answers = ["deny"]
        out = await ed.request(P.APP_CALL_TOOL, {"sessionId": sid, "server": "apps", "tool": "save_choice",
                                                 "arguments": {"choice": "red"}})
        assert out["denied"] and out["isError"]

        # a model-only tool: refused, nothing asked
        asked = len(ed.approvals)
        with pytest.raises(Exception, match="visibility is model only"):
            await ed.request(P.APP_CALL_TOOL, {"sessionId": sid, "server": "apps", "tool": "model_secret"})
        with pytest.raises(Exception, match="has no tool named"):
            await ed.request(P.APP_CALL_TOOL, {"sessionId": sid, "server": "knob", "tool": "save_choice"})
        assert len(ed.approvals) == asked

        # ui/update-model-context: the model hears it at the next prompt
        await ed.request(P.APP_CONTEXT, {"sessionId": sid, "server": "apps", "resourceUri": apps_server.BOARD,
                                         "text": "Board filter: blue only."})
        setup.llm.script(text("ok"))
        await ed.request(P.PROMPT, {"text": "and now?", "sessionId": sid})
        last = json.dumps(setup.llm.requests[-1].json["messages"][-1])
        assert "Board filter: blue only." in last and "MCP app apps" in last
    finally:
        await close_editor(ed)


async def test_a_client_without_apps_gets_the_name_only(setup: Setup) -> None:
    ed = await start(setup, renders=False)
    try:
        setup.llm.script(tool_calls([(BOARD, {"title": "q3"})]), text("done"))
        sid = (await ed.request(P.PROMPT, {"text": "show the board"}))["sessionId"]
        event = finished(ed, sid)
        assert "board for q3" in event["content"]
        assert event["app"]["resourceUri"] == apps_server.BOARD and event["app"]["html"] is None
        assert "has an interactive app (ui://apps/board.html) that this client cannot show" in event["app"]["notice"]
    finally:
        await close_editor(ed)


async def test_a_resumed_call_shows_its_app_again_read_from_its_server(setup: Setup) -> None:
    """Resume (another editor): the transcript's ``run.app`` says which server and tool served the
    app and the call's data, never its HTML; ``agent/appResource`` reads the app from the server
    again, and says why when it cannot (no such server, no app any more, a failed read)."""
    ed = await start(setup, renders=True)
    try:
        setup.llm.script(tool_calls([(BOARD, {"title": "q3"})]), text("done"))
        sid = (await ed.request(P.PROMPT, {"text": "show the board"}))["sessionId"]
        call_id = finished(ed, sid)["callId"]
    finally:
        await close_editor(ed)
    ed = await start(setup, renders=True)
    try:
        resumed = await ed.request(P.SESSIONS_RESUME, {"sessionId": sid})
        assert "ui/initialize" not in json.dumps(resumed)  # no HTML is stored or replayed
        runs = {m["tool_call_id"]: m["run"] for m in resumed["messages"] if m["role"] == "tool"}
        app = runs[call_id]["app"]
        assert {k: app[k] for k in ("server", "tool", "resourceUri", "arguments")} == {
            "server": "apps", "tool": "show_board", "resourceUri": apps_server.BOARD, "arguments": {"title": "q3"}}
        assert app["result"]["structuredContent"]["title"] == "q3"

        got = await ed.request(P.APP_RESOURCE, {"server": "apps", "tool": "show_board"})
        assert got["resourceUri"] == apps_server.BOARD and "ui/initialize" in got["html"]
        assert got["csp"]["connectDomains"] == ["https://api.example.com"]
        with pytest.raises(Exception, match="MCP server 'gone' is not configured"):
            await ed.request(P.APP_RESOURCE, {"server": "gone", "tool": "show_board"})
        with pytest.raises(Exception, match="has no app any more"):
            await ed.request(P.APP_RESOURCE, {"server": "apps", "tool": "bad_meta"})
        with pytest.raises(Exception, match="reading ui://apps/missing.html failed"):
            await ed.request(P.APP_RESOURCE, {"server": "apps", "tool": "missing_app"})
    finally:
        await close_editor(ed)
