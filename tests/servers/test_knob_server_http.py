"""Prove the knob fixture server over Streamable HTTP with the bare mcp SDK client: legacy and auto
sessions, the synchronous context manager and its cleanup, a server that dies before listening."""

from __future__ import annotations

import json
import time

import anyio
import mcp_types as types
import pytest
from mcp import Client
from mcp.shared.exceptions import MCPError

from .knob_client import BASE_TOOLS, Recorder, list_all_tools, text_of, wait_until
from .launch import run_http_knob_server

# --------------------------------------------------------------------------- Streamable HTTP


async def test_http_legacy_and_auto() -> None:
    server = run_http_knob_server("--stderr-line", "HTTP-MARKER", "--tools", 20)
    async with server as url:
        assert url.startswith("http://127.0.0.1:") and url.endswith("/mcp")
        await wait_until(lambda: "HTTP-MARKER" in server.stderr_lines)
        assert server.stderr_lines[0] == f"LISTENING {url}"

        rec = Recorder()
        async with Client(url, mode="legacy", **rec.client_kwargs()) as client:
            assert client.protocol_version == "2025-11-25"
            assert len(await list_all_tools(client)) >= len(BASE_TOOLS) + 20
            assert text_of(await client.call_tool("echo", {"text": "over http"})) == "over http"
            roots = json.loads(text_of(await client.call_tool("roots", {})))
            assert len(roots["roots"]) == 2
            answer = json.loads(text_of(await client.call_tool("ask", {"question": "q"})))
            assert answer["content"]["name"] == "bob"
            assert text_of(await client.call_tool("sample", {"prompt": "p"})) == "sampled: 42"
            await client.call_tool("add_tool", {"name": "http_dyn"})
            await wait_until(lambda: rec.of_type(types.ToolListChangedNotification))
            with pytest.raises(MCPError):
                await client.call_tool("hang", {}, read_timeout_seconds=0.3)
            assert text_of(await client.call_tool("echo", {"text": "after"})) == "after"

        async with Client(url, mode="auto", **Recorder().client_kwargs()) as client:
            assert client.protocol_version == "2026-07-28"
            assert text_of(await client.call_tool("add", {"a": 2, "b": 2})) == "4"
            assert json.loads(text_of(await client.call_tool("roots", {})))["roots"][0]["name"] == "a"
    assert server.process is not None and server.process.returncode is not None


def test_http_sync_context_manager_and_cleanup() -> None:
    server = run_http_knob_server("--slow-handshake", 0.5)
    with server as url:
        assert url.endswith("/mcp")

        async def call() -> tuple[float, str]:
            started = time.monotonic()
            async with Client(url, mode="legacy") as client:
                elapsed = time.monotonic() - started
                return elapsed, text_of(await client.call_tool("echo", {"text": "sync"}))

        elapsed, text = anyio.run(call)
        assert text == "sync" and elapsed >= 0.5
    assert server.process is not None and server.process.returncode is not None


def test_http_server_that_dies_before_listening_raises() -> None:
    with (
        pytest.raises(RuntimeError, match="before listening"),
        run_http_knob_server("--tools", "not-a-number"),
    ):
        pass
