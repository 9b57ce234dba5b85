"""MCP sampling over LSP: consent goes to the editor (``mcp/sample``), the rest is the agent's.

An MCP server's ``sampling/createMessage`` reaches :class:`agent_ls.agent.sampling.Sampler`
(the settings, the model call; put in place by :class:`agent_ls.runtime.host.RuntimeHost`); this
module is the consent question (:meth:`LspQuestions.sampling_consent
<agent_ls.server.editor_questions.LspQuestions.sampling_consent>`), which asks the editor with the server -> client request ``mcp/sample`` and maps its answer. A missing, failed
or malformed answer is a deny (the Sampler tells the MCP server why).
"""

from __future__ import annotations

import logging
from typing import Any

from agent_ls.server.ask import AskFailed, ask
from agent_ls.server.protocol.methods import SAMPLE, SAMPLING_ANSWERS
from agent_ls.server.protocol.questions import SampleMessage, SampleParams, SampleResult
from agent_ls.server.server import AgentLanguageServer

log = logging.getLogger("agent_ls.server")


async def ask_sampling_consent(ls: AgentLanguageServer, request: Any) -> str:
    """``mcp/sample`` to the editor: ``allow_once``, ``allow_session`` or ``deny``."""
    params = SampleParams(
        server=request.server,
        messages=[SampleMessage(role=m.role, text=m.text) for m in request.messages],
        max_tokens=request.max_tokens,
        model=request.model,
        system_prompt=request.system_prompt,
        requested_max_tokens=request.requested_max_tokens,
        omitted_messages=request.omitted_messages,
        endpoint=getattr(request, "endpoint", None),
    )
    try:
        answer = (await ask(ls, SAMPLE, params, SampleResult, fallback=SampleResult("deny"))).answer
    except AskFailed as e:
        if not e.malformed:
            raise  # the Sampler tells the MCP server that the user could not be asked
        log.warning("sampling consent for %s: malformed answer from the editor (%s): denied", request.server, e)
        return "deny"
    if answer not in SAMPLING_ANSWERS:
        log.warning("sampling consent for %s: unknown answer %r from the editor: denied", request.server, answer)
        return "deny"
    log.info("sampling request from %s (model %s): %s", request.server, request.model, answer)
    return answer
