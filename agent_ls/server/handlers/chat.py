"""Prompting over LSP: a turn, its streamed events, cancelling it.

A prompt is a request that returns when the turn ends; its events go out as ``agent/event``
notifications while it runs, all before the response. ``$/cancelRequest`` cancels the
handler task: the turn loop stops the stream or the running tool calls, keeps the history
consistent, and the client gets the ``RequestCancelled`` error.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

import attrs
from pygls.uris import to_fs_path

from agent_ls.server.handlers.sessions import get_session
from agent_ls.server.host import ensure_manager
from agent_ls.server.protocol.codec import RequestFailed, dump, parse, snake_to_camel_dict
from agent_ls.server.protocol.commands import AskResult
from agent_ls.server.protocol.methods import CANCEL, EVENT, PROMPT
from agent_ls.server.protocol.prompt import (
    Attachment,
    CancelParams,
    CancelResult,
    EventParams,
    PromptParams,
    PromptResult,
)
from agent_ls.server.protocol.sessions import DisplayAttachment, MessageDisplay
from agent_ls.server.server import AgentLanguageServer, guarded
from agent_ls.server.warmup import load_llm_with_progress

if TYPE_CHECKING:
    from collections.abc import Callable

    from agent_ls.agent.events import Event
    from agent_ls.agent.session import Session

log = logging.getLogger("agent_ls.server")


def message_display(params: PromptParams, sent: str) -> MessageDisplay | None:
    """How the chat shows this prompt's user message, when that is not the text sent."""
    shown = params.display_text if params.display_text is not None else params.text
    if not params.attachments and shown == sent:
        return None
    return MessageDisplay(text=shown, attachments=[
        DisplayAttachment(kind=a.kind, uri=a.uri, server=a.server, range=a.range, language_id=a.language_id)
        for a in params.attachments])


async def remember_display(ls: AgentLanguageServer, session_id: str, sent: str, display: MessageDisplay) -> None:
    try:
        store = await ls.chats.ensure_display_store()
        await asyncio.to_thread(store.put, session_id, sent, dump(display))
    except Exception as e:  # the chat still works; a resume would show the model-facing text
        log.warning("could not store how session %s shows a message: %s", session_id, e)


async def title_session(ls: AgentLanguageServer, session_id: str, params: PromptParams) -> None:
    """A session is titled from its first user message as the user typed it (not the text the
    model gets, with attachments rendered into it); a later message never renames it."""
    typed = params.display_text if params.display_text is not None else params.text
    if not typed.strip():
        return  # the store titles it from the message itself
    try:
        store = await ls.chats.ensure_store()
        await asyncio.to_thread(store.title_if_unset, session_id, typed)
    except Exception as e:  # the title is cosmetic
        log.warning("could not title session %s: %s", session_id, e)


async def render_attachments(ls: AgentLanguageServer, attachments: list[Attachment]) -> str:
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
                raise RequestFailed(f"no MCP server named {a.server!r} is configured")
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
        raise RequestFailed(f"cannot read {uri}: {e}") from None


def event_payload(event: Any) -> dict[str, Any]:
    """An agent event as JSON: camelCase fields (tool arguments are left exactly as given)."""
    # lazy: +2 modules, ~8 ms at start-up
    from agent_ls.agent.events import to_dict

    out = to_dict(event)
    usage = out.get("usage")
    if isinstance(usage, dict):  # turn_finished carries the turn's usage as a nested record
        out["usage"] = {k: v for k, v in snake_to_camel_dict(usage).items() if k != "type"}
    if attachments := out.get("attachments"):  # tool_call_finished: camelCase like every payload
        out["attachments"] = [snake_to_camel_dict(a) for a in attachments]
    return out


def notify_event(ls: AgentLanguageServer, session_id: str | None, event: Event) -> None:
    ls.protocol.notify(EVENT, dump(EventParams(session_id=session_id, event=event_payload(event))))


def event_sink(ls: AgentLanguageServer, session: Session) -> Callable[[Event], None]:
    def sink(event: Event) -> None:
        notify_event(ls, session.session_id, event)

    return sink


