"""Prompting over LSP: sessions, streamed events, approvals through the editor, direct tool calls.

A prompt is a request that returns when the turn ends; its events go out as ``agent/event``
notifications while it runs, all before the response. ``$/cancelRequest`` cancels the
handler task: the turn loop stops the stream or the running tool calls, keeps the history
consistent, and the client gets the ``RequestCancelled`` error.
"""

from __future__ import annotations

import asyncio
import importlib
import itertools
import logging
import os
import sys
import uuid
from pathlib import Path
from typing import Any

import attrs
from lsprotocol import types as lsp
from pygls.uris import to_fs_path

from agent_ls.server import protocol as P
from agent_ls.server.features import ensure_manager
from agent_ls.server.server import AgentLanguageServer, guarded, in_daemon_thread

log = logging.getLogger("agent_ls.server")
_direct_ids = itertools.count(1)


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
        params = P.ApproveParams(call_id=call_id, tool=spec.name, arguments=request.arguments,
                                 reason=request.reason, server=spec.server, display_name=spec.display_name,
                                 session_id=self.session_id, reviewed_edit=self.reviewed(spec))
        try:
            raw = await self.ls.ask_client(P.APPROVE, P.dump(params))
            answer = P.parse(P.ApproveResult, raw).answer
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.warning("approval request for %s failed (%s): denied", spec.name, e)
            return ApprovalAnswer.DENY
        try:
            return ApprovalAnswer(answer)
        except ValueError:
            log.warning("unknown approval answer %r for %s: denied", answer, spec.name)
            return ApprovalAnswer.DENY


def agent_settings_now(ls: AgentLanguageServer) -> Any:
    from agent_ls.agent.config import agent_settings
    from agent_ls.config.settings import LoadedSettings

    return agent_settings(ls.settings or LoadedSettings())


def make_gate(ls: AgentLanguageServer, approver: EditorApprover) -> Any:
    from agent_ls.agent.builder import permission_gate

    return permission_gate(agent_settings_now(ls), approver)


def direct_gate(ls: AgentLanguageServer) -> Any:
    """One gate for direct calls, so "allow for session" lasts until the settings change."""
    if ls.direct_gate is None:
        ls.direct_gate = make_gate(ls, EditorApprover(ls))
    return ls.direct_gate


async def ensure_store(ls: AgentLanguageServer) -> Any:
    if ls.store is None:
        from agent_ls.agent.store import SessionStore
        from agent_ls.config.paths import user_data_dir

        folders = ls.folders()
        root = folders[0] if folders else Path.cwd()
        ls.store = await asyncio.to_thread(SessionStore.for_workspace, user_data_dir(), root)
    return ls.store


async def ensure_display_store(ls: AgentLanguageServer) -> Any:
    store = await ensure_store(ls)
    if ls.display_store is None:
        from agent_ls.server.display import DisplayStore

        ls.display_store = await asyncio.to_thread(DisplayStore, store.path)
    return ls.display_store


_change_notes: dict[str, list[str]] = {}
"""Per session: what the user did to the agent's changes since its last prompt (a revert), said
at the start of the next user message."""


async def ensure_change_store(ls: AgentLanguageServer) -> Any:
    """The agent's file changes (:class:`agent_ls.agent.changes.ChangeStore`), in the session database."""
    from agent_ls.agent.changes import ChangeStore

    store = await ensure_store(ls)
    return await asyncio.to_thread(ChangeStore.for_path, store.path)


def change_payload(record: dict[str, Any]) -> P.FileChangePayload:
    return P.FileChangePayload(
        change_id=record["change_id"], call_id=record.get("call_id"), path=record["path"], shown=record["shown"],
        added=record["added"], removed=record["removed"], created=record["created"], status=record["status"],
        turn=record.get("turn", 0), uri=record.get("uri"), reason=record.get("reason"),
        has_content=bool(record.get("has_content")))


def message_display(params: P.PromptParams, sent: str) -> P.MessageDisplay | None:
    """How the chat shows this prompt's user message, when that is not the text sent."""
    shown = params.display_text if params.display_text is not None else params.text
    if not params.attachments and shown == sent:
        return None
    return P.MessageDisplay(text=shown, attachments=[
        P.DisplayAttachment(kind=a.kind, uri=a.uri, server=a.server, range=a.range, language_id=a.language_id)
        for a in params.attachments])


async def remember_display(ls: AgentLanguageServer, session_id: str, sent: str, display: P.MessageDisplay) -> None:
    try:
        store = await ensure_display_store(ls)
        await asyncio.to_thread(store.put, session_id, sent, P.dump(display))
    except Exception as e:  # the chat still works; a resume would show the model-facing text
        log.warning("could not store how session %s shows a message: %s", session_id, e)


