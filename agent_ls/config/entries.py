"""One MCP server entry: its scope and source, validation with exact locations, variable
expansion in every string field, and the identities derived from it (the fingerprint a restart
compares, the trust key a user approves)."""

from __future__ import annotations

import enum
import hashlib
import json
import os
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import attrs

from agent_ls.config import jsonc
from agent_ls.config.diagnostics import Problems, type_name
from agent_ls.config.expand import ExpansionContext, ExpansionError, expand, variables_in
from agent_ls.config.oauth_config import OAuthConfig, parse_oauth
from agent_ls.config.trust import EntryView, entry_trust_key
from agent_ls.core.sandbox.policy import NetworkPolicy, NetworkRuleError


class Scope(enum.StrEnum):
    USER = "user"
    VSCODE = "vscode"
    MCP_JSON = "mcp.json"
    WORKSPACE = "workspace"


SCOPE_RANK = {Scope.USER: 0, Scope.VSCODE: 1, Scope.MCP_JSON: 2, Scope.WORKSPACE: 3}

DEFAULT_CONNECT_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 300.0
PROTOCOL_MODES = ("legacy", "auto", "2026-07-28")

_STDIO_KEYS = {"command", "args", "env", "cwd", "sandbox"}
_HTTP_KEYS = {"url", "headers", "oauth"}
_COMMON_KEYS = {"type", "disabled", "connectTimeout", "callTimeout", "protocol", "description"}
# Keys other hosts write that we accept and ignore without a warning.
_FOREIGN_KEYS = {"envFile", "dev", "gallery", "version", "autoApprove", "alwaysAllow", "timeout", "transportType"}
# Environment variables whose values are secrets wherever they are expanded (args, url, ...).
_SECRET_VAR = re.compile(r"(key|token|secret|passw|auth|cookie|credential|session|bearer)", re.I)
_TYPE_ALIASES = {
    "stdio": "stdio",
    "http": "http",
    "streamable-http": "http",
    "streamableHttp": "http",
    "streamable_http": "http",
    "sse": "sse",
}


@attrs.frozen
class ConfigSource:
    scope: Scope
    file: Path
    workspace_folder: Path | None
    json_path: jsonc.JsonPath


@attrs.frozen
class ServerSandbox:
    """A stdio server's ``sandbox``: ``true`` or ``{"network": ..., "allowWrite": [...], "denyRead": [...]}``
    (the settings of ``agent.sandbox`` for this server; ``network`` defaults to ``"off"``: a
    server's process has no one to ask)."""

    network: NetworkPolicy = NetworkPolicy.off()
    allow_write: tuple[str, ...] = ()
    deny_read: tuple[str, ...] = ()


@attrs.frozen
class ServerConfig:
    """One MCP server entry, validated and with every variable expanded."""

    name: str
    transport: str
    """``stdio``, ``http`` (Streamable HTTP) or ``sse`` (legacy HTTP+SSE)."""
    source: ConfigSource
    command: str | None = None
    args: tuple[str, ...] = ()
    env: Mapping[str, str] = attrs.field(factory=dict)
    cwd: str | None = None
    url: str | None = None
    headers: Mapping[str, str] = attrs.field(factory=dict)
    disabled: bool = False
    connect_timeout: float = DEFAULT_CONNECT_TIMEOUT
    call_timeout: float = DEFAULT_CALL_TIMEOUT
    protocol: str = "auto"
    """``auto`` (default: the 2026-07-28 protocol where the server speaks it, else the
    ``initialize`` handshake; the era is remembered per entry), ``legacy`` or ``2026-07-28``."""
    oauth: OAuthConfig | None = None
    """OAuth for an HTTP server; None when off (stdio, ``"oauth": false``, an Authorization header)."""
    raw: Mapping[str, Any] = attrs.field(factory=dict, eq=False)
    """The entry as written (unexpanded), for the trust key."""
    restricted: bool = False
    """Defined by a workspace folder the user has not trusted: it does not start, and its
    variables are not expanded (so no secret is read into it)."""
    expanded_secrets: tuple[str, ...] = attrs.field(default=(), eq=False, repr=False)
    """Values of secret-looking variables (``*TOKEN*``, ``*KEY*``...) expanded into any field."""
    sandbox: ServerSandbox | None = None
    """A stdio server runs in the OS sandbox (None: it does not). Default: on for servers a
    workspace file defines (it cannot turn it off), off for the user's own unless they say so."""

    @property
    def secrets(self) -> tuple[str, ...]:
        """Values that must never appear in logs, status or errors."""
        values = [*self.env.values(), *self.headers.values(), *self.expanded_secrets,
                  *(self.oauth.secrets if self.oauth is not None else ())]
        return tuple(sorted({v for v in values if len(v) >= 4}, key=len, reverse=True))

    @property
    def needs_trust(self) -> bool:
        """Defined by a workspace file: it runs a command on the user's machine or sends data
        (and the values of the variables it names) to a URL, so it runs only once trusted."""
        return self.source.scope is not Scope.USER

    def fingerprint(self) -> str:
        """Identity of the effective configuration (what a restart would change)."""
        data: dict[str, Any] = {
            "t": self.transport,
            "c": self.command,
            "a": list(self.args),
            "e": sorted(self.env.items()),
            "w": self.cwd,
            "u": self.url,
            "h": sorted(self.headers.items()),
            "d": self.disabled,
            "ct": self.connect_timeout,
            "to": self.call_timeout,
            "p": self.protocol,
            "r": self.restricted,
            "sb": repr(self.sandbox),
        }
        if self.oauth is not None:
            data["o"] = self.oauth.fingerprint_data()
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]

    def trust_key(self) -> str:
        """What the user approves: the entry as written (command, args, cwd, env names and
        values, url, headers, OAuth settings), see :func:`agent_ls.config.trust.entry_trust_key`."""
        return entry_trust_key(self.name, self.raw)

    def view(self) -> EntryView:
        """The entry as the trust prompts show it (as written, literal secrets masked)."""
        return EntryView.from_raw(self.name, self.raw, self.source.file)


