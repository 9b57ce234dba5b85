"""Workspace trust: what an untrusted folder's settings files may and may not do.

A workspace folder is untrusted input: a cloned repository's ``.agent-ls/settings.json``,
``.mcp.json`` and ``.vscode/mcp.json`` are written by whoever wrote the repository. Until the
user trusts the folder, nothing in them may run code, receive a secret, redirect the model or
loosen a permission. What they may do untrusted is an allowlist (:data:`ALWAYS`): ask and deny
rules (which only tighten), extra instructions, tool deferral and retries. Everything else
needs trust, each key with the reason shown to the user (:func:`split_settings`); each hook
(of ``.agent-ls/settings.json`` and ``.claude/settings.json``) is an item of its own, its
command shown in full (:func:`hook_trust_items`).

One decision per folder (like VS Code's restricted mode), bound to the digest of what the
folder asks for besides its MCP servers (:attr:`WorkspaceRequest.digest`): when those settings
change, the folder is restricted again and the prompt says what changed. MCP server entries
are trusted one by one (:attr:`EntryView.key`, a hash of everything that decides what runs
or where data goes); trusting the folder trusts the entries shown in the same prompt, and a
changed or new entry later asks on its own, showing what changed.

In an editor with its own workspace trust (VS Code), that must be granted too.
"""

from __future__ import annotations

import enum
import hashlib
import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any

import attrs

from agent_ls.config import jsonc
from agent_ls.config.expand import variables_in
from agent_ls.config.hooks import parse_hooks
from agent_ls.config.oauth_config import OAUTH_SECRET_KEYS, WORKSPACE_REFUSED

if TYPE_CHECKING:
    from agent_ls.config.state import HostState

MASK = "***"
_SECRET_NAME = re.compile(r"(key|token|secret|passw|auth|cookie|credential|session|bearer)", re.I)
_BUILTIN_VARIABLES = {"workspaceFolder", "workspaceFolderBasename", "userHome"}

ALWAYS: frozenset[jsonc.JsonPath] = frozenset({
    ("$schema",),
    ("permissions", "ask"),
    ("permissions", "deny"),
    ("agent", "instructions"),
    ("agent", "deferMcpTools"),
    ("agent", "maxRetries"),
    ("agent", "sandbox"),
})
"""Settings of ``.agent-ls/settings.json`` that take effect in an untrusted folder (they only
tighten, or change nothing that runs; ``agent.sandbox`` only narrows from a workspace file:
:func:`agent_ls.config.sections.merge_sandbox`). ``agent.sampling`` is allowed only as ``false`` /
``{"enabled": false}``."""

WHY: dict[str, str] = {
    "model": "it chooses the model that receives your conversation",
    "models": "it offers models that may receive your conversation",
    "apiBase": "the endpoint receives your API key and your conversation",
    "permissions.allow": "allow rules let tools run without asking you",
    "toolActions": "tool actions call MCP tools directly from code actions",
    "agent.maxSteps": "it lets the agent take more steps per prompt",
    "agent.bashTimeout": "it lets shell commands run longer",
    "agent.backgroundTimeout": "it lets background shell commands run longer",
    "agent.maxBackgroundCommands": "it lets more background shell commands run at once",
    # Deliberately not in ALWAYS: a page size decides how much tool output reaches the model
    # (and the provider) per call, like "mcp" below; the store size decides memory use.
    "agent.outputPageChars": "it changes how much tool output reaches the model at once",
    "agent.outputStoreChars": "it changes how much tool output agent-ls keeps in memory per session",
    "agent.sampling": "it chooses the model and endpoint MCP servers may use, and which servers may",
    "agent.titleModel": "it chooses a model that receives the first message of each session",
    "agent.shellEnvPassthrough": "it would pass secrets to shell commands (ignored here even once trusted)",
    "agent.compactModel": "it chooses a model that receives the conversation to summarize it",
    "agent.contextWindow": "it changes how much of the conversation reaches the model per request",
    "agent.compactAt": "it changes how much of the conversation reaches the model per request",
    "agent.maxParallelAgents": "it lets more subagents call the model at once",
    "mcp": "it changes how much of each MCP tool result is kept (and reaches the model)",
    "hooks": "a hook runs this command on your machine",
    "agent": "it changes how the agent runs",
}
"""Why each setting needs trust (the prompt and the diagnostics say it)."""