async def title_session(ls: AgentLanguageServer, session_id: str, params: P.PromptParams) -> None:
    """A session is titled from its first user message as the user typed it (not the text the
    model gets, with attachments rendered into it); a later message never renames it."""
    typed = params.display_text if params.display_text is not None else params.text
    if not typed.strip():
        return  # the store titles it from the message itself
    try:
        store = await ensure_store(ls)
        await asyncio.to_thread(store.title_if_unset, session_id, typed)
    except Exception as e:  # the title is cosmetic
        log.warning("could not title session %s: %s", session_id, e)


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


async def get_session(ls: AgentLanguageServer, session_id: str | None, model: str | None) -> Any:
    if session_id is not None and session_id in ls.sessions and model is None:
        return ls.sessions[session_id]
    manager = await ensure_manager(ls)
    store = await ensure_store(ls)
    agent = agent_settings_now(ls)
    llm = agent.llm_config(model)
    if llm is None:
        raise P.RequestFailed(
            "no model is configured: set \"model\" in .agent-ls/settings.json or the user settings, or the "
            "AGENT_LS_MODEL environment variable (any litellm model string, e.g. anthropic/claude-sonnet-4-5 "
            "or ollama/qwen3 with \"apiBase\")")
    if session_id is not None and await asyncio.to_thread(store.get_session, session_id) is None:
        raise P.RequestFailed(f"no session {session_id!r}")

    from agent_ls.agent.builder import FrontEnd, build_session
    from agent_ls.server.editor_files import LspEditorFiles

    approver = EditorApprover(ls)
    session = await build_session(agent, llm, roots=ls.folders() or [Path.cwd()],
                                  front=FrontEnd(approver=approver, editor=LspEditorFiles(ls)),
                                  manager=manager, store=store, session_id=session_id)
    approver.session_id = session.session_id
    session.approver = approver  # type: ignore[attr-defined]
    ls.sessions[session.session_id] = session
    return session


async def render_attachments(ls: AgentLanguageServer, attachments: list[P.Attachment]) -> str:
    parts: list[str] = []
    for a in attachments:
        if a.kind == "selection":
            where = (to_fs_path(a.uri) or a.uri) if a.uri else "the editor"
            line = ""
            if a.range and isinstance(a.range.get("start"), dict):
                line = f" (lines {a.range['start'].get('line', 0) + 1}-{a.range.get('end', {}).get('line', 0) + 1})"
            parts.append(f"Selection from {where}{line}:\n```{a.language_id or ''}\n{a.text or ''}\n```")
        elif a.kind == "file":
            assert a.uri is not None
            text = a.text
            if text is None:
                text = await _document_text(ls, a.uri)
            parts.append(f"File {to_fs_path(a.uri) or a.uri}:\n```{a.language_id or ''}\n{text}\n```")
        else:
            assert a.uri is not None and a.server is not None
            manager = await ensure_manager(ls)
            if a.server not in manager.server_names():
                raise P.RequestFailed(f"no MCP server named {a.server!r} is configured")
            result = await manager.read_resource(a.server, a.uri)
            texts = [getattr(c, "text", None) or f"[binary {getattr(c, 'mime_type', '') or 'data'}]"
                     for c in result.contents]
            parts.append(f"MCP resource {a.uri} (server {a.server}):\n" + "\n".join(texts))
    return "\n\n".join(parts)


async def _document_text(ls: AgentLanguageServer, uri: str) -> str:
    try:
        doc = ls.workspace.get_text_document(uri)
        return doc.source
    except Exception as e:
        raise P.RequestFailed(f"cannot read {uri}: {e}") from None


def event_payload(event: Any) -> dict[str, Any]:
    """An agent event as JSON: camelCase fields (tool arguments are left exactly as given)."""
    from agent_ls.agent.events import to_dict

    out = to_dict(event)
    usage = out.get("usage")
    if isinstance(usage, dict):  # turn_finished carries the turn's usage as a nested record
        out["usage"] = {k: v for k, v in P.snake_to_camel_dict(usage).items() if k != "type"}
    return out


def notify_event(ls: AgentLanguageServer, session_id: str | None, event: Any) -> None:
    ls.protocol.notify(P.EVENT, P.dump(P.EventParams(session_id=session_id, event=event_payload(event))))


def event_sink(ls: AgentLanguageServer, session: Any) -> Any:
    from agent_ls.agent.events import ApprovalRequested

    approver: EditorApprover | None = getattr(session, "approver", None)

    def sink(event: Any) -> None:
        if approver is not None and isinstance(event, ApprovalRequested):
            approver.call_id = event.call_id
        notify_event(ls, session.session_id, event)

    return sink


