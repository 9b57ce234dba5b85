"""Bad input from servers that claim the 2026-07-28 era (issue 15), and what a modern session
sends: the standard HTTP headers and the request ``_meta``.

Each misbehaving server (tests/servers/misbehaving_modern.py, real subprocesses, real HTTP on
127.0.0.1) runs next to a healthy knob server in the same MCPManager: it fails alone, with an
error that names the phase (handshake, listing, or the call) and says why, within the
configured timeouts (none of the failures below is the connectTimeout firing), and the knob
server stays connected and callable.
"""

from __future__ import annotations

import base64
import contextlib
import json
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from mcp.client._input_required import DEFAULT_INPUT_REQUIRED_MAX_ROUNDS  # the SDK default of Client
from mcp_types import (
    CLIENT_CAPABILITIES_META_KEY,
    CLIENT_INFO_META_KEY,
    LOG_LEVEL_META_KEY,
    PROTOCOL_VERSION_META_KEY,
)

from agent_ls.mcp.connection.connection import CLIENT_INFO
from agent_ls.mcp.manager import MCPManager
from tests.mcp.conftest import HostEnv, status_of
from tests.servers import misbehaving_modern
from tests.servers.launch import knob_stdio_params, run_http_knob_server

MODERN = "2026-07-28"
MISBEHAVING = Path(misbehaving_modern.__file__)
TIMEOUTS = {"connectTimeout": 10, "callTimeout": 10}


@contextlib.asynccontextmanager
async def bad_entry(transport: str, *args: str) -> AsyncIterator[dict[str, Any]]:
    """A config entry for the misbehaving server over ``transport`` (``protocol: auto``)."""
    if transport == "stdio":
        yield {"command": sys.executable, "args": [str(MISBEHAVING), *args], "protocol": "auto", **TIMEOUTS}
    else:
        async with run_http_knob_server(*args, script=MISBEHAVING) as url:
            yield {"type": "http", "url": url, "protocol": "auto", **TIMEOUTS}


def healthy() -> dict[str, Any]:
    return {**knob_stdio_params(), "protocol": "auto", **TIMEOUTS}


async def assert_knob_unharmed(m: MCPManager) -> None:
    s = status_of(m, "knob")
    assert s.state == "connected" and s.error is None and s.protocol_version == MODERN, s
    result = await m.call_tool("knob", "echo", {"text": "still here"})
    assert not result.is_error and result.content == "still here"


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()] if path.exists() else []


# --------------------------------------------------------------------------- handshake


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize("discover", ["wrong-shape", "future-only"])
async def test_an_unusable_discover_answer_fails_alone_in_the_handshake(host: HostEnv, transport: str,
                                                                        discover: str) -> None:
    """server/discover answers with the wrong shape, or names only a version the host does not
    speak, and the server refuses the legacy handshake: a handshake failure that says so."""
    async with bad_entry(transport, "--discover", discover) as entry:
        m = await host.manager({"bad": entry, "knob": healthy()})
        s = status_of(m, "bad")
        assert s.state == "failed" and s.error is not None, s
        assert s.error["phase"] == "handshake"
        message = s.error["message"]
        assert message.startswith("no protocol version in common:"), message
        assert "server/discover answer was unusable" in message and "refuses the initialize handshake" in message
        assert "connectTimeout" not in message  # it failed on its own account, not by the deadline
        assert s.tool_count == 0 and not [t for t in m.tools() if t.server == "bad"]
        result = await m.call_tool("bad", "echo", {"text": "x"})
        assert result.is_error and "not connected (failed; handshake: no protocol version in common" in result.content
        await assert_knob_unharmed(m)


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_claimed_version_it_does_not_speak_fails_alone_in_the_listing(host: HostEnv,
                                                                             transport: str) -> None:
    """server/discover claims 2026-07-28, then every request is refused with -32022."""
    async with bad_entry(transport, "--discover", "unspoken-version") as entry:
        m = await host.manager({"bad": entry, "knob": healthy()})
        s = status_of(m, "bad")
        assert s.state == "connected-listing-failed" and s.error is not None, s
        assert s.error["phase"] == "listing"
        assert "tools/list failed: MCPError: Unsupported protocol version" in s.error["message"]
        assert "connectTimeout" not in s.error["message"]
        assert s.tool_count == 0 and not [t for t in m.tools() if t.server == "bad"]
        await assert_knob_unharmed(m)


