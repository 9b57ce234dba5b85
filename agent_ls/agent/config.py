"""Agent settings from the settings files and the environment.

Keys (in user ``settings.json`` or the workspace ``.agent-ls/settings.json``; the workspace
wins, key by key inside ``"agent"``; permission lists are combined):

    "model": "anthropic/claude-sonnet-4-5"   any litellm model string (env AGENT_LS_MODEL wins)
    "apiBase": "http://127.0.0.1:11434"      optional (env AGENT_LS_API_BASE wins)
    "permissions": {"allow": [...], "ask": [...], "deny": [...]}   glob patterns over tool names
    "agent": {"maxSteps": 25, "deferMcpTools": true | false | N, "maxRetries": 2,
              "bashTimeout": 120, "instructions": "extra instructions for every session",
              "outputPageChars": 30000, "outputStoreChars": 10000000,
              "sampling": {...}}   MCP sampling, see :class:`SamplingSettings`
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs

from agent_ls.agent.llm import LLMConfig
from agent_ls.agent.output_store import DEFAULT_PAGE_CHARS, DEFAULT_STORE_CHARS, MIN_PAGE_CHARS, OutputStore
from agent_ls.config.entries import Scope
from agent_ls.config.globs import check_name_pattern, first_match
from agent_ls.config.settings import LoadedSettings

DEFAULT_SAMPLING_MAX_TOKENS = 4096
"""Cap on the ``maxTokens`` an MCP server may ask for when ``agent.sampling.maxTokens`` is not set."""


@attrs.frozen
class ServerSampling:
    """Per-server overrides (``agent.sampling.servers.<name>``)."""

    model: str | None = None
    allowed_models: tuple[str, ...] | None = None
    max_tokens: int | None = None


@attrs.frozen
class SamplingPolicy:
    """What applies to one MCP server's sampling requests."""

    allowed: bool
    """False: the server's requests are declined without asking."""
    reason: str
    """Why not allowed (empty when allowed)."""
    auto_approve: bool
    """True: no consent is asked (only the user settings file can say so)."""
    model: str | None
    """The model to use (sampling model, else the agent's model); None: none configured."""
    allowed_models: tuple[str, ...]
    """Models the server's ``modelPreferences.hints`` may pick from (empty: hints are ignored)."""
    max_tokens: int
    """Cap on the server's ``maxTokens``."""
    api_base: str | None


@attrs.frozen
class SamplingSettings:
    """MCP sampling (``sampling/createMessage``): an MCP server asks to use the user's model.

    ``"agent": {"sampling": ...}`` in a settings file (``true``/``false`` is short for
    ``{"enabled": ...}``); keys merge across scopes like the other agent keys::

        "sampling": {
          "enabled": true,                 // false: every request is declined
          "allowedServers": ["docs", "k*"],// glob patterns; absent: every server may ask
          "autoApprove": ["docs"],         // never ask consent for these (user settings file only)
          "model": "openai/gpt-4.1-mini",  // default: the agent's "model"
          "apiBase": "http://...",         // default: the agent's "apiBase"
          "allowedModels": ["openai/gpt-4.1-mini", "anthropic/claude-haiku-4-5"],
          "maxTokens": 2048,               // cap on what a server asks for (default 4096)
          "servers": {"docs": {"model": "...", "allowedModels": [...], "maxTokens": 512}}
        }

    Like VS Code's per-server sampling allowlist: a server can only reach the models listed in
    ``allowedModels`` (its ``modelPreferences.hints`` choose among them, by substring); without
    a list it gets the sampling model. Every request needs the user's consent (allow once,
    allow for the session, deny) unless the server is in ``autoApprove``.
    """

    enabled: bool = True
    allowed_servers: tuple[str, ...] | None = None
    auto_approve: tuple[str, ...] = ()
    model: str | None = None
    api_base: str | None = None
    allowed_models: tuple[str, ...] = ()
    max_tokens: int | None = None
    servers: Mapping[str, ServerSampling] = attrs.field(factory=dict)

    def policy(self, server: str, agent_model: str | None, agent_api_base: str | None) -> SamplingPolicy:
        per = self.servers.get(server, ServerSampling())
        model = per.model or self.model or agent_model
        allowed_models = per.allowed_models if per.allowed_models is not None else self.allowed_models
        cap = per.max_tokens or self.max_tokens or DEFAULT_SAMPLING_MAX_TOKENS
        api_base = self.api_base or agent_api_base
        reason = ""
        if not self.enabled:
            reason = "sampling is turned off (\"agent\": {\"sampling\": {\"enabled\": false}} in the settings)"
        elif self.allowed_servers is not None and first_match(self.allowed_servers, server) is None:
            reason = (f"the MCP server '{server}' is not in \"agent.sampling.allowedServers\" "
                      f"({', '.join(self.allowed_servers) or 'empty'})")
        auto = first_match(self.auto_approve, server) is not None
        return SamplingPolicy(allowed=not reason, reason=reason, auto_approve=auto, model=model,
                              allowed_models=allowed_models, max_tokens=cap, api_base=api_base)


def _positive_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value > 0


