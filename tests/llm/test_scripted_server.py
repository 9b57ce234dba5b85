"""The scripted LLM server, driven through litellm's real HTTP path."""

from __future__ import annotations

import asyncio
import json
import os
import threading
import time
import urllib.request
from typing import Any

import pytest

os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")
import litellm  # noqa: E402

from tests.llm.scripted_server import (  # noqa: E402
    EMPTY_SCRIPT_TEXT,
    ScriptedLLM,
    Usage,
    error,
    hang,
    respond,
    slow_text,
    text,
    tool_calls,
)

litellm.suppress_debug_info = True

# litellm's pydantic models warn about ReadOnly TypedDict items on first use: noise.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Item.*ReadOnly:UserWarning", "ignore:Items.*ReadOnly:UserWarning"
)

MESSAGES = [{"role": "user", "content": "hi"}]


@pytest.fixture(scope="module")
def llm():
    with ScriptedLLM() as server:
        yield server


@pytest.fixture(autouse=True)
def _clean(llm: ScriptedLLM):
    llm.clear()
    yield
    llm.clear()


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
    raw = _post(llm, "/v1/chat/completions", {"model": "m", "messages": MESSAGES, "stream": True})
    events = [e for e in raw.split("\n\n") if e]
    assert events[-1] == "data: [DONE]"
    assert not any('"usage"' in e for e in events)
    llm.script(text("abc", chunks=1))
    raw = _post(
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
            out.append(_post(server, "/v1/chat/completions", {"model": "m", "messages": MESSAGES}))
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
        _post(llm, "/v1/embeddings", {"input": "x"})
    assert info.value.code == 404


# ------------------------------------------------------------------ anthropic


SYSTEM_CACHED = [
    {
        "role": "system",
        "content": [{"type": "text", "text": "You are agent-ls.", "cache_control": {"type": "ephemeral"}}],
    },
    {"role": "user", "content": "hi"},
]
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "read_file",
            "description": "Read a file",
            "parameters": {
                "type": "object",
                "properties": {"path": {"type": "string"}},
                "required": ["path"],
            },
        },
        "cache_control": {"type": "ephemeral"},
    }
]


async def anthropic_stream(llm: ScriptedLLM, **kw: Any) -> list[Any]:
    response = await litellm.acompletion(
        model="anthropic/claude-x",
        api_base=llm.url,
        api_key="x",
        messages=SYSTEM_CACHED,
        stream=True,
        stream_options={"include_usage": True},
        max_retries=0,
        **kw,
    )
    return [chunk async for chunk in response]


async def test_anthropic_cache_control_on_wire_and_cache_usage(llm: ScriptedLLM):
    llm.script(
        text(
            "cached hello",
            usage=Usage(
                prompt_tokens=1200,
                completion_tokens=4,
                cache_read_input_tokens=1000,
                cache_creation_input_tokens=100,
            ),
        )
    )
    chunks = await anthropic_stream(llm, tools=TOOLS)
    built = litellm.stream_chunk_builder(chunks, messages=SYSTEM_CACHED)
    assert built.choices[0].message.content == "cached hello"

    (req,) = llm.requests
    assert req.path == "/v1/messages"
    assert req.headers["x-api-key"] == "x"
    assert "anthropic-version" in req.headers
    assert req.body["system"] == [
        {"type": "text", "text": "You are agent-ls.", "cache_control": {"type": "ephemeral"}}
    ]
    assert req.body["tools"][0]["name"] == "read_file"
    assert req.body["tools"][0]["cache_control"] == {"type": "ephemeral"}

    usage = built.usage
    assert usage.cache_read_input_tokens == 1000
    assert usage.cache_creation_input_tokens == 100
    assert usage.prompt_tokens == 1200  # includes both cache figures
    assert usage.completion_tokens == 4
    assert usage.prompt_tokens_details.cached_tokens == 1000


async def test_anthropic_event_sequence_on_wire(llm: ScriptedLLM):
    llm.script(tool_calls([("read_file", {"path": "a"})], text="Looking."))
    raw = _post(
        llm, "/v1/messages", {"model": "claude-x", "messages": MESSAGES, "stream": True, "max_tokens": 10}
    )
    names = [line.removeprefix("event: ") for line in raw.splitlines() if line.startswith("event: ")]
    assert names[0] == "message_start" and names[-2:] == ["message_delta", "message_stop"]
    assert names.count("content_block_start") == 2 == names.count("content_block_stop")
    data = [json.loads(line.removeprefix("data: ")) for line in raw.splitlines() if line.startswith("data: ")]
    delta = next(d for d in data if d["type"] == "message_delta")
    assert delta["delta"]["stop_reason"] == "tool_use"
    assert "cache_read_input_tokens" in delta["usage"]


async def test_anthropic_tool_calls(llm: ScriptedLLM):
    llm.script(tool_calls([("read_file", {"path": "a.py"}), ("grep", {"pattern": "x"})]))
    built = litellm.stream_chunk_builder(await anthropic_stream(llm, tools=TOOLS), messages=SYSTEM_CACHED)
    calls = built.choices[0].message.tool_calls
    assert [(c.function.name, json.loads(c.function.arguments)) for c in calls] == [
        ("read_file", {"path": "a.py"}),
        ("grep", {"pattern": "x"}),
    ]
    assert all(c.id for c in calls)


@pytest.mark.parametrize(
    ("status", "exc"),
    [
        (401, litellm.AuthenticationError),
        (429, litellm.RateLimitError),
        (400, litellm.ContextWindowExceededError),
    ],
)
async def test_anthropic_errors(llm: ScriptedLLM, status: int, exc: type[Exception]):
    llm.script(error(status))
    with pytest.raises(exc):
        await anthropic_stream(llm)


async def test_anthropic_non_stream(llm: ScriptedLLM):
    llm.script(text("no stream", usage=Usage(prompt_tokens=50, cache_read_input_tokens=40)))
    r = await litellm.acompletion(
        model="anthropic/claude-x", api_base=llm.url, api_key="x", messages=SYSTEM_CACHED
    )
    assert r.choices[0].message.content == "no stream"
    assert r.usage.cache_read_input_tokens == 40


def _post(llm: ScriptedLLM, path: str, body: dict[str, Any]) -> str:
    req = urllib.request.Request(
        llm.url + path, data=json.dumps(body).encode(), headers={"content-type": "application/json"}
    )
    with urllib.request.urlopen(req, timeout=10) as resp:
        return resp.read().decode()
