"""MCP sampling over LSP: consent goes to the editor (``mcp/sample``), the rest is the agent's.

An MCP server's ``sampling/createMessage`` reaches :class:`agent_ls.agent.sampling.Sampler`
(the settings, the model call); this module only plugs in the consent callback, which asks the
editor with the server -> client request ``mcp/sample`` and maps its answer. A missing, failed
or malformed answer is a deny (the Sampler tells the MCP server why).
"""

from __future__ import annotations

import logging
from typing import Any

from agent_ls.server import protocol as P
from agent_ls.server.server import AgentLanguageServer

log = logging.getLogger("agent_ls.server")


async def ask_sampling_consent(ls: AgentLanguageServer, request: Any) -> str:
    """``mcp/sample`` to the editor: ``allow_once``, ``allow_session`` or ``deny``."""
    params = P.SampleParams(
        server=request.server,
        messages=[P.SampleMessage(role=m.role, text=m.text) for m in request.messages],
        max_tokens=request.max_tokens,
        model=request.model,
        system_prompt=request.system_prompt,
        requested_max_tokens=request.requested_max_tokens,
        omitted_messages=request.omitted_messages,
        endpoint=getattr(request, "endpoint", None),
    )
    raw = await ls.ask_client(P.SAMPLE, P.dump(params))
    try:
        answer = P.parse(P.SampleResult, raw).answer
    except P.InvalidParams as e:
        log.warning("sampling consent for %s: malformed answer from the editor (%s): denied", request.server, e)
        return "deny"
    if answer not in P.SAMPLING_ANSWERS:
        log.warning("sampling consent for %s: unknown answer %r from the editor: denied", request.server, answer)
        return "deny"
    log.info("sampling request from %s (model %s): %s", request.server, request.model, answer)
    return answer


def install_sampling(ls: AgentLanguageServer, manager: Any) -> Any:
    """Route the manager's sampling requests through a Sampler that reads the current settings
    and asks the editor for consent. Returns the Sampler."""
    from agent_ls.agent.sampling import Sampler
    from agent_ls.server.chat import agent_settings_now

    sampler = Sampler(lambda: agent_settings_now(ls), lambda request: ask_sampling_consent(ls, request))
    manager.set_sampling_handler(sampler)
    return sampler