# --------------------------------------------------------------------------- input_required


@pytest.mark.parametrize(("mode", "reason"), [
    ("missing", "its input_required result is malformed: InputRequiredResult requires at least one of "
                "input_requests or request_state"),
    ("unknown-kind", "its input_required result asks for input of an unknown kind: request 'q' has method "
                     "'bogus/unknownKind' (known: sampling/createMessage, roots/list, elicitation/create)"),
    ("endless", f"the server kept asking for more input (input_required) for more than "
                f"{DEFAULT_INPUT_REQUIRED_MAX_ROUNDS} rounds; the call was abandoned"),
])
async def test_a_malformed_input_required_result_fails_the_call_alone(host: HostEnv, tmp_path: Path, mode: str,
                                                                      reason: str) -> None:
    record = tmp_path / "requests.jsonl"
    async with bad_entry("stdio", "--input-required", mode, "--record", str(record)) as entry:
        m = await host.manager({"bad": entry, "knob": healthy()})
        assert status_of(m, "bad").state == "connected"
        result = await m.call_tool("bad", "needs_input", {})
        assert result.is_error
        assert result.content == f"[MCP server 'bad', tool 'needs_input'] call failed: {reason}"
        tool_calls = [r for r in records(record) if r["method"] == "tools/call"]
        # the first request, then one retry per round: bounded by the SDK's round cap
        assert len(tool_calls) == (1 + DEFAULT_INPUT_REQUIRED_MAX_ROUNDS if mode == "endless" else 1)
        # only that call failed: the server stays connected, its other tools work
        s = status_of(m, "bad")
        assert s.state == "connected" and s.error is None, s
        echoed = await m.call_tool("bad", "echo", {"text": "fine"})
        assert not echoed.is_error and echoed.content == "fine"
        await assert_knob_unharmed(m)


async def test_a_well_formed_input_required_round_is_answered(host: HostEnv) -> None:
    """The control for the test above: the same tool, asking properly, gets the host's roots."""
    async with bad_entry("stdio") as entry:
        m = await host.manager({"bad": entry})
        result = await m.call_tool("bad", "needs_input", {})
        assert not result.is_error and json.loads(result.content) == [host.workspace.resolve().as_uri()]


# --------------------------------------------------------------------------- x-mcp-header


@pytest.mark.parametrize(("transport", "bad_header"), [
    ("stdio", "not-a-token"), ("http", "not-a-token"), ("http", "on-number"), ("http", "duplicate"),
])
async def test_a_tool_with_an_invalid_header_parameter_is_not_offered(host: HostEnv, tmp_path: Path,
                                                                      transport: str, bad_header: str) -> None:
    """The SDK drops a tool whose x-mcp-header declaration is invalid (the spec's MUST): the host
    never offers it, never calls it, and the server's other tools (a valid header declaration
    included) work."""
    record = tmp_path / "requests.jsonl"
    async with bad_entry(transport, "--bad-header", bad_header, "--record", str(record)) as entry:
        m = await host.manager({"bad": entry, "knob": healthy()})
        s = status_of(m, "bad")
        assert s.state == "connected", s
        offered = sorted(t.original for t in s.tools)
        assert offered == ["echo", "needs_input", "route", "shaped"]
        assert m.find_tool("bad", "bad_header") is None
        result = await m.call_tool("bad", "bad_header", {"region": "x", "ratio": 0.5, "a": "1", "b": "2"})
        assert result.is_error and "no tool named 'bad_header'" in result.content
        assert not [r for r in records(record) if r["method"] == "tools/call"]  # nothing reached the server
        routed = await m.call_tool("bad", "route", {"region": "eu", "shard": 3})
        assert not routed.is_error
        await assert_knob_unharmed(m)


