"""Stored sessions over LSP: the ``agent/sessions/*`` (list, new, resume, delete, rename), ``agent/changeOutcome``,
``agent/changeContent`` and ``agent/toolOutput`` requests, translated to the runtime's
conversations (:class:`agent_ls.runtime.conversations.Conversations`: the store, the transcript
a resume replays, the file changes).
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

from agent_ls.server.protocol.codec import NoParams, RequestFailed, payload_from
from agent_ls.server.protocol.methods import (
    CHANGE_CONTENT,
    CHANGE_OUTCOME,
    SESSIONS_DELETE,
    SESSIONS_LIST,
    SESSIONS_NEW,
    SESSIONS_RENAME,
    SESSIONS_RESUME,
    TOOL_OUTPUT,
)
from agent_ls.server.protocol.sessions import (
    ChangeContentParams,
    ChangeContentResult,
    ChangeOutcomeParams,
    DeleteResult,
    FileChangePayload,
    NewSessionParams,
    NewSessionResult,
    PlanEntryPayload,
    RenameParams,
    RenameResult,
    ResumeResult,
    SessionInfo,
    SessionParams,
    SessionsListResult,
    ToolOutputParams,
    ToolOutputResult,
)
from agent_ls.server.server import AgentLanguageServer, request

log = logging.getLogger("agent_ls.server")


def change_payload(record: dict[str, Any]) -> FileChangePayload:
    """A change as :class:`agent_ls.agent.editor.changes.ChangeStore` lists it, as the chat's file card."""
    return payload_from(record, FileChangePayload)


def register(server: AgentLanguageServer) -> None:
    @request(server, SESSIONS_LIST, NoParams)
    async def sessions_list(ls: AgentLanguageServer, p: NoParams) -> SessionsListResult:
        infos = await ls.conversations.sessions()
        return SessionsListResult(sessions=[payload_from(i, SessionInfo) for i in infos])

    @request(server, SESSIONS_NEW, NewSessionParams)
    async def sessions_new(ls: AgentLanguageServer, p: NewSessionParams) -> NewSessionResult:
        info = await ls.conversations.create(p.title)
        return NewSessionResult(session_id=info.id)

    @request(server, SESSIONS_RESUME, SessionParams)
    async def sessions_resume(ls: AgentLanguageServer, p: SessionParams) -> ResumeResult:
        found = await ls.conversations.transcript(p.session_id)
        return ResumeResult(session_id=p.session_id, messages=found.messages,
                            changes=[change_payload(r) for r in found.changes],
                            plan=[PlanEntryPayload(e.content, e.status, e.priority) for e in found.plan])

    @request(server, CHANGE_OUTCOME, ChangeOutcomeParams)
    async def change_outcome(ls: AgentLanguageServer, p: ChangeOutcomeParams) -> FileChangePayload:
        change_store = await ls.conversations.changes()
        record = await asyncio.to_thread(change_store.set_status, p.session_id, p.change_id, p.outcome)
        if record is None:
            raise RequestFailed(f"no change {p.change_id!r} in session {p.session_id!r}")
        if p.outcome == "reverted":  # the model is told with the next prompt (it thinks its change is in)
            ls.conversations.note(p.session_id, f"the user reverted your change to {record['shown']} (it has the "
                                                "text from before that change again)")
        return change_payload(record)

    @request(server, TOOL_OUTPUT, ToolOutputParams)
    async def tool_output(ls: AgentLanguageServer, p: ToolOutputParams) -> ToolOutputResult:
        found = ls.conversations.output(p.session_id, p.handle)
        return ToolOutputResult(handle=found.handle, tool=found.tool, text=found.text, total_chars=found.total_chars)

    @request(server, CHANGE_CONTENT, ChangeContentParams)
    async def change_content(ls: AgentLanguageServer, p: ChangeContentParams) -> ChangeContentResult:
        change_store = await ls.conversations.changes()
        found = await asyncio.to_thread(change_store.content, p.session_id, p.change_id)
        if found is None:
            raise RequestFailed(f"no change {p.change_id!r} in session {p.session_id!r}")
        record, before, after = found
        record["has_content"] = before is not None
        return ChangeContentResult(change=change_payload(record), before=before, after=after)

    @request(server, SESSIONS_DELETE, SessionParams)
    async def sessions_delete(ls: AgentLanguageServer, p: SessionParams) -> DeleteResult:
        return DeleteResult(deleted=await ls.conversations.delete(p.session_id))

    @request(server, SESSIONS_RENAME, RenameParams)
    async def sessions_rename(ls: AgentLanguageServer, p: RenameParams) -> RenameResult:
        return RenameResult(title=await ls.conversations.rename(p.session_id, p.title))