async def load_llm() -> None:
    """litellm takes seconds to import: never on the event loop (requests, including
    ``$/cancelRequest``, keep being answered meanwhile)."""
    from agent_ls.agent import llm

    if llm._litellm is None:
        await in_daemon_thread(llm.get_litellm)


async def load_llm_with_progress(ls: AgentLanguageServer) -> None:
    """:func:`load_llm`; while a prompt waits for it (the warm-up has not finished yet), the
    editor shows work-done progress saying so."""
    from agent_ls.agent import llm

    if llm._litellm is not None:
        return
    token = f"agent-ls-load-{uuid.uuid4().hex[:8]}"
    progress = None
    try:
        caps = ls.client_capabilities
        if caps.window is not None and caps.window.work_done_progress:
            await ls.work_done_progress.create_async(token)
            progress = ls.work_done_progress
            progress.begin(token, lsp.WorkDoneProgressBegin(
                title="agent-ls", message="Loading the model library (first prompt only)…"))
    except Exception as e:  # noqa: BLE001 - progress is a courtesy
        log.debug("no work-done progress: %s", e)
    try:
        await load_llm()
    finally:
        if progress is not None:
            progress.end(token, lsp.WorkDoneProgressEnd())


def prewarm_llm(ls: AgentLanguageServer) -> None:
    """Import litellm and the agent in the background once the MCP host has started (its
    servers start in their own processes), when a model is configured, so that the first
    prompt is as fast as the later ones. ``AGENT_LS_WARMUP=0`` turns it off (benchmarks)."""
    if os.environ.get("AGENT_LS_WARMUP") == "0":
        return
    if agent_settings_now(ls).model and "litellm" not in sys.modules:  # (sys.modules: also while importing)
        ls.run_task(warm_up(ls), "warm up the agent")


async def warm_up(ls: AgentLanguageServer) -> None:
    def load() -> None:
        for name in ("agent_ls.agent.builder",):  # the session, the tools, the registry
            importlib.import_module(name)

    await load_llm()
    await in_daemon_thread(load)
    config = agent_settings_now(ls).llm_config(None)
    if config is not None:  # litellm's first call builds the provider's client: do it now, not at the first prompt
        from agent_ls.agent import llm

        await in_daemon_thread(lambda: llm.warm_up(config))


async def prompt(ls: AgentLanguageServer, params: P.PromptParams) -> dict[str, Any]:
    session = await get_session(ls, params.session_id, params.model)
    lock = ls.session_locks.setdefault(session.session_id, asyncio.Lock())
    if lock.locked():
        raise P.RequestFailed(f"session {session.session_id} is already answering a prompt")
    async with lock:
        task = asyncio.current_task()
        if task is not None:
            ls.turn_tasks[session.session_id] = task
        try:
            await load_llm_with_progress(ls)
            text = params.text
            if params.attachments:
                context = await render_attachments(ls, params.attachments)
                text = f"{context}\n\n{text}"
            if notes := _change_notes.pop(session.session_id, None):
                text = f"[From the editor: {'; '.join(notes)}.]\n\n{text}"
            display = message_display(params, text)
            if display is not None:
                await remember_display(ls, session.session_id, text, display)
            await title_session(ls, session.session_id, params)
            result = await session.prompt(text, event_sink(ls, session))
        finally:
            if ls.turn_tasks.get(session.session_id) is task:
                del ls.turn_tasks[session.session_id]
    return P.dump(P.PromptResult(
        session_id=session.session_id, stop_reason=result.stop_reason, text=result.text,
        usage=P.snake_to_camel_dict(attrs.asdict(result.usage, filter=lambda a, v: a.name != "type")),
        error={"kind": result.error.kind, "message": result.error.message} if result.error else None,
    ))


async def cancel_turn(ls: AgentLanguageServer, session_id: str, timeout: float = 30.0) -> bool:
    """Cancel the running turn of ``session_id``, whoever started it (an ``agent/prompt``
    request, or a code action's background turn), and wait until it has ended: its
    ``turn_finished`` event (``stopReason: "cancelled"``) is sent before this returns.
    False when the session runs no turn."""
    task = ls.turn_tasks.get(session_id)
    if task is None or task.done() or task is asyncio.current_task():
        return False
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if not done:
        log.warning("the turn of session %s did not end within %.0f s of its cancellation", session_id, timeout)
    return True