@attrs.frozen
class FailedEntry:
    """An entry that could not be turned into a ServerConfig."""

    name: str
    source: ConfigSource
    reason: str


def parse_entry(
    name: str,
    entry: Any,
    source: ConfigSource,
    problems: Problems,
    ctx: ExpansionContext,
    *,
    restricted: bool = False,
) -> ServerConfig | FailedEntry:
    path = source.json_path

    def fail(reason: str) -> FailedEntry:
        return FailedEntry(name, source, reason)

    if not isinstance(entry, dict):
        return fail(problems.add(path, f"a server entry must be an object, not {type_name(entry)}", server=name))
    errors: list[str] = []

    def err(p: jsonc.JsonPath, message: str, key: bool = False) -> None:
        errors.append(problems.add(p, message, key=key, server=name))

    raw_type = entry.get("type")
    transport: str | None
    if raw_type is not None:
        if not isinstance(raw_type, str) or raw_type not in _TYPE_ALIASES:
            err(
                (*path, "type"),
                f"unknown transport {raw_type!r}; use \"stdio\" (with command) or \"http\" (with url)",
            )
            transport = None
        else:
            transport = _TYPE_ALIASES[raw_type]
    elif "command" in entry:
        transport = "stdio"
    elif "url" in entry:
        transport = "http"
    else:
        err(path, 'a server needs "command" (stdio) or "url" (http)')
        transport = None

    for key in entry:
        known = _COMMON_KEYS | _STDIO_KEYS | _HTTP_KEYS
        if key not in known and key not in _FOREIGN_KEYS:
            problems.add((*path, key), f"unknown setting {key!r} is ignored", severity="warning", key=True,
                         server=name)
        elif transport == "stdio" and key in _HTTP_KEYS or transport in ("http", "sse") and key in _STDIO_KEYS:
            problems.add((*path, key), f"{key!r} has no effect on a {transport} server", severity="warning",
                         key=True, server=name)

    def get_str(key: str, required: bool = False) -> str | None:
        v = entry.get(key)
        if v is None:
            if required:
                err(path, f'"{key}" is required for a {transport} server')
            return None
        if not isinstance(v, str):
            err((*path, key), f'"{key}" must be a string, not {type_name(v)}')
            return None
        if required and not v.strip():
            err((*path, key), f'"{key}" must not be empty')
            return None
        return v

    def get_str_list(key: str) -> list[str]:
        v = entry.get(key, [])
        if not isinstance(v, list):
            err((*path, key), f'"{key}" must be an array of strings, not {type_name(v)}')
            return []
        out = []
        for i, item in enumerate(v):
            if isinstance(item, (int, float)) and not isinstance(item, bool):
                item = str(item)
            if not isinstance(item, str):
                err((*path, key, i), f"must be a string, not {type_name(item)}")
                continue
            out.append(item)
        return out

    def get_str_map(key: str) -> dict[str, str]:
        v = entry.get(key, {})
        if not isinstance(v, dict):
            err((*path, key), f'"{key}" must be an object of strings, not {type_name(v)}')
            return {}
        out = {}
        for k, item in v.items():
            if isinstance(item, (int, float)) and not isinstance(item, bool):
                item = str(item)
            if not isinstance(item, str):
                err((*path, key, k), f"must be a string, not {type_name(item)}")
                continue
            out[k] = item
        return out

    def get_timeout(key: str, default: float) -> float:
        v = entry.get(key)
        if v is None:
            return default
        if isinstance(v, bool) or not isinstance(v, (int, float)) or v <= 0:
            err((*path, key), f'"{key}" must be a positive number of seconds')
            return default
        return float(v)

    disabled = entry.get("disabled", False)
    if not isinstance(disabled, bool):
        err((*path, "disabled"), f'"disabled" must be true or false, not {type_name(disabled)}')
        disabled = False
    protocol = entry.get("protocol", "auto")
    if protocol not in PROTOCOL_MODES:
        err((*path, "protocol"), f'"protocol" must be one of {", ".join(PROTOCOL_MODES)}')
        protocol = "auto"
    connect_timeout = get_timeout("connectTimeout", DEFAULT_CONNECT_TIMEOUT)
    call_timeout = get_timeout("callTimeout", DEFAULT_CALL_TIMEOUT)

    command = cwd = url = None
    sandbox: ServerSandbox | None = None
    args: list[str] = []
    env: dict[str, str] = {}
    headers: dict[str, str] = {}
    if transport == "stdio":
        command = get_str("command", required=True)
        args = get_str_list("args")
        env = get_str_map("env")
        cwd = get_str("cwd")
        sandbox = _server_sandbox(entry, path, source.scope, problems, err, name)
    elif transport in ("http", "sse"):
        url = get_str("url", required=True)
        headers = get_str_map("headers")

    if errors or transport is None:
        return fail(errors[0] if errors else "invalid entry")

    # Expansion: every string field, strict about missing variables.
    expanded_secrets: list[str] = []

    def x(value: str, p: jsonc.JsonPath) -> str:
        if restricted:
            return value  # not trusted: no variable (no secret) is read into it
        try:
            out = expand(value, ctx, jsonc.format_path(p))
        except ExpansionError as e:
            errors.append(problems.add(p, str(e), server=name))
            return value
        # Every variable that reaches a URL, a header or the environment is a secret for the logs;
        # elsewhere, the ones whose names say so.
        carries = len(p) > len(path) and p[len(path)] in ("url", "headers", "env")
        for body in variables_in(value):
            var = body.partition(":-")[0].removeprefix("env:")
            if (carries or _SECRET_VAR.search(var)) and ctx.environ.get(var):
                expanded_secrets.append(ctx.environ[var])
        return out

    if command is not None:
        command = x(command, (*path, "command"))
    args = [x(a, (*path, "args", i)) for i, a in enumerate(args)]
    env = {k: x(v, (*path, "env", k)) for k, v in env.items()}
    if cwd is not None:
        cwd = x(cwd, (*path, "cwd"))
        if not os.path.isabs(cwd) and source.workspace_folder is not None:
            cwd = str(source.workspace_folder / cwd)
    if url is not None:
        written = url
        url = x(url, (*path, "url"))
        if not restricted and not url.startswith(("http://", "https://")):
            errors.append(problems.add((*path, "url"), f"url must start with http:// or https:// (got {written!r})",
                                       server=name))
    headers = {k: x(v, (*path, "headers", k)) for k, v in headers.items()}
    oauth: OAuthConfig | None = None
    if transport in ("http", "sse"):
        oauth = parse_oauth(entry, path, headers, problems, errors, name, x, expanded_secrets,
                            workspace=source.scope is not Scope.USER)
    if errors:
        return fail(errors[0])
    return ServerConfig(
        name=name,
        transport=transport,
        source=source,
        command=command,
        args=tuple(args),
        env=env,
        cwd=cwd,
        url=url,
        headers=headers,
        disabled=disabled,
        connect_timeout=connect_timeout,
        call_timeout=call_timeout,
        protocol=protocol,
        oauth=oauth,
        raw=entry,
        expanded_secrets=tuple(expanded_secrets),
        restricted=restricted,
        sandbox=sandbox,
    )


