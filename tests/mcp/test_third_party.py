"""The MCP host against third-party servers: npm (server-everything, server-filesystem) and
PyPI (mcp-server-time). These are the servers users actually plug in."""

from __future__ import annotations

import asyncio
import json
import shutil
import sys
from pathlib import Path

from tests.mcp.conftest import HostEnv, status_of
from tests.tooling import require_npm


def _time_server() -> str:
    found = shutil.which("mcp-server-time") or str(Path(sys.executable).with_name("mcp-server-time"))
    assert Path(found).exists(), "mcp-server-time (PyPI) is a dev dependency: pip install -e '.[dev]'"
    return found


async def test_server_everything(host: HostEnv) -> None:
    bin_path = require_npm("mcp-server-everything")
    m = await host.manager({"everything": {"command": str(bin_path), "args": ["stdio"]}}, wait=60)
    s = status_of(m, "everything")
    assert s.state == "connected", s.error
    names = {t.spec.display_name: t for t in m.tools() if t.server == "everything"}
    assert "echo" in names
    res = await names["echo"].call({"message": "hello everything"})
    assert not res.is_error and "hello everything" in res.content
    # Tools with non-text results keep them (an image tool exists in server-everything).
    image_tools = [n for n in names if "image" in n.lower()]
    if image_tools:
        img = await names[image_tools[0]].call({})
        assert img.attachments or img.is_error
    # resources and prompts through the manager
    assert m.resources() or m.resource_templates()
    assert m.prompts()
    server, prompt = m.prompts()[0]
    args = {a.name: "x" for a in (prompt.arguments or []) if a.required}
    got = await m.get_prompt(server, prompt.name, args)
    assert got.messages
    # The roots the server sees are the workspace folders.
    roots_tools = [n for n in names if "roots" in n.lower()]
    if roots_tools:
        res = await names[roots_tools[0]].call({})
        assert host.workspace.resolve().as_uri() in res.content or str(host.workspace) in res.content


async def test_server_filesystem_sees_workspace_through_roots(host: HostEnv, tmp_path: Path) -> None:
    bin_path = require_npm("mcp-server-filesystem")
    (host.workspace / "hello.txt").write_text("hello from the workspace\n")
    m = await host.manager({"fs": {"command": str(bin_path), "args": []}}, wait=60)
    assert status_of(m, "fs").state == "connected", status_of(m, "fs").error

    async def allowed() -> str:
        return (await m.call_tool("fs", "list_allowed_directories", {})).content

    for _ in range(50):
        text = await allowed()
        if str(host.workspace.resolve()) in text:
            break
        await asyncio.sleep(0.1)
    assert str(host.workspace.resolve()) in text, text
    read = await m.call_tool("fs", "read_text_file", {"path": str(host.workspace / "hello.txt")})
    assert "hello from the workspace" in read.content
    outside = await m.call_tool("fs", "read_text_file", {"path": "/etc/hostname"})
    assert outside.is_error
    # A new workspace folder reaches the server through roots/list_changed.
    second = tmp_path / "second-root"
    second.mkdir()
    (second / "b.txt").write_text("second root")
    await m.set_roots([host.workspace, second])
    for _ in range(50):
        if str(second.resolve()) in await allowed():
            break
        await asyncio.sleep(0.1)
    assert str(second.resolve()) in await allowed()
    read2 = await m.call_tool("fs", "read_text_file", {"path": str(second / "b.txt")})
    assert "second root" in read2.content


async def test_mcp_server_time_from_pypi(host: HostEnv) -> None:
    m = await host.manager({"time": {"command": _time_server(), "args": ["--local-timezone", "UTC"]}}, wait=60)
    assert status_of(m, "time").state == "connected", status_of(m, "time").error
    tools = {t.spec.display_name: t for t in m.tools()}
    assert {"get_current_time", "convert_time"} <= set(tools)
    assert tools["get_current_time"].spec.capability.value == "read"
    res = await tools["get_current_time"].call({"timezone": "UTC"})
    assert not res.is_error
    body = json.loads(res.content)
    assert body["timezone"] == "UTC"
    bad = await tools["get_current_time"].call({"timezone": "Not/AZone"})
    assert bad.is_error
