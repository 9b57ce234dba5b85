"""MCP sampling end to end without an editor: the knob server's ``sample`` tool asks the host
(sampling/createMessage), the host's Sampler asks for consent and calls the scripted
OpenAI-compatible LLM on loopback through litellm's real HTTP path, and the answer comes back
as the tool's result. Settings come from real settings files."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.config import AgentSettings, agent_settings
from agent_ls.agent.sampling import Sampler, SamplingRequest
from agent_ls.config.settings import load_settings
from agent_ls.mcp.manager import MCPManager
from tests.agent.conftest import Recorder, make_session
from tests.llm.scripted_server import ScriptedLLM, auth_error, text, tool_calls
from tests.servers.launch import knob_stdio_params
from tests.tooling import TRUST_ALL

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

KNOB_SYSTEM_PROMPT = "You are the knob test server's sampling target."


class Host:
    """A manager with the knob server, the agent settings from the same files, a consent recorder."""

    def __init__(self, tmp: Path, ws: Path, llm: ScriptedLLM) -> None:
        self.tmp = tmp
        self.ws = ws
        self.llm = llm
        self.answers: list[str] = []
        self.asked: list[SamplingRequest] = []
        self.manager: MCPManager | None = None
        self.agent: AgentSettings | None = None

    async def consent(self, request: SamplingRequest) -> str:
        self.asked.append(request)
        return self.answers.pop(0) if self.answers else "allow_once"

    async def start(self, *, model: bool = True, sampling: Any = None, protocol: str = "legacy") -> MCPManager:
        user: dict[str, Any] = {"mcpServers": {"knob": {**knob_stdio_params(), "protocol": protocol}},
                                "agent": {"maxRetries": 0}}
        if model:
            user.update({"model": "openai/scripted", "apiBase": self.llm.openai_base})
        if sampling is not None:
            user["agent"]["sampling"] = sampling
        file = self.tmp / "user.json"
        file.write_text(json.dumps(user))
        settings = load_settings([self.ws], user_settings=file, environ={}, trust=TRUST_ALL)
        self.agent = agent_settings(settings, environ={})
        assert self.agent.problems == ()
        self.manager = MCPManager(roots=[self.ws])
        self.manager.callbacks.sampling = Sampler(lambda: self.agent, self.consent)  # type: ignore[arg-type,return-value]
        await self.manager.apply(settings)
        await self.manager.wait_ready(30)
        return self.manager

    def sampling_requests(self) -> list[Any]:
        return [r for r in self.llm.requests if r.path.endswith("/chat/completions") and not r.stream]


@pytest.fixture
async def host(tmp_path: Path, ws: Path, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Host]:
    monkeypatch.setenv("OPENAI_API_KEY", "x")  # the provider's key, as a user would have it
    monkeypatch.delenv("AGENT_LS_MODEL", raising=False)
    h = Host(tmp_path, ws, llm)
    yield h
    if h.manager is not None:
        await h.manager.close()


@pytest.mark.parametrize("protocol", ["legacy", "auto"])  # auto negotiates 2026-07-28 with the knob
async def test_tool_result_is_the_scripted_answer_and_the_llm_saw_the_request(host: Host, llm: ScriptedLLM,
                                                                              protocol: str) -> None:
    m = await host.start(protocol=protocol)
    conn = m.connection("knob")
    assert conn is not None and conn.handshake.protocol_version == ("2026-07-28" if protocol == "auto" else "2025-11-25")
    llm.script(text("forty-two", chunks=1))
    res = await m.call_tool("knob", "sample", {"prompt": "meaning of life?"})
    assert not res.is_error, res.content
    assert res.content == "forty-two"
    (req,) = host.sampling_requests()
    body = req.body
    assert body["model"] == "scripted"
    assert body["messages"] == [{"role": "system", "content": KNOB_SYSTEM_PROMPT},
                                {"role": "user", "content": "meaning of life?"}]
    assert body["max_tokens"] == 200  # the knob server's maxTokens, under the default cap
    (asked,) = host.asked
    assert asked.server == "knob" and asked.model == "openai/scripted" and asked.max_tokens == 200
    assert asked.system_prompt == KNOB_SYSTEM_PROMPT
    assert [(p.role, p.text) for p in asked.messages] == [("user", "meaning of life?")]


async def test_allow_session_asks_once_allow_once_every_time(host: Host, llm: ScriptedLLM) -> None:
    m = await host.start()
    host.answers = ["allow_once", "allow_session"]
    llm.script(text("a"), text("b"), text("c"))
    for expected in ("a", "b", "c"):
        res = await m.call_tool("knob", "sample", {"prompt": "p"})
        assert res.content == expected and not res.is_error
    assert len(host.asked) == 2  # once (allow_once), then allow_session covers the third call
    assert len(host.sampling_requests()) == 3


async def test_deny_gives_the_tool_an_error_and_no_model_call(host: Host, llm: ScriptedLLM) -> None:
    m = await host.start()
    host.answers = ["deny"]
    res = await m.call_tool("knob", "sample", {"prompt": "p"})
    assert res.is_error
    assert "user denied the sampling request" in res.content
    assert host.sampling_requests() == [] and len(host.asked) == 1


async def test_no_model_is_a_clear_error_without_asking(host: Host, llm: ScriptedLLM) -> None:
    m = await host.start(model=False)
    res = await m.call_tool("knob", "sample", {"prompt": "p"})
    assert res.is_error
    assert "no model is configured" in res.content and "AGENT_LS_MODEL" in res.content
    assert host.asked == [] and llm.requests == []


async def test_settings_cap_max_tokens_pick_the_model_and_auto_approve(host: Host, llm: ScriptedLLM) -> None:
    m = await host.start(sampling={"maxTokens": 64, "model": "openai/scripted-small", "apiBase": llm.openai_base,
                                   "autoApprove": ["kn*"]})
    llm.script(text("small answer"))
    res = await m.call_tool("knob", "sample", {"prompt": "p"})
    assert res.content == "small answer" and not res.is_error
    (req,) = host.sampling_requests()
    assert req.body["max_tokens"] == 64 and req.body["model"] == "scripted-small"
    assert host.asked == []  # autoApprove from the user settings file


async def test_server_not_allowed_and_provider_errors_reach_the_tool(host: Host, llm: ScriptedLLM) -> None:
    m = await host.start(sampling={"allowedServers": ["docs"]})
    res = await m.call_tool("knob", "sample", {"prompt": "p"})
    assert res.is_error and "allowedServers" in res.content and host.asked == []
    await m.close()
    m = await host.start()
    llm.script(auth_error())
    res = await m.call_tool("knob", "sample", {"prompt": "p"})
    assert res.is_error and "the model call failed (auth)" in res.content


async def test_agent_turn_calls_a_tool_that_samples(host: Host, llm: ScriptedLLM, ws: Path) -> None:
    """The model calls mcp__knob__sample; the knob server samples the same model (a separate,
    non-streamed request in the middle of the turn); the sampled text is the tool's result."""
    m = await host.start()
    llm.script(tool_calls([("mcp__knob__sample", {"prompt": "name a colour"})]),
               text("teal"),                      # the sampling request
               text("The server said teal."))     # the turn's second step
    s = make_session(llm, ws, mcp=m, defer=False)
    rec = Recorder()
    result = await s.prompt("ask the knob server to sample", rec)
    assert result.text == "The server said teal."
    (fin,) = rec.of("tool_call_finished")
    assert fin.name == "mcp__knob__sample" and not fin.is_error and fin.content == "teal"
    paths = [(r.stream, r.body["messages"][-1]["content"]) for r in llm.requests]
    assert paths[1] == (False, "name a colour")
    assert paths[0][0] and paths[2][0]  # the turn's own requests stream
    assert len(host.asked) == 1
