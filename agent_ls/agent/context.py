"""Context accounting and compaction that loses nothing (issue 26).

Before every model request (also the ones inside a turn) the session counts the request in
tokens with litellm's counter, incrementally: each message's count is cached by identity (the
history's messages are never changed in place), so a long conversation is not recounted. When
the request would pass ``agent.compactAt`` of the window, the conversation is compacted. What a
tool step added (its assistant message and tool results) is counted with the step's model request
itself, in one call of the model library (one round trip to the model host:
:class:`agent_ls.agent.token_count.CountFirst`), which sends the request only when it stays within that
threshold; otherwise nothing is sent and the session compacts, then sends it. Compaction:

1. the oldest tool results the model has already seen are *cleared*: each is replaced by a
   short stub naming its output handle; the whole text stays in the session's output store and
   ``read_output`` reads it back;
2. if that is not enough, the older turns are *summarized* by a separate model request
   (``agent.compactModel`` may name a cheaper model) and replaced by the summary, which lists
   the output handles it covers. A summary that fails, is empty or too long falls back to a
   plain digest (the user's requests and the handles), and the user is told.

The original messages are never changed: :class:`CompactState` says what the model's view
leaves out, and the session store records it, so a resumed session continues compacted. The
frozen system prefix is never touched: the summary goes after it, as the first conversation
message.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

import attrs

from agent_ls.agent.token_count import CountFirst, estimate_tokens, most_tokens

log = logging.getLogger(__name__)

DEFAULT_WINDOW = 32_000
"""Tokens assumed when ``agent.contextWindow`` is not set and litellm does not know the model."""
DEFAULT_COMPACT_AT = 0.8
MIN_WINDOW = 2_000
ANSWER_SHARE = 0.1
"""Room kept for the answer when ``max_tokens`` is not set: this share of the window..."""
MAX_ANSWER_RESERVE = 16_000
"""... but at most this many tokens."""
COUNTER_MARGIN = 0.05
"""Counters differ from the provider's tokenizer: this share of the window stays unused."""
TARGET_SHARE = 0.5
"""Compaction brings the request down to this share of the ``compactAt`` threshold."""
CLEARABLE_CHARS = 1_000
"""Tool results at least this long get an output handle, so compaction may clear them."""
SUMMARY_SHARE = 0.15
"""A summary longer than this share of the window (in tokens) is refused as overlong."""
SUMMARY_MESSAGE_CHARS = 2_000
"""Each message is cut to this many characters in the transcript sent for a summary."""
HANDLES_LISTED = 120
SUMMARY_PROMPT = """You summarize a coding session between a user and a coding agent so that the agent \
can continue the work without the transcript. Write a concise summary (at most {words} words) in Markdown: \
the user's requests and the current task, decisions made, files read or changed (with paths), \
what is done and what remains, and any facts the agent will need. Tool outputs are kept and can \
be read back with read_output(handle=...): mention the handles of the outputs that matter. \
Answer with the summary only."""
SUMMARY_OPEN = "<conversation-summary>"
COMPACT_COMMAND = "/compact"
"""A prompt of exactly this text compacts the session instead of reaching the model (the chat,
``agent-ls chat`` and ACP's available command of that name)."""


def window_of(model: str) -> int | None:
    """The model's input window from litellm's model information, None when unknown."""
    # lazy: agent.llm is not loaded at the ACP start-up (+1 module, ~4 ms)
    from agent_ls.agent.llm import library

    try:
        info = library().get_model_info(model)
    except Exception:
        return None
    value = info.get("max_input_tokens") or info.get("max_tokens")
    return int(value) if isinstance(value, int) and value >= MIN_WINDOW else None


