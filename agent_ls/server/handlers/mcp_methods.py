"""The ``mcp/*`` requests: status, server control (restart, enable, trust, sign-in), resources,
prompts and direct tool calls. Each handler validates its params, waits for the host
(:func:`~agent_ls.server.host.ensure_manager`) and maps the result.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from agent_ls.server.protocol.codec import NoParams, RequestFailed
from agent_ls.server.protocol.mcp import (
    CallToolParams,
    GetPromptParams,
    GetPromptResult,
    PromptArgumentPayload,
    PromptMessagePayload,
    PromptPayload,
    PromptsListParams,
    PromptsListResult,
    ReadResourceParams,
    ReadResourceResult,
    ResourcePayload,
    ResourcesListParams,
    ResourcesListResult,
    ServerParams,
    ServerStatusPayload,
    SetEnabledParams,
    SignInParams,
    StatusResult,
    ToolResultPayload,
    TrustParams,
)
from agent_ls.server.protocol.methods import (
    MCP_CALL_TOOL,
    MCP_PROMPTS_GET,
    MCP_PROMPTS_LIST,
    MCP_RESOURCES_LIST,
    MCP_RESOURCES_READ,
    MCP_RESTART,
    MCP_SET_ENABLED,
    MCP_SIGN_IN,
    MCP_SIGN_OUT,
    MCP_STATUS,
    MCP_TRUST,
)
from agent_ls.server.server import AgentLanguageServer, request
from agent_ls.server.status import status_payload, status_result
from agent_ls.server.workspaces import workspaces_payload

if TYPE_CHECKING:
    import mcp_types as types

    from agent_ls.mcp.manager import MCPManager
    from agent_ls.runtime.lifecycle import HostLifecycle

log = logging.getLogger("agent_ls.server")


def _one_status(manager: MCPManager, name: str) -> ServerStatusPayload:
    return next(s for s in status_payload(manager) if s.name == name)


def _known(manager: MCPManager, server: str) -> None:
    if server not in manager.server_names():
        raise RequestFailed(f"no MCP server named {server!r} is configured")


def _configured(manager: MCPManager, server: str) -> None:
    """``server`` is configured and its entry is valid (a restart or an enable can act on it)."""
    _known(manager, server)
    if manager.connection(server) is None:
        raise RequestFailed(f"MCP server {server!r} has a configuration error; fix the settings file")


def _connected(manager: MCPManager, server: str) -> None:
    _known(manager, server)
    conn = manager.connection(server)
    if conn is None or not conn.connected:
        state = conn.state.value if conn is not None else "failed"
        raise RequestFailed(f"MCP server {server!r} is not connected ({state})")


def register(server: AgentLanguageServer) -> None:  # noqa: C901 - one registration list
    @request(server, MCP_STATUS, NoParams)
    async def mcp_status(ls: AgentLanguageServer, _: NoParams) -> StatusResult:
        if ls.runtime.manager is None:  # the host is loading: answer with what it will report
            if not ls.lifecycle.lock.locked():
                ls.run_task(ls.lifecycle.start(), "start MCP host")
            await ls.lifecycle.preview_ready.wait()  # settings and the kept catalogues: milliseconds
            if ls.runtime.manager is None and ls.lifecycle.preview is not None:
                # set once this answer is on its way (pygls writes it when the handler returns)
                asyncio.get_running_loop().call_soon(ls.lifecycle.status_answered.set)
                return status_result(ls.lifecycle.preview, ls.runtime, workspaces_payload(ls.runtime))
        return status_result(await ls.lifecycle.ensure_manager(), ls.runtime, workspaces_payload(ls.runtime))

    @request(server, MCP_RESTART, ServerParams)
    async def mcp_restart(ls: AgentLanguageServer, p: ServerParams) -> StatusResult:
        manager = await ls.lifecycle.ensure_manager()
        if p.server is not None:
            _configured(manager, p.server)
        await manager.restart(p.server)
        await manager.wait_ready(60)
        return status_result(manager, ls.runtime, workspaces_payload(ls.runtime))

    @request(server, MCP_SET_ENABLED, SetEnabledParams)
    async def mcp_set_enabled(ls: AgentLanguageServer, p: SetEnabledParams) -> StatusResult:
        manager = await ls.lifecycle.ensure_manager()
        _configured(manager, p.server)
        await manager.set_enabled(p.server, p.enabled)
        await manager.wait_ready(60)
        return status_result(manager, ls.runtime, workspaces_payload(ls.runtime))

    @request(server, MCP_TRUST, TrustParams)
    async def mcp_trust(ls: AgentLanguageServer, p: TrustParams) -> StatusResult:
        manager = await ls.lifecycle.ensure_manager()
        _known(manager, p.server)
        conn = manager.connection(p.server)
        if conn is None or not conn.config.needs_trust:
            raise RequestFailed(f"MCP server {p.server!r} is not defined by a workspace file: it needs no trust")
        try:
            await manager.set_trust(p.server, p.trusted)
        except ValueError as e:
            raise RequestFailed(str(e)) from None
        await manager.wait_ready(60)
        return status_result(manager, ls.runtime, workspaces_payload(ls.runtime))

    async def auth_action(lifecycle: HostLifecycle, p: SignInParams, sign_in: bool) -> ServerStatusPayload:
        manager = await lifecycle.ensure_manager()
        _known(manager, p.server)
        try:
            status = await (manager.sign_in(p.server) if sign_in else manager.sign_out(p.server))
        except ValueError as e:
            raise RequestFailed(str(e)) from None
        return _one_status(manager, status.name)

    @request(server, MCP_SIGN_IN, SignInParams)
    async def mcp_sign_in(ls: AgentLanguageServer, p: SignInParams) -> ServerStatusPayload:
        return await auth_action(ls.lifecycle, p, sign_in=True)

    @request(server, MCP_SIGN_OUT, SignInParams)
    async def mcp_sign_out(ls: AgentLanguageServer, p: SignInParams) -> ServerStatusPayload:
        return await auth_action(ls.lifecycle, p, sign_in=False)

    @request(server, MCP_RESOURCES_LIST, ResourcesListParams)
    async def resources_list(ls: AgentLanguageServer, p: ResourcesListParams) -> ResourcesListResult:
        manager = await ls.lifecycle.ensure_manager()
        if p.server is not None:
            _known(manager, p.server)
        await manager.refresh_if_dirty()
        resources = [ResourcePayload(server=s, uri=str(r.uri), name=r.name, mime_type=r.mime_type,
                                     description=r.description)
                     for s, r in manager.resources() if p.server in (None, s)]
        templates = [{"server": s, "uriTemplate": str(t.uri_template), "name": t.name, "mimeType": t.mime_type,
                      "description": t.description}
                     for s, t in manager.resource_templates() if p.server in (None, s)]
        return ResourcesListResult(resources=resources, templates=templates)

    @request(server, MCP_RESOURCES_READ, ReadResourceParams)
    async def resources_read(ls: AgentLanguageServer, p: ReadResourceParams) -> ReadResourceResult:
        manager = await ls.lifecycle.ensure_manager()
        _connected(manager, p.server)
        result = await manager.read_resource(p.server, p.uri)
        contents = [c.model_dump(mode="json", by_alias=True, exclude_none=True) for c in result.contents]
        return ReadResourceResult(contents=contents)

    @request(server, MCP_PROMPTS_LIST, PromptsListParams)
    async def prompts_list(ls: AgentLanguageServer, p: PromptsListParams) -> PromptsListResult:
        await ls.lifecycle.settings_loaded()
        preview = ls.lifecycle.host_starting()
        if p.server is None and preview is not None and not any(s.prompt_count for s in preview):
            # The editor lists prompts as soon as it connects: with none kept there is nothing to
            # list before the servers start, and it lists again when their status changes.
            return PromptsListResult(prompts=[])
        manager = await ls.lifecycle.ensure_manager()
        if p.server is not None:
            _known(manager, p.server)
        await manager.refresh_if_dirty()
        prompts = [PromptPayload(server=s, name=pr.name, description=pr.description, arguments=[
            PromptArgumentPayload(name=a.name, description=a.description, required=bool(a.required))
            for a in (pr.arguments or [])]) for s, pr in manager.prompts() if p.server in (None, s)]
        return PromptsListResult(prompts=prompts)

    @request(server, MCP_PROMPTS_GET, GetPromptParams)
    async def prompts_get(ls: AgentLanguageServer, p: GetPromptParams) -> GetPromptResult:
        manager = await ls.lifecycle.ensure_manager()
        _connected(manager, p.server)
        result = await manager.get_prompt(p.server, p.name, p.arguments)
        return GetPromptResult(description=result.description,
                               messages=[prompt_message(m) for m in result.messages])

    @request(server, MCP_CALL_TOOL, CallToolParams)
    async def call_tool(ls: AgentLanguageServer, p: CallToolParams) -> ToolResultPayload:
        return await ls.direct_tools.call(p.server, p.tool, p.arguments)


def prompt_message(m: types.PromptMessage) -> PromptMessagePayload:
    content = m.content
    text = getattr(content, "text", None)
    if text is None:
        resource = getattr(content, "resource", None)
        text = getattr(resource, "text", None)
    if text is None:
        kind = getattr(content, "type", "content")
        mime = getattr(content, "mime_type", None) or getattr(getattr(content, "resource", None), "mime_type", None)
        text = f"[{kind}{' ' + mime if mime else ''}]"
    return PromptMessagePayload(role=str(m.role), text=text)
