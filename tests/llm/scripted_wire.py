"""The two wire formats a :class:`~tests.llm.scripted_server.ScriptedLLM` answers in: OpenAI chat
completions and Anthropic messages, plain JSON or streamed, and each provider's error bodies.
"""

from __future__ import annotations

import json
import time
import uuid
from collections.abc import Iterable
from typing import Any

from tests.llm.scripted_turns import Text, ToolCalls, Usage, split_pieces

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


# ---------------------------------------------------------------- wire formats


class Writer:
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


class OpenAIWriter(Writer):
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
                for piece in split_pieces(args, turn.fragments):
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


class AnthropicWriter(Writer):
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
                for piece in split_pieces(args, turn.fragments):
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
