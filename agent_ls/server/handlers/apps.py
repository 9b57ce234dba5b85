"""MCP Apps over LSP (``agent/appCallTool``, ``agent/appContext``): what the chat's bridge asks
for an app it shows, translated to the runtime's conversations.

An app's ``tools/call`` runs through the conversation's own tool runner (its permission gate,
hooks and approvals: an app is no way around them), its events go to the chat like the model's
calls (a card, an approval), and a tool that is not the app's server's or is model only is
refused before anything is asked. ``ui/update-model-context`` is kept for the model's next prompt.
``ui/message`` needs nothing here: the chat sends it as a prompt the user sees.
``agent/appResource`` reads the app of a resumed call from its server again (a resumed chat
shows it under its card; the store keeps no HTML).
"""

from __future__ import annotations

import secrets

from agent_ls.runtime.conversations import ConversationError
from agent_ls.server.direct_tools import result_payload
from agent_ls.server.protocol.codec import NoParams, RequestFailed
from agent_ls.server.protocol.mcp import (
    AppCallToolParams,
    AppContextParams,
    AppResourceParams,
    AppResourcePayload,
    ToolResultPayload,
)
from agent_ls.server.protocol.methods import APP_CALL_TOOL, APP_CONTEXT, APP_RESOURCE
from agent_ls.server.server import AgentLanguageServer, request


def register(server: AgentLanguageServer) -> None:
    @request(server, APP_CALL_TOOL, AppCallToolParams)
    async def app_call_tool(ls: AgentLanguageServer, p: AppCallToolParams) -> ToolResultPayload:
        # lazy: the MCP SDK's types (loaded already: an app exists only once its server answered)
        from agent_ls.mcp.apps import AppError

        msg_id = ls.client.request_id
        call_id = p.call_id or f"app-{msg_id if msg_id is not None else secrets.token_hex(4)}"
        try:
            outcome = await ls.conversations.app_call(p.session_id, p.server, p.tool, p.arguments, call_id,
                                                      ls.turns.sink(p.session_id))
        except (AppError, LookupError, ConversationError) as e:
            raise RequestFailed(str(e)) from None
        payload = result_payload(outcome.result)
        payload.denied = outcome.denied
        return payload

    @request(server, APP_CONTEXT, AppContextParams)
    async def app_context(ls: AgentLanguageServer, p: AppContextParams) -> NoParams:
        ls.conversations.app_context(p.session_id, f"{p.server} {p.resource_uri}", p.text)
        return NoParams()

    @request(server, APP_RESOURCE, AppResourceParams)
    async def app_resource(ls: AgentLanguageServer, p: AppResourceParams) -> AppResourcePayload:
        from agent_ls.mcp.apps import AppError

        try:
            app = await ls.conversations.app_resource(p.server, p.tool)
        except (AppError, LookupError) as e:
            raise RequestFailed(str(e)) from None
        return AppResourcePayload(app.uri, app.html, app.csp, app.permissions, app.prefers_border)
