"""What the MCP host asks the user through the editor: may a workspace server run
(``mcp/trustServer``), and an MCP server's form (``mcp/elicit``). Sampling consent is
:mod:`agent_ls.server.sampling`, tool approval :mod:`agent_ls.server.approval`.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from agent_ls.server.ask import AskFailed, ask
from agent_ls.server.protocol.methods import ELICIT, ELICIT_ACTIONS, TRUST_SERVER
from agent_ls.server.protocol.questions import ElicitParams, ElicitResultPayload, TrustServerResult
from agent_ls.server.workspaces import entry_payload

if TYPE_CHECKING:
    from agent_ls.config.entries import ServerConfig
    from agent_ls.server.server import AgentLanguageServer

log = logging.getLogger("agent_ls.server")


async def ask_server_trust(ls: AgentLanguageServer, cfg: ServerConfig) -> bool | None:
    """``mcp/trustServer``: may this workspace-defined server run (its whole entry, what changed)?"""
    manager = ls.manager
    changes = manager.trust_changes(cfg) if manager is not None else []
    params = entry_payload(cfg.view(), changes)
    try:
        answer = await ask(ls, TRUST_SERVER, params, TrustServerResult, fallback=TrustServerResult(trusted=None))
    except AskFailed as e:
        log.info("no trust decision for %s from the editor (%s); it stays awaiting-trust", cfg.name, e)
        return None
    return answer.trusted


async def ask_elicit(ls: AgentLanguageServer, server: str, params: Any) -> Any:
    """An MCP server asks the user for input: the form goes to the editor, the answer back."""
    import mcp_types as types

    schema = getattr(params, "requested_schema", None) or {}
    message = getattr(params, "message", "") or ""
    payload = ElicitParams(server=server, message=message, requested_schema=schema)
    try:
        answer = await ask(ls, ELICIT, payload, ElicitResultPayload, fallback=ElicitResultPayload(action="cancel"))
    except AskFailed as e:
        log.info("elicitation from %s was not answered: %s", server, e)
        return types.ElicitResult(action="cancel")
    if answer.action not in ELICIT_ACTIONS:
        log.info("elicitation from %s: unknown action %r, sent as cancel", server, answer.action)
        return types.ElicitResult(action="cancel")
    content = answer.content if answer.action == "accept" else None
    return types.ElicitResult(action=answer.action, content=content)  # type: ignore[arg-type]
