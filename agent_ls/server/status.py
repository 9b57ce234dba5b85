"""The MCP host's status as the editor is shown it (``mcp/status``, ``mcp/statusChanged``)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_ls.server.protocol.codec import dump, payload_from
from agent_ls.server.protocol.mcp import ServerStatusPayload, StatusResult
from agent_ls.server.workspaces import workspaces_payload

if TYPE_CHECKING:
    from agent_ls.mcp.manager import MCPManager
    from agent_ls.mcp.status import ServerStatus
    from agent_ls.server.server import AgentLanguageServer


def status_payload(source: MCPManager | list[ServerStatus]) -> list[ServerStatusPayload]:
    return [payload_from(s, ServerStatusPayload) for s in (source if isinstance(source, list) else source.status())]


def status_result(ls: AgentLanguageServer, manager: Any) -> Any:
    diags = [str(d) for d in (ls.runtime.settings.diagnostics if ls.runtime.settings else [])]
    state = ls.runtime.loaded_state
    if state is not None and state.problem:
        diags.append(state.problem)
    return dump(StatusResult(servers=status_payload(manager), diagnostics=diags,
                             workspaces=workspaces_payload(ls)))
