"""The MCP host against the knob server over Streamable HTTP on 127.0.0.1."""

from __future__ import annotations

import json
import uuid

from tests.mcp.conftest import HostEnv, status_of, wait_until
from tests.servers.launch import run_http_knob_server


async def test_http_with_headers_and_variables(host: HostEnv) -> None:
    secret = "tok-" + uuid.uuid4().hex
    host.environ["KNOB_TEST_TOKEN"] = secret
    async with run_http_knob_server("--instructions", "http knob") as url:
        m = await host.manager({
            "web": {"type": "http", "url": url,
                    "headers": {"Authorization": "Bearer ${env:KNOB_TEST_TOKEN}", "X-Team": "${TEAM:-core}"}},
        })
        s = status_of(m, "web")
        assert s.state == "connected" and s.transport == "http" and s.tool_count > 20
        res = await m.call_tool("web", "headers", {})
        headers = json.loads(res.content)
        assert headers["authorization"] == f"Bearer {secret}"
        assert headers["x-team"] == "core"
        assert secret not in repr(m.status())
        assert "## web\nhttp knob" in m.instructions()
        # server -> client requests work over HTTP too
        roots = json.loads((await m.call_tool("web", "roots", {})).content)["roots"]
        assert roots[0]["uri"] == host.workspace.resolve().as_uri()
        # list_changed over HTTP
        await m.call_tool("web", "add_tool", {"name": "late_tool"})
        await wait_until(lambda: m.dirty)
        await m.refresh_if_dirty()
        assert m.find_tool("web", "late_tool") is not None


async def test_http_unreachable_and_status_codes(host: HostEnv) -> None:
    m = await host.manager({
        "down": {"type": "http", "url": "http://127.0.0.1:9/mcp", "connectTimeout": 5},
        "notmcp": {"url": "http://127.0.0.1:9/nothing", "connectTimeout": 5},
    })
    down = status_of(m, "down")
    assert down.state == "failed" and down.error["phase"] == "handshake"
    assert "cannot connect" in down.error["message"]


async def test_http_server_dies_then_restart_reconnects(host: HostEnv) -> None:
    srv = run_http_knob_server()
    url = srv.start()
    try:
        m = await host.manager({"web": {"type": "http", "url": url}})
        assert status_of(m, "web").state == "connected"
        srv.stop()
        res = await m.call_tool("web", "echo", {"text": "x"})
        assert res.is_error
        # fails fast and keeps a reason
        await wait_until(lambda: status_of(m, "web").state in ("restarting", "failed"))
        res2 = await m.call_tool("web", "echo", {"text": "x"})
        assert res2.is_error and "not connected" in res2.content
    finally:
        srv.stop()