@attrs.frozen
class ContextLimits:
    """The numbers compaction works with, in tokens."""

    window: int
    compact_at: float = DEFAULT_COMPACT_AT
    reserve: int = 0
    """Kept for the answer (``max_tokens`` or a share of the window)."""

    @classmethod
    def for_model(cls, model: str, window: int | None = None, compact_at: float | None = None,
                  max_tokens: int | None = None) -> ContextLimits:
        size = window or window_of(model) or DEFAULT_WINDOW
        reserve = max_tokens or min(MAX_ANSWER_RESERVE, int(size * ANSWER_SHARE))
        return cls(size, compact_at or DEFAULT_COMPACT_AT, min(reserve, size // 2))

    @property
    def limit(self) -> int:
        """The largest request ever sent."""
        return self.window - self.reserve - int(self.window * COUNTER_MARGIN)

    @property
    def threshold(self) -> int:
        """Past this, the conversation is compacted before the request."""
        return min(self.limit, int(self.window * self.compact_at))

    @property
    def target(self) -> int:
        return int(self.threshold * TARGET_SHARE)

    @property
    def summary_max(self) -> int:
        return max(200, int(self.window * SUMMARY_SHARE))


@attrs.frozen
class Tally:
    """A request's count as far as the cache knows it (:meth:`TokenCounter.tally`): what is counted,
    and what is not yet (:meth:`TokenCounter.settle` adds it)."""

    base: int
    """The tokens of what is counted already."""
    items: list[dict[str, Any]]
    """``token_counter``'s arguments (``text=`` or ``messages=``) of what is not."""
    weights: list[int]
    """How often each item is in the request."""
    keys: list[str | dict[str, Any]]
    """The text or the message each item counts (where :meth:`TokenCounter.settle` keeps its count)."""


class TokenCounter:
    """litellm's token counter with a cache: by identity for history messages (which are
    never changed in place), by text for the rebuilt system messages and tool definitions."""

    def __init__(self, model: str) -> None:
        self.model = model
        self._by_id: dict[int, tuple[Any, int]] = {}
        self._by_text: dict[str, int] = {}

    @staticmethod
    def _estimate(kw: dict[str, Any]) -> int:
        """An unknown tokenizer: about 3 characters a token (:func:`agent_ls.agent.token_count.estimate_tokens`)."""
        return estimate_tokens(kw)

    def counts(self, items: Sequence[dict[str, Any]]) -> list[int | None]:
        """litellm's count of each of ``items`` (``token_counter``'s arguments besides the model), in
        one call of the model library (one round trip when it is the model host); None where it
        could not count."""
        # lazy: agent.llm is not loaded at the ACP start-up (+1 module, ~4 ms)
        from agent_ls.agent.llm import token_counts

        if not items:
            return []
        try:
            return token_counts(self.model, list(items))
        except Exception:  # the model host gone and not started again: estimates
            return [None] * len(items)

    def _count_all(self, items: Sequence[dict[str, Any]]) -> list[int]:
        return [n if n is not None else self._estimate(kw) for n, kw in zip(self.counts(items), items, strict=True)]

    def _count(self, **kw: Any) -> int:
        return self._count_all([kw])[0]

    def message(self, message: dict[str, Any]) -> int:
        hit = self._by_id.get(id(message))
        if hit is not None and hit[0] is message:
            return hit[1]
        n = self._count(messages=[message])
        self._by_id[id(message)] = (message, n)
        return n

    def _keep_text(self, text: str, n: int) -> None:
        if len(self._by_text) > 64:
            self._by_text.clear()
        self._by_text[text] = n

    def text(self, text: str) -> int:
        n = self._by_text.get(text)
        if n is None:
            n = self._count(text=text)
            self._keep_text(text, n)
        return n

    def request(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], system: int = 0) -> int:
        """Tokens of a request whose first ``system`` messages are rebuilt each time (counted by text).
        What is not cached yet is counted in one call (:meth:`counts`): a tool step's new
        assistant message and tool result are one round trip to the model host, not two."""
        tally = self.tally(messages, tools, system)
        return self.settle(tally, self.counts(tally.items))

    def tally(self, messages: Sequence[dict[str, Any]], tools: Sequence[dict[str, Any]], system: int = 0) -> Tally:
        """:meth:`request`'s count without counting anything: the cached part, and what is left to
        count (sent with the model request itself when it may: :class:`agent_ls.agent.token_count.CountFirst`)."""
        texts = [json.dumps(m, ensure_ascii=False) for m in messages[:system]]
        base = 3 + 3 * len(texts)
        if tools:
            texts.append(json.dumps(list(tools), ensure_ascii=False))
        new_texts: dict[str, int] = {}  # text -> how often it is in the request
        for t in texts:
            n = self._by_text.get(t)
            if n is None:
                new_texts[t] = new_texts.get(t, 0) + 1
            else:
                base += n
        new_messages: dict[int, tuple[dict[str, Any], int]] = {}
        for m in messages[system:]:
            hit = self._by_id.get(id(m))
            if hit is not None and hit[0] is m:
                base += hit[1]
            else:
                new_messages[id(m)] = (m, new_messages[id(m)][1] + 1 if id(m) in new_messages else 1)
        return Tally(base, [{"text": t} for t in new_texts] + [{"messages": [m]} for m, _ in new_messages.values()],
                     [*new_texts.values(), *(w for _, w in new_messages.values())],
                     [*new_texts, *(m for m, _ in new_messages.values())])

    def most(self, tally: Tally) -> int | None:
        """More tokens than :meth:`settle` can give for ``tally``, counting nothing
        (:func:`~agent_ls.agent.token_count.most_tokens` for what is not counted yet); None when an
        item holds more than text."""
        total = tally.base
        for item, weight in zip(tally.items, tally.weights, strict=True):
            bound = most_tokens(item)
            if bound is None:
                return None
            total += weight * bound
        return total

    def settle(self, tally: Tally, counts: Sequence[int | None]) -> int:
        """The request's tokens, once ``counts`` (litellm's, None where it could not count) of
        ``tally``'s items are known; they are cached for the next requests."""
        total = tally.base
        for key, item, weight, n in zip(tally.keys, tally.items, tally.weights, counts, strict=True):
            count = n if n is not None else self._estimate(item)
            if isinstance(key, str):
                self._keep_text(key, count)
            else:
                self._by_id[id(key)] = (key, count)
            total += weight * count
        return total

    def forget_except(self, keep: Sequence[dict[str, Any]]) -> None:
        """Drop cached counts of messages no longer in the view (bounded memory)."""
        if len(self._by_id) > 2 * len(keep) + 64:
            ids = {id(m) for m in keep}
            self._by_id = {k: v for k, v in self._by_id.items() if k in ids}


@attrs.define
class CompactState:
    """What the model's view of a history leaves out (the history itself never changes)."""

    summary: str | None = None
    """The summary that replaces ``history[:summary_upto]``."""
    summary_upto: int = 0
    cleared: dict[str, str] = attrs.field(factory=dict)
    """Tool call id -> the handle of its cleared result."""
    count: int = 0
    """Compactions so far."""
    summary_body: str | None = None
    """The summary's own text (the next summary starts from it)."""
    covered: list[tuple[str, str]] = attrs.field(factory=list)
    """(handle, call) of the outputs the summary covers, oldest first."""

    def to_json(self) -> str:
        return json.dumps({"summary": self.summary, "summary_upto": self.summary_upto, "cleared": self.cleared,
                           "count": self.count, "summary_body": self.summary_body, "covered": self.covered},
                          ensure_ascii=False)

    @classmethod
    def from_json(cls, text: str) -> CompactState:
        data = json.loads(text)
        if not isinstance(data, dict):
            raise ValueError("a compaction record must be an object")
        summary = data.get("summary")
        cleared = data.get("cleared") or {}
        upto = data.get("summary_upto", 0)
        if (summary is not None and not isinstance(summary, str)) or not isinstance(upto, int) or upto < 0 \
                or not isinstance(cleared, dict) or not all(isinstance(v, str) for v in cleared.values()):
            raise ValueError("a compaction record has the wrong shape")
        covered = [(str(h), str(w)) for h, w in data.get("covered") or []]
        body = data.get("summary_body")
        return cls(summary, upto if summary is not None else 0, dict(cleared), int(data.get("count", 0)),
                   body if isinstance(body, str) else None, covered)


def stub_text(handle: str, tool: str, chars: int) -> str:
    return (f"[result cleared from the conversation to save context: {chars} characters of {tool or 'tool'} "
            f"output, kept whole as {handle}; read it with read_output(handle=\"{handle}\")]")


class View:
    """The model's view of a history under a :class:`CompactState`; stub and summary messages
    are built once and reused, so their token counts stay cached."""

    def __init__(self) -> None:
        self._stubs: dict[str, dict[str, Any]] = {}
        self._summary: tuple[str, dict[str, Any]] | None = None

    def messages(self, history: Sequence[dict[str, Any]], state: CompactState,
                 describe: Callable[[str], tuple[str, int]]) -> list[dict[str, Any]]:
        """``describe(handle) -> (tool, chars)`` for the stubs."""
        out: list[dict[str, Any]] = []
        if state.summary is not None:
            if self._summary is None or self._summary[0] != state.summary:
                self._summary = (state.summary, {"role": "user", "content": state.summary})
            out.append(self._summary[1])
        cleared = state.cleared
        for m in history[state.summary_upto:]:
            if cleared and m.get("role") == "tool" and (cid := m.get("tool_call_id")) in cleared:
                stub = self._stubs.get(cid)
                if stub is None:
                    tool, chars = describe(cleared[cid])
                    stub = self._stubs[cid] = {"role": "tool", "tool_call_id": cid,
                                               "content": stub_text(cleared[cid], tool, chars)}
                out.append(stub)
            else:
                out.append(m)
        return out


def summary_transcript(messages: Sequence[dict[str, Any]], previous: str | None, max_chars: int) -> str:
    """The part of the conversation to summarize, as plain text (each message cut, the whole
    cut from the front to ``max_chars``)."""
    parts: list[str] = []
    if previous:
        parts.append(f"## Summary of the conversation before this part\n{previous}")
    for m in messages:
        role = m.get("role", "?")
        content = m.get("content")
        if not isinstance(content, str):
            content = json.dumps(content, ensure_ascii=False) if content else ""
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or {}
            content += f"\n[calls {fn.get('name')}({fn.get('arguments', '')})]"
        if len(content) > SUMMARY_MESSAGE_CHARS:
            content = content[:SUMMARY_MESSAGE_CHARS] + f" [... {len(content) - SUMMARY_MESSAGE_CHARS} characters]"
        parts.append(f"### {role}\n{content}")
    text = "\n\n".join(parts)
    if len(text) > max_chars:
        text = "[... the oldest part is left out]\n" + text[-max_chars:]
    return text


def handles_note(entries: Sequence[tuple[str, str]]) -> str:
    """``entries``: (handle, what) of the outputs a summary covers, oldest first."""
    if not entries:
        return ""
    shown = entries[-HANDLES_LISTED:]
    lines = [f"- {h}: {what}" for h, what in shown]
    if len(entries) > len(shown):
        lines.insert(0, f"- {entries[0][0]} ... {entries[len(entries) - len(shown) - 1][0]}: "
                        f"{len(entries) - len(shown)} earlier outputs")
    return ("Outputs of this part of the conversation, kept whole (read them with read_output(handle=...)):\n"
            + "\n".join(lines))


def digest(messages: Sequence[dict[str, Any]], previous: str | None) -> str:
    """A summary made without a model: the user's requests (the last 20, cut)."""
    asks = [m["content"] for m in messages if m.get("role") == "user" and isinstance(m.get("content"), str)
            and not m["content"].startswith(SUMMARY_OPEN)]
    lines = [f"- {' '.join(a.split())[:200]}" for a in asks[-20:]]
    head = f"{len(asks) - 20} earlier requests, then:\n" if len(asks) > 20 else ""
    prev = f"Before that:\n{previous}\n\n" if previous else ""
    return (f"{prev}The user's requests in this part of the conversation (no model summary could be made):\n"
            f"{head}" + "\n".join(lines))


def summary_message(body: str, handles: str) -> str:
    return (f"{SUMMARY_OPEN}\nThe earlier part of this conversation was compacted to stay within the "
            f"model's context window. Summary:\n\n{body.strip()}\n\n{handles}\n</conversation-summary>")


def call_names(history: Sequence[dict[str, Any]]) -> dict[str, str]:
    """Tool call id -> ``name(arguments)`` (cut), for the handle list of a summary."""
    out: dict[str, str] = {}
    for m in history:
        for call in m.get("tool_calls") or []:
            fn = call.get("function") or {}
            args = str(fn.get("arguments", ""))
            out[call.get("id", "")] = f"{fn.get('name')} {args[:80]}{'...' if len(args) > 80 else ''}"
    return out


class ContextTooLarge(Exception):
    """Even a fully compacted request does not fit the window."""

    def __init__(self, tokens: int, limits: ContextLimits, what: str = "the request") -> None:
        self.tokens = tokens
        self.limits = limits
        super().__init__(
            f"{what} is {tokens} tokens, more than fits the model's context window of {limits.window} tokens "
            f"({limits.limit} usable after the room kept for the answer); nothing was sent. Shorten it, or "
            "attach a file instead of pasting it.")


@attrs.frozen
class Compaction:
    """What a compaction did (the ``compaction`` event of :mod:`agent_ls.agent.events` says it)."""

    reason: str
    cleared: int
    summarized: int
    handles: tuple[str, ...]
    tokens_before: int
    tokens_after: int
    note: str = ""


class Compactor:
    """One session's context accounting and compaction (see the module docstring)."""

    def __init__(self, llm: Any, *, window: int | None = None, compact_at: float | None = None,
                 compact_llm: Any = None, outputs: Any = None, state: CompactState | None = None) -> None:
        self.llm = llm
        self.compact_llm = compact_llm
        self.outputs = outputs
        self.state = state or CompactState()
        self._window = window
        self._compact_at = compact_at
        self._limits: ContextLimits | None = None
        self._counter: TokenCounter | None = None
        self._view = View()
        self.last_tokens = 0
        """The size of the last request counted."""

    def use(self, llm: Any) -> None:
        """The session changed its model: its window and tokenizer apply from the next request."""
        if llm.model != self.llm.model or llm.max_tokens != self.llm.max_tokens:
            self._limits = None
            self._counter = None
        self.llm = llm

    @property
    def limits(self) -> ContextLimits:
        if self._limits is None:
            self._limits = ContextLimits.for_model(self.llm.model, self._window, self._compact_at, self.llm.max_tokens)
        return self._limits

    @property
    def counter(self) -> TokenCounter:
        if self._counter is None:
            self._counter = TokenCounter(self.llm.model)
        return self._counter

    @counter.setter
    def counter(self, counter: TokenCounter) -> None:
        """A counter shared with other sessions of the model (a parent's subagents: their system
        prompts and tool lists are counted once)."""
        self._counter = counter

    def _describe(self, handle: str) -> tuple[str, int]:
        return self.outputs.describe(handle) if self.outputs is not None else ("tool", 0)

    def view(self, history: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
        """The messages the model gets instead of ``history``."""
        return self._view.messages(history, self.state, self._describe)

    def count(self, system: Sequence[dict[str, Any]], view: Sequence[dict[str, Any]],
              tools: Sequence[dict[str, Any]]) -> int:
        """The request's tokens (what is not cached yet is counted now: one call of the model library)."""
        tally = self.tally(system, view, tools)
        return self.settle(tally, view, self.counter.counts(tally.items))

    def tally(self, system: Sequence[dict[str, Any]], view: Sequence[dict[str, Any]],
              tools: Sequence[dict[str, Any]]) -> Tally:
        """:meth:`count` without counting: what the cache knows of the request and what it does not."""
        return self.counter.tally([*system, *view], tools, system=len(system))

    def settle(self, tally: Tally, view: Sequence[dict[str, Any]], counts: Sequence[int | None]) -> int:
        """The request's tokens once its :meth:`tally`'s items are counted (``counts``, as litellm
        gave them): kept as :attr:`last_tokens`."""
        n = self.counter.settle(tally, counts)
        self.counter.forget_except(view)
        self.last_tokens = n
        return n

    def count_first(self, tally: Tally) -> CountFirst:
        """The :class:`agent_ls.agent.token_count.CountFirst` of ``tally`` against the compaction threshold:
        the model request it rides with is sent only when no compaction is due."""
        return CountFirst(self.counter.model, tally.items, tally.weights, tally.base, self.limits.threshold)

    def check_message(self, message: dict[str, Any], system: Sequence[dict[str, Any]],
                      tools: Sequence[dict[str, Any]]) -> None:
        """Raise :class:`ContextTooLarge` when ``message`` cannot fit even with nothing else.
        Nothing is counted when an upper bound of what is not counted yet shows it fits (a prompt
        of text, in a window of thousands of tokens): the first request's count rides with it."""
        tally = self.counter.tally([*system, message], tools, system=len(system))
        most = self.counter.most(tally)
        if most is not None and most <= self.limits.limit:
            return
        alone = self.counter.settle(tally, self.counter.counts(tally.items))
        if alone > self.limits.limit:
            size = self.counter.message(message)
            raise ContextTooLarge(size, self.limits, f"the message ({len(str(message.get('content')))} characters)")

    # compaction -------------------------------------------------------------------------
    async def fit(self, history: Sequence[dict[str, Any]], system: Sequence[dict[str, Any]],
                  tools: Sequence[dict[str, Any]], *, reason: str = "auto",
                  ask: Callable[[], Awaitable[bool]] | None = None) -> Compaction | None:
        """Compact so that the next request fits; None when nothing had to be done.

        ``reason``: ``auto`` (compact past the threshold), ``overflow`` (the provider refused
        the request as too long: compact hard) or ``manual`` (``/compact``: clear and summarize
        everything). Raises :class:`ContextTooLarge` when even that does not fit.

        ``ask``: awaited once a compaction is due, before anything changes (the session's
        ``PreCompact`` hooks, trigger ``auto``); False: not now. That is honoured while the
        request still fits the window (``auto`` past the threshold); past it, or on ``overflow``,
        the compaction happens anyway and its note says so.
        """
        limits = self.limits
        before = tokens = self.count(system, self.view(history), tools)
        if reason == "auto" and before <= limits.threshold:
            return None
        overruled = ""
        if ask is not None and not await ask():
            if reason == "auto" and before <= limits.limit:
                return None
            overruled = "a PreCompact hook asked not to compact, but the request would not fit the context window without it"
        target = 0 if reason == "manual" else limits.target // (2 if reason == "overflow" else 1)
        cleared: list[str] = []

        def clear(unseen_too: bool, goal: int) -> int:
            n = tokens
            for cid, handle, message in self._clearable(history, unseen_too):
                if n <= goal:
                    break
                self.state.cleared[cid] = handle
                cleared.append(handle)
                n = self.count(system, self.view(history), tools) if len(cleared) % 16 == 0 else \
                    n - self.counter.message(message) + 60
            return self.count(system, self.view(history), tools)

        tokens = clear(False, target)  # 1. the oldest results the model has seen
        summarized, note, handles = 0, "", list[str]()
        if tokens > target:  # 2. the older turns, summarized
            summarized, note, handles = await self._summarize(history, reason)
            tokens = self.count(system, self.view(history), tools)
        if tokens > limits.limit:  # 3. what the model has not seen yet (it has a handle too)
            tokens = clear(True, limits.limit)
        if tokens > limits.limit:
            raise ContextTooLarge(tokens, limits)
        if not cleared and not summarized:
            return None
        self.state.count += 1
        note = "; ".join(n for n in (overruled, note) if n)
        return Compaction(reason, len(cleared), summarized, tuple(dict.fromkeys(cleared + handles)), before,
                          tokens, note)

    def _clearable(self, history: Sequence[dict[str, Any]],
                   unseen_too: bool) -> list[tuple[str, str, dict[str, Any]]]:
        """(call id, handle, message) of the tool results in the view that may be cleared, oldest
        first; the results after the last assistant message (not seen yet) only with ``unseen_too``."""
        if self.outputs is None:
            return []
        last_assistant = max((i for i, m in enumerate(history) if m.get("role") == "assistant"), default=-1)
        out = []
        for i in range(self.state.summary_upto, len(history)):
            m = history[i]
            if m.get("role") != "tool" or (i > last_assistant and not unseen_too):
                continue
            cid = m.get("tool_call_id")
            if not isinstance(cid, str) or cid in self.state.cleared:
                continue
            handle = self.outputs.handle_for(cid)
            content = m.get("content")
            if handle is not None and isinstance(content, str) and len(content) > 400:
                out.append((cid, handle, m))
        return out

    def _cut(self, history: Sequence[dict[str, Any]], part: Sequence[dict[str, Any]], reason: str) -> int:
        """Where the summarized part ends: keep the newest messages worth about half the target
        (at least the last step; nothing on ``/compact``), cutting only between steps."""
        start = self.state.summary_upto
        if reason == "manual":
            return len(history)
        keep = self.limits.target // 2
        acc = 0
        cut = len(history)
        for i in range(len(history) - 1, start, -1):
            acc += self.counter.message(part[i - start])
            if acc > keep and cut < len(history):
                break
            if history[i].get("role") in ("user", "assistant"):
                cut = i
        return cut

    async def _summarize(self, history: Sequence[dict[str, Any]], reason: str) -> tuple[int, str, list[str]]:
        """Replace the older part of the view by a summary: (messages summarized, note, handles)."""
        start = self.state.summary_upto
        view = self.view(history)
        part = view[1:] if self.state.summary is not None else view
        cut = self._cut(history, part, reason)
        if cut <= start:
            return 0, "", []
        names = call_names(history[start:cut])
        entries = list(self.state.covered)
        if self.outputs is not None:
            entries += [(h, what) for cid, what in names.items() if (h := self.outputs.handle_for(cid)) is not None]
        previous = self.state.summary_body
        note = ""
        try:
            body = await self._ask_summary(part[: cut - start], previous)
        except Exception as e:  # a failing summary request: the digest instead
            note = f"the summary request failed ({str(e)[:300]}); older turns were replaced by a list of the requests"
            body = ""
        else:
            if not body.strip():
                note = "the model returned an empty summary; older turns were replaced by a list of the requests"
            elif (n := self.counter.text(body)) > self.limits.summary_max:
                note = (f"the model's summary was too long ({n} tokens, at most {self.limits.summary_max}); "
                        "older turns were replaced by a list of the requests")
                body = ""
        if not body.strip():
            body = digest(history[start:cut], previous)
        self.state.summary_body = body.strip()
        self.state.covered = entries
        self.state.summary = summary_message(body, handles_note(entries))
        self.state.summary_upto = cut
        self.state.cleared = {k: v for k, v in self.state.cleared.items() if k not in names}
        return cut - start, note, [h for h, _ in entries]

    async def _ask_summary(self, part: Sequence[dict[str, Any]], previous: str | None) -> str:
        # lazy: agent.llm is not loaded at the ACP start-up (+1 module, ~4 ms)
        from agent_ls.agent.llm import stream_completion

        llm = self.compact_llm or self.llm
        words = max(100, self.limits.summary_max // 2)
        transcript = summary_transcript(part, previous, int(self.limits.window * 1.5))
        messages = [{"role": "system", "content": SUMMARY_PROMPT.format(words=words)},
                    {"role": "user", "content": f"Summarize this part of the session:\n\n{transcript}"}]
        out: list[str] = []
        async for delta in stream_completion(llm, messages, []):
            out.append(delta.text)
        return "".join(out)
