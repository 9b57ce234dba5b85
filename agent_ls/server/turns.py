"""The chat's turns over LSP: :class:`EditorTurns` (``ls.turns``).

A prompt (``agent/prompt``, or a code action that starts one) becomes one turn of the runtime's
conversations: its attachments are rendered for the model (a selection, an open file, an MCP
resource), its events go out as ``agent/event`` notifications while it runs, and the result is
the request's answer. ``$/cancelRequest`` cancels the handler task: the turn loop stops the
stream or the running tool calls, keeps the history consistent, and the client gets the
``RequestCancelled`` error.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

import attrs
from pygls.uris import to_fs_path

from agent_ls.runtime.conversations import Busy
from agent_ls.server.protocol.codec import RequestFailed, dump, snake_to_camel_dict
from agent_ls.server.protocol.commands import AskResult
from agent_ls.server.protocol.methods import EVENT
from agent_ls.server.protocol.prompt import Attachment, EventParams, PromptParams, PromptResult
from agent_ls.server.protocol.sessions import DisplayAttachment, MessageDisplay

if TYPE_CHECKING:
    from collections.abc import Callable

    from agent_ls.agent.events import Event
    from agent_ls.core.tasks import BackgroundTasks
    from agent_ls.runtime.conversations import Conversations, TurnResult
    from agent_ls.runtime.lifecycle import HostLifecycle
    from agent_ls.server.client import EditorClient

log = logging.getLogger("agent_ls.server")


def message_display(params: PromptParams) -> MessageDisplay:
    """How the chat shows this prompt's user message (kept when that is not the text sent)."""
    shown = params.display_text if params.display_text is not None else params.text
    return MessageDisplay(text=shown, attachments=[
        DisplayAttachment(kind=a.kind, uri=a.uri, server=a.server, range=a.range, language_id=a.language_id)
        for a in params.attachments])


def event_payload(event: Any) -> dict[str, Any]:
    """An agent event as JSON: camelCase fields (tool arguments are left exactly as given)."""
    # lazy: +2 modules, ~8 ms at start-up
    from agent_ls.agent.events import to_dict

    out = to_dict(event)
    if out.get("type") == "subagent":  # a subagent's event: its own event in the same shape
        return {**out, "event": event_payload(getattr(event, "event", None))}
    for key in ("usage", "subagents"):  # turn_finished carries the turn's usage (its subagents') as records
        if isinstance(record := out.get(key), dict):
            out[key] = {k: v for k, v in snake_to_camel_dict(record).items() if k != "type"}
    if attachments := out.get("attachments"):  # tool_call_finished: camelCase like every payload
        out["attachments"] = [snake_to_camel_dict(a) for a in attachments]
    return out


def prompt_result(session_id: str, result: TurnResult) -> PromptResult:
    return PromptResult(
        session_id=session_id, stop_reason=result.stop_reason, text=result.text,
        usage=snake_to_camel_dict(attrs.asdict(result.usage, filter=lambda a, v: a.name != "type")),
        error={"kind": result.error.kind, "message": result.error.message} if result.error else None,
    )


@attrs.define
class EditorTurns:
    """Prompts from the editor, run as turns of :attr:`conversations`; their events told to :attr:`client`."""

    client: EditorClient
    conversations: Conversations
    lifecycle: HostLifecycle
    """The MCP host (an attached MCP resource is read from its server)."""
    tasks: BackgroundTasks
    """Where a turn started by a code action runs."""

    def notify(self, session_id: str | None, event: Event) -> None:
        """One ``agent/event`` notification."""
        self.client.notify(EVENT, dump(EventParams(session_id=session_id, event=event_payload(event))))

    def sink(self, session_id: str | None) -> Callable[[Event], None]:
        """The events of a turn (or of a direct call: ``session_id`` None) as notifications."""
        def sink(event: Event) -> None:
            self.notify(session_id, event)

        return sink

    async def prompt(self, params: PromptParams) -> PromptResult:
        """``agent/prompt``: one turn of the session (``/compact`` compacts); events stream as
        ``agent/event`` notifications, all before the answer."""
        log.debug("prompt: received (session %s)", params.session_id)
        session = await self.conversations.open(params.session_id, params.model)
        assert session is not None  # required: NoModel otherwise
        log.debug("prompt: session %s ready", session.session_id)
        if self.conversations.busy(session.session_id):
            raise Busy(session.session_id)
        text = await self.model_text(params)
        shown = params.display_text if params.display_text is not None else params.text
        result = await self.conversations.prompt(session, text, self.sink(session.session_id), typed=shown,
                                                 display=dump(message_display(params)))
        return prompt_result(session.session_id, result)

    async def start(self, text: str, session_id: str | None, attachments: list[Attachment]) -> AskResult:
        """Start a turn in the background (code actions): events stream as for ``agent/prompt``."""
        session = await self.conversations.open(session_id)
        assert session is not None
        if self.conversations.busy(session.session_id):  # said now, not logged later by the background task
            raise Busy(session.session_id)
        params = PromptParams(text=text, session_id=session.session_id, attachments=attachments)
        self.tasks.spawn(self.prompt(params), f"turn in {session.session_id}")
        return AskResult(session_id=session.session_id, started=True, text=text)

    async def model_text(self, params: PromptParams) -> str:
        """What the model gets: the attachments rendered before the typed text."""
        if not params.attachments:
            return params.text
        return f"{await self.render_attachments(params.attachments)}\n\n{params.text}"

    async def render_attachments(self, attachments: list[Attachment]) -> str:
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
                    text = self._document_text(a.uri)
                parts.append(f"File {to_fs_path(a.uri) or a.uri}:\n```{a.language_id or ''}\n{text}\n```")
            else:
                assert a.uri is not None and a.server is not None
                manager = await self.lifecycle.ensure_manager()
                if a.server not in manager.server_names():
                    raise RequestFailed(f"no MCP server named {a.server!r} is configured")
                result = await manager.read_resource(a.server, a.uri)
                texts = [getattr(c, "text", None) or f"[binary {getattr(c, 'mime_type', '') or 'data'}]"
                         for c in result.contents]
                parts.append(f"MCP resource {a.uri} (server {a.server}):\n" + "\n".join(texts))
        return "\n\n".join(parts)

    def _document_text(self, uri: str) -> str:
        try:
            return self.client.workspace.get_text_document(uri).source
        except Exception as e:
            raise RequestFailed(f"cannot read {uri}: {e}") from None
