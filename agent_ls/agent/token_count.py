"""What a token count is, made with litellm's tokenizer wherever litellm lives (this process or the
model host, :mod:`agent_ls.agent.model_host_server`): each item's count, an estimate where litellm
has no tokenizer for the model, and a count that rides with a model request (:class:`CountFirst`:
one round trip to the model host per tool step, not two)."""

from __future__ import annotations

import json
from typing import Any

import attrs


def count_tokens(litellm: Any, model: str, items: list[dict[str, Any]]) -> list[int | None]:
    """litellm's ``token_counter(model=model, **item)`` for each of ``items``; None where it raised
    (an unknown tokenizer: the caller estimates with :func:`estimate_tokens`)."""
    counts: list[int | None] = []
    for item in items:
        try:
            counts.append(int(litellm.token_counter(model=model, **item)))
        except Exception:
            counts.append(None)
    return counts


def estimate_tokens(item: dict[str, Any]) -> int:
    """The count of ``item`` (``token_counter``'s arguments) when litellm has no tokenizer for the
    model: about 3 characters a token, rounded up."""
    return len(json.dumps(item, ensure_ascii=False, default=str)) // 3 + 4


def most_tokens(item: dict[str, Any]) -> int | None:
    """More tokens than any tokenizer counts in ``item`` (``token_counter``'s arguments) with text
    alone: its UTF-8 bytes as JSON, plus a margin for the per-message tokens. A token covers at
    least one byte (byte-level BPE, or a byte-fallback token), and :func:`estimate_tokens` is a
    third of that. None when ``item`` holds anything but text (an image counts by its size)."""
    messages = item.get("messages")
    if messages is not None and not all(isinstance(m.get("content"), str | None) for m in messages):
        return None
    return len(json.dumps(item, ensure_ascii=False, default=str).encode()) + 8


@attrs.frozen
class CountFirst:
    """Tokens to count before a model request is sent, riding with it (one round trip to the model
    host, not two): the request goes out only when ``base`` plus the counts of ``items`` (each
    times its weight; :func:`estimate_tokens` where litellm cannot count) is at most ``most``.
    The session's count of a request whose parts are not all counted yet (what a tool step added),
    with its compaction threshold as ``most`` (:mod:`agent_ls.agent.context`)."""

    model: str
    items: list[dict[str, Any]]
    """``token_counter``'s ``messages=`` or ``text=`` arguments."""
    weights: list[int]
    """How often each item is in the request."""
    base: int
    """The tokens of the request counted before (cached)."""
    most: int


@attrs.frozen
class Counted:
    """The first delta of a request that carried a :class:`CountFirst`."""

    counts: list[int | None]
    """litellm's count of each item, None where it could not count (the caller estimates)."""
    total: int
    """The request's tokens (``base`` plus the weighted counts)."""
    sent: bool
    """The total was within ``most`` and the request was sent; False: it was not (nothing follows)."""


def counted(litellm: Any, first: CountFirst) -> Counted:
    """The :class:`Counted` of ``first`` (litellm's counts, made here)."""
    counts = count_tokens(litellm, first.model, first.items)
    total = first.base + sum(w * (n if n is not None else estimate_tokens(item))
                             for n, w, item in zip(counts, first.weights, first.items, strict=True))
    return Counted(counts, total, total <= first.most)
