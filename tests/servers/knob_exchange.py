"""What the knob server sends to the client, in the session's protocol era: server-to-client
requests (roots, elicitation, sampling: real JSON-RPC requests on legacy sessions,
``InputRequiredResult`` rounds on 2026-07-28 ones), list-changed notifications, and the tools
that make them (see knob_server.py for the list).
"""

import json
from collections.abc import Callable
from typing import Any

import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel.server import Server
from mcp.server.mcpserver import Context
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

try:
    from tests.servers.knob_io import err
except ImportError:  # run as a script: tests/servers is on sys.path
    from knob_io import err  # type: ignore[no-redef]


def is_modern(ctx: Context) -> bool:
    return ctx.protocol_version in MODERN_PROTOCOL_VERSIONS


async def ask_client(ctx: Context, key: str, request: types.InputRequest, result_type: type[Any]) -> Any:
    """Send a server-to-client request in whatever way the session's protocol era allows.

    Legacy sessions get a real JSON-RPC request on this call's channel. Modern sessions
    (2026-07-28) cannot receive server requests: the first round returns an
    InputRequiredResult (the caller returns it as the tool result); the client answers it
    and retries the call, and the answer is then found in ctx.input_responses.
    Returns either the parsed result or the InputRequiredResult to hand back.
    """
    if is_modern(ctx):
        responses = ctx.input_responses or {}
        if key in responses:
            answer = responses[key]
            if isinstance(answer, result_type):
                return answer
            return result_type.model_validate(answer.model_dump(by_alias=True, exclude_none=True))
        return types.InputRequiredResult(input_requests={key: request})
    return await ctx.session.send_request(
        request,
        result_type,
        metadata=ServerMessageMetadata(related_request_id=ctx.request_context.request_id),
    )


async def list_changed(ctx: Context, kind: str) -> None:
    """Announce a tools/prompts/resources list change in the session's era."""
    if is_modern(ctx):
        # 2026-07-28: delivered to subscriptions/listen streams.
        publish = {
            "tools": ctx.notify_tools_changed,
            "prompts": ctx.notify_prompts_changed,
            "resources": ctx.notify_resources_changed,
        }[kind]
        await publish()
        return
    notification = {
        "tools": types.ToolListChangedNotification,
        "prompts": types.PromptListChangedNotification,
        "resources": types.ResourceListChangedNotification,
    }[kind]()
    # Request-scoped: on Streamable HTTP it rides this call's response stream, so the client
    # sees it even without a standalone GET stream; on stdio it is the same pipe.
    await ctx.session.send_notification(notification, related_request_id=ctx.request_context.request_id)


def register_roots_notifications(low: Server[Any], state: dict[str, Any]) -> None:
    """Count notifications/roots/list_changed (``state["roots_changed"]``)."""
    # notifications/roots/list_changed is not exposed by MCPServer: register it on the
    # low-level server (add_notification_handler avoids the constructor's deprecation warning).
    async def on_roots_list_changed(
        ctx: ServerRequestContext[Any, Any], params: types.NotificationParams
    ) -> None:
        state["roots_changed"] += 1
        err(f"knob: notifications/roots/list_changed #{state['roots_changed']}")

    low.add_notification_handler(
        "notifications/roots/list_changed", types.NotificationParams, on_roots_list_changed
    )


def register_exchange_tools(tool: Callable[..., Any], state: dict[str, Any]) -> None:
    """roots, roots_changed_count, ask, sample."""

    @tool()
    async def roots(ctx: Context) -> str | types.InputRequiredResult:
        """Ask the client for its roots (roots/list) and return them as JSON."""
        result = await ask_client(ctx, "roots", types.ListRootsRequest(), types.ListRootsResult)
        if isinstance(result, types.InputRequiredResult):
            return result
        return json.dumps({"roots": [{"uri": str(r.uri), "name": r.name} for r in result.roots]})

    @tool()
    def roots_changed_count() -> str:
        """How many notifications/roots/list_changed the server has received."""
        return str(state["roots_changed"])

    @tool()
    async def ask(question: str, ctx: Context) -> str | types.InputRequiredResult:
        """Ask the user through a form elicitation whose fields have defaults."""
        schema = {
            "type": "object",
            "properties": {
                "name": {"type": "string", "title": "Name", "description": "Your name", "default": "anon"},
                "count": {"type": "integer", "title": "Count", "minimum": 0, "maximum": 100, "default": 3},
                "color": {
                    "type": "string",
                    "title": "Color",
                    "enum": ["red", "green", "blue"],
                    "default": "blue",
                },
                "ok": {"type": "boolean", "title": "OK?", "description": "Confirm"},
            },
            "required": ["ok"],
        }
        request = types.ElicitRequest(
            params=types.ElicitRequestFormParams(message=question, requested_schema=schema)
        )
        result = await ask_client(ctx, "ask", request, types.ElicitResult)
        if isinstance(result, types.InputRequiredResult):
            return result
        return json.dumps({"action": result.action, "content": result.content})

    @tool()
    async def sample(prompt: str, ctx: Context) -> str | types.InputRequiredResult:
        """Ask the client's LLM (sampling/createMessage) and return the text it produced."""
        request = types.CreateMessageRequest(
            params=types.CreateMessageRequestParams(
                messages=[
                    types.SamplingMessage(role="user", content=types.TextContent(type="text", text=prompt))
                ],
                max_tokens=200,
                system_prompt="You are the knob test server's sampling target.",
            )
        )
        result = await ask_client(ctx, "sample", request, types.CreateMessageResult)
        if isinstance(result, types.InputRequiredResult):
            return result
        content = result.content
        if isinstance(content, types.TextContent):
            return content.text
        return json.dumps(content.model_dump(mode="json", by_alias=True, exclude_none=True))
