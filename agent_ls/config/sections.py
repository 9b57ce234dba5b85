"""The typed settings sections of an agent-ls settings file, and how they combine across scopes.

Every top-level key the product reads besides ``mcpServers`` is a section: ``model``,
``models``, ``apiBase``, ``permissions``, ``agent``, ``toolActions`` and ``mcp``. Each is structured on its
own (:mod:`agent_ls.config.structure`), so a broken ``agent`` does not cost the file its
``permissions``. A section with any error is invalid as a whole: every error is a diagnostic at
its place in the file, and the section counts as absent (on a reload, the section's last valid
value stays in force instead: :func:`agent_ls.config.reload.keep_last_valid_sections`).
Unusable glob patterns are diagnostics too, but leave the section valid (such a pattern is
kept and matches nothing, or everything for deny and ask rules).

Across scopes (files highest precedence first, as in ``LoadedSettings.sections``): ``model``,
``models``, ``apiBase``, ``toolActions`` and ``mcp`` come from the highest file that sets them; ``agent``
(and its ``sampling``) merges key by key; permission lists are combined.
"""

# No ``from __future__ import annotations``: the classes carry their field types (cattrs
# structures by them) without resolving strings at import time.

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import attrs

from agent_ls.config import jsonc
from agent_ls.config.diagnostics import Problems
from agent_ls.config.entries import Scope
from agent_ls.config.globs import settings_glob_problems
from agent_ls.config.structure import (
    CONVERTER,
    ApplyMode,
    ContextTokens,
    DeferTools,
    Fraction,
    Invalid,
    JsonObject,
    NonEmptyStr,
    PageChars,
    PositiveInt,
    Retries,
    Seconds,
    describe,
    did_you_mean,
    get_close_matches,
    json_key,
    object_structure_fn,
    structure,
)
from agent_ls.core.sandbox.policy import NetworkPolicy, NetworkRuleError

# Optional fields: None is "not set here" (a JSON null too), so scopes can merge key by key.


@attrs.frozen
class Permissions:
    """``"permissions"``: glob patterns over tool names, or ``bash(git status:*)`` / ``write_file(path)``
    rules about what a call does (checked by :func:`agent_ls.config.globs.check_call_rule`)."""

    allow: tuple[str, ...] | None = None
    ask: tuple[str, ...] | None = None
    deny: tuple[str, ...] | None = None


@attrs.frozen
class ServerSamplingSection:
    """``agent.sampling.servers.<name>``."""

    model: NonEmptyStr | None = None
    allowed_models: tuple[str, ...] | None = None
    max_tokens: PositiveInt | None = None


@attrs.frozen
class SamplingSection:
    """``agent.sampling`` (``true``/``false`` is short for ``{"enabled": ...}``)."""

    enabled: bool | None = None
    allowed_servers: tuple[str, ...] | None = None
    auto_approve: tuple[str, ...] | None = None
    model: NonEmptyStr | None = None
    api_base: NonEmptyStr | None = None
    allowed_models: tuple[str, ...] | None = None
    max_tokens: PositiveInt | None = None
    servers: Mapping[str, ServerSamplingSection] | None = None


SandboxNetwork = Annotated[NetworkPolicy, "sandbox network"]
"""``agent.sandbox.network``: ``"off"``, ``"ask"`` or ``{"allow": [...]}``."""


def _sandbox_network(value: Any, _t: Any) -> NetworkPolicy:
    try:
        return NetworkPolicy.parse(value)
    except NetworkRuleError as exc:
        raise Invalid(f'"off", "ask" or {{"allow": ["host", "*.domain"]}} ({exc})', value, got=True) from None


CONVERTER.register_structure_hook_func(lambda t: t == SandboxNetwork, _sandbox_network)


@attrs.frozen
class SandboxSection:
    """``agent.sandbox`` (``true``/``false`` is short for ``{"enabled": ...}``). A workspace file may
    only narrow it: :func:`merge_sandbox`."""

    enabled: bool | None = None
    allow_write: tuple[NonEmptyStr, ...] | None = None
    deny_read: tuple[NonEmptyStr, ...] | None = None
    network: SandboxNetwork | None = None
    auto_allow: bool | None = None


def _sandbox_hook(value: Any, t: Any) -> SandboxSection:
    if isinstance(value, bool):
        return SandboxSection(enabled=value)
    if not isinstance(value, dict):
        raise Invalid("an object or true/false", value)
    return object_structure_fn(SandboxSection)(value, t)


CONVERTER.register_structure_hook(SandboxSection, _sandbox_hook)


