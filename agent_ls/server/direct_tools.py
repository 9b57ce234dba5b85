"""Direct MCP tool calls from the editor (``mcp/callTool``, tool actions), through the approval gate.

A direct call runs through the agent's tool runner (:mod:`agent_ls.agent.tool_runner`): the same
events, permission check and question as a call of the agent; its text is capped, not paged.
"""

from __future__ import annotations

import logging
import secrets
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

import attrs

from agent_ls.server.protocol.codec import RequestFailed, snake_to_camel_dict
from agent_ls.server.protocol.mcp import ToolResultPayload

if TYPE_CHECKING:
    from agent_ls.agent.events import EventSink
    from agent_ls.core.tools import ToolResult
    from agent_ls.runtime.conversations import Conversations
    from agent_ls.runtime.lifecycle import HostLifecycle
    from agent_ls.server.client import EditorClient

log = logging.getLogger("agent_ls.server")


@attrs.define
class DirectTools:
    """MCP tool calls the editor asks for itself (``ls.direct_tools``)."""

    client: EditorClient
    lifecycle: HostLifecycle
    conversations: Conversations
    """Its direct gate and runner: the approvals of direct calls."""

    async def call(self, server: str, tool: str,
                   arguments: dict[str, Any] | Callable[[dict[str, Any]], dict[str, Any]], *,
                   call_id: str | None = None, sink: EventSink | None = None) -> ToolResultPayload:
        """A direct MCP tool call from the editor, through the approval gate.

        ``arguments`` may be a function of the tool's input schema (a tool action's template,
        typed by the schema); what it raises reaches the caller before anything is asked or run.
        ``call_id`` names the call in its events and its approval (default: ``direct-<request id>``).

        With ``sink``, the call is also reported as events (started, approval, finished), as a
        tool call of the agent would be.
        """
        # lazy: sqlite3 (+10 modules, ~20 ms); the manager: the MCP SDK, +599 modules, ~0.9 s
        from agent_ls.agent.tool_runner import ToolCall, capped
        from agent_ls.mcp.manager import ToolUnavailable

        manager = await self.lifecycle.ensure_manager()
        try:
            found = await manager.resolve_tool(server, tool)
        except ToolUnavailable as e:
            raise RequestFailed(str(e)) from None
        spec = found.spec
        if callable(arguments):
            arguments = arguments(spec.input_schema)
        if call_id is None:  # the request's id: unique on the connection, and no counter to keep
            msg_id = self.client.request_id
            call_id = f"direct-{msg_id if msg_id is not None else secrets.token_hex(4)}"
        call = ToolCall(call_id, spec.name, arguments)
        runner = self.conversations.direct_runner(capped(DIRECT_RESULT_CHARS))
        outcome = await runner.run(call, found, sink)
        payload = result_payload(outcome.result)
        payload.denied = outcome.denied
        return payload


DIRECT_RESULT_CHARS = 100_000
"""What a tool run from the editor (mcp/callTool, a tool code action) returns of its text; the
agent's calls keep more (mcp.maxOutputChars) and page it (agent_ls/agent/tools/output_store.py)."""


def result_payload(result: ToolResult) -> ToolResultPayload:
    return ToolResultPayload(
        is_error=result.is_error, content=result.content, structured=result.structured,
        truncated_chars=result.truncated_chars,
        attachments=[snake_to_camel_dict(attrs.asdict(a)) for a in result.attachments],
    )
