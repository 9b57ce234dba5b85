"""Payloads of prompting: ``agent/prompt``, ``agent/cancel`` and the streamed ``agent/event``.

Mirrored in ``editor-extension/src/protocol/prompt.ts``.
"""

from __future__ import annotations

from typing import Any

import attrs

from agent_ls.server.protocol.codec import _register


@_register
@attrs.define
class Range:
    """An LSP range (zero-based lines and UTF-16 characters)."""

    start: dict[str, int]
    end: dict[str, int]


@_register
@attrs.define
class Attachment:
    """Context attached to a prompt."""

    kind: str
    """``selection``, ``file`` or ``resource``."""
    uri: str | None = None
    """File URI (selection, file) or resource URI."""
    text: str | None = None
    """The text (selection), or None to read it (file: the open document or the file on disk)."""
    server: str | None = None
    """For ``resource``: the MCP server that has it."""
    range: dict[str, Any] | None = None
    """For ``selection``: the LSP range."""
    language_id: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.kind not in ("selection", "file", "resource"):
            raise ValueError(f"attachment kind must be selection, file or resource, not {self.kind!r}")
        if self.kind == "resource" and not (self.uri and self.server):
            raise ValueError("a resource attachment needs uri and server")
        if self.kind == "file" and not self.uri:
            raise ValueError("a file attachment needs uri")


@_register
@attrs.define
class PromptParams:
    """``agent/prompt``."""

    text: str
    """The user's message."""
    session_id: str | None = None
    """Continue this session; a new one is created when absent."""
    attachments: list[Attachment] = attrs.field(factory=list)
    model: str | None = None
    """Override the configured model for this prompt (any litellm model string)."""
    display_text: str | None = None
    """What the chat shows as the user's message when it differs from ``text`` (a slash command
    the client expanded); kept for resume, never sent to the model."""


@_register
@attrs.define
class CancelParams:
    """``agent/cancel``: stop the running turn of a session (whoever started it)."""

    session_id: str


@_register
@attrs.define
class CancelResult:
    cancelled: bool
    """True when a turn was running and has now ended; false when the session had none."""


@_register
@attrs.define
class PromptResult:
    """Result of ``agent/prompt`` (sent when the turn ends; events streamed before it)."""

    session_id: str
    stop_reason: str
    """``end``, ``max_steps``, ``compacted`` (``/compact``) or ``error`` (see ``error``). A cancelled prompt gets the
    ``REQUEST_CANCELLED`` error response instead of a result."""
    text: str
    """The final assistant text."""
    usage: dict[str, int]
    """``inputTokens``, ``outputTokens``, ``cacheReadTokens``, ``cacheWriteTokens`` of the turn."""
    error: dict[str, str] | None = None
    """``{kind, message}`` when ``stopReason`` is ``error``."""


@_register
@attrs.define
class EventParams:
    """``agent/event``: one streamed event of a running prompt."""

    session_id: str | None
    """The session; null for events outside any session (a tool action run from a code action)."""
    event: dict[str, Any]
    """``type`` plus the event's fields (see ``EVENT_TYPES`` and docs/protocol.md)."""
