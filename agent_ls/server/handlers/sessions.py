"""Stored sessions over LSP: the session store, building a session, and the ``agent/sessions/*``,
``agent/changeOutcome``, ``agent/changeContent`` and ``agent/toolOutput`` requests.

Sessions live in the workspace's session database (:class:`agent_ls.agent.store.SessionStore`);
next to them, how user messages are shown (:mod:`.display`) and the agent's file changes
(:class:`agent_ls.agent.editor.changes.ChangeStore`).
"""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_ls.server.approval import agent_settings_now
from agent_ls.server.host import session_host
from agent_ls.server.protocol.codec import NoParams, RequestFailed, dump, parse, payload_from
from agent_ls.server.protocol.methods import (
    CHANGE_CONTENT,
    CHANGE_OUTCOME,
    SESSIONS_DELETE,
    SESSIONS_LIST,
    SESSIONS_NEW,
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
    ResumeResult,
    SessionInfo,
    SessionParams,
    SessionsListResult,
    ToolOutputParams,
    ToolOutputResult,
)
from agent_ls.server.server import AgentLanguageServer, guarded

if TYPE_CHECKING:
    from agent_ls.agent.session import Session

log = logging.getLogger("agent_ls.server")


def change_payload(record: dict[str, Any]) -> FileChangePayload:
    """A change as :class:`agent_ls.agent.editor.changes.ChangeStore` lists it, as the chat's file card."""
    return payload_from(record, FileChangePayload)


def with_tool_runs(messages: list[dict[str, Any]], runs: dict[str, Any]) -> list[dict[str, Any]]:
    """The tool results of a resumed history with ``run``: ``{server, displayName, durationMs,
    isError, denied}`` (how the call ran, for the chat's tool cards; copies, never sent to the model)."""
    if not runs:
        return messages
    out = []
    for m in messages:
        run = runs.get(m.get("tool_call_id") or "") if m.get("role") == "tool" else None
        if run is not None:
            m = {**m, "run": {"server": run.server, "displayName": run.display_name, "durationMs": run.duration_ms,
                              "isError": run.is_error, "denied": run.denied}}
        out.append(m)
    return out


async def get_session(ls: AgentLanguageServer, session_id: str | None, model: str | None) -> Session:
    """The live session ``session_id`` (a new one for None), built on the current settings when
    it is not live or ``model`` names another model."""
    if session_id is not None and session_id in ls.chats.sessions and model is None:
        return ls.chats.sessions[session_id]
    manager = await session_host(ls)
    store = await ls.chats.ensure_store()
    agent = agent_settings_now(ls)
    info = await asyncio.to_thread(store.get_session, session_id) if session_id is not None else None
    if session_id is not None and info is None:
        raise RequestFailed(f"no session {session_id!r}")
    # The session's own choice (agent/setModel, kept in the store) unless the prompt names one.
    llm = agent.llm_config(model or agent.session_model(info.model if info else None))
    if llm is None:
        raise RequestFailed(
            "no model is configured: set \"model\" in .agent-ls/settings.json or the user settings, or the "
            "AGENT_LS_MODEL environment variable (any litellm model string, e.g. anthropic/claude-sonnet-4-5 "
            "or ollama/qwen3 with \"apiBase\")")

    # lazy: the session layer, +81 modules (sqlite3, wcmatch, re2), ~160 ms at start-up
    from agent_ls.runtime.sessions import FrontEnd, build_session
    from agent_ls.server.editor.editor_files import LspEditorFiles
    from agent_ls.server.editor.intelligence import lsp_intelligence

    allowed = ls.chats.allowed.get(session_id, set()) if session_id is not None else set()
    session = await build_session(agent, llm, roots=ls.folders() or [Path.cwd()],
                                  front=FrontEnd(questions=ls.runtime.questions, editor=LspEditorFiles(ls),
                                                 intelligence=lsp_intelligence(ls)),
                                  manager=manager, store=store, session_id=session_id, session_allowed=allowed)
    ls.chats.add(session)
    return session