async def start_prompt(ls: AgentLanguageServer, text: str, session_id: str | None,
                       attachments: list[P.Attachment]) -> P.AskResult:
    """Start a turn in the background (code actions): events stream as for ``agent/prompt``."""
    session = await get_session(ls, session_id, None)
    lock = ls.session_locks.get(session.session_id)
    if lock is not None and lock.locked():  # said now, not logged later by the background task
        raise P.RequestFailed(f"session {session.session_id} is already answering a prompt")
    params = P.PromptParams(text=text, session_id=session.session_id, attachments=attachments)
    ls.run_task(prompt(ls, params), f"turn in {session.session_id}")
    return P.AskResult(session_id=session.session_id, started=True, text=text)


async def call_tool_direct(ls: AgentLanguageServer, server: str, tool: str, arguments: dict[str, Any], *,
                           call_id: str | None = None, sink: Any = None) -> P.ToolResultPayload:
    """A direct MCP tool call from the editor, through the approval gate.

    With ``sink``, the call is also reported as events (started, approval, finished), as a
    tool call of the agent would be.
    """
    import time

    from agent_ls.agent import events as ev

    manager = await ensure_manager(ls)
    if server not in manager.server_names():
        raise P.RequestFailed(f"no MCP server named {server!r} is configured")
    await manager.refresh_if_dirty()
    found = manager.find_tool(server, tool)
    conn = manager.connection(server)
    if found is None and conn is not None and conn.settling:  # (re)connecting: wait for it, bounded
        await conn.wait_settled(conn.config.connect_timeout)
        await manager.refresh_if_dirty()
        found = manager.find_tool(server, tool)
    if found is None:
        if conn is None or not conn.connected:
            state = conn.state.value if conn is not None else "failed"
            raise P.RequestFailed(f"MCP server {server!r} is not connected ({state})")
        raise P.RequestFailed(f"MCP server {server!r} has no tool named {tool!r}")
    spec = found.spec
    gate = direct_gate(ls)
    started = time.perf_counter()
    call_id = call_id or f"direct-{next(_direct_ids)}"
    if sink is not None:
        sink(ev.ToolCallStarted(call_id, spec.name, arguments, spec.server, spec.display_name))
        reason = gate.approval_reason(spec)
        if reason is not None:
            sink(ev.ApprovalRequested(call_id, spec.name, arguments, reason))
    gate.handler.call_id = call_id
    ok, reason = await gate.check(spec, arguments)
    if not ok:
        payload = P.ToolResultPayload(is_error=True, content=reason, denied=True)
    else:
        result = await found.call(arguments)
        if len(result.content) > DIRECT_RESULT_CHARS:  # the editor shows it: no multi-megabyte cards
            from agent_ls.core.tools import cap_text

            content, cut = cap_text(result.content, DIRECT_RESULT_CHARS)
            result = attrs.evolve(result, content=content, truncated_chars=result.truncated_chars + cut)
        payload = result_payload(result)
    if sink is not None:
        sink(ev.ToolCallFinished(call_id, spec.name, payload.is_error, payload.content,
                                 (time.perf_counter() - started) * 1e3, payload.denied, tuple(payload.attachments)))
    return payload


DIRECT_RESULT_CHARS = 100_000
"""What a tool run from the editor (mcp/callTool, a tool code action) returns of its text; the
agent's calls keep more (mcp.maxOutputChars) and page it (agent_ls/agent/output_store.py)."""


def result_payload(result: Any) -> P.ToolResultPayload:
    return P.ToolResultPayload(
        is_error=result.is_error, content=result.content, structured=result.structured,
        truncated_chars=result.truncated_chars,
        attachments=[P.snake_to_camel_dict(attrs.asdict(a)) for a in result.attachments],
    )


# handlers ------------------------------------------------------------------------------------------------