async def prompt(ls: AgentLanguageServer, params: PromptParams) -> dict[str, Any]:
    log.debug("prompt: received (session %s)", params.session_id)
    session = await get_session(ls, params.session_id, params.model)
    log.debug("prompt: session %s ready", session.session_id)
    # lazy: ~7 ms at start-up
    from agent_ls.agent.context import COMPACT_COMMAND

    if params.text.strip() == COMPACT_COMMAND and not params.attachments:
        return await compact(ls, session)
    lock = ls.chats.lock(session.session_id)
    if lock.locked():
        raise RequestFailed(f"session {session.session_id} is already answering a prompt")
    async with lock:
        task = asyncio.current_task()
        if task is not None:
            ls.chats.turn_tasks[session.session_id] = task
        try:
            await load_llm_with_progress(ls)
            log.debug("prompt: litellm ready, the turn starts")
            text = params.text
            if params.attachments:
                context = await render_attachments(ls, params.attachments)
                text = f"{context}\n\n{text}"
            if notes := ls.chats.change_notes.pop(session.session_id, None):
                text = f"[From the editor: {'; '.join(notes)}.]\n\n{text}"
            display = message_display(params, text)
            if display is not None:
                await remember_display(ls, session.session_id, text, display)
            await title_session(ls, session.session_id, params)
            result = await session.prompt(text, event_sink(ls, session))
        finally:
            if ls.chats.turn_tasks.get(session.session_id) is task:
                del ls.chats.turn_tasks[session.session_id]
    return dump(PromptResult(
        session_id=session.session_id, stop_reason=result.stop_reason, text=result.text,
        usage=snake_to_camel_dict(attrs.asdict(result.usage, filter=lambda a, v: a.name != "type")),
        error={"kind": result.error.kind, "message": result.error.message} if result.error else None,
    ))


async def compact(ls: AgentLanguageServer, session: Any) -> dict[str, Any]:
    """``/compact`` over LSP: compact the session now (see docs/protocol.md, agent/prompt)."""
    # lazy: +2 modules, ~8 ms at start-up
    from agent_ls.agent.events import TurnError, UsageReport

    lock = ls.chats.lock(session.session_id)
    if lock.locked():
        raise RequestFailed(f"session {session.session_id} is already answering a prompt")
    errors: list[TurnError] = []
    usage: list[UsageReport] = []
    sink = event_sink(ls, session)

    def keep(event: Event) -> None:
        if isinstance(event, TurnError):
            errors.append(event)
        elif isinstance(event, UsageReport):
            usage.append(event)
        sink(event)

    async with lock:
        await load_llm_with_progress(ls)
        done = await session.compact(keep)
    # lazy: ~7 ms at start-up
    from agent_ls.agent.context import compaction_text

    total = usage[-1] if usage else UsageReport()
    return dump(PromptResult(
        session_id=session.session_id, stop_reason="error" if errors else "compacted",
        text=errors[0].message if errors else compaction_text(done),
        usage=snake_to_camel_dict(attrs.asdict(total, filter=lambda a, v: a.name != "type")),
        error={"kind": errors[0].kind, "message": errors[0].message} if errors else None,
    ))


async def cancel_turn(ls: AgentLanguageServer, session_id: str, timeout: float = 30.0) -> bool:
    """Cancel the running turn of ``session_id``, whoever started it (an ``agent/prompt``
    request, or a code action's background turn), and wait until it has ended: its
    ``turn_finished`` event (``stopReason: "cancelled"``) is sent before this returns.
    False when the session runs no turn."""
    task = ls.chats.turn_tasks.get(session_id)
    if task is None or task.done() or task is asyncio.current_task():
        return False
    task.cancel()
    done, _ = await asyncio.wait({task}, timeout=timeout)
    if not done:
        log.warning("the turn of session %s did not end within %.0f s of its cancellation", session_id, timeout)
    return True


async def start_prompt(ls: AgentLanguageServer, text: str, session_id: str | None,
                       attachments: list[Attachment]) -> AskResult:
    """Start a turn in the background (code actions): events stream as for ``agent/prompt``."""
    session = await get_session(ls, session_id, None)
    if ls.chats.busy(session.session_id):  # said now, not logged later by the background task
        raise RequestFailed(f"session {session.session_id} is already answering a prompt")
    params = PromptParams(text=text, session_id=session.session_id, attachments=attachments)
    ls.run_task(prompt(ls, params), f"turn in {session.session_id}")
    return AskResult(session_id=session.session_id, started=True, text=text)


def register(server: AgentLanguageServer) -> None:
    @server.feature(PROMPT)
    @guarded
    async def prompt_handler(ls: AgentLanguageServer, raw: Any) -> Any:
        return await prompt(ls, parse(PromptParams, raw))

    @server.feature(CANCEL)
    @guarded
    async def cancel_handler(ls: AgentLanguageServer, raw: Any) -> Any:
        p = parse(CancelParams, raw)
        return dump(CancelResult(cancelled=await cancel_turn(ls, p.session_id)))
