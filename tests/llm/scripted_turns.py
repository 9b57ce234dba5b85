"""The turns a :class:`~tests.llm.scripted_server.ScriptedLLM` is scripted with, and their builders
(:func:`text`, :func:`tool_calls`, :func:`error`, :func:`slow_text`, :func:`hang`, :func:`respond`).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

EMPTY_SCRIPT_TEXT = "(script empty)"


@dataclass(frozen=True)
class Usage:
    """Token usage reported for a turn (both wire formats)."""

    prompt_tokens: int = 10
    completion_tokens: int = 5
    cache_read_input_tokens: int = 0
    cache_creation_input_tokens: int = 0


@dataclass(frozen=True)
class Text:
    chunks: tuple[str, ...]
    delay: float = 0.0
    first_delay: float = 0.0
    usage: Usage | None = None
    finish_reason: str = "stop"
    reasoning: tuple[str, ...] = ()
    """Reasoning pieces streamed before the text (OpenAI wire: ``delta.reasoning_content``)."""


@dataclass(frozen=True)
class ToolCalls:
    calls: tuple[tuple[str, str, str], ...]
    """``(id, name, arguments_json)`` per call."""
    text: str | None = None
    fragments: int = 3
    delay: float = 0.0
    usage: Usage | None = None


@dataclass(frozen=True)
class Error:
    status: int
    body: dict[str, Any] | None = None
    """Exact body to send; ``None`` picks the provider's shape for the status."""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class Hang:
    """Send status and headers, then nothing until the client goes away or the server stops."""


@dataclass(frozen=True)
class Respond:
    """A turn computed from the request: ``fn(body) -> Turn``."""

    fn: Callable[[dict[str, Any]], Turn]


Turn = Text | ToolCalls | Error | Hang | Respond


def split_pieces(s: str, n: int) -> list[str]:
    """Split ``s`` into ``n`` contiguous, non-empty (when possible) pieces."""
    n = max(1, min(n, len(s))) if s else 1
    size, extra = divmod(len(s), n)
    out, pos = [], 0
    for i in range(n):
        step = size + (1 if i < extra else 0)
        out.append(s[pos : pos + step])
        pos += step
    return out


def text(
    content: str,
    chunks: int = 3,
    delay: float = 0.0,
    *,
    first_delay: float = 0.0,
    usage: Usage | None = None,
    finish_reason: str = "stop",
    reasoning: str = "",
) -> Text:
    """A text answer streamed in ``chunks`` pieces, ``delay`` seconds apart; ``reasoning``
    (the model's thinking) streams first, in as many pieces, on the OpenAI wire."""
    return Text(tuple(split_pieces(content, chunks)), delay, first_delay, usage, finish_reason,
                tuple(split_pieces(reasoning, chunks)) if reasoning else ())


def slow_text(chunks: Sequence[str] | int = 5, delay: float = 0.2, *, usage: Usage | None = None) -> Text:
    """A slow stream: the given pieces (or ``n`` words ``"w0 ", "w1 "...``) ``delay`` apart.

    The first piece is also delayed, so the stream is slow from its start.
    """
    pieces = tuple(f"w{i} " for i in range(chunks)) if isinstance(chunks, int) else tuple(chunks)
    return Text(pieces, delay, delay, usage)


def tool_calls(
    calls: Iterable[tuple[str, dict[str, Any]] | tuple[str, dict[str, Any], str]],
    *,
    text: str | None = None,
    fragments: int = 3,
    delay: float = 0.0,
    usage: Usage | None = None,
) -> ToolCalls:
    """One response with several tool calls: ``[(name, args), ...]`` or ``(name, args, id)``.

    Streamed the OpenAI way: per index, a first delta with id and name, then the arguments
    JSON split into ``fragments`` pieces across separate chunks. ``text`` is sent first.
    """
    built = []
    for i, call in enumerate(calls):
        name, args = call[0], call[1]
        call_id = call[2] if len(call) > 2 else f"call_{i}_{uuid.uuid4().hex[:8]}"  # type: ignore[misc]
        built.append((call_id, name, json.dumps(args)))
    return ToolCalls(tuple(built), text, fragments, delay, usage)


def error(status: int, body: dict[str, Any] | None = None, *, headers: dict[str, str] | None = None) -> Error:
    """An HTTP error. Without ``body``, the provider's exact shape for 400/401/429/5xx is used
    (a 400 defaults to OpenAI's ``context_length_exceeded``)."""
    return Error(status, body, dict(headers or {}))


def auth_error() -> Error:
    return error(401)


def rate_limit(retry_after: float | None = None) -> Error:
    return error(429, headers={"retry-after": str(retry_after)} if retry_after is not None else None)


def context_exceeded() -> Error:
    return error(400)


def hang() -> Hang:
    """Send the response headers, then nothing (for cancellation and timeout tests)."""
    return Hang()


def respond(fn: Callable[[dict[str, Any]], Turn]) -> Respond:
    """A turn chosen at request time from the JSON body (e.g. echo the last message)."""
    return Respond(fn)
