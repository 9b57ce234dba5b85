"""MCP sampling without a model: settings, conversion, model choice, consent and refusals
(agent_ls/agent/sampling.py, agent_ls/agent/config.py). Requests that would reach the model
are tested against the scripted LLM in tests/agent/test_sampling.py."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mcp_types as types
import pytest

from agent_ls.agent.config import DEFAULT_SAMPLING_MAX_TOKENS, AgentSettings, SamplingSettings, agent_settings
from agent_ls.agent.sampling import (
    DECLINED,
    PREVIEW_CHARS,
    Sampler,
    SamplingAnswer,
    SamplingRequest,
    choose_model,
    preview_messages,
    stop_reason,
    to_litellm_messages,
)
from agent_ls.config.settings import load_settings
from tests.tooling import TRUST_ALL

PNG = "iVBORw0KGgoAAAANSUhEUgAAAAIAAAACCAIAAAD91JpzAAAAFklEQVR4nGP4z8DwHwyBNIQBJhgYAAAtnQr2W6f2qwAAAABJRU5ErkJggg=="


def msg(role: str, *content: Any) -> types.SamplingMessage:
    return types.SamplingMessage(role=role, content=list(content) if len(content) > 1 else content[0])  # type: ignore[arg-type]


def text(t: str) -> types.TextContent:
    return types.TextContent(type="text", text=t)


def params(*messages: types.SamplingMessage, **kw: Any) -> types.CreateMessageRequestParams:
    kw.setdefault("max_tokens", 100)
    return types.CreateMessageRequestParams(messages=list(messages), **kw)


def load(tmp_path: Path, user: dict[str, Any] | None, workspace: dict[str, Any] | None = None) -> AgentSettings:
    ws = tmp_path / "ws"
    (ws / ".agent-ls").mkdir(parents=True, exist_ok=True)
    user_file = tmp_path / "user.json"
    user_file.write_text(json.dumps(user or {}))
    if workspace is not None:
        (ws / ".agent-ls" / "settings.json").write_text(json.dumps(workspace))
    return agent_settings(load_settings([ws], user_settings=user_file, environ={}, trust=TRUST_ALL), environ={})


# settings --------------------------------------------------------------------------------------

def test_sampling_settings_defaults_ask_consent_with_the_agent_model(tmp_path: Path) -> None:
    s = load(tmp_path, {"model": "openai/main"})
    assert s.sampling == SamplingSettings()
    p = s.sampling.policy("knob", s.model, s.api_base)
    assert p.allowed and not p.auto_approve and p.model == "openai/main"
    assert p.max_tokens == DEFAULT_SAMPLING_MAX_TOKENS and p.allowed_models == ()


def test_sampling_settings_parse_merge_and_per_server_overrides(tmp_path: Path) -> None:
    user = {"model": "openai/main", "apiBase": "http://agent", "agent": {"sampling": {
        "allowedServers": ["knob", "doc*"], "autoApprove": ["knob"], "model": "openai/small",
        "allowedModels": ["openai/small", "anthropic/claude-haiku"], "maxTokens": 500,
        "servers": {"docs": {"model": "openai/docs-model", "allowedModels": [], "maxTokens": 50}}}}}
    s = load(tmp_path, user, {"agent": {"sampling": {"maxTokens": 300}}})
    assert s.problems == ()
    knob = s.sampling.policy("knob", s.model, s.api_base)
    assert knob.allowed and knob.auto_approve and knob.model == "openai/small" and knob.max_tokens == 300
    assert knob.api_base == "http://agent"
    docs = s.sampling.policy("docs", s.model, s.api_base)
    assert docs.allowed and not docs.auto_approve and docs.model == "openai/docs-model"
    assert docs.max_tokens == 50 and docs.allowed_models == ()
    other = s.sampling.policy("other", s.model, s.api_base)
    assert not other.allowed and "allowedServers" in other.reason and "'other'" in other.reason


def test_sampling_false_turns_it_off_and_bad_values_are_reported(tmp_path: Path) -> None:
    s = load(tmp_path, {"agent": {"sampling": False}})
    p = s.sampling.policy("knob", "openai/m", None)
    assert not p.allowed and "enabled" in p.reason
    s = load(tmp_path, {"agent": {"sampling": {"enabled": "yes", "maxTokens": 0, "model": 3,
                                               "allowedServers": "knob", "bogus": 1,
                                               "servers": {"a": {"maxTokens": -1, "x": 1}}}}})
    text_ = "\n".join(s.problems)
    for needle in ("agent.sampling.enabled", "agent.sampling.maxTokens", "agent.sampling.model",
                   "agent.sampling.allowedServers", "'bogus'", "servers.a.maxTokens", "servers.a: unknown key 'x'"):
        assert needle in text_, needle
    assert s.sampling.enabled and s.sampling.allowed_servers is None and s.sampling.max_tokens is None
    s = load(tmp_path, {"agent": {"sampling": "on"}})
    assert any("agent.sampling must be an object" in p for p in s.problems)


def test_auto_approve_is_only_honoured_in_the_user_file(tmp_path: Path) -> None:
    s = load(tmp_path, {"agent": {"sampling": {"autoApprove": ["mine"]}}},
             {"agent": {"sampling": {"autoApprove": ["repo-server"], "allowedServers": ["*"]}}})
    assert s.sampling.auto_approve == ("mine",)
    assert s.sampling.allowed_servers == ("*",)
    assert any("autoApprove is only honoured in the user settings file" in p for p in s.problems)
    assert not s.sampling.policy("repo-server", "m", None).auto_approve


# conversion ------------------------------------------------------------------------------------

def test_messages_system_prompt_text_and_images_convert_to_litellm_format() -> None:
    p = params(msg("user", text("hello")),
               msg("assistant", text("hi"), text("there")),
               msg("user", text("what is this?"), types.ImageContent(type="image", data=PNG, mime_type="image/png")),
               system_prompt="be terse")
    out = to_litellm_messages(p)
    assert out[0] == {"role": "system", "content": "be terse"}
    assert out[1] == {"role": "user", "content": "hello"}
    assert out[2] == {"role": "assistant", "content": "hi\nthere"}
    assert out[3]["role"] == "user"
    assert out[3]["content"][0] == {"type": "text", "text": "what is this?"}
    assert out[3]["content"][1] == {"type": "image_url", "image_url": {"url": f"data:image/png;base64,{PNG}"}}


@pytest.mark.parametrize("content, needle", [
    (types.AudioContent(type="audio", data="AAAA", mime_type="audio/wav"), "audio content"),
    (types.ToolUseContent(type="tool_use", id="t1", name="x", input={}), "sampling with tools is not supported"),
])
def test_unsupported_content_is_refused_clearly(content: Any, needle: str) -> None:
    from agent_ls.agent.sampling import SamplingRefused

    with pytest.raises(SamplingRefused) as e:
        to_litellm_messages(params(msg("user", content)))
    assert e.value.code == types.INVALID_PARAMS and needle in e.value.message


def test_preview_cuts_long_text_describes_images_and_keeps_the_latest() -> None:
    long = "x" * (PREVIEW_CHARS + 50)
    many = [msg("user", text(f"m{i}")) for i in range(25)]
    previews, omitted = preview_messages(params(*many))
    assert omitted == 5 and len(previews) == 20 and previews[0].text == "m5"
    previews, omitted = preview_messages(params(
        msg("user", text(long), types.ImageContent(type="image", data=PNG, mime_type="image/png"))))
    assert omitted == 0
    assert previews[0].text.startswith("x" * 100) and "more characters]" in previews[0].text


def test_model_hints_choose_only_among_allowed_models() -> None:
    s = SamplingSettings(model="openai/small", allowed_models=("openai/gpt-4.1-mini", "anthropic/claude-haiku-4-5"))
    policy = s.policy("k", "openai/main", None)
    prefs = types.ModelPreferences(hints=[types.ModelHint(name="opus"), types.ModelHint(name="Claude")])
    assert choose_model(policy, prefs) == "anthropic/claude-haiku-4-5"  # first hint that matches, in order
    assert choose_model(policy, types.ModelPreferences(hints=[types.ModelHint(name="gemini")])) == "openai/small"
    assert choose_model(policy, None) == "openai/small"
    # Without an allowlist a server's hints never reach another model.
    bare = SamplingSettings().policy("k", "openai/main", None)
    assert choose_model(bare, prefs) == "openai/main"


def test_stop_reasons_map_to_mcp() -> None:
    assert stop_reason("stop", "done", None) == "endTurn"
    assert stop_reason("length", "do", None) == "maxTokens"
    assert stop_reason("stop", "a END", ["END"]) == "stopSequence"
    assert stop_reason("tool_calls", "", None) == "toolUse"
    assert stop_reason(None, "", None) is None


# refusals and consent (no model call is reached) -----------------------------------------------

def settings_of(**sampling: Any) -> AgentSettings:
    return AgentSettings(model=sampling.pop("agent_model", "openai/scripted"), sampling=SamplingSettings(**sampling))


async def test_refusals_before_consent_do_not_ask() -> None:
    asked: list[SamplingRequest] = []

    async def consent(req: SamplingRequest) -> SamplingAnswer:
        asked.append(req)
        return SamplingAnswer.ALLOW_ONCE

    p = params(msg("user", text("hi")))
    off = await Sampler(lambda: settings_of(enabled=False), consent)("knob", p)
    assert isinstance(off, types.ErrorData) and off.code == DECLINED and "turned off" in off.message
    other = await Sampler(lambda: settings_of(allowed_servers=("docs",)), consent)("knob", p)
    assert isinstance(other, types.ErrorData) and "allowedServers" in other.message
    no_model = await Sampler(lambda: settings_of(agent_model=None), consent)("knob", p)
    assert isinstance(no_model, types.ErrorData) and "no model is configured" in no_model.message
    assert "AGENT_LS_MODEL" in no_model.message
    tools = await Sampler(lambda: settings_of(), consent)("knob", params(
        msg("user", text("hi")), tools=[types.Tool(name="t", input_schema={"type": "object"})]))
    assert isinstance(tools, types.ErrorData) and tools.code == types.INVALID_PARAMS
    assert asked == []


async def test_deny_and_broken_consent_decline_with_a_clear_message() -> None:
    seen: list[SamplingRequest] = []

    async def deny(req: SamplingRequest) -> str:
        seen.append(req)
        return "deny"

    p = params(msg("user", text("summarise this")), system_prompt="sys", max_tokens=99999)
    out = await Sampler(lambda: settings_of(max_tokens=256), deny)("knob", p)
    assert isinstance(out, types.ErrorData) and out.code == DECLINED and "denied" in out.message
    req = seen[0]
    assert req.server == "knob" and req.model == "openai/scripted" and req.system_prompt == "sys"
    assert req.max_tokens == 256 and req.requested_max_tokens == 99999
    assert [(m.role, m.text) for m in req.messages] == [("user", "summarise this")]

    async def nonsense(req: SamplingRequest) -> str:
        return "sure"

    out = await Sampler(lambda: settings_of(), nonsense)("knob", p)
    assert isinstance(out, types.ErrorData) and "denied" in out.message

    async def broken(req: SamplingRequest) -> str:
        raise RuntimeError("editor went away")

    out = await Sampler(lambda: settings_of(), broken)("knob", p)
    assert isinstance(out, types.ErrorData) and "could not be asked" in out.message and "editor went away" in out.message
    out = await Sampler(lambda: settings_of(), None)("knob", p)
    assert isinstance(out, types.ErrorData) and "autoApprove" in out.message
