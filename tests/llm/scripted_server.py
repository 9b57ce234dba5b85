"""A scripted LLM server on 127.0.0.1: the stand-in for a model provider in tests.

It speaks two wire formats over real HTTP, so litellm runs its real request path:

* OpenAI chat completions at ``/v1/chat/completions`` (streamed SSE or plain JSON), reached
  with ``litellm.acompletion(model="openai/scripted", api_base=f"{llm.url}/v1", api_key="x")``;
* Anthropic messages at ``/v1/messages`` (Anthropic's SSE event format or plain JSON),
  reached with ``model="anthropic/claude-x", api_base=llm.url``.

Responses come from a script: a FIFO of turns built with :func:`text`, :func:`tool_calls`,
:func:`error`, :func:`slow_text`, :func:`hang` or :func:`respond`. Each request consumes one
turn; an empty script answers the text ``"(script empty)"``. Every request is recorded in
:attr:`ScriptedLLM.requests` with its path, headers, JSON body and timings
(``received_at``, ``first_byte_at``: ``time.perf_counter()`` values, comparable with the
client's clock because the server runs in a thread of the same process).

Usage::

    with ScriptedLLM() as llm:
        llm.script(text("hello", chunks=3), tool_calls([("read", {"path": "a.py"})]))
        await litellm.acompletion(model="openai/scripted", api_base=f"{llm.url}/v1", ...)
        assert llm.requests[0].body["messages"][0]["content"] == "hi"

The server runs uvicorn (h11) on its own event loop in a daemon thread, so tests that own
an event loop (pytest-asyncio) or none at all can call it.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
import uuid
from collections import deque
from collections.abc import Awaitable, Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import uvicorn

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]

EMPTY_SCRIPT_TEXT = "(script empty)"


# --------------------------------------------------------------------------- turns


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


def _split(s: str, n: int) -> list[str]:
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
    return Text(tuple(_split(content, chunks)), delay, first_delay, usage, finish_reason,
                tuple(_split(reasoning, chunks)) if reasoning else ())


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


# ------------------------------------------------------------------ error bodies


def openai_error_body(status: int) -> dict[str, Any]:
    if status == 401:
        return {
            "error": {
                "message": "Incorrect API key provided: x. You can find your API key at "
                "https://platform.openai.com/account/api-keys.",
                "type": "invalid_request_error",
                "param": None,
                "code": "invalid_api_key",
            }
        }
    if status == 429:
        return {
            "error": {
                "message": "Rate limit reached for gpt-4o in organization org-scripted on tokens per min "
                "(TPM): Limit 30000, Used 30000, Requested 500. Please try again in 1s.",
                "type": "tokens",
                "param": None,
                "code": "rate_limit_exceeded",
            }
        }
    if status == 400:
        return {
            "error": {
                "message": "This model's maximum context length is 8192 tokens. However, your messages "
                "resulted in 9000 tokens. Please reduce the length of the messages.",
                "type": "invalid_request_error",
                "param": "messages",
                "code": "context_length_exceeded",
            }
        }
    return {
        "error": {
            "message": "The server had an error while processing your request.",
            "type": "server_error",
            "param": None,
            "code": None,
        }
    }


def anthropic_error_body(status: int) -> dict[str, Any]:
    kind, message = {
        401: ("authentication_error", "invalid x-api-key"),
        429: ("rate_limit_error", "Number of request tokens has exceeded your per-minute rate limit"),
        400: ("invalid_request_error", "prompt is too long: 210000 tokens > 200000 maximum"),
        529: ("overloaded_error", "Overloaded"),
    }.get(status, ("api_error", "Internal server error"))
    return {"type": "error", "error": {"type": kind, "message": message}}


# --------------------------------------------------------------------- recording


@dataclass
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    headers: dict[str, str]
    """Lower-case header names."""
    body: Any
    """Parsed JSON body (``None`` when empty or not JSON)."""
    received_at: float
    """``time.perf_counter()`` when the full request body had arrived."""
    first_byte_at: float | None = None
    """``time.perf_counter()`` just before the response's first byte (its status line) was written."""
    first_chunk_at: float | None = None
    """``time.perf_counter()`` after the first body chunk (the first SSE event) was written."""
    turn: Any = None
    """The turn that answered it."""

    @property
    def json(self) -> Any:
        return self.body

    @property
    def stream(self) -> bool:
        return isinstance(self.body, dict) and bool(self.body.get("stream"))


