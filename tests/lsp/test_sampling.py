"""MCP sampling over stdio: the knob server's ``sample`` tool asks the language server
(sampling/createMessage), which asks the editor (``mcp/sample``) for consent and then the
scripted LLM through litellm, in the user's model host; the editor here is the pytest-lsp client."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from lsprotocol import types as lsp

from agent_ls.server.protocol import methods as P
from tests.harness import happens_before_end
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor, wait_for

pytestmark = pytest.mark.e2e

KNOB_SYSTEM_PROMPT = "You are the knob test server's sampling target."


class Consent:
    """The editor's side of mcp/sample: records each question, answers from a list."""

    def __init__(self, *answers: Any) -> None:
        self.answers = list(answers)
        self.asked: list[dict[str, Any]] = []

    def install(self, ed: Editor) -> None:
        @ed.client.feature(P.SAMPLE)
        def on_sample(params: Any) -> Any:
            self.asked.append(params)
            answer = self.answers.pop(0) if self.answers else "deny"
            return answer if isinstance(answer, dict) else {"answer": answer}


async def sample(ed: Editor, prompt: str) -> dict[str, Any]:
    result: dict[str, Any] = await ed.request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "sample",
                                                                 "arguments": {"prompt": prompt}})
    return result


def reload_count(ed: Editor) -> int:
    return sum("settings reloaded" in m.message for m in ed.client.log_messages)


def sampling_requests(setup: Setup) -> list[Any]:
    return [r for r in setup.llm.requests if not r.stream]


async def test_allow_once_asks_every_time_and_the_answer_comes_from_the_model(setup: Setup) -> None:
    consent = Consent("allow_once", "allow_once")
    ed = await open_editor(setup, configure=consent.install)
    try:
        await ed.wait_state("knob", "connected")
        setup.llm.script(text("forty-two"), text("again"))
        out = await sample(ed, "meaning of life?")
        assert not out["isError"], out
        assert out["content"] == "forty-two"
        out = await sample(ed, "once more")
        assert out["content"] == "again"
        assert len(consent.asked) == 2
        first = consent.asked[0]
        assert first == {"server": "knob", "messages": [{"role": "user", "text": "meaning of life?"}],
                         "systemPrompt": KNOB_SYSTEM_PROMPT, "maxTokens": 200, "model": "openai/scripted",
                         "requestedMaxTokens": 200, "omittedMessages": 0, "endpoint": setup.llm.openai_base}
        req = sampling_requests(setup)[0]
        assert req.body["messages"] == [{"role": "system", "content": KNOB_SYSTEM_PROMPT},
                                        {"role": "user", "content": "meaning of life?"}]
        assert req.body["max_tokens"] == 200
        info = await ed.request(P.SERVER_INFO)  # made in the model host (issue 46), like the agent's requests
        assert info["modelLibrary"] == "host" and info["loadedModules"]["litellm"] is False, info
    finally:
        await close_editor(ed)


async def test_allow_session_is_asked_once(setup: Setup) -> None:
    consent = Consent("allow_session")
    ed = await open_editor(setup, configure=consent.install)
    try:
        await ed.wait_state("knob", "connected")
        setup.llm.script(text("one"), text("two"), text("three"))
        outs = [await sample(ed, f"p{i}") for i in range(3)]
        assert [o["content"] for o in outs] == ["one", "two", "three"]
        assert len(consent.asked) == 1
        assert len(sampling_requests(setup)) == 3
    finally:
        await close_editor(ed)


async def test_deny_and_broken_answers_reach_the_tool_as_errors(setup: Setup) -> None:
    consent = Consent("deny", {"answer": 5}, {"nothing": True}, "maybe")
    ed = await open_editor(setup, configure=consent.install)
    try:
        await ed.wait_state("knob", "connected")
        for _ in range(4):
            out = await sample(ed, "p")
            assert out["isError"] and "the user denied the sampling request" in out["content"], out
        assert len(consent.asked) == 4
        assert sampling_requests(setup) == []  # the model was never called
    finally:
        await close_editor(ed)


