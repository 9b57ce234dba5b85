"""MCP Apps (``io.modelcontextprotocol/ui``) in the host, against a real SDK server
(tests/servers/apps_server.py) over stdio behind the real MCPManager: the extension is
negotiated, app-only tools are never offered to the model, a tool's app is loaded with
``resources/read`` (HTML of the app MIME type, its CSP domains) and carried by the call's result,
bad input (a malformed ``_meta.ui``, a missing resource, one that is not HTML, a 20 MB one) gives
a clear reason and never breaks the server's other tools, and an app may call only its own
server's tools whose visibility includes ``app``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from agent_ls.mcp.apps import APPS_EXTENSION, AppError
from agent_ls.mcp.manager import MCPManager
from tests.mcp.conftest import HostEnv, status_of
from tests.servers import apps_server

SERVER = str(Path(apps_server.__file__))


async def start(host: HostEnv, renders: bool = True, protocol: str = "auto") -> MCPManager:
    m = await host.manager({"apps": {"command": sys.executable, "args": [SERVER], "protocol": protocol,
                                     "connectTimeout": 20, "callTimeout": 20}})
    m.apps.renders = renders
    assert status_of(m, "apps").state == "connected", status_of(m, "apps")
    return m


@pytest.mark.parametrize("protocol", ["auto", "legacy"])
async def test_app_only_tools_are_not_offered_to_the_model_and_the_extension_is_negotiated(
        host: HostEnv, protocol: str) -> None:
    m = await start(host, protocol=protocol)
    names = {t.spec.display_name for t in m.tools()}
    assert "save_choice" not in names  # visibility ["app"]
    assert {"show_board", "model_secret", "bad_meta", "missing_app"} <= names
    board = m.find_tool("apps", "show_board")
    assert board is not None and board.spec.app_resource == apps_server.BOARD
    # the server saw the extension (and its MIME type) in the client's capabilities
    result = await m.call_tool("apps", "show_board", {})
    assert "(the client renders apps)" in result.content, (APPS_EXTENSION, result.content)


async def test_a_tool_result_carries_its_app(host: HostEnv) -> None:
    m = await start(host)
    result = await m.call_tool("apps", "show_board", {"title": "q3"})
    assert not result.is_error and "board for q3" in result.content
    app = result.app
    assert app is not None and app.error is None
    assert app.html is not None and "ui/initialize" in app.html
    assert app.csp == {"connectDomains": ["https://api.example.com"], "resourceDomains": ["https://cdn.example.com"]}
    assert app.arguments == {"title": "q3"}
    assert app.result is not None and app.result["structuredContent"]["title"] == "q3"
    # cached: a second call does not read the resource again (same object)
    again = await m.call_tool("apps", "show_board", {"title": "q4"})
    assert again.app is not None and again.app.html is app.html


async def test_a_front_end_that_does_not_render_apps_gets_the_name_only(host: HostEnv) -> None:
    m = await start(host, renders=False)
    result = await m.call_tool("apps", "show_board", {})
    assert result.app is not None and result.app.html is None and result.app.error is None
    assert result.app.resource_uri == apps_server.BOARD
    assert "board for board" in result.content  # the text fallback


@pytest.mark.parametrize(("tool", "why"), [
    ("missing_app", "reading ui://apps/missing.html failed"),
    ("plain_app", "is text/plain, not text/html;profile=mcp-app"),
    ("huge_app", "over the 5 MB limit"),
])
async def test_bad_app_resources_give_a_reason_and_the_text_result(host: HostEnv, tool: str, why: str) -> None:
    m = await start(host)
    result = await m.call_tool("apps", tool, {})
    assert not result.is_error and "app ran" in result.content
    assert result.app is not None and result.app.html is None
    assert result.app.error is not None and why in result.app.error, result.app.error
    ok = await m.call_tool("apps", "show_board", {})  # the server's other tools work
    assert ok.app is not None and ok.app.html


async def test_a_malformed_meta_ui_is_a_note_and_the_tool_a_plain_tool(host: HostEnv) -> None:
    m = await start(host)
    status = status_of(m, "apps")
    assert status.state == "connected"
    error = str(status.error)
    assert "tool 'bad_meta': its _meta.ui.resourceUri must be a ui:// URI" in error
    bad = m.find_tool("apps", "bad_meta")
    assert bad is not None and bad.spec.app_resource is None
    result = await m.call_tool("apps", "bad_meta", {})
    assert result.content == "bad meta ran" and result.app is None


async def test_an_app_calls_only_its_servers_app_visible_tools(host: HostEnv) -> None:
    m = await start(host)
    tool = await m.app_tool("apps", "save_choice")
    assert tool.spec.display_name == "save_choice"
    with pytest.raises(AppError, match="visibility is model only"):
        await m.app_tool("apps", "model_secret")
    with pytest.raises(AppError, match="has no tool named"):
        await m.app_tool("apps", "nope")