def register(server: AgentLanguageServer) -> None:
    @server.feature(SESSIONS_LIST)
    @guarded
    async def sessions_list(ls: AgentLanguageServer, raw: Any) -> Any:
        parse(NoParams, raw)
        store = await ls.chats.ensure_store()
        infos = await asyncio.to_thread(store.list_sessions)
        return dump(SessionsListResult(sessions=[payload_from(i, SessionInfo) for i in infos]))

    @server.feature(SESSIONS_NEW)
    @guarded
    async def sessions_new(ls: AgentLanguageServer, raw: Any) -> Any:
        p = parse(NewSessionParams, raw)
        store = await ls.chats.ensure_store()
        info = await asyncio.to_thread(store.create_session, p.title)
        return dump(NewSessionResult(session_id=info.id))

    @server.feature(SESSIONS_RESUME)
    @guarded
    async def sessions_resume(ls: AgentLanguageServer, raw: Any) -> Any:
        p = parse(SessionParams, raw)
        store = await ls.chats.ensure_store()
        if await asyncio.to_thread(store.get_session, p.session_id) is None:
            raise RequestFailed(f"no session {p.session_id!r}")
        messages = await asyncio.to_thread(store.load_messages, p.session_id)
        try:
            display = await ls.chats.ensure_display_store()
            messages = await asyncio.to_thread(display.annotate, p.session_id, messages)
        except Exception as e:  # the history itself is what matters
            log.warning("could not read how session %s shows its messages: %s", p.session_id, e)
        try:
            messages = with_tool_runs(messages, await asyncio.to_thread(store.tool_runs, p.session_id))
        except Exception as e:
            log.warning("could not read how the tools of session %s ran: %s", p.session_id, e)
        changes: list[FileChangePayload] = []
        try:
            change_store = await ls.chats.change_store()
            changes = [change_payload(r) for r in await asyncio.to_thread(change_store.list, p.session_id)]
        except Exception as e:  # the history itself is what matters
            log.warning("could not read the file changes of session %s: %s", p.session_id, e)
        plan: list[PlanEntryPayload] = []
        try:
            # lazy: ~2 ms at start-up
            from agent_ls.agent.plan import plan_from_json

            stored = plan_from_json(await asyncio.to_thread(store.load_plan, p.session_id))
            plan = [PlanEntryPayload(e.content, e.status, e.priority) for e in stored]
        except Exception as e:  # the history itself is what matters
            log.warning("could not read the plan of session %s: %s", p.session_id, e)
        return dump(ResumeResult(session_id=p.session_id, messages=messages, changes=changes, plan=plan))

    @server.feature(CHANGE_OUTCOME)
    @guarded
    async def change_outcome(ls: AgentLanguageServer, raw: Any) -> Any:
        p = parse(ChangeOutcomeParams, raw)
        change_store = await ls.chats.change_store()
        record = await asyncio.to_thread(change_store.set_status, p.session_id, p.change_id, p.outcome)
        if record is None:
            raise RequestFailed(f"no change {p.change_id!r} in session {p.session_id!r}")
        if p.outcome == "reverted":  # the model is told with the next prompt (it thinks its change is in)
            ls.chats.change_notes.setdefault(p.session_id, []).append(
                f"the user reverted your change to {record['shown']} (it has the text from before that change again)")
        return dump(change_payload(record))

    @server.feature(TOOL_OUTPUT)
    @guarded
    async def tool_output(ls: AgentLanguageServer, raw: Any) -> Any:
        p = parse(ToolOutputParams, raw)
        session = ls.chats.sessions.get(p.session_id)
        outputs = getattr(session, "outputs", None)
        if outputs is None:
            raise RequestFailed(f"the outputs of session {p.session_id!r} are not kept any more: stored output "
                                "lives in memory only, and agent-ls restarted (or the session was deleted)")
        found = outputs.get(p.handle)
        if isinstance(found, str):
            raise RequestFailed(found)
        return dump(ToolOutputResult(handle=found.handle, tool=found.tool, text=found.text,
                                     total_chars=found.total_chars))

    @server.feature(CHANGE_CONTENT)
    @guarded
    async def change_content(ls: AgentLanguageServer, raw: Any) -> Any:
        p = parse(ChangeContentParams, raw)
        change_store = await ls.chats.change_store()
        found = await asyncio.to_thread(change_store.content, p.session_id, p.change_id)
        if found is None:
            raise RequestFailed(f"no change {p.change_id!r} in session {p.session_id!r}")
        record, before, after = found
        record["has_content"] = before is not None
        return dump(ChangeContentResult(change=change_payload(record), before=before, after=after))

    @server.feature(SESSIONS_DELETE)
    @guarded
    async def sessions_delete(ls: AgentLanguageServer, raw: Any) -> Any:
        p = parse(SessionParams, raw)
        if ls.chats.busy(p.session_id):
            raise RequestFailed(f"session {p.session_id} is answering a prompt; cancel it first")
        store = await ls.chats.ensure_store()
        ls.chats.forget(p.session_id)
        return dump(DeleteResult(deleted=await asyncio.to_thread(store.delete_session, p.session_id)))
