"""The MCP host's status as the editor is shown it (``mcp/status``, ``mcp/statusChanged``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import attrs

from agent_ls.server.protocol.codec import dump, snake_to_camel_dict
from agent_ls.server.protocol.mcp import ServerStatusPayload, StatusResult, ToolInfoPayload
from agent_ls.server.workspaces import workspaces_payload

if TYPE_CHECKING:
    from agent_ls.mcp.manager import MCPManager
    from agent_ls.mcp.status import ServerStatus
    from agent_ls.server.server import AgentLanguageServer


def status_payload(source: MCPManager | list[ServerStatus]) -> list[ServerStatusPayload]:
    out = []
    for s in source if isinstance(source, list) else source.status():
        auth = getattr(s, "auth", None)
        out.append(ServerStatusPayload(
            name=s.name, state=s.state, transport=s.transport, scope=s.scope, source=s.source,
            tool_count=s.tool_count, prompt_count=s.prompt_count, resource_count=s.resource_count,
            error=s.error, stderr_tail=list(s.stderr_tail), server_info=s.server_info,
            protocol_version=s.protocol_version, restarts=s.restarts, pid=s.pid,
            tools=[ToolInfoPayload(name=t.name, original=t.original, capability=t.capability,
                                   description=t.description) for t in s.tools],
            auth=auth if isinstance(auth, dict) or auth is None else snake_to_camel_dict(_as_dict(auth)),
        ))
    return out


def _as_dict(value: Any) -> Any:

    if attrs.has(type(value)):
        return attrs.asdict(value)
    return value


def status_result(ls: AgentLanguageServer, manager: Any) -> Any:
    diags = [str(d) for d in (ls.settings.diagnostics if ls.settings else [])]
    if ls.host_state is not None and ls.host_state.problem:
        diags.append(ls.host_state.problem)
    return dump(StatusResult(servers=status_payload(manager), diagnostics=diags,
                             workspaces=workspaces_payload(ls)))