async def test_no_model_is_a_clear_error_and_the_editor_is_not_asked(setup: Setup) -> None:
    del setup.user_settings["model"]
    consent = Consent("allow_once")
    ed = await open_editor(setup, configure=consent.install)
    try:
        await ed.wait_state("knob", "connected")
        out = await sample(ed, "p")
        assert out["isError"] and "no model is configured" in out["content"]
        assert consent.asked == [] and setup.llm.requests == []
    finally:
        await close_editor(ed)


async def test_settings_reload_applies_and_a_turn_can_sample(setup: Setup) -> None:
    """A live settings change (sampling turned off) applies to the next request; during an
    agent turn the consent question reaches the editor and the sampled text is the tool result."""
    consent = Consent("allow_once")
    ed = await open_editor(setup, configure=consent.install)
    try:
        await ed.wait_state("knob", "connected")
        setup.llm.script(tool_calls([("mcp__knob__sample", {"prompt": "name a colour"})]), text("teal"),
                         text("The server said teal."))
        result = await ed.request(P.PROMPT, {"text": "ask the knob server to sample"})
        assert result["text"] == "The server said teal."
        finished = next(e for e in ed.session_events() if e["type"] == "tool_call_finished")
        assert finished["content"] == "teal" and not finished["isError"]
        assert consent.asked[0]["messages"] == [{"role": "user", "text": "name a colour"}]

        setup.user_settings["agent"]["sampling"] = {"enabled": False}
        reloads = reload_count(ed)
        setup.write()
        ed.client.workspace_did_change_watched_files(lsp.DidChangeWatchedFilesParams(
            changes=[lsp.FileEvent(uri=setup.user_file.as_uri(), type=lsp.FileChangeType.Changed)]))
        # The reload reads the files on a thread: a call sent before it ends still samples.
        await wait_for(lambda: reload_count(ed) > reloads, what="the settings reload")
        for _ in range(100):
            out = await sample(ed, "p")
            if "turned off" in out["content"]:
                break
            await asyncio.sleep(0.1)
        assert out["isError"] and "sampling is turned off" in out["content"]
        assert len(consent.asked) == 1
    finally:
        await close_editor(ed)


async def test_cancelling_the_tool_call_withdraws_the_consent_question(setup: Setup) -> None:
    """The editor's question is withdrawn ($/cancelRequest) when the work that asked goes away:
    the client cancels its mcp/callTool, the host cancels the MCP call, the MCP server cancels
    its sampling request, and the language server cancels mcp/sample."""
    asked = asyncio.Event()
    withdrawn = asyncio.Event()

    def configure(ed: Editor) -> None:
        @ed.client.feature(P.SAMPLE)
        async def on_sample(params: Any) -> Any:
            asked.set()
            try:
                await asyncio.Event().wait()
            except asyncio.CancelledError:
                withdrawn.set()
                raise
            return {"answer": "allow_once"}

    ed = await open_editor(setup, configure=configure)
    try:
        await ed.wait_state("knob", "connected")
        msg_id, task = ed.start_request(P.MCP_CALL_TOOL, {"server": "knob", "tool": "sample",
                                                          "arguments": {"prompt": "p"}})
        await happens_before_end(asked, task, "the sampling question")
        ed.cancel(msg_id)
        await withdrawn.wait()
        with pytest.raises(Exception):  # noqa: B017 - the cancelled request's error
            await task
        assert sampling_requests(setup) == []
        # The server is still fine: the next request is asked and answered.
        assert (await ed.status())["knob"]["state"] == "connected"
    finally:
        await close_editor(ed)


async def test_the_same_consent_for_a_server_of_the_handshake_era(setup: Setup) -> None:
    """The default session is 2026-07-28 (sampling arrives as an input_required round); a server
    pinned to the handshake era sends sampling/createMessage itself: the editor sees the same
    mcp/sample question either way."""
    setup.user_settings["mcpServers"]["knob"]["protocol"] = "legacy"
    consent = Consent("allow_once")
    ed = await open_editor(setup, configure=consent.install)
    try:
        assert (await ed.wait_state("knob", "connected"))["protocolVersion"] == "2025-11-25"
        setup.llm.script(text("legacy answer"))
        out = await sample(ed, "from the old era?")
        assert not out["isError"] and out["content"] == "legacy answer", out
        assert [a["messages"] for a in consent.asked] == [[{"role": "user", "text": "from the old era?"}]]
    finally:
        await close_editor(ed)
