"""A 2026-07-28 result without ``resultType`` is read as complete (the spec's rule; conformance
scenario sep-2322-client-request-state, test_mrtr_no_result_type), over stdio and HTTP, with real
SDK servers; legacy sessions are unaffected (agent_ls/mcp/result_kind.py)."""

from __future__ import annotations

from typing import Any

import pytest
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import ErrorData, JSONRPCError, JSONRPCResponse

from agent_ls.mcp.result_kind import with_result_kind
from tests.mcp.conftest import HostEnv, status_of
from tests.mcp.test_modern_bad_input import TIMEOUTS, bad_entry, healthy
from tests.servers.launch import knob_stdio_params

MODERN = "2026-07-28"


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_a_modern_result_without_result_type_is_a_complete_result(host: HostEnv, transport: str) -> None:
    async with bad_entry(transport, "--no-result-type") as entry:
        m = await host.manager({"plain": entry, "knob": healthy()})
        s = status_of(m, "plain")
        assert s.state == "connected" and s.protocol_version == MODERN, s
        result = await m.call_tool("plain", "echo", {"text": "hello"})
        assert not result.is_error, result
        assert result.content == "hello"


async def test_a_legacy_session_is_unaffected(host: HostEnv) -> None:
    m = await host.manager({"old": {**knob_stdio_params(), "protocol": "legacy", **TIMEOUTS}})
    s = status_of(m, "old")
    assert s.state == "connected" and s.protocol_version != MODERN, s
    result = await m.call_tool("old", "echo", {"text": "legacy"})
    assert not result.is_error and result.content == "legacy"


def _response(result: dict[str, Any]) -> SessionMessage:
    return SessionMessage(message=JSONRPCResponse(jsonrpc="2.0", id=7, result=result))


def test_only_a_result_without_result_type_is_changed() -> None:
    filled = with_result_kind(_response({"content": []}))
    assert isinstance(filled.message, JSONRPCResponse)
    assert filled.message.result == {"content": [], "resultType": "complete"}
    assert filled.message.id == 7

    asking = _response({"resultType": "input_required", "inputRequests": {}})
    assert with_result_kind(asking) is asking
    error = SessionMessage(message=JSONRPCError(jsonrpc="2.0", id=1, error=ErrorData(code=-1, message="no")))
    assert with_result_kind(error) is error
    crash = RuntimeError("transport broke")
    assert with_result_kind(crash) is crash

