"""The scripted LLM server's Anthropic endpoint, driven through litellm's real HTTP path:
cache control on the wire, the event sequence, tool calls, errors."""

from __future__ import annotations

import json
from typing import Any

import pytest

from tests.llm.scripted_server import ScriptedLLM, Usage, error, text, tool_calls
from tests.llm.wire_client import MESSAGES, QUIET, litellm, post

pytestmark = QUIET



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
    raw = post(
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
