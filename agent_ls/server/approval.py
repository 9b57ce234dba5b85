"""Tool approval through the editor (``agent/approve``) and the permission gates that use it.

The agent's permission gate decides what needs asking; :class:`EditorApprover` asks the editor.
Direct calls (``mcp/callTool``, tool actions) share one gate, so "allow for session" lasts until
the settings change.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from agent_ls.server.ask import AskFailed, ask
from agent_ls.server.protocol.methods import APPROVE
from agent_ls.server.protocol.questions import ApprovalScope, ApproveParams, ApproveResult

if TYPE_CHECKING:
    from agent_ls.agent.config import AgentSettings
    from agent_ls.agent.permissions import PermissionGate
    from agent_ls.server.server import AgentLanguageServer

log = logging.getLogger("agent_ls.server")


class EditorApprover:
    """Asks the editor (``agent/approve``); a missing or broken answer is a deny.

    ``call_id`` is set by the event sink from the ``approval_requested`` event that precedes
    every question, so the editor can tie the question to the tool card it shows.
    """

    def __init__(self, ls: AgentLanguageServer, session_id: str | None = None) -> None:
        self.ls = ls
        self.session_id = session_id
        self.call_id: str | None = None
        self.counter = 0

    def reviewed(self, spec: Any) -> bool:
        """Every change of this call goes to ``agent/reviewEdit`` before it applies."""
        from agent_ls.agent.changes import REVIEWED_TOOLS
        from agent_ls.server.editor_files import LspEditorFiles

        return (self.session_id is not None and spec.source == "builtin" and spec.name in REVIEWED_TOOLS
                and LspEditorFiles(self.ls).reviews_edits())

    async def __call__(self, request: Any) -> Any:
        from agent_ls.agent.permissions import ApprovalAnswer

        self.counter += 1
        call_id, self.call_id = self.call_id or f"direct-{self.counter}", None
        spec = request.spec
        scopes = [ApprovalScope(s.id, s.label) for s in getattr(request, "scopes", ())]
        sensitive = getattr(request, "sensitive", None)
        params = ApproveParams(call_id=call_id, tool=spec.name, arguments=request.arguments,
                               reason=request.reason, server=spec.server, display_name=spec.display_name,
                               session_id=self.session_id, reviewed_edit=sensitive is None and self.reviewed(spec),
                               scopes=scopes, sensitive=sensitive)
        try:
            result = await ask(self.ls, APPROVE, params, ApproveResult, fallback=ApproveResult("deny"))
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


def agent_settings_now(ls: AgentLanguageServer) -> AgentSettings:
    return ls.runtime.agent_settings()


def make_gate(ls: AgentLanguageServer, approver: EditorApprover) -> PermissionGate:
    from agent_ls.runtime.sessions import permission_gate

    return permission_gate(agent_settings_now(ls), approver)


def direct_gate(ls: AgentLanguageServer) -> Any:  # PermissionGate once its approver's call_id goes (item 3)
    """One gate for direct calls, so "allow for session" lasts until the settings change."""
    if ls.chats.direct_gate is None:
        ls.chats.direct_gate = make_gate(ls, EditorApprover(ls))
    return ls.chats.direct_gate
