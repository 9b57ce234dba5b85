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

This module holds the server and the recording; the turns and their builders are in
scripted_turns.py, the wire formats in scripted_wire.py, and every public name of both is
imported from here.
"""

from __future__ import annotations

import asyncio
import json
import socket
import threading
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any

import uvicorn

from tests.llm.scripted_turns import (
    EMPTY_SCRIPT_TEXT,
    Error,
    Hang,
    Respond,
    Text,
    ToolCalls,
    Turn,
    Usage,
    auth_error,
    context_exceeded,
    error,
    hang,
    rate_limit,
    respond,
    slow_text,
    text,
    tool_calls,
)
from tests.llm.scripted_wire import (
    AnthropicWriter,
    OpenAIWriter,
    Writer,
    anthropic_error_body,
    openai_error_body,
)

__all__ = [
    "EMPTY_SCRIPT_TEXT", "Error", "Hang", "RecordedRequest", "Respond", "ScriptedLLM", "Text", "ToolCalls", "Turn",
    "Usage", "anthropic_error_body", "auth_error", "context_exceeded", "error", "hang", "openai_error_body",
    "rate_limit", "respond", "slow_text", "text", "tool_calls",
]

Send = Callable[[dict[str, Any]], Awaitable[None]]
Receive = Callable[[], Awaitable[dict[str, Any]]]


# --------------------------------------------------------------------- recording


@dataclass
class RecordedRequest:
    """One request the server received."""

    method: str
    path: str
    """The route, without the epoch (``/v1/chat/completions``)."""
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
    prompt_tokens: int | None = None
    """With a window set (:attr:`ScriptedLLM.window`): the request's tokens as the server counted them."""
    rejected: bool = False
    """With a window set: refused as over the window (HTTP 400 ``context_length_exceeded``)."""
    epoch: int | None = None
    """The epoch the request's base URL named (None: a base without one, such as :attr:`ScriptedLLM.url`)."""

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
        self.window: int | None = None
        """When set, a chat completion whose prompt is larger than this many tokens is refused
        the way OpenAI refuses it (HTTP 400, ``context_length_exceeded``) without using a turn."""
        self._counts: dict[str, int] = {}
        self.epoch = 0
        """Bumped by :meth:`new_epoch`: :attr:`openai_base` names it, so a request from an earlier
        test's process (a language server or model host still finishing) is told apart."""
        self.stale: list[RecordedRequest] = []
        """Requests that named an earlier epoch: answered with HTTP 410, never with a turn."""

    def count_prompt(self, body: dict[str, Any]) -> int:
        """The prompt's tokens by litellm's counter for ``gpt-4o`` (a tokenizer of its own, as a
        provider's; cached per message so long sessions stay fast)."""
        from agent_ls.agent.llm import get_litellm  # offline (the bundled cost map), no banner

        litellm = get_litellm()

        def count(key: str, **kw: Any) -> int:
            n = self._counts.get(key)
            if n is None:
                n = self._counts[key] = litellm.token_counter(model="gpt-4o", **kw)
            return n

        total = 3 + sum(count(json.dumps(m, sort_keys=True), messages=[m]) for m in body.get("messages") or [])
        if body.get("tools"):
            text = json.dumps(body["tools"])
            total += count(text, text=text)
        return total

    # ------------------------------------------------------------- lifecycle

    @property
    def url(self) -> str:
        """Base URL without path, e.g. ``http://127.0.0.1:54321`` (OpenAI clients add ``/v1``)."""
        if not self.port:
            raise RuntimeError("ScriptedLLM is not started")
        return f"http://{self.host}:{self.port}"

    @property
    def openai_base(self) -> str:
        """The OpenAI base URL for the current epoch (see :meth:`clear`)."""
        return f"{self.url}/{EPOCH_PREFIX}{self.epoch}/v1"

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
            self.window = None

    def new_epoch(self) -> None:
        """:meth:`clear`, and a new :attr:`openai_base`: a request to an earlier one (from a
        process of an earlier test, still finishing) is then refused rather than taking a turn
        scripted for this test. For a setup whose processes are its test's alone."""
        self.clear()
        with self._lock:
            self.epoch += 1

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
        path, epoch = _split_epoch(scope["path"].rstrip("/"))
        rec = RecordedRequest(scope["method"], path, headers, body, time.perf_counter(), epoch=epoch)
        with self._lock:
            stale = epoch is not None and epoch != self.epoch
            (self.stale if stale else self.requests).append(rec)
        if stale:
            await _send_json(rec, send, 410, {"error": {
                "message": f"this request names test epoch {epoch}; the scripted LLM is at {self.epoch}",
                "type": "stale_test_request"}})
            return
        if scope["method"] == "POST" and path.endswith("/chat/completions"):
            await self._serve(rec, send, receive, OpenAIWriter(self.model, body))
        elif scope["method"] == "POST" and path.endswith("/messages"):
            await self._serve(rec, send, receive, AnthropicWriter(self.model, body))
        else:
            await _send_json(
                rec, send, 404, {"error": {"message": f"no route {scope['path']}", "type": "not_found"}}
            )

    async def _serve(self, rec: RecordedRequest, send: Send, receive: Receive, w: Writer) -> None:
        if self.window is not None and isinstance(w, OpenAIWriter) and isinstance(rec.body, dict):
            rec.prompt_tokens = self.count_prompt(rec.body)
            if rec.prompt_tokens > self.window:
                rec.rejected = True
                body = {"error": {
                    "message": f"This model's maximum context length is {self.window} tokens. However, your "
                               f"messages resulted in {rec.prompt_tokens} tokens. Please reduce the length of the "
                               "messages.",
                    "type": "invalid_request_error", "param": "messages", "code": "context_length_exceeded"}}
                await _send_json(rec, send, 400, body)
                return
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
        # with a window set, the default usage reports the prompt as the server counted it (as a provider does)
        usage = turn.usage or Usage(
            prompt_tokens=rec.prompt_tokens or Usage.prompt_tokens,
            completion_tokens=max(1, len(turn.chunks) if isinstance(turn, Text) else 5),
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


EPOCH_PREFIX = "epoch"


def _split_epoch(path: str) -> tuple[str, int | None]:
    """``/epoch7/v1/chat/completions`` -> (``/v1/chat/completions``, 7); a path without one -> (path, None)."""
    head, _, rest = path.lstrip("/").partition("/")
    if head.startswith(EPOCH_PREFIX) and head[len(EPOCH_PREFIX):].isdigit():
        return "/" + rest, int(head[len(EPOCH_PREFIX):])
    return path, None


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