@attrs.frozen
class AgentSection:
    """``"agent"``."""

    max_steps: PositiveInt | None = None
    defer_mcp_tools: DeferTools | None = None
    max_retries: Retries | None = None
    bash_timeout: Seconds | None = None
    background_timeout: Seconds | None = None
    """The longest a background command runs (``bash`` with ``run_in_background``; unset: no limit)."""
    max_background_commands: PositiveInt | None = None
    shell_env_passthrough: tuple[str, ...] | None = None
    """Names of secret-looking environment variables ``bash`` still gets (user settings only)."""
    instructions: str | None = None
    output_page_chars: PageChars | None = None
    output_store_chars: PageChars | None = None
    sampling: SamplingSection | None = None
    title_model: str | None = None
    context_window: ContextTokens | None = None
    compact_at: Fraction | None = None
    compact_model: NonEmptyStr | None = None
    sandbox: SandboxSection | None = None
    max_parallel_agents: PositiveInt | None = None
    """How many subagents of one conversation run at once (:mod:`agent_ls.runtime.subagents`)."""


@attrs.frozen
class ToolAction:
    """One of ``"toolActions"``: a code action that calls an MCP tool directly."""

    title: str
    server: str
    tool: str
    arguments: JsonObject = attrs.field(factory=dict)
    apply: ApplyMode | None = None

    def as_dict(self) -> dict[str, Any]:
        """The action as the settings file says it (``apply`` only when set)."""
        out: dict[str, Any] = {"title": self.title, "server": self.server, "tool": self.tool,
                               "arguments": self.arguments}
        if self.apply is not None:
            out["apply"] = self.apply
        return out


@attrs.frozen
class McpSection:
    """``"mcp"``: options of the MCP host."""

    max_output_chars: PositiveInt | None = None


@attrs.frozen
class Sections:
    """The sections of one file (None: not set, or invalid), or of every file combined."""

    model: str | None = None
    models: tuple[NonEmptyStr, ...] | None = None
    """More models a front end may offer besides ``model`` (ACP's model choice)."""
    api_base: str | None = None
    permissions: Permissions | None = None
    agent: AgentSection | None = None
    tool_actions: tuple[ToolAction, ...] | None = None
    mcp: McpSection | None = None


SECTION_KEYS: dict[str, str] = {json_key(f.name): f.name for f in attrs.fields(Sections)}
"""Settings key -> attribute of :class:`Sections`."""

KNOWN_TOP_LEVEL: frozenset[str] = frozenset({*SECTION_KEYS, "mcpServers", "$schema", "hooks"})
"""Every top-level key of an agent-ls settings file (``hooks``: :mod:`agent_ls.config.hooks`)."""


def _sampling_hook(value: Any, t: Any) -> SamplingSection:
    if isinstance(value, bool):
        return SamplingSection(enabled=value)
    if not isinstance(value, dict):
        raise Invalid("an object or true/false", value)
    return object_structure_fn(SamplingSection)(value, t)


CONVERTER.register_structure_hook(SamplingSection, _sampling_hook)


@attrs.frozen
class FileSections:
    """The sections of one agent-ls settings file (user or a workspace folder's)."""

    scope: Scope
    file: Path
    values: Sections = Sections()
    invalid: frozenset[str] = frozenset()
    """Keys of the sections that are set but invalid (their values are None)."""
    key_spans: Mapping[str, jsonc.Span | None] = attrs.field(factory=dict)
    """Where each section's key is, for diagnostics about the section as a whole."""


def read_sections(
    root: Mapping[str, Any], layer: Mapping[str, Any], scope: Scope, problems: Problems,
) -> FileSections:
    """The sections of one file. ``root`` is the file's object (checked for unknown keys and
    unusable patterns), ``layer`` what of it may apply (less than ``root`` in an untrusted
    folder). Every problem goes to ``problems``."""
    for key in root:
        if key not in KNOWN_TOP_LEVEL:
            hint = get_close_matches(key, sorted(KNOWN_TOP_LEVEL - {"$schema"}))
            problems.add((key,), f"unknown setting {key!r} is ignored{did_you_mean(hint)}", severity="warning",
                         key=True)
    for path, message in settings_glob_problems(root):
        problems.add(path, message, summary=f"{jsonc.format_path(path[:-1])}: {message}")
    values: dict[str, Any] = {}
    invalid: set[str] = set()
    spans: dict[str, jsonc.Span | None] = {}
    for key, attr in SECTION_KEYS.items():
        if key not in layer or layer[key] is None:
            continue
        spans[key] = problems.doc.span((key,), key=True) if problems.doc is not None else None
        value, found = structure(layer[key], attrs.fields_dict(Sections)[attr].type)
        for problem in found:
            path, message, summary = describe((key,), problem)
            problems.add(path, message, key=problem[2], summary=summary)
        if found:
            invalid.add(key)
            continue
        if key == "agent" and scope is not Scope.USER:
            value = _without_user_only_keys(value, problems)
        values[attr] = value
    return FileSections(scope, problems.file, Sections(**values), frozenset(invalid), spans)


