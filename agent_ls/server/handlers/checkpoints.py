"""Checkpoints and rewind over LSP: ``agent/checkpoints``, ``agent/rewind`` (with ``preview``: the
plan alone) and ``agent/redo``, translated to the runtime's conversations (the same rewind
``agent-ls chat``'s ``/rewind`` and ``agent-ls checkpoints`` do)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from agent_ls.server.protocol.codec import payload_from
from agent_ls.server.protocol.methods import CHECKPOINTS, REDO, REWIND
from agent_ls.server.protocol.sessions import (
    CheckpointPayload,
    CheckpointsParams,
    CheckpointsResult,
    FileActionPayload,
    RedoParams,
    RewindParams,
    RewindResult,
)
from agent_ls.server.server import AgentLanguageServer, request

if TYPE_CHECKING:
    from agent_ls.agent.checkpoints import Checkpoint


def checkpoint_payload(cp: Checkpoint) -> CheckpointPayload:
    return payload_from(cp, CheckpointPayload)


def rewind_result(plan: Any, result: Any | None) -> RewindResult:
    """The plan (``result`` None: a preview; a redo's says whether it puts the conversation back)
    or what was done."""
    conversation = bool(result.messages_removed) if result is not None else bool(plan.redo and plan.conversation)
    return RewindResult(checkpoint=checkpoint_payload(plan.checkpoint),
                        actions=[FileActionPayload(a.path, a.action, a.protected) for a in plan.actions], done=result is not None,
                        changed=list(result.changed) if result else [], left_alone=list(result.left_alone) if result else [],
                        conversation=conversation)


def register(server: AgentLanguageServer) -> None:
    @request(server, CHECKPOINTS, CheckpointsParams)
    async def checkpoints(ls: AgentLanguageServer, p: CheckpointsParams) -> CheckpointsResult:
        found = await ls.conversations.checkpoint_list(p.session_id)
        return CheckpointsResult(checkpoints=[checkpoint_payload(c) for c in found])

    @request(server, REWIND, RewindParams)
    async def rewind(ls: AgentLanguageServer, p: RewindParams) -> RewindResult:
        plan = await ls.conversations.plan_rewind(p.checkpoint_id)
        if p.preview:
            return rewind_result(plan, None)
        result = await ls.conversations.rewind(plan, code=p.code, conversation=p.conversation,
                                               overwrite=p.overwrite)
        return rewind_result(plan, result)

    @request(server, REDO, RedoParams)
    async def redo(ls: AgentLanguageServer, p: RedoParams) -> RewindResult:
        plan = await ls.conversations.plan_redo(p.session_id)
        if p.preview:
            return rewind_result(plan, None)
        return rewind_result(plan, await ls.conversations.redo(plan, overwrite=p.overwrite))