# ------------------------------------------------------------------------ server


class ScriptedLLM:
    """A scripted OpenAI- and Anthropic-compatible server on 127.0.0.1 (random port)."""

    def __init__(self, model: str = "scripted", host: str = "127.0.0.1") -> None:
        self.model = model
        self.host = host
        self.port = 0
        self.requests: list[RecordedRequest] = []
        self._turns: deque[Turn] = deque()
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._server: uvicorn.Server | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._release: asyncio.Event | None = None

    # ------------------------------------------------------------- lifecycle

    @property
    def url(self) -> str:
        """Base URL without path, e.g. ``http://127.0.0.1:54321`` (OpenAI clients add ``/v1``)."""
        if not self.port:
            raise RuntimeError("ScriptedLLM is not started")
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base(self) -> str:
        return f"{self.url}/v1"

    def start(self) -> ScriptedLLM:
        if self._thread is not None:
            return self
        # proto=IPPROTO_TCP matters: asyncio turns Nagle's algorithm off (TCP_NODELAY) only on
        # sockets whose proto says TCP, and accepted sockets inherit it. With proto 0 every small
        # SSE chunk after the headers waited for the client's delayed ACK (~40 ms on Linux).
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM, socket.IPPROTO_TCP)
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        sock.bind((self.host, 0))
        self.port = sock.getsockname()[1]
        config = uvicorn.Config(
            self._app,
            http="h11",
            interface="asgi3",
            lifespan="off",
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=2,
        )
        self._server = uvicorn.Server(config)
        ready = threading.Event()

        def run() -> None:
            loop = asyncio.new_event_loop()
            asyncio.set_event_loop(loop)
            self._loop = loop
            self._release = asyncio.Event()
            loop.call_soon(ready.set)
            try:
                assert self._server is not None
                loop.run_until_complete(self._server.serve(sockets=[sock]))
            finally:
                loop.close()
                sock.close()

        self._thread = threading.Thread(target=run, name=f"scripted-llm-{self.port}", daemon=True)
        self._thread.start()
        ready.wait(10)
        deadline = time.monotonic() + 10
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("scripted LLM server did not start")
            time.sleep(0.005)
        return self

    def stop(self) -> None:
        if self._thread is None or self._server is None:
            return
        loop, release = self._loop, self._release
        if loop is not None and release is not None and not loop.is_closed():
            try:
                loop.call_soon_threadsafe(release.set)
            except RuntimeError:
                pass
        self._server.should_exit = True
        self._thread.join(10)
        self._thread = None
        self._server = None

    def __enter__(self) -> ScriptedLLM:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()

    # ---------------------------------------------------------------- script

    def script(self, *turns: Turn) -> ScriptedLLM:
        """Append turns to the script (FIFO)."""
        with self._lock:
            self._turns.extend(turns)
        return self

    add = script

    def clear(self) -> None:
        """Drop the remaining turns and the recorded requests."""
        with self._lock:
            self._turns.clear()
            self.requests.clear()

    @property
    def pending(self) -> int:
        """Turns not consumed yet."""
        with self._lock:
            return len(self._turns)

    def _next_turn(self, body: Any) -> Turn:
        with self._lock:
            turn: Turn = self._turns.popleft() if self._turns else text(EMPTY_SCRIPT_TEXT, chunks=1)
        while isinstance(turn, Respond):
            turn = turn.fn(body if isinstance(body, dict) else {})
        return turn

    # ------------------------------------------------------------------- ASGI

    async def _app(self, scope: dict[str, Any], receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            return
        raw = b""
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                return
            raw += message.get("body", b"")
            if not message.get("more_body"):
                break
        try:
            body = json.loads(raw) if raw else None
        except ValueError:
            body = None
        headers = {k.decode("latin-1").lower(): v.decode("latin-1") for k, v in scope["headers"]}
        rec = RecordedRequest(scope["method"], scope["path"], headers, body, time.perf_counter())
        with self._lock:
            self.requests.append(rec)
        path = scope["path"].rstrip("/")
        if scope["method"] == "POST" and path.endswith("/chat/completions"):
            await self._serve(rec, send, receive, _OpenAIWriter(self.model, body))
        elif scope["method"] == "POST" and path.endswith("/messages"):
            await self._serve(rec, send, receive, _AnthropicWriter(self.model, body))
        else:
            await _send_json(
                rec, send, 404, {"error": {"message": f"no route {scope['path']}", "type": "not_found"}}
            )

    async def _serve(self, rec: RecordedRequest, send: Send, receive: Receive, w: _Writer) -> None:
        turn = self._next_turn(rec.body)
        rec.turn = turn
        if isinstance(turn, Error):
            await _send_json(rec, send, turn.status, turn.body or w.error_body(turn.status), turn.headers)
            return
        if isinstance(turn, Hang):
            ctype = b"text/event-stream" if rec.stream else b"application/json"
            rec.first_byte_at = time.perf_counter()
            await send({"type": "http.response.start", "status": 200, "headers": [(b"content-type", ctype)]})
            await self._wait_released(receive)
            try:
                await send({"type": "http.response.body", "body": b""})
            except Exception:  # the client went away
                pass
            return
        assert isinstance(turn, Text | ToolCalls)
        usage = turn.usage or Usage(
            completion_tokens=max(1, len(turn.chunks) if isinstance(turn, Text) else 5)
        )
        if not rec.stream:
            await _send_json(rec, send, 200, w.complete(turn, usage))
            return
        rec.first_byte_at = time.perf_counter()
        await send(
            {
                "type": "http.response.start",
                "status": 200,
                "headers": [(b"content-type", b"text/event-stream"), (b"cache-control", b"no-cache")],
            }
        )
        include_usage = bool((rec.body.get("stream_options") or {}).get("include_usage"))
        first = True
        for delay, event in w.stream(turn, usage, include_usage):
            if delay:
                await asyncio.sleep(delay)
            await send({"type": "http.response.body", "body": event, "more_body": True})
            if first:
                rec.first_chunk_at = time.perf_counter()
                first = False
        await send({"type": "http.response.body", "body": b""})

    async def _wait_released(self, receive: Receive) -> None:
        """Wait until the client disconnects or the server stops."""
        assert self._release is not None
        release = asyncio.ensure_future(self._release.wait())

        async def disconnected() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass

        gone = asyncio.ensure_future(disconnected())
        try:
            await asyncio.wait({release, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            release.cancel()
            gone.cancel()


async def _send_json(
    rec: RecordedRequest, send: Send, status: int, payload: Any, headers: dict[str, str] | None = None
) -> None:
    data = json.dumps(payload).encode()
    hdrs = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    hdrs += [(k.encode(), v.encode()) for k, v in (headers or {}).items()]
    rec.first_byte_at = time.perf_counter()
    await send({"type": "http.response.start", "status": status, "headers": hdrs})
    await send({"type": "http.response.body", "body": data})
    rec.first_chunk_at = time.perf_counter()


# ---------------------------------------------------------------- wire formats


class _Writer:
    def __init__(self, model: str, body: Any) -> None:
        self.model = (body or {}).get("model") or model if isinstance(body, dict) else model
        self.created = int(time.time())

    def error_body(self, status: int) -> dict[str, Any]:
        raise NotImplementedError

    def complete(self, turn: Text | ToolCalls, usage: Usage) -> dict[str, Any]:
        raise NotImplementedError

    def stream(
        self, turn: Text | ToolCalls, usage: Usage, include_usage: bool
    ) -> Iterable[tuple[float, bytes]]:
        raise NotImplementedError


class _OpenAIWriter(_Writer):
    def __init__(self, model: str, body: Any) -> None:
        super().__init__(model, body)
        self.id = f"chatcmpl-{uuid.uuid4().hex[:24]}"

    def error_body(self, status: int) -> dict[str, Any]:
        return openai_error_body(status)

    def _usage(self, u: Usage) -> dict[str, Any]:
        out: dict[str, Any] = {
            "prompt_tokens": u.prompt_tokens,
            "completion_tokens": u.completion_tokens,
            "total_tokens": u.prompt_tokens + u.completion_tokens,
        }
        if u.cache_read_input_tokens:
            out["prompt_tokens_details"] = {"cached_tokens": u.cache_read_input_tokens}
        return out

    def complete(self, turn: Text | ToolCalls, usage: Usage) -> dict[str, Any]:
        message: dict[str, Any] = {"role": "assistant"}
        if isinstance(turn, Text):
            message["content"] = "".join(turn.chunks)
            finish = turn.finish_reason
        else:
            message["content"] = turn.text
            message["tool_calls"] = [
                {"id": cid, "type": "function", "function": {"name": name, "arguments": args}}
                for cid, name, args in turn.calls
            ]
            finish = "tool_calls"
        return {
            "id": self.id,
            "object": "chat.completion",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "message": message, "logprobs": None, "finish_reason": finish}],
            "usage": self._usage(usage),
        }

    def _chunk(self, delta: dict[str, Any], finish: str | None = None) -> bytes:
        payload = {
            "id": self.id,
            "object": "chat.completion.chunk",
            "created": self.created,
            "model": self.model,
            "choices": [{"index": 0, "delta": delta, "logprobs": None, "finish_reason": finish}],
        }
        return b"data: " + json.dumps(payload).encode() + b"\n\n"

    def stream(
        self, turn: Text | ToolCalls, usage: Usage, include_usage: bool
    ) -> Iterable[tuple[float, bytes]]:
        if isinstance(turn, Text):
            for piece in turn.reasoning:
                yield 0.0, self._chunk({"role": "assistant", "content": None, "reasoning_content": piece})
            for i, piece in enumerate(turn.chunks):
                delta: dict[str, Any] = {"content": piece}
                if i == 0:
                    delta["role"] = "assistant"
                yield (turn.first_delay if i == 0 else turn.delay), self._chunk(delta)
            finish = turn.finish_reason
        else:
            if turn.text:
                yield 0.0, self._chunk({"role": "assistant", "content": turn.text})
            for index, (cid, name, args) in enumerate(turn.calls):
                head = {
                    "index": index,
                    "id": cid,
                    "type": "function",
                    "function": {"name": name, "arguments": ""},
                }
                first: dict[str, Any] = {"tool_calls": [head]}
                if index == 0 and not turn.text:
                    first["role"] = "assistant"
                    first["content"] = None
                yield turn.delay, self._chunk(first)
                for piece in _split(args, turn.fragments):
                    yield (
                        turn.delay,
                        self._chunk({"tool_calls": [{"index": index, "function": {"arguments": piece}}]}),
                    )
            finish = "tool_calls"
        yield 0.0, self._chunk({}, finish)
        if include_usage:
            payload: dict[str, Any] = {
                "id": self.id,
                "object": "chat.completion.chunk",
                "created": self.created,
                "model": self.model,
                "choices": [],
                "usage": self._usage(usage),
            }
            yield 0.0, b"data: " + json.dumps(payload).encode() + b"\n\n"
        yield 0.0, b"data: [DONE]\n\n"


class _AnthropicWriter(_Writer):
    def __init__(self, model: str, body: Any) -> None:
        super().__init__(model, body)
        self.id = f"msg_{uuid.uuid4().hex[:24]}"

    def error_body(self, status: int) -> dict[str, Any]:
        return anthropic_error_body(status)

    @staticmethod
    def _usage(u: Usage, output: int | None = None) -> dict[str, Any]:
        # Anthropic's input_tokens excludes cached tokens; prompt_tokens counts them all.
        return {
            "input_tokens": max(
                0, u.prompt_tokens - u.cache_read_input_tokens - u.cache_creation_input_tokens
            ),
            "cache_creation_input_tokens": u.cache_creation_input_tokens,
            "cache_read_input_tokens": u.cache_read_input_tokens,
            "output_tokens": u.completion_tokens if output is None else output,
        }

    @staticmethod
    def _blocks(turn: Text | ToolCalls) -> list[dict[str, Any]]:
        if isinstance(turn, Text):
            return [{"type": "text", "text": "".join(turn.chunks)}]
        blocks: list[dict[str, Any]] = [{"type": "text", "text": turn.text}] if turn.text else []
        for cid, name, args in turn.calls:
            blocks.append(
                {"type": "tool_use", "id": _anthropic_id(cid), "name": name, "input": json.loads(args)}
            )
        return blocks

    @staticmethod
    def _stop_reason(turn: Text | ToolCalls) -> str:
        if isinstance(turn, ToolCalls):
            return "tool_use"
        return {"stop": "end_turn", "length": "max_tokens"}.get(turn.finish_reason, turn.finish_reason)

    def complete(self, turn: Text | ToolCalls, usage: Usage) -> dict[str, Any]:
        return {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": self._blocks(turn),
            "stop_reason": self._stop_reason(turn),
            "stop_sequence": None,
            "usage": self._usage(usage),
        }

    @staticmethod
    def _event(name: str, payload: dict[str, Any]) -> bytes:
        return f"event: {name}\ndata: {json.dumps(payload)}\n\n".encode()

    def stream(
        self, turn: Text | ToolCalls, usage: Usage, include_usage: bool
    ) -> Iterable[tuple[float, bytes]]:
        ev = self._event
        start: dict[str, Any] = {
            "id": self.id,
            "type": "message",
            "role": "assistant",
            "model": self.model,
            "content": [],
            "stop_reason": None,
            "stop_sequence": None,
            "usage": self._usage(usage, output=1),
        }
        first_delay = turn.first_delay if isinstance(turn, Text) else 0.0
        yield first_delay, ev("message_start", {"type": "message_start", "message": start})
        index = 0
        pieces = list(turn.chunks) if isinstance(turn, Text) else ([turn.text] if turn.text else [])
        if pieces:
            yield (
                0.0,
                ev(
                    "content_block_start",
                    {
                        "type": "content_block_start",
                        "index": 0,
                        "content_block": {"type": "text", "text": ""},
                    },
                ),
            )
            yield 0.0, ev("ping", {"type": "ping"})
            for piece in pieces:
                yield (
                    turn.delay,
                    ev(
                        "content_block_delta",
                        {
                            "type": "content_block_delta",
                            "index": 0,
                            "delta": {"type": "text_delta", "text": piece},
                        },
                    ),
                )
            yield 0.0, ev("content_block_stop", {"type": "content_block_stop", "index": 0})
            index = 1
        if isinstance(turn, ToolCalls):
            for cid, name, args in turn.calls:
                block = {"type": "tool_use", "id": _anthropic_id(cid), "name": name, "input": {}}
                yield (
                    turn.delay,
                    ev(
                        "content_block_start",
                        {"type": "content_block_start", "index": index, "content_block": block},
                    ),
                )
                for piece in _split(args, turn.fragments):
                    yield (
                        turn.delay,
                        ev(
                            "content_block_delta",
                            {
                                "type": "content_block_delta",
                                "index": index,
                                "delta": {"type": "input_json_delta", "partial_json": piece},
                            },
                        ),
                    )
                yield 0.0, ev("content_block_stop", {"type": "content_block_stop", "index": index})
                index += 1
        yield (
            0.0,
            ev(
                "message_delta",
                {
                    "type": "message_delta",
                    "delta": {"stop_reason": self._stop_reason(turn), "stop_sequence": None},
                    "usage": self._usage(usage),
                },
            ),
        )
        yield 0.0, ev("message_stop", {"type": "message_stop"})


def _anthropic_id(call_id: str) -> str:
    return call_id if call_id.startswith("toolu_") else f"toolu_{call_id.removeprefix('call_')}"