async def test_the_reason_a_tool_was_dropped_is_shown_in_the_status(host: HostEnv) -> None:
    """The SDK drops the tool and only logs why (mcp/client/session.py, _absorb_tool_listing); the
    host collects that line for the listing under way and shows it, the server staying connected."""
    async with bad_entry("stdio", "--bad-header", "not-a-token") as entry:
        m = await host.manager({"bad": entry})
        s = status_of(m, "bad")
        assert s.state == "connected"
        assert s.error is not None and s.error["phase"] == "listing", s
        assert "bad_header" in s.error["message"] and "x-mcp-header" in s.error["message"]


# --------------------------------------------------------------------------- standard headers


async def test_modern_http_requests_carry_the_standard_headers(host: HostEnv, tmp_path: Path) -> None:
    """Mcp-Protocol-Version and Mcp-Method on every request, Mcp-Name on tools/call, and the
    tool's declared header parameters as Mcp-Param-* (a non-ASCII value base64-wrapped)."""
    record = tmp_path / "requests.jsonl"
    async with bad_entry("http", "--record", str(record)) as entry:
        m = await host.manager({"s": entry})
        assert status_of(m, "s").protocol_version == MODERN
        assert not (await m.call_tool("s", "echo", {"text": "hi"})).is_error
        routed = await m.call_tool("s", "route", {"region": "zürich", "shard": 7, "note": "n"})
        assert not routed.is_error  # the SDK server checks the Mcp-Param headers against the body
        seen = json.loads(routed.content)  # the mcp-* headers as the route tool received them
        assert seen["mcp-param-region"] == "=?base64?" + base64.b64encode("zürich".encode()).decode() + "?="
        assert seen["mcp-param-shard"] == "7" and seen["mcp-name"] == "route" and seen["mcp-method"] == "tools/call"
        assert "mcp-param-note" not in seen  # not a declared header parameter
    log = records(record)
    methods = [r["method"] for r in log]
    assert methods[0] == "server/discover" and "tools/list" in methods and methods.count("tools/call") == 2
    for r in log:
        assert r["headers"]["mcp-protocol-version"] == MODERN, r
        assert r["headers"]["mcp-method"] == r["method"], r
    names = [r["headers"].get("mcp-name") for r in log if r["method"] == "tools/call"]
    assert names == ["echo", "route"]
    assert not [r for r in log if r["method"] != "tools/call" and "mcp-name" in r["headers"]]


# --------------------------------------------------------------------------- request _meta


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_modern_requests_carry_the_client_envelope_in_meta(host: HostEnv, tmp_path: Path,
                                                                 transport: str) -> None:
    record = tmp_path / "requests.jsonl"
    async with bad_entry(transport, "--record", str(record)) as entry:
        m = await host.manager({"s": entry})
        assert not (await m.call_tool("s", "echo", {"text": "hi"})).is_error
    log = records(record)
    assert [r["method"] for r in log][:2] == ["server/discover", "tools/list"]
    info = CLIENT_INFO.model_dump(mode="json", by_alias=True, exclude_none=True)
    for r in log:
        meta = r["meta"]
        assert meta[PROTOCOL_VERSION_META_KEY] == MODERN, r
        assert meta[CLIENT_INFO_META_KEY] == info, r
        caps = meta[CLIENT_CAPABILITIES_META_KEY]
        # the host answers roots, elicitation and sampling (through input_required rounds)
        assert {"roots", "elicitation", "sampling"} <= set(caps), r
        if r["method"] != "server/discover":  # the SDK's discover probe carries no log level
            assert meta[LOG_LEVEL_META_KEY] == "info", r
    assert [r for r in log if r["method"] == "tools/call"], "the call was recorded"


async def test_a_modern_only_server_configured_as_legacy_says_what_to_change(host: HostEnv) -> None:
    async with bad_entry("stdio") as entry:
        m = await host.manager({"bad": {**entry, "protocol": "legacy"}, "knob": healthy()})
        s = status_of(m, "bad")
        assert s.state == "failed" and s.error is not None and s.error["phase"] == "handshake", s
        assert s.error["message"].startswith(
            'no protocol version in common: the server refuses the initialize handshake (it speaks only a newer '
            'protocol era); try "protocol": "auto" (the server says: this server speaks only the 2026-07-28 '
            'protocol; it supports 2026-07-28)'), s.error
        await assert_knob_unharmed(m)
