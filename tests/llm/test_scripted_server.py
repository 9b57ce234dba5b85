"""The scripted LLM server, driven through litellm's real HTTP path (the OpenAI-compatible
endpoints; the Anthropic one is in test_scripted_server_anthropic.py)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
from typing import Any

import pytest

from tests.llm.scripted_server import (
    EMPTY_SCRIPT_TEXT,
    ScriptedLLM,
    error,
    hang,
    respond,
    slow_text,
    text,
    tool_calls,
)
from tests.llm.wire_client import MESSAGES, QUIET, litellm, post

pytestmark = QUIET


async def openai_stream(llm: ScriptedLLM, messages: list[dict[str, Any]] = MESSAGES, **kw: Any) -> list[Any]:
    kw.setdefault("max_retries", 0)
    response = await litellm.acompletion(
        model="openai/scripted",
        api_base=llm.openai_base,
        api_key="x",
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
        **kw,
    )
    return [chunk async for chunk in response]


async def test_streamed_text(llm: ScriptedLLM):
    llm.script(text("hello world!", chunks=3))
    chunks = await openai_stream(llm)
    pieces = [c.choices[0].delta.content for c in chunks if c.choices and c.choices[0].delta.content]
    assert pieces == ["hell", "o wo", "rld!"]
    built = litellm.stream_chunk_builder(chunks, messages=MESSAGES)
    assert built.choices[0].message.content == "hello world!"
    assert built.choices[0].finish_reason == "stop"
    assert built.usage.prompt_tokens == 10
    assert built.usage.completion_tokens == 3

    (req,) = llm.requests
    assert req.path == "/v1/chat/completions"
    assert req.headers["authorization"] == "Bearer x"
    assert req.body["messages"] == MESSAGES
    assert req.body["stream"] is True
    assert req.received_at <= req.first_byte_at <= req.first_chunk_at


async def test_usage_chunk_only_when_asked(llm: ScriptedLLM):
    llm.script(text("abc", chunks=1))
    response = await litellm.acompletion(
        model="openai/scripted", api_base=llm.openai_base, api_key="x", messages=MESSAGES, stream=True
    )
    _ = [c async for c in response]
    assert "stream_options" not in llm.requests[0].body
    # and on the wire, with plain HTTP: no usage chunk, [DONE] last
    llm.script(text("abc", chunks=1))
    raw = post(llm, "/v1/chat/completions", {"model": "m", "messages": MESSAGES, "stream": True})
    events = [e for e in raw.split("\n\n") if e]
    assert events[-1] == "data: [DONE]"
    assert not any('"usage"' in e for e in events)
    llm.script(text("abc", chunks=1))
    raw = post(
        llm,
        "/v1/chat/completions",
        {"model": "m", "messages": MESSAGES, "stream": True, "stream_options": {"include_usage": True}},
    )
    events = [e for e in raw.split("\n\n") if e]
    assert events[-1] == "data: [DONE]"
    usage_chunk = json.loads(events[-2].removeprefix("data: "))
    assert usage_chunk["choices"] == [] and usage_chunk["usage"]["total_tokens"] == 11


async def test_streamed_multi_tool_calls(llm: ScriptedLLM):
    llm.script(
        tool_calls(
            [
                ("read_file", {"path": "src/app.py"}),
                ("grep", {"pattern": "def main", "max": 3}, "call_fixed"),
            ],
            fragments=4,
        )
    )
    chunks = await openai_stream(llm)
    # first delta per index carries id + name, later ones only argument fragments
    deltas = [tc for c in chunks if c.choices for tc in (c.choices[0].delta.tool_calls or [])]
    by_index: dict[int, list[Any]] = {}
    for d in deltas:
        by_index.setdefault(d.index, []).append(d)
    assert sorted(by_index) == [0, 1]
    for parts in by_index.values():
        assert parts[0].id and parts[0].function.name
        assert len(parts) >= 4
        assert all(p.function.name is None for p in parts[1:])

    built = litellm.stream_chunk_builder(chunks, messages=MESSAGES)
    message = built.choices[0].message
    assert built.choices[0].finish_reason == "tool_calls"
    calls = [(c.function.name, json.loads(c.function.arguments)) for c in message.tool_calls]
    assert calls == [("read_file", {"path": "src/app.py"}), ("grep", {"pattern": "def main", "max": 3})]
    assert message.tool_calls[1].id == "call_fixed"


async def test_tool_calls_after_text(llm: ScriptedLLM):
    llm.script(tool_calls([("bash", {"command": "ls"})], text="Let me look."))
    built = litellm.stream_chunk_builder(await openai_stream(llm), messages=MESSAGES)
    assert built.choices[0].message.content == "Let me look."
    assert built.choices[0].message.tool_calls[0].function.name == "bash"


@pytest.mark.parametrize(
    ("turn", "exc"),
    [
        (error(401), litellm.AuthenticationError),
        (error(429), litellm.RateLimitError),
        (error(400), litellm.ContextWindowExceededError),
        (error(500), litellm.InternalServerError),
    ],
)
async def test_errors_map_to_litellm_exceptions(llm: ScriptedLLM, turn: Any, exc: type[Exception]):
    llm.script(turn, text("after"))
    with pytest.raises(exc):
        await openai_stream(llm)
    assert len(llm.requests) == 1  # max_retries=0: no retry consumed the next turn
    assert llm.pending == 1


async def test_error_non_stream(llm: ScriptedLLM):
    llm.script(error(400))
    with pytest.raises(litellm.ContextWindowExceededError):
        await litellm.acompletion(
            model="openai/scripted", api_base=llm.openai_base, api_key="x", messages=MESSAGES, max_retries=0
        )


async def test_custom_error_body(llm: ScriptedLLM):
    body = {
        "error": {
            "message": "bad tool schema",
            "type": "invalid_request_error",
            "param": "tools",
            "code": "invalid_value",
        }
    }
    llm.script(error(400, body))
    with pytest.raises(litellm.BadRequestError) as info:
        await openai_stream(llm)
    assert not isinstance(info.value, litellm.ContextWindowExceededError)
    assert "bad tool schema" in str(info.value)


async def test_non_stream_text_and_tool_calls(llm: ScriptedLLM):
    llm.script(text("plain answer"), tool_calls([("glob", {"pattern": "*.py"})]))
    r = await litellm.acompletion(
        model="openai/scripted", api_base=llm.openai_base, api_key="x", messages=MESSAGES
    )
    assert r.choices[0].message.content == "plain answer"
    assert r.usage.total_tokens > 0
    r = await litellm.acompletion(
        model="openai/scripted", api_base=llm.openai_base, api_key="x", messages=MESSAGES
    )
    assert r.choices[0].message.tool_calls[0].function.name == "glob"
    assert json.loads(r.choices[0].message.tool_calls[0].function.arguments) == {"pattern": "*.py"}


async def test_empty_script_default(llm: ScriptedLLM):
    built = litellm.stream_chunk_builder(await openai_stream(llm), messages=MESSAGES)
    assert built.choices[0].message.content == EMPTY_SCRIPT_TEXT


async def test_respond_sees_request(llm: ScriptedLLM):
    llm.script(respond(lambda body: text("echo: " + body["messages"][-1]["content"])))
    built = litellm.stream_chunk_builder(await openai_stream(llm), messages=MESSAGES)
    assert built.choices[0].message.content == "echo: hi"


async def test_slow_text_is_slow(llm: ScriptedLLM):
    llm.script(slow_text(["a", "b", "c", "d"], delay=0.1))
    t0 = time.perf_counter()
    arrivals = []
    response = await litellm.acompletion(
        model="openai/scripted", api_base=llm.openai_base, api_key="x", messages=MESSAGES, stream=True
    )
    async for chunk in response:
        if chunk.choices and chunk.choices[0].delta.content:
            arrivals.append(time.perf_counter() - t0)
    assert len(arrivals) == 4
    assert arrivals[-1] >= 0.38
    assert arrivals[-1] - arrivals[0] >= 0.25


async def test_hang_can_be_cancelled(llm: ScriptedLLM):
    llm.script(hang())

    async def consume() -> None:
        await openai_stream(llm)

    task = asyncio.create_task(consume())
    deadline = time.monotonic() + 5
    while not (llm.requests and llm.requests[0].first_byte_at):
        assert time.monotonic() < deadline
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.1)
    assert not task.done()  # headers came, nothing else
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    # the server is still fine afterwards
    llm.script(text("still here"))
    built = litellm.stream_chunk_builder(await openai_stream(llm), messages=MESSAGES)
    assert built.choices[0].message.content == "still here"


async def test_hang_times_out(llm: ScriptedLLM):
    llm.script(hang())
    t0 = time.perf_counter()
    with pytest.raises(litellm.Timeout):
        await openai_stream(llm, timeout=0.5)
    assert time.perf_counter() - t0 < 5


def test_stop_releases_hanging_request():
    server = ScriptedLLM().start()
    server.script(hang())
    out: list[Any] = []

    def call() -> None:
        try:
            out.append(post(server, "/v1/chat/completions", {"model": "m", "messages": MESSAGES}))
        except Exception as exc:  # the connection may end either way
            out.append(exc)

    t = threading.Thread(target=call)
    t.start()
    deadline = time.monotonic() + 5
    while not (server.requests and server.requests[0].first_byte_at):
        assert time.monotonic() < deadline
        time.sleep(0.01)
    t0 = time.monotonic()
    server.stop()
    t.join(5)
    assert not t.is_alive()
    assert time.monotonic() - t0 < 5


def test_sync_client_without_event_loop(llm: ScriptedLLM):
    llm.script(text("sync ok"))
    r = litellm.completion(model="openai/scripted", api_base=llm.openai_base, api_key="x", messages=MESSAGES)
    assert r.choices[0].message.content == "sync ok"


def test_unknown_path_404(llm: ScriptedLLM):
    with pytest.raises(urllib.error.HTTPError) as info:
        post(llm, "/v1/embeddings", {"input": "x"})
    assert info.value.code == 404


async def test_a_request_to_an_earlier_epoch_is_refused_and_takes_no_turn(llm: ScriptedLLM):
    """A process left over from an earlier test (its base URL names an earlier epoch) gets HTTP 410
    and never the turn scripted for the test that runs now."""
    earlier = llm.openai_base
    llm.new_epoch()
    assert llm.openai_base != earlier
    llm.script(text("for this test"))
    with pytest.raises(litellm.APIError, match="epoch"):
        await litellm.acompletion(model="openai/scripted", api_base=earlier, api_key="x",
                                  messages=MESSAGES, max_retries=0)
    assert llm.pending == 1 and llm.requests == []
    (stale,) = llm.stale
    assert stale.path == "/v1/chat/completions" and stale.epoch == llm.epoch - 1
    chunks = await openai_stream(llm)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "for this test"
    assert llm.pending == 0 and [r.epoch for r in llm.requests] == [llm.epoch]