_TOP_LEVEL_NEEDS_TRUST = ("model", "models", "apiBase", "toolActions", "mcp")

# Keys of a server entry that change nothing about what runs or where data goes.
_COSMETIC_ENTRY_KEYS = {"description", "disabled", "connectTimeout", "callTimeout", "timeout"}
# Keys an EntryView shows in their own fields; every other key (but the cosmetic ones) is an option.
_SHOWN_ENTRY_KEYS = {"type", "command", "args", "cwd", "env", "url", "headers"}


class TrustState(enum.StrEnum):
    TRUSTED = "trusted"
    RESTRICTED = "restricted"
    """Not trusted yet: the user is asked."""
    DECLINED = "declined"
    """The user kept it restricted (for this digest): not asked again until it changes."""
    EDITOR_RESTRICTED = "editor-restricted"
    """The editor's own workspace trust is not granted: nothing is asked."""
    NOTHING = "nothing-to-trust"
    """Its files ask for nothing that needs trust."""


@attrs.frozen
class TrustItem:
    """A setting of a workspace file that needs trust."""

    source: Path
    path: jsonc.JsonPath
    value: Any = attrs.field(eq=False)
    why: str

    @property
    def key(self) -> str:
        return jsonc.format_path(self.path)

    @property
    def value_text(self) -> str:
        return json.dumps(self.value, ensure_ascii=False, sort_keys=True)

    def snapshot(self) -> dict[str, Any]:
        return {"source": str(self.source), "key": self.key, "value": self.value_text, "why": self.why}


def _canonical(value: Any) -> str:
    return json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))


def entry_trust_key(name: str, raw: Mapping[str, Any]) -> str:
    """What the user approves for one MCP server entry: everything as written except cosmetic
    keys (command, args, cwd, env names and values, url, headers, OAuth settings, transport)."""
    data = {"name": name, "entry": {k: v for k, v in raw.items() if k not in _COSMETIC_ENTRY_KEYS}}
    return hashlib.sha256(_canonical(data).encode()).hexdigest()[:24]


def _shown_value(name: str, value: Any) -> str:
    text = value if isinstance(value, str) else _canonical(value)
    if _SECRET_NAME.search(name) and not variables_in(text):
        return MASK  # a literal secret written in the file: not repeated on screen
    return text


def _oauth_fields(oauth: Mapping[str, Any]) -> list[tuple[str, str]]:
    """Every setting of an ``oauth`` object, ``idp`` flattened (``idp.tokenEndpoint``), as written;
    the value of a credential is shown only as the variable it names, else masked."""
    out: list[tuple[str, str]] = []
    for k, v in oauth.items():
        if k == "idp" and isinstance(v, dict):
            out += [(f"idp.{kk}", _oauth_value(f"idp.{kk}", vv)) for kk, vv in v.items()]
        else:
            out.append((str(k), _oauth_value(str(k), v)))
    return sorted(out, key=lambda kv: (kv[0] != "grant", kv[0]))  # the grant first: it says what happens


def _oauth_value(key: str, value: Any) -> str:
    text = value if isinstance(value, str) else _canonical(value)
    if key in OAUTH_SECRET_KEYS and not variables_in(text):
        return MASK  # a literal credential: that one is set is shown, not its value
    return text


def _strings(value: Any) -> list[str]:
    if isinstance(value, str):
        return [value]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    if isinstance(value, dict):
        return [s for v in value.values() for s in _strings(v)]
    return []