def _server_sandbox(entry: Mapping[str, Any], path: jsonc.JsonPath, scope: Scope, problems: Problems,
                    err: Callable[[jsonc.JsonPath, str], Any], name: str) -> ServerSandbox | None:
    """The entry's ``sandbox`` (a workspace file's servers are always sandboxed; a workspace
    entry may not add writable places)."""
    value = entry.get("sandbox")
    workspace = scope is not Scope.USER
    if value is None:
        return ServerSandbox() if workspace else None
    if value is False:
        if workspace:
            problems.add((*path, "sandbox"), "a server a workspace file defines always runs in the sandbox; "
                         "\"sandbox\": false is ignored here", severity="warning", server=name)
            return ServerSandbox()
        return None
    if value is True:
        return ServerSandbox()
    if not isinstance(value, dict):
        err((*path, "sandbox"), f'"sandbox" must be true, false or an object, not {type_name(value)}')
        return None
    unknown = sorted(set(value) - {"network", "allowWrite", "denyRead"})
    if unknown:
        err((*path, "sandbox", unknown[0]), f'unknown key {unknown[0]!r} (expected "network", "allowWrite", "denyRead")')
        return None
    out = ServerSandbox()
    if "network" in value:
        try:
            out = attrs.evolve(out, network=NetworkPolicy.parse(value["network"]))
        except NetworkRuleError as exc:
            err((*path, "sandbox", "network"), str(exc))
            return None
    for key, attr in (("allowWrite", "allow_write"), ("denyRead", "deny_read")):
        items = value.get(key, [])
        if not isinstance(items, list) or not all(isinstance(i, str) and i for i in items):
            err((*path, "sandbox", key), f'"{key}" must be a list of paths')
            return None
        if key == "allowWrite" and workspace and items:
            problems.add((*path, "sandbox", key), "a workspace file cannot add places a server may write; ignored",
                         severity="warning", server=name)
            continue
        out = attrs.evolve(out, allow_write=tuple(items)) if attr == "allow_write" else attrs.evolve(
            out, deny_read=tuple(items))
    return out
