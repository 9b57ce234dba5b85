"""Direct MCP tool calls from the editor (``mcp/callTool``, tool actions), through the approval gate."""

from __future__ import annotations

import itertools
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from agent_ls.server.approval import direct_gate
from agent_ls.server.host import ensure_manager
from agent_ls.server.protocol.codec import RequestFailed, snake_to_camel_dict
from agent_ls.server.protocol.mcp import ToolResultPayload

if TYPE_CHECKING:
    from agent_ls.server.server import AgentLanguageServer

log = logging.getLogger("agent_ls.server")
_direct_ids = itertools.count(1)


async def call_tool_direct(ls: AgentLanguageServer, server: str, tool: str,
                           arguments: dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]], *,
                           call_id: str | None = None, sink: Any = None) -> ToolResultPayload:
    """A direct MCP tool call from the editor, through the approval gate.

    ``arguments`` may be a function of the tool's input schema (a tool action's template,
    typed by the schema); what it raises reaches the caller before anything is asked or run.

    With ``sink``, the call is also reported as events (started, approval, finished), as a
    tool call of the agent would be.
    """
    import time

    from agent_ls.agent import events as ev

    manager = await ensure_manager(ls)
    if server not in manager.server_names():
        raise RequestFailed(f"no MCP server named {server!r} is configured")
    await manager.refresh_if_dirty()
    found = manager.find_tool(server, tool)
    conn = manager.connection(server)
    if found is None and conn is not None and conn.settling:  # (re)connecting: wait for it, bounded
        await conn.wait_settled(conn.config.connect_timeout)
        await manager.refresh_if_dirty()
        found = manager.find_tool(server, tool)
    if found is None:
        if conn is None or not conn.connected:
            state = conn.state.value if conn is not None else "failed"
            raise RequestFailed(f"MCP server {server!r} is not connected ({state})")
        raise RequestFailed(f"MCP server {server!r} has no tool named {tool!r}")
    spec = found.spec
    if callable(arguments):
        arguments = arguments(spec.input_schema)
    gate = direct_gate(ls)
    started = time.perf_counter()
    call_id = call_id or f"direct-{next(_direct_ids)}"
    if sink is not None:
        sink(ev.ToolCallStarted(call_id, spec.name, arguments, spec.server, spec.display_name))
        reason = gate.approval_reason(spec, arguments)
        if reason is not None:
            sink(ev.ApprovalRequested(call_id, spec.name, arguments, reason))
    gate.handler.call_id = call_id
    ok, reason = await gate.check(spec, arguments)
    if not ok:
        payload = ToolResultPayload(is_error=True, content=reason, denied=True)
    else:
        result = await found.call(arguments)
        if len(result.content) > DIRECT_RESULT_CHARS:  # the editor shows it: no multi-megabyte cards
            from agent_ls.core.tools import cap_text

            content, cut = cap_text(result.content, DIRECT_RESULT_CHARS)
            result = attrs.evolve(result, content=content, truncated_chars=result.truncated_chars + cut)
        payload = result_payload(result)
    if sink is not None:
        sink(ev.ToolCallFinished(call_id, spec.name, payload.is_error, payload.content,
                                 (time.perf_counter() - started) * 1e3, payload.denied, tuple(payload.attachments)))
    return payload


DIRECT_RESULT_CHARS = 100_000
"""What a tool run from the editor (mcp/callTool, a tool code action) returns of its text; the
agent's calls keep more (mcp.maxOutputChars) and page it (agent_ls/agent/output_store.py)."""


def result_payload(result: Any) -> ToolResultPayload:
    return ToolResultPayload(
        is_error=result.is_error, content=result.content, structured=result.structured,
        truncated_chars=result.truncated_chars,
        attachments=[snake_to_camel_dict(attrs.asdict(a)) for a in result.attachments],
    )