@attrs.frozen
class EntryView:
    """One MCP server entry of a workspace file, as written (variables unexpanded), for the
    trust prompts: everything that decides what runs or where data goes."""

    name: str
    source: Path
    transport: str
    command: str | None
    args: tuple[str, ...]
    cwd: str | None
    env: tuple[tuple[str, str], ...]
    url: str | None
    headers: tuple[tuple[str, str], ...]
    variables: tuple[str, ...]
    """Environment variables whose values the server would receive."""
    key: str
    oauth: tuple[tuple[str, str], ...] = ()
    """Every setting of its ``oauth`` object (``grant``, ``clientId``, ``assertionFile``,
    ``issuer``, ``scopes``, ``idp.tokenEndpoint``, ``dpop``...): credentials masked unless they
    name a variable."""
    options: tuple[tuple[str, str], ...] = ()
    """Every other key that is not cosmetic (``protocol``, ``oauth`` when not an object, keys of
    other hosts, unknown keys), as written: nothing that could matter goes unshown."""

    @property
    def refused(self) -> tuple[str, ...]:
        """Its ``oauth`` settings a workspace file may not set (the entry does not start)."""
        return tuple(k for k, _ in self.oauth if k in WORKSPACE_REFUSED)

    @classmethod
    def from_raw(cls, name: str, raw: Any, source: Path) -> EntryView:
        entry = raw if isinstance(raw, dict) else {}
        transport = entry.get("type") if isinstance(entry.get("type"), str) else None
        if transport is None:
            transport = "stdio" if "command" in entry else "http" if "url" in entry else "?"
        transport = {"streamable-http": "http", "streamableHttp": "http", "streamable_http": "http"}.get(
            transport, transport)

        def text(v: Any) -> str | None:
            return None if v is None else v if isinstance(v, str) else _canonical(v)

        args = entry.get("args")
        env: dict[str, Any] = entry["env"] if isinstance(entry.get("env"), dict) else {}
        headers: dict[str, Any] = entry["headers"] if isinstance(entry.get("headers"), dict) else {}
        names: set[str] = set()
        for s in _strings(entry):
            for body in variables_in(s):
                var = body.partition(":-")[0].removeprefix("env:")
                if var not in _BUILTIN_VARIABLES:
                    names.add(var)
        return cls(
            name=name, source=source, transport=transport, command=text(entry.get("command")),
            args=tuple(text(a) or "" for a in args) if isinstance(args, list) else (
                () if args is None else (text(args) or "",)),
            cwd=text(entry.get("cwd")),
            env=tuple(sorted((str(k), _shown_value(str(k), v)) for k, v in env.items())),
            url=text(entry.get("url")),
            headers=tuple(sorted((str(k), _shown_value(str(k), v)) for k, v in headers.items())),
            variables=tuple(sorted(names)),
            key=entry_trust_key(name, entry),
            oauth=tuple(_oauth_fields(entry["oauth"])) if isinstance(entry.get("oauth"), dict) else (),
            options=tuple(sorted(
                (str(k), _shown_value(str(k), v)) for k, v in entry.items()
                if k not in _SHOWN_ENTRY_KEYS and k not in _COSMETIC_ENTRY_KEYS
                and not (k == "oauth" and isinstance(v, dict)))),
        )

    def snapshot(self) -> dict[str, Any]:
        """How it was shown (kept with the decision, to say later what changed)."""
        return {"transport": self.transport, "command": self.command, "args": list(self.args), "cwd": self.cwd,
                "env": dict(self.env), "url": self.url, "headers": dict(self.headers),
                "variables": list(self.variables), "oauth": dict(self.oauth), "options": dict(self.options)}

    def changes_since(self, before: Mapping[str, Any] | None) -> list[str]:
        """One line per difference from the version the user trusted before (empty: new entry)."""
        if not before:
            return []
        now = self.snapshot()
        out: list[str] = []
        for field in ("transport", "command", "args", "cwd", "url"):
            if now.get(field) != before.get(field):
                out.append(f"{field}: {_canonical(before.get(field))} -> {_canonical(now.get(field))}")
        for field, sep in (("env", "="), ("headers", ": ")):
            out += _mapping_changes(before.get(field) or {}, now.get(field) or {},
                                    lambda k, field=field: f"{field}: {k}", sep)
        # OAuth decides which files are read and where credentials go; options may decide anything.
        out += _mapping_changes(before.get("oauth") or {}, now["oauth"], lambda k: f"oauth.{k}", ": ")
        out += _mapping_changes(before.get("options") or {}, now["options"], str, ": ")
        added = sorted(set(now["variables"]) - set(before.get("variables") or []))
        if added:
            out.append(f"now receives the values of: {', '.join(added)}")
        if not out:
            # Nothing shown differs, yet the trust key did: a masked value (a literal secret) changed,
            # or how something is written (the spelling of "type"). Not called harmless either way.
            out.append("a value that is not shown changed (a masked secret, or how the entry is written)")
        return out


