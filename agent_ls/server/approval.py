"""Tool approval through the editor (``agent/approve``) and the permission gates that use it.

The agent's permission gate decides what needs asking and asks the language server's questions
(:class:`agent_ls.server.editor_questions.LspQuestions`), whose ``approve`` is
:class:`EditorApprover`: it asks the editor.
Direct calls (``mcp/callTool``, tool actions) share one gate, so "allow for session" lasts until
the settings change.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

from agent_ls.server.ask import AskFailed, ask
from agent_ls.server.protocol.methods import APPROVE
from agent_ls.server.protocol.questions import ApprovalScope, ApproveParams, ApproveResult

if TYPE_CHECKING:
    from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, SessionScope
    from agent_ls.core.tools import ToolSpec
    from agent_ls.server.client import EditorClient

log = logging.getLogger("agent_ls.server")


class EditorApprover:
    """Asks the editor (``agent/approve``); a missing or broken answer is a deny.

    The request names its call and session (:class:`agent_ls.agent.permissions.ApprovalRequest`),
    so the editor ties the question to the tool card it shows; one approver serves every session
    and the direct calls.
    """

    def __init__(self, client: EditorClient) -> None:
        self.client = client

    def reviewed(self, spec: ToolSpec, session_id: str | None) -> bool:
        """Every change of this call goes to ``agent/reviewEdit`` before it applies."""
        # lazy: sqlite3 and difflib, +16 modules, ~40 ms at start-up
        from agent_ls.agent.editor.changes import REVIEWED_TOOLS
        from agent_ls.server.editor.editor_files import reviews_edits

        return (session_id is not None and spec.source == "builtin" and spec.name in REVIEWED_TOOLS
                and reviews_edits(self.client.capabilities))

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer | SessionScope:
        # lazy: the permission rules (wcmatch, shlex), +17 modules, ~26 ms at start-up
        from agent_ls.agent.permissions import ApprovalAnswer

        spec = request.spec
        scopes = [ApprovalScope(s.id, s.label) for s in request.scopes]
        sensitive = request.sensitive
        params = ApproveParams(call_id=request.call_id, tool=spec.name, arguments=request.arguments,
                               reason=request.reason, server=spec.server, display_name=spec.display_name,
                               session_id=request.session_id,
                               reviewed_edit=sensitive is None and self.reviewed(spec, request.session_id),
                               scopes=scopes, sensitive=sensitive)
        try:
            result = await ask(self.client, APPROVE, params, ApproveResult, fallback=ApproveResult("deny"))
        except AskFailed as e:
            log.warning("approval request for %s failed (%s): denied", spec.name, e)
            return ApprovalAnswer.DENY
        try:
            answer = ApprovalAnswer(result.answer)
        except ValueError:
            log.warning("unknown approval answer %r for %s: denied", result.answer, spec.name)
            return ApprovalAnswer.DENY
        if answer is ApprovalAnswer.ALLOW_SESSION and result.scope is not None:
            chosen = request.scope(result.scope)
            return chosen if chosen is not None else ApprovalAnswer.ALLOW_ONCE
        return answer
