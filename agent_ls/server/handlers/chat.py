"""Prompting over LSP: ``agent/prompt`` (a turn, its events streamed as ``agent/event``) and
``agent/cancel``; the turns themselves are :class:`agent_ls.server.turns.EditorTurns` (``ls.turns``)."""

from __future__ import annotations

from agent_ls.server.protocol.methods import CANCEL, PROMPT
from agent_ls.server.protocol.prompt import CancelParams, CancelResult, PromptParams, PromptResult
from agent_ls.server.server import AgentLanguageServer, request


def register(server: AgentLanguageServer) -> None:
    @request(server, PROMPT, PromptParams)
    async def prompt(ls: AgentLanguageServer, p: PromptParams) -> PromptResult:
        return await ls.turns.prompt(p)

    @request(server, CANCEL, CancelParams)
    async def cancel(ls: AgentLanguageServer, p: CancelParams) -> CancelResult:
        return CancelResult(cancelled=await ls.conversations.cancel(p.session_id))