def _mapping_changes(old: Mapping[Any, str], new: Mapping[Any, str], name: Any, sep: str) -> list[str]:
    """``<name> removed`` / ``<name><sep><value> added`` / ``<name>: <old> -> <new>`` per key."""
    out: list[str] = []
    for k in sorted(set(old) | set(new), key=str):
        if k not in new:
            out.append(f"{name(k)} removed")
        elif k not in old:
            out.append(f"{name(k)}{sep}{new[k]} added")
        elif old[k] != new[k]:
            out.append(f"{name(k)}: {old[k]} -> {new[k]}")
    return out


def split_settings(root: Mapping[str, Any], source: Path) -> tuple[dict[str, Any], list[TrustItem]]:
    """``.agent-ls/settings.json``'s top level (without ``mcpServers``) split into what an
    untrusted folder may set and the items that need trust."""
    allowed: dict[str, Any] = {}
    items: list[TrustItem] = []
    for key, value in root.items():
        if key == "mcpServers":
            continue
        if key == "hooks":
            items += hook_trust_items(value, source)
            continue
        if key in _TOP_LEVEL_NEEDS_TRUST:
            if value is not None:
                items.append(TrustItem(source, (key,), value, WHY[key]))
        elif key == "permissions" and isinstance(value, dict):
            kept = {k: v for k, v in value.items() if ("permissions", k) in ALWAYS}
            for k, v in value.items():
                if ("permissions", k) not in ALWAYS and v not in (None, []):
                    items.append(TrustItem(source, ("permissions", k), v, WHY.get(f"permissions.{k}", WHY["agent"])))
            allowed[key] = kept
        elif key == "agent" and isinstance(value, dict):
            kept = {}
            for k, v in value.items():
                if ("agent", k) in ALWAYS or k == "sampling" and _sampling_off(v):
                    kept[k] = v
                elif v is not None:
                    items.append(TrustItem(source, ("agent", k), v, WHY.get(f"agent.{k}", WHY["agent"])))
            allowed[key] = kept
        else:
            allowed[key] = value  # $schema, unknown keys (warned about, and ignored, elsewhere), bad shapes
    return allowed, items


def hook_trust_items(value: Any, source: Path) -> list[TrustItem]:
    """One item per hook a workspace file's ``hooks`` defines (event, matcher, command, timeout):
    each is code from the repository, listed in full in the trust prompt; adding or changing one
    changes :attr:`WorkspaceRequest.digest`, so the folder is restricted again and asks. A
    ``hooks`` value that defines no usable hook needs no trust (nothing of it runs)."""
    return [TrustItem(source, h.path, h.trust_value(), WHY["hooks"]) for h in parse_hooks(value, source)]


def _sampling_off(value: Any) -> bool:
    return value is False or isinstance(value, dict) and set(value) == {"enabled"} and value["enabled"] is False


@attrs.frozen
class WorkspaceRequest:
    """Everything a folder's settings files ask for that needs trust."""

    folder: Path
    settings: tuple[TrustItem, ...] = ()
    servers: tuple[EntryView, ...] = ()

    @property
    def empty(self) -> bool:
        return not self.settings and not self.servers

    @property
    def digest(self) -> str:
        """What the folder-level decision is bound to: the settings that need trust, as written
        (servers are trusted entry by entry)."""
        data = sorted((str(i.source.name), i.key, _canonical(i.value)) for i in self.settings)
        return hashlib.sha256(_canonical(data).encode()).hexdigest()[:24]

    def settings_snapshot(self) -> list[dict[str, Any]]:
        return [i.snapshot() for i in self.settings]

    def changes_since(self, before: list[dict[str, Any]] | None) -> list[str]:
        """What changed in the settings since they were last trusted (one line each)."""
        if before is None:
            return []
        old = {(str(b.get("source")), str(b.get("key"))): str(b.get("value")) for b in before if isinstance(b, dict)}
        new = {(str(i.source), i.key): i.value_text for i in self.settings}
        return _mapping_changes(old, new, lambda where: where[1], " = ")