def _without_user_only_keys(agent: AgentSection, problems: Problems) -> AgentSection:
    """A repository must not approve its own servers' sampling, nor pass your secrets to the
    commands it gets you to run: ``agent.sampling.autoApprove`` and ``agent.shellEnvPassthrough``
    count only in the user settings file."""
    why = "only honoured in the user settings file; ignored here"
    if agent.shell_env_passthrough is not None:
        problems.add(("agent", "shellEnvPassthrough"), why, severity="warning", key=True,
                     summary=f"agent.shellEnvPassthrough is {why}")
        agent = attrs.evolve(agent, shell_env_passthrough=None)
    if agent.sandbox is not None:
        agent = attrs.evolve(agent, sandbox=_narrowing_only(agent.sandbox, problems))
    if agent.sampling is None or agent.sampling.auto_approve is None:
        return agent
    problems.add(("agent", "sampling", "autoApprove"), why, severity="warning", key=True,
                 summary=f"agent.sampling.autoApprove is {why}")
    return attrs.evolve(agent, sampling=attrs.evolve(agent.sampling, auto_approve=None))


def _narrowing_only(sandbox: SandboxSection, problems: Problems) -> SandboxSection:
    """A workspace's ``agent.sandbox`` without what would widen the user's: it cannot turn the
    sandbox off, add writable places or turn ``autoAllow`` on (it can turn it off)."""
    dropped: dict[str, Any] = {}
    if sandbox.enabled is False:
        dropped["enabled"] = ("enabled", "a workspace cannot turn the sandbox off")
    if sandbox.allow_write is not None:
        dropped["allow_write"] = ("allowWrite", "a workspace cannot add places the sandbox may write")
    if sandbox.auto_allow is True:
        dropped["auto_allow"] = ("autoAllow", "a workspace cannot let commands run without asking")
    for key, why in dropped.values():
        problems.add(("agent", "sandbox", key), f"{why}: only honoured in the user settings file; ignored here",
                     severity="warning", key=True, summary=f"agent.sandbox.{key} is ignored here: {why}")
    return attrs.evolve(sandbox, **{attr: None for attr in dropped})


def merge_sandbox(files: Sequence[FileSections]) -> SandboxSection | None:
    """``agent.sandbox`` across the files: the user file's, narrowed by each workspace file (which
    may turn it on, add unreadable places, narrow the network and turn ``autoAllow`` off)."""
    user = next((f.values.agent.sandbox for f in files
                 if f.scope is Scope.USER and f.values.agent is not None and f.values.agent.sandbox is not None), None)
    merged = user
    for f in reversed(files):
        if f.scope is Scope.USER or f.values.agent is None or f.values.agent.sandbox is None:
            continue
        ws = f.values.agent.sandbox
        base = merged or SandboxSection()
        network = base.network if base.network is not None else NetworkPolicy(ask=True)
        merged = SandboxSection(
            enabled=True if ws.enabled else base.enabled,
            allow_write=base.allow_write,
            deny_read=(base.deny_read or ()) + (ws.deny_read or ()) or None,
            network=network.narrowed_by(ws.network) if ws.network is not None else base.network,
            auto_allow=False if ws.auto_allow is False else base.auto_allow,
        )
    return merged


def _overlay(base: Any, top: Any) -> Any:
    """``top``'s fields that are set, over ``base``'s (both of one attrs class, or None)."""
    if base is None or top is None:
        return top if base is None else base
    changes = {f.name: v for f in attrs.fields(type(top)) if (v := getattr(top, f.name)) is not None}
    return attrs.evolve(base, **changes)


def merge_sections(files: Sequence[FileSections]) -> Sections:
    """The sections of ``files`` (highest precedence first) combined across scopes."""
    merged: dict[str, Any] = {}
    for attr in ("model", "models", "api_base", "tool_actions", "mcp"):
        merged[attr] = next((v for f in files if (v := getattr(f.values, attr)) is not None), None)
    agent: AgentSection | None = None
    for f in reversed(files):
        if f.values.agent is not None:
            sampling = _overlay(agent.sampling if agent else None, f.values.agent.sampling)
            agent = attrs.evolve(_overlay(agent, f.values.agent), sampling=sampling)
    if agent is not None:
        agent = attrs.evolve(agent, sandbox=merge_sandbox(files))
    merged["agent"] = agent
    lists: dict[str, tuple[str, ...]] = {"allow": (), "ask": (), "deny": ()}
    for f in files:
        if f.values.permissions is not None:
            for name in lists:
                lists[name] += getattr(f.values.permissions, name) or ()
    merged["permissions"] = Permissions(**lists)
    return Sections(**merged)
