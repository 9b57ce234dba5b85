"""Agent settings from the settings files and the environment.

Keys (in user ``settings.json`` or the workspace ``.agent-ls/settings.json``; the workspace
wins, key by key inside ``"agent"``; permission lists are combined):

    "model": "anthropic/claude-sonnet-4-5"   any litellm model string (env AGENT_LS_MODEL wins)
    "apiBase": "http://127.0.0.1:11434"      optional (env AGENT_LS_API_BASE wins)
    "permissions": {"allow": [...], "ask": [...], "deny": [...]}   glob patterns over tool names
    "agent": {"maxSteps": 25, "deferMcpTools": true | false | N, "maxRetries": 2,
              "bashTimeout": 120, "instructions": "extra instructions for every session"}
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs

from agent_ls.agent.llm import LLMConfig
from agent_ls.config.settings import LoadedSettings


@attrs.frozen
class AgentSettings:
    model: str | None = None
    api_base: str | None = None
    max_steps: int = 25
    defer_mcp_tools: bool | int = True
    max_retries: int = 2
    bash_timeout: float = 120.0
    instructions: str = ""
    allow: tuple[str, ...] = ()
    ask: tuple[str, ...] = ()
    deny: tuple[str, ...] = ()
    problems: tuple[str, ...] = ()

    def llm_config(self, model: str | None = None) -> LLMConfig | None:
        chosen = model or self.model
        if not chosen:
            return None
        return LLMConfig(model=chosen, api_base=self.api_base, max_retries=self.max_retries)


def _str_list(value: Any, where: str, problems: list[str]) -> list[str]:
    if value is None:
        return []
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        problems.append(f"{where} must be a list of strings")
        return []
    return list(value)


def agent_settings(settings: LoadedSettings, environ: Mapping[str, str] | None = None) -> AgentSettings:
    env = os.environ if environ is None else environ
    problems: list[str] = []
    other = settings.other
    model = env.get("AGENT_LS_MODEL") or (other.get("model") if isinstance(other.get("model"), str) else None)
    api_base = env.get("AGENT_LS_API_BASE") or (other.get("apiBase") if isinstance(other.get("apiBase"), str)
                                               else None)
    # "agent" is merged key by key (user first, then the workspace folders, the first folder last
    # so it wins), so a workspace that sets one key keeps the user's others.
    agent: dict[str, Any] = {}
    for _scope, file, root in reversed(settings.layers):
        layer_agent = root.get("agent")
        if layer_agent is None:
            continue
        if not isinstance(layer_agent, dict):
            problems.append(f"{file}: \"agent\" must be an object")
            continue
        agent.update(layer_agent)
    kw: dict[str, Any] = {}

    def number(key: str, field: str, *, integer: bool, minimum: float) -> None:
        value = agent.get(key)
        if value is None:
            return
        ok = isinstance(value, int if integer else (int, float)) and not isinstance(value, bool)
        if not ok or value < minimum or (minimum == 0 and not integer and value == 0):
            kind = "an integer" if integer else "a number of seconds"
            problems.append(f"agent.{key} must be {kind} {'>= ' + str(minimum) if integer else '> 0'}, "
                            f"got {value!r}; the default is used")
            return
        kw[field] = value if integer else float(value)

    number("maxSteps", "max_steps", integer=True, minimum=1)
    number("maxRetries", "max_retries", integer=True, minimum=0)
    number("bashTimeout", "bash_timeout", integer=False, minimum=0)
    defer = agent.get("deferMcpTools")
    if isinstance(defer, bool) or (isinstance(defer, int) and defer >= 0):
        kw["defer_mcp_tools"] = defer
    elif defer is not None:
        problems.append("agent.deferMcpTools must be true, false or a number of tools")
    if isinstance(agent.get("instructions"), str):
        kw["instructions"] = agent["instructions"]
    elif agent.get("instructions") is not None:
        problems.append("agent.instructions must be a string")
    allow: list[str] = []
    ask: list[str] = []
    deny: list[str] = []
    for _scope, file, root in settings.layers:
        perms = root.get("permissions")
        if perms is None:
            continue
        if not isinstance(perms, dict):
            problems.append(f"{file}: \"permissions\" must be an object")
            continue
        allow += _str_list(perms.get("allow"), f"{file}: permissions.allow", problems)
        ask += _str_list(perms.get("ask"), f"{file}: permissions.ask", problems)
        deny += _str_list(perms.get("deny"), f"{file}: permissions.deny", problems)
    return AgentSettings(model=model, api_base=api_base, allow=tuple(allow), ask=tuple(ask), deny=tuple(deny),
                         problems=tuple(problems), **kw)