def register(server: AgentLanguageServer) -> None:
    @server.feature(P.PROMPT)
    @guarded
    async def prompt_handler(ls: AgentLanguageServer, raw: Any) -> Any:
        return await prompt(ls, P.parse(P.PromptParams, raw))

    @server.feature(P.CANCEL)
    @guarded
    async def cancel_handler(ls: AgentLanguageServer, raw: Any) -> Any:
        p = P.parse(P.CancelParams, raw)
        return P.dump(P.CancelResult(cancelled=await cancel_turn(ls, p.session_id)))

    @server.feature(P.SESSIONS_LIST)
    @guarded
    async def sessions_list(ls: AgentLanguageServer, raw: Any) -> Any:
        P.parse(P.NoParams, raw)
        store = await ensure_store(ls)
        infos = await asyncio.to_thread(store.list_sessions)
        return P.dump(P.SessionsListResult(sessions=[
            P.SessionInfo(id=i.id, title=i.title, created=i.created, updated=i.updated, model=i.model,
                          message_count=i.message_count) for i in infos]))

    @server.feature(P.SESSIONS_NEW)
    @guarded
    async def sessions_new(ls: AgentLanguageServer, raw: Any) -> Any:
        p = P.parse(P.NewSessionParams, raw)
        store = await ensure_store(ls)
        info = await asyncio.to_thread(store.create_session, p.title)
        return P.dump(P.NewSessionResult(session_id=info.id))

    @server.feature(P.SESSIONS_RESUME)
    @guarded
    async def sessions_resume(ls: AgentLanguageServer, raw: Any) -> Any:
        p = P.parse(P.SessionParams, raw)
        store = await ensure_store(ls)
        if await asyncio.to_thread(store.get_session, p.session_id) is None:
            raise P.RequestFailed(f"no session {p.session_id!r}")
        messages = await asyncio.to_thread(store.load_messages, p.session_id)
        try:
            display = await ensure_display_store(ls)
            messages = await asyncio.to_thread(display.annotate, p.session_id, messages)
        except Exception as e:  # the history itself is what matters
            log.warning("could not read how session %s shows its messages: %s", p.session_id, e)
        try:
            messages = with_tool_runs(messages, await asyncio.to_thread(store.tool_runs, p.session_id))
        except Exception as e:
            log.warning("could not read how the tools of session %s ran: %s", p.session_id, e)
        changes: list[P.FileChangePayload] = []
        try:
            change_store = await ensure_change_store(ls)
            changes = [change_payload(r) for r in await asyncio.to_thread(change_store.list, p.session_id)]
        except Exception as e:  # the history itself is what matters
            log.warning("could not read the file changes of session %s: %s", p.session_id, e)
        return P.dump(P.ResumeResult(session_id=p.session_id, messages=messages, changes=changes))

    @server.feature(P.CHANGE_OUTCOME)
    @guarded
    async def change_outcome(ls: AgentLanguageServer, raw: Any) -> Any:
        p = P.parse(P.ChangeOutcomeParams, raw)
        change_store = await ensure_change_store(ls)
        record = await asyncio.to_thread(change_store.set_status, p.session_id, p.change_id, p.outcome)
        if record is None:
            raise P.RequestFailed(f"no change {p.change_id!r} in session {p.session_id!r}")
        if p.outcome == "reverted":  # the model is told with the next prompt (it thinks its change is in)
            _change_notes.setdefault(p.session_id, []).append(
                f"the user reverted your change to {record['shown']} (it has the text from before that change again)")
        return P.dump(change_payload(record))

    @server.feature(P.TOOL_OUTPUT)
    @guarded
    async def tool_output(ls: AgentLanguageServer, raw: Any) -> Any:
        p = P.parse(P.ToolOutputParams, raw)
        session = ls.sessions.get(p.session_id)
        outputs = getattr(session, "outputs", None)
        if outputs is None:
            raise P.RequestFailed(f"the outputs of session {p.session_id!r} are not kept any more: stored output "
                                  "lives in memory only, and agent-ls restarted (or the session was deleted)")
        found = outputs.get(p.handle)
        if isinstance(found, str):
            raise P.RequestFailed(found)
        return P.dump(P.ToolOutputResult(handle=found.handle, tool=found.tool, text=found.text,
                                         total_chars=found.total_chars))

    @server.feature(P.CHANGE_CONTENT)
    @guarded
    async def change_content(ls: AgentLanguageServer, raw: Any) -> Any:
        p = P.parse(P.ChangeContentParams, raw)
        change_store = await ensure_change_store(ls)
        found = await asyncio.to_thread(change_store.content, p.session_id, p.change_id)
        if found is None:
            raise P.RequestFailed(f"no change {p.change_id!r} in session {p.session_id!r}")
        record, before, after = found
        record["has_content"] = before is not None
        return P.dump(P.ChangeContentResult(change=change_payload(record), before=before, after=after))

    @server.feature(P.SESSIONS_DELETE)
    @guarded
    async def sessions_delete(ls: AgentLanguageServer, raw: Any) -> Any:
        p = P.parse(P.SessionParams, raw)
        lock = ls.session_locks.get(p.session_id)
        if lock is not None and lock.locked():
            raise P.RequestFailed(f"session {p.session_id} is answering a prompt; cancel it first")
        store = await ensure_store(ls)
        ls.sessions.pop(p.session_id, None)
        ls.session_locks.pop(p.session_id, None)
        return P.dump(P.DeleteResult(deleted=await asyncio.to_thread(store.delete_session, p.session_id)))