_MESSAGES = {
    TrustState.TRUSTED: "You trust this workspace: its agent-ls settings and MCP servers are in effect.",
    TrustState.RESTRICTED: ("This workspace is restricted: its agent-ls settings and MCP servers are ignored "
                            "until you trust it."),
    TrustState.DECLINED: ("You kept this workspace restricted: its agent-ls settings and MCP servers are ignored "
                          "(trust it any time with \"Trust Workspace Settings\" or `agent-ls trust`)."),
    TrustState.EDITOR_RESTRICTED: ("The editor has not trusted this folder (restricted mode): its agent-ls settings "
                                   "and MCP servers are ignored until you trust the folder in the editor."),
    TrustState.NOTHING: "This workspace's files ask for nothing that needs trust.",
}


@attrs.frozen
class WorkspaceTrustInfo:
    """The trust state of one folder after loading its settings."""

    request: WorkspaceRequest
    state: TrustState
    previous_settings: list[dict[str, Any]] | None = attrs.field(default=None, eq=False)
    """The settings as they were when the folder was last trusted (None: never trusted)."""
    ignored: tuple[TrustItem, ...] = ()
    """What is ignored because the folder is not trusted."""

    @property
    def trusted(self) -> bool:
        """Its settings are in effect (trusted, or nothing needs trust)."""
        return self.state in (TrustState.TRUSTED, TrustState.NOTHING)

    @property
    def explicitly_trusted(self) -> bool:
        """The user trusted the folder (a folder that asks for nothing is not trusted by that)."""
        return self.state is TrustState.TRUSTED

    @property
    def message(self) -> str:
        return _MESSAGES[self.state]

    @property
    def asks(self) -> bool:
        """The user should be asked now."""
        return self.state is TrustState.RESTRICTED

    def changes(self) -> list[str]:
        return self.request.changes_since(self.previous_settings)


class TrustPolicy:
    """Decides each folder's :class:`TrustState` from the remembered decisions.

    Without a store nothing is remembered, so every folder that asks for something is
    restricted (the safe default). ``trust_all`` is for a user who said so on the command line
    (``--trust-workspace``): it records the decision like an answer to the prompt would.
    """

    def __init__(self, store: HostState | None = None, *, editor_trusted: bool = True) -> None:
        self.store = store
        self.editor_trusted = editor_trusted

    def explicit(self, folder: Path) -> bool:
        """The user trusted this folder (whatever it asks for now)."""
        if not self.editor_trusted or self.store is None:
            return False
        decision = self.store.workspace_decision(folder)
        return bool(decision and decision.get("trusted") is True)

    def evaluate(self, request: WorkspaceRequest) -> WorkspaceTrustInfo:
        store = self.store
        previous = store.last_trusted_workspace(request.folder) if store is not None else None
        before = previous.get("settings") if isinstance(previous, dict) else None
        before = before if isinstance(before, list) else None
        if not self.editor_trusted:
            state = TrustState.NOTHING if request.empty else TrustState.EDITOR_RESTRICTED
            return WorkspaceTrustInfo(request, state, before)
        decision = store.workspace_decision(request.folder) if store is not None else None
        if decision is not None and decision.get("digest") == request.digest:
            state = TrustState.TRUSTED if decision.get("trusted") is True else TrustState.DECLINED
            if state is TrustState.DECLINED and request.empty:
                state = TrustState.NOTHING
        elif request.empty:
            state = TrustState.NOTHING
        else:
            state = TrustState.RESTRICTED
        return WorkspaceTrustInfo(request, state, before)

    def record(self, request: WorkspaceRequest, trusted: bool) -> None:
        """Remember the user's answer for the folder (trusting also trusts the server entries the
        request lists, shown in the same prompt)."""
        if self.store is None:
            raise RuntimeError("no state store: the decision cannot be remembered")
        entries = [(e.name, e.key, e.snapshot()) for e in request.servers] if trusted else []
        self.store.set_workspace_decision(request.folder, request.digest, trusted, request.settings_snapshot(),
                                          entries)
