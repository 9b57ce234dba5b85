"""Agent settings from the settings files and the environment.

Keys (in user ``settings.json`` or the workspace ``.agent-ls/settings.json``; the workspace
wins, key by key inside ``"agent"``; permission lists are combined). The settings layer
checks and types them (:mod:`agent_ls.config.sections`); this module turns them into the
agent's settings, with its defaults:

    "model": "anthropic/claude-sonnet-4-5"   any litellm model string (env AGENT_LS_MODEL wins)
    "models": ["openai/gpt-4.1", ...]        more models a session may switch to (ACP's model
                                             choice; ``model`` is the default and always offered;
                                             without ``model`` the first of ``models`` is)
    "apiBase": "http://127.0.0.1:11434"      optional (env AGENT_LS_API_BASE wins)
    "permissions": {"allow": [...], "ask": [...], "deny": [...]}   glob patterns over tool names, bash(...) / write_file(...) rules
    "agent": {"maxSteps": 25, "deferMcpTools": true | false | N, "maxRetries": 2,
              "bashTimeout": 120, "backgroundTimeout": 3600, "maxBackgroundCommands": 8,
              "shellEnvPassthrough": ["NAME"], "instructions": "extra instructions for every session",
              "outputPageChars": 30000, "outputStoreChars": 10000000,
              "contextWindow": 200000, "compactAt": 0.8, "compactModel": "...",
              "sampling": {...},   MCP sampling, see :class:`SamplingSettings`
              "sandbox": {...}}    the OS sandbox, see :mod:`agent_ls.config.sandbox`
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import Any

import attrs

from agent_ls.agent.llm import LLMConfig
from agent_ls.agent.tools.output_store import DEFAULT_PAGE_CHARS, DEFAULT_STORE_CHARS, OutputStore
from agent_ls.config.agents import AgentCatalog
from agent_ls.config.globs import first_match
from agent_ls.config.hooks import HookSpec
from agent_ls.config.sandbox import SandboxSettings
from agent_ls.config.sections import AgentSection, Permissions, SamplingSection
from agent_ls.config.settings import LoadedSettings

DEFAULT_SAMPLING_MAX_TOKENS = 4096
"""Cap on the ``maxTokens`` an MCP server may ask for when ``agent.sampling.maxTokens`` is not set."""
TITLE_MAX_TOKENS = 32
"""Enough for a title of a few words (:mod:`agent_ls.agent.titles`)."""


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


def _sampling_settings(section: SamplingSection | None) -> SamplingSettings:
    """``agent.sampling`` as merged across the files (``autoApprove`` only ever comes from the
    user settings file: :func:`agent_ls.config.sections.read_sections` drops it elsewhere)."""
    if section is None:
        return SamplingSettings()
    servers = {name: ServerSampling(model=s.model, allowed_models=s.allowed_models, max_tokens=s.max_tokens)
               for name, s in (section.servers or {}).items()}
    return SamplingSettings(
        enabled=section.enabled if section.enabled is not None else True,
        allowed_servers=section.allowed_servers, auto_approve=section.auto_approve or (), model=section.model,
        api_base=section.api_base, allowed_models=section.allowed_models or (), max_tokens=section.max_tokens,
        servers=servers)


@attrs.frozen
class AgentSettings:
    model: str | None = None
    api_base: str | None = None
    max_steps: int = 25
    defer_mcp_tools: bool | int = True
    max_retries: int = 2
    bash_timeout: float = 120.0
    background_timeout: float | None = None
    """The longest a background command runs (``agent.backgroundTimeout``; None: until it ends)."""
    max_background_commands: int = 8
    """Background commands running at once per conversation (``agent.maxBackgroundCommands``)."""
    shell_env_passthrough: tuple[str, ...] = ()
    """Secret-looking environment variables ``bash`` still gets (``agent.shellEnvPassthrough``,
    user settings file only)."""
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
    title_model: str | None = None
    """The model that titles a new session from its first message (``agent.titleModel``; None:
    the title is the first message itself)."""
    models: tuple[str, ...] = ()
    """The ``models`` setting: more models a session may use besides :attr:`model`."""
    hooks: tuple[HookSpec, ...] = ()
    """The hooks in effect (:attr:`agent_ls.config.settings.LoadedSettings.hooks`: a folder's only
    once trusted); a session runs them through :func:`agent_ls.agent.hooks.hooks_for`."""
    sandbox: SandboxSettings = SandboxSettings()
    """``agent.sandbox``: the OS sandbox ``bash`` runs in (:mod:`agent_ls.config.sandbox`)."""
    agents: AgentCatalog = AgentCatalog()
    """The agents the ``agent`` tool runs: the built-ins and the custom agents' files (a workspace's
    once trusted), :mod:`agent_ls.config.agents`."""
    max_parallel_agents: int = 3
    """``agent.maxParallelAgents``: subagents of one conversation that run at once (the others wait)."""

    def model_choices(self) -> tuple[str, ...]:
        """The models a session may use: :attr:`model` (the default) first, then ``models``,
        each once (empty without any model)."""
        return tuple(dict.fromkeys(m for m in (self.model, *self.models) if m))

    def session_model(self, chosen: str | None) -> str | None:
        """The model of a session that chose ``chosen`` (kept in its store): that one while the
        settings still offer it, else the default."""
        return chosen if chosen and chosen in self.model_choices() else self.model

    def check_model_choice(self, value: str) -> str:
        """``value`` if the settings offer it, else :class:`ValueError` naming the choices."""
        choices = self.model_choices()
        if value not in choices:
            offered = ", ".join(choices) or "none (set \"model\" in the settings)"
            raise ValueError(f"unknown model {value!r}: the settings offer {offered} "
                             "(add it to \"models\" in the agent-ls settings)")
        return value

    context_window: int | None = None
    """Tokens the model accepts (``agent.contextWindow``; None: litellm's model information,
    else :data:`agent_ls.agent.context.DEFAULT_WINDOW`)."""
    compact_at: float | None = None
    """Share of the window past which the conversation is compacted (``agent.compactAt``, 0.8)."""
    compact_model: str | None = None
    """The model that summarizes older turns (``agent.compactModel``; None: the session's model)."""

    def compact_llm(self) -> LLMConfig | None:
        """The model call that summarizes older turns, if ``agent.compactModel`` is set."""
        if not self.compact_model:
            return None
        return LLMConfig(model=self.compact_model, api_base=self.api_base, max_retries=self.max_retries,
                         timeout=120.0)

    def output_store(self) -> OutputStore:
        """A new session's store of oversized tool output (pass it to ``builtin_tools``)."""
        return OutputStore(self.output_page_chars, self.output_store_chars)

    def llm_config(self, model: str | None = None) -> LLMConfig | None:
        chosen = model or self.model
        if not chosen:
            return None
        return LLMConfig(model=chosen, api_base=self.api_base, max_retries=self.max_retries)

    def title_llm(self) -> LLMConfig | None:
        """The model call that titles a new session, if ``agent.titleModel`` is set."""
        if not self.title_model:
            return None
        return LLMConfig(model=self.title_model, api_base=self.api_base, max_retries=0, timeout=30.0,
                         max_tokens=TITLE_MAX_TOKENS)


AGENT_SECTIONS = ("model", "models", "apiBase", "permissions", "agent")
"""The settings sections the agent reads: their problems are :attr:`AgentSettings.problems`."""


def agent_settings(settings: LoadedSettings, environ: Mapping[str, str] | None = None) -> AgentSettings:
    env = os.environ if environ is None else environ
    # Every file's problems with these sections (wrong types, unknown keys, unusable patterns)
    # are diagnostics already; the terminal and ACP show them as problems.
    problems = [f"{d.file}: {d.sentence()}" for d in settings.diagnostics
                if d.severity != "information" and d.json_path[:1] and d.json_path[0] in AGENT_SECTIONS]
    sections = settings.merged_sections()
    # Without "model", the first of "models" is the default (every front end reads it here).
    model = env.get("AGENT_LS_MODEL") or sections.model or next(iter(sections.models or ()), None)
    api_base = env.get("AGENT_LS_API_BASE") or sections.api_base
    agent = sections.agent or AgentSection()
    kw: dict[str, Any] = {}
    for field in ("max_steps", "defer_mcp_tools", "max_retries", "bash_timeout", "background_timeout",
                  "max_background_commands", "shell_env_passthrough", "instructions",
                  "output_page_chars", "output_store_chars", "title_model", "context_window", "compact_at",
                  "compact_model", "max_parallel_agents"):
        value = getattr(agent, field)
        if value is not None:
            kw[field] = value
    page = kw.get("output_page_chars", DEFAULT_PAGE_CHARS)
    if kw.get("output_store_chars", DEFAULT_STORE_CHARS) < page:
        kw["output_store_chars"] = page  # a warning at the value says so (config.settings._check_output_sizes)
    perms = sections.permissions or Permissions()
    return AgentSettings(model=model, api_base=api_base, models=sections.models or (), hooks=tuple(settings.hooks),
                         agents=settings.agents,
                         allow=perms.allow or (), ask=perms.ask or (),
                         deny=perms.deny or (), problems=tuple(problems),
                         sampling=_sampling_settings(agent.sampling),
                         sandbox=SandboxSettings.from_section(agent.sandbox), **kw)
