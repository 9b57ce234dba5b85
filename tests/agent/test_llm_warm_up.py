"""The LLM warm-up (agent_ls.agent.llm.warm_up): litellm's request path runs once, in a thread
with its own event loop as the language server runs it, without reaching the provider; the real
call after it, on the caller's loop, still works (scripted LLM on loopback)."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

import pytest

from agent_ls.agent.llm import LLMConfig, stream_completion, warm_up
from tests.llm.scripted_server import ScriptedLLM, text


async def test_the_warm_up_sends_nothing_to_the_provider(llm: ScriptedLLM) -> None:
    config = LLMConfig(model="openai/scripted", api_base=f"{llm.url}/v1", api_key="x")
    await asyncio.to_thread(warm_up, config)
    assert llm.requests == []  # litellm's mock_response: no request reached the provider

    llm.script(text("hello there", chunks=2))
    got = "".join([d.text async for d in stream_completion(config, [{"role": "user", "content": "hi"}], [])
                   if d.text])
    assert got == "hello there"
    assert len(llm.requests) == 1


@pytest.mark.parametrize("model", ["no-such-provider/at-all", ""])
def test_a_warm_up_that_cannot_run_is_silent(model: str) -> None:
    warm_up(LLMConfig(model=model))  # never raises: the real call reports the problem


LOADED = """
import json, sys
import tiktoken.registry
from agent_ls.agent.llm import get_litellm
get_litellm()
print(json.dumps(sorted(tiktoken.registry.ENCODINGS)))
"""


def test_litellm_comes_with_the_default_tokenizer_loaded() -> None:
    """The session counts every request before sending it: the first prompt must not load the
    tokenizer itself after waiting for litellm (issue 30 item 2). A fresh process: another test
    may have loaded it in this one."""
    out = subprocess.run([sys.executable, "-c", LOADED], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr
    assert "cl100k_base" in json.loads(out.stdout)