def _sampling_settings(settings: LoadedSettings, problems: list[str]) -> SamplingSettings:
    """``agent.sampling`` merged key by key (user first, workspace folders over it); ``autoApprove``
    only from the user settings file (a repository must not approve its own servers)."""
    merged: dict[str, Any] = {}
    for scope, file, root in reversed(settings.layers):
        agent = root.get("agent")
        if not isinstance(agent, dict) or "sampling" not in agent:
            continue
        raw = agent["sampling"]
        if isinstance(raw, bool):
            raw = {"enabled": raw}
        if not isinstance(raw, dict):
            problems.append(f"{file}: agent.sampling must be an object or true/false")
            continue
        if "autoApprove" in raw and scope is not Scope.USER:
            problems.append(f"{file}: agent.sampling.autoApprove is only honoured in the user settings file; "
                            "ignored here")
            raw = {k: v for k, v in raw.items() if k != "autoApprove"}
        merged.update(raw)
    kw: dict[str, Any] = {}

    def strings(key: str) -> tuple[str, ...] | None:
        value = merged.get(key)
        if value is None:
            return None
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            problems.append(f"agent.sampling.{key} must be a list of strings")
            return None
        if key in ("allowedServers", "autoApprove"):
            _check_patterns(value, f"agent.sampling.{key}", problems)
        return tuple(value)

    enabled = merged.get("enabled")
    if isinstance(enabled, bool):
        kw["enabled"] = enabled
    elif enabled is not None:
        problems.append("agent.sampling.enabled must be true or false")
    allowed = strings("allowedServers")
    if allowed is not None:
        kw["allowed_servers"] = allowed
    kw["auto_approve"] = strings("autoApprove") or ()
    kw["allowed_models"] = strings("allowedModels") or ()
    for key, field in (("model", "model"), ("apiBase", "api_base")):
        value = merged.get(key)
        if isinstance(value, str) and value.strip():
            kw[field] = value.strip()
        elif value is not None:
            problems.append(f"agent.sampling.{key} must be a non-empty string")
    cap = merged.get("maxTokens")
    if _positive_int(cap):
        kw["max_tokens"] = cap
    elif cap is not None:
        problems.append(f"agent.sampling.maxTokens must be a positive integer, got {cap!r}")
    servers: dict[str, ServerSampling] = {}
    raw_servers = merged.get("servers")
    if isinstance(raw_servers, dict):
        for name, entry in raw_servers.items():
            where = f"agent.sampling.servers.{name}"
            if not isinstance(entry, dict):
                problems.append(f"{where} must be an object")
                continue
            model = entry.get("model")
            if model is not None and not (isinstance(model, str) and model.strip()):
                problems.append(f"{where}.model must be a non-empty string")
                model = None
            models = entry.get("allowedModels")
            if models is not None and not (isinstance(models, list) and all(isinstance(m, str) for m in models)):
                problems.append(f"{where}.allowedModels must be a list of strings")
                models = None
            server_cap = entry.get("maxTokens")
            if server_cap is not None and not _positive_int(server_cap):
                problems.append(f"{where}.maxTokens must be a positive integer, got {server_cap!r}")
                server_cap = None
            for key in entry:
                if key not in ("model", "allowedModels", "maxTokens"):
                    problems.append(f"{where}: unknown key {key!r} is ignored")
            servers[name] = ServerSampling(model=model.strip() if isinstance(model, str) else None,
                                           allowed_models=tuple(models) if models is not None else None,
                                           max_tokens=server_cap)
    elif raw_servers is not None:
        problems.append("agent.sampling.servers must be an object mapping server names to settings")
    kw["servers"] = servers
    known = {"enabled", "allowedServers", "autoApprove", "model", "apiBase", "allowedModels", "maxTokens", "servers"}
    for key in merged:
        if key not in known:
            problems.append(f"agent.sampling: unknown key {key!r} is ignored")
    return SamplingSettings(**kw)


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
    sampling: SamplingSettings = SamplingSettings()
    output_page_chars: int = DEFAULT_PAGE_CHARS
    """Characters of a tool result the model sees at once (``agent.outputPageChars``)."""
    output_store_chars: int = DEFAULT_STORE_CHARS
    """Characters of oversized tool output kept per session (``agent.outputStoreChars``)."""

    def output_store(self) -> OutputStore:
        """A new session's store of oversized tool output (pass it to ``builtin_tools``)."""
        return OutputStore(self.output_page_chars, self.output_store_chars)

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


def _check_patterns(patterns: list[str], where: str, problems: list[str]) -> None:
    """A problem for every unusable glob pattern (it is kept, and matches nothing)."""
    for pattern in patterns:
        why = check_name_pattern(pattern)
        if why is not None:
            problems.append(f"{where}: {why}; it matches nothing")


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
    number("outputPageChars", "output_page_chars", integer=True, minimum=MIN_PAGE_CHARS)
    number("outputStoreChars", "output_store_chars", integer=True, minimum=MIN_PAGE_CHARS)
    page = kw.get("output_page_chars", DEFAULT_PAGE_CHARS)
    if kw.get("output_store_chars", DEFAULT_STORE_CHARS) < page:
        problems.append(f"agent.outputStoreChars must be at least agent.outputPageChars ({page}); "
                        f"{page} is used")
        kw["output_store_chars"] = page
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
        for key, into in (("allow", allow), ("ask", ask), ("deny", deny)):
            where = f"{file}: permissions.{key}"
            patterns = _str_list(perms.get(key), where, problems)
            _check_patterns(patterns, where, problems)
            into += patterns
    sampling = _sampling_settings(settings, problems)
    return AgentSettings(model=model, api_base=api_base, allow=tuple(allow), ask=tuple(ask), deny=tuple(deny),
                         problems=tuple(problems), sampling=sampling, **kw)
