"""Settings: scopes, merge by server name, validation with exact locations.

Scopes, lowest precedence first (a later scope replaces an earlier entry of the same name):

1. user: ``settings.json`` in the platform config dir (``AGENT_LS_CONFIG_DIR`` overrides
   the directory, ``AGENT_LS_USER_SETTINGS`` the file);
2. per workspace folder, the ecosystem's files: ``.vscode/mcp.json`` (``servers``), then
   ``.mcp.json`` (``mcpServers``);
3. per workspace folder, ``.agent-ls/settings.json`` (``mcpServers``).

With several workspace folders, the first folder wins over later ones at the same scope.
A broken file or entry produces diagnostics and never stops the other entries.
"""

from __future__ import annotations

import enum
import hashlib
import json
import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import attrs
import platformdirs

from agent_ls.config import jsonc
from agent_ls.config.expand import ExpansionContext, ExpansionError, expand, variables_in
from agent_ls.config.trust import (
    EntryView,
    TrustItem,
    TrustPolicy,
    WorkspaceRequest,
    WorkspaceTrustInfo,
    entry_trust_key,
    split_settings,
)

APP_NAME = "agent-ls"


class Scope(enum.StrEnum):
    USER = "user"
    VSCODE = "vscode"
    MCP_JSON = "mcp.json"
    WORKSPACE = "workspace"


SCOPE_RANK = {Scope.USER: 0, Scope.VSCODE: 1, Scope.MCP_JSON: 2, Scope.WORKSPACE: 3}

WORKSPACE_FILES: tuple[tuple[Scope, str, str], ...] = (
    (Scope.VSCODE, ".vscode/mcp.json", "servers"),
    (Scope.MCP_JSON, ".mcp.json", "mcpServers"),
    (Scope.WORKSPACE, ".agent-ls/settings.json", "mcpServers"),
)

MAX_SETTINGS_BYTES = 1024 * 1024
"""Settings files larger than this are refused with a diagnostic (a settings file is a few KB)."""

DEFAULT_CONNECT_TIMEOUT = 30.0
DEFAULT_CALL_TIMEOUT = 300.0
PROTOCOL_MODES = ("legacy", "auto", "2026-07-28")

_STDIO_KEYS = {"command", "args", "env", "cwd"}
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


OAUTH_GRANTS = ("authorization_code", "client_credentials", "identity_assertion")
TOKEN_ENDPOINT_AUTH_METHODS = ("none", "client_secret_basic", "client_secret_post", "private_key_jwt")
DEFAULT_SIGN_IN_TIMEOUT = 300.0
DEFAULT_MAX_STEP_UPS = 2
_OAUTH_STR_KEYS = {
    "clientId": "client_id",
    "clientSecret": "client_secret",
    "tokenEndpointAuthMethod": "token_endpoint_auth_method",
    "clientMetadataUrl": "client_metadata_url",
    "clientName": "client_name",
    "issuer": "issuer",
    "privateKey": "private_key",
    "privateKeyFile": "private_key_file",
    "signingAlgorithm": "signing_algorithm",
    "clientAssertion": "client_assertion",
}
_OAUTH_IDP_KEYS = {
    "tokenEndpoint": "idp_token_endpoint",
    "clientId": "idp_client_id",
    "clientSecret": "idp_client_secret",
    "idToken": "idp_id_token",
}
_OAUTH_SECRET_FIELDS = ("client_secret", "private_key", "client_assertion", "idp_client_secret", "idp_id_token")
_OAUTH_KEYS = {*_OAUTH_STR_KEYS, "grant", "scopes", "redirectPort", "signInTimeout", "maxStepUps", "idp"}


@attrs.frozen
class OAuthConfig:
    """OAuth for one HTTP server (``"oauth"`` in its entry), every variable expanded.

    Absent means automatic: a server that answers 401 with a Bearer challenge is offered a
    sign-in (authorization code + PKCE, discovery, dynamic registration). ``"oauth": false``
    turns it off; an ``Authorization`` header also turns the automatic mode off.
    """

    explicit: bool = False
    """Written in the settings (``true`` or an object), not the automatic default."""
    grant: str = "authorization_code"
    """``authorization_code`` (a person signs in), ``client_credentials`` (a machine client) or
    ``identity_assertion`` (SEP-990: an enterprise IdP's ID token exchanged for an ID-JAG)."""
    client_id: str | None = None
    client_secret: str | None = attrs.field(default=None, repr=False)
    token_endpoint_auth_method: str | None = None
    client_metadata_url: str | None = None
    client_name: str = "agent-ls"
    scopes: str | None = None
    """Space-separated; for client_credentials / identity_assertion (the authorization code
    flow takes the scopes the server asks for)."""
    redirect_port: int | None = None
    sign_in_timeout: float = DEFAULT_SIGN_IN_TIMEOUT
    max_step_ups: int = DEFAULT_MAX_STEP_UPS
    issuer: str | None = None
    private_key: str | None = attrs.field(default=None, repr=False)
    private_key_file: str | None = None
    signing_algorithm: str = "RS256"
    client_assertion: str | None = attrs.field(default=None, repr=False)
    idp_token_endpoint: str | None = None
    idp_client_id: str | None = None
    idp_client_secret: str | None = attrs.field(default=None, repr=False)
    idp_id_token: str | None = attrs.field(default=None, repr=False)

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(v for v in (getattr(self, f) for f in _OAUTH_SECRET_FIELDS) if isinstance(v, str) and v)

    @property
    def interactive(self) -> bool:
        """Whether signing in needs a person (a browser)."""
        return self.grant == "authorization_code"

    def fingerprint_data(self) -> dict[str, Any]:
        return attrs.asdict(self)


def user_config_dir() -> Path:
    override = os.environ.get("AGENT_LS_CONFIG_DIR")
    return Path(override) if override else Path(platformdirs.user_config_dir(APP_NAME))


def user_settings_path() -> Path:
    override = os.environ.get("AGENT_LS_USER_SETTINGS")
    return Path(override) if override else user_config_dir() / "settings.json"


def user_data_dir() -> Path:
    override = os.environ.get("AGENT_LS_DATA_DIR")
    return Path(override) if override else Path(platformdirs.user_data_dir(APP_NAME))


@attrs.frozen
class ConfigDiagnostic:
    """A problem in a settings file, at an exact place."""

    file: Path
    json_path: jsonc.JsonPath
    message: str
    severity: str = "error"
    """``error``, ``warning`` or ``information``."""
    span: jsonc.Span | None = None
    server: str | None = None

    def __str__(self) -> str:
        where = str(self.file)
        if self.span is not None:
            where += f":{self.span.start.line + 1}:{self.span.start.column + 1}"
        return f"{where}: {self.severity}: {jsonc.format_path(self.json_path)}: {self.message}"


@attrs.frozen
class ConfigSource:
    scope: Scope
    file: Path
    workspace_folder: Path | None
    json_path: jsonc.JsonPath


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
    protocol: str = "legacy"
    oauth: OAuthConfig | None = None
    """OAuth for an HTTP server; None when off (stdio, ``"oauth": false``, an Authorization header)."""
    raw: Mapping[str, Any] = attrs.field(factory=dict, eq=False)
    """The entry as written (unexpanded), for the trust key."""
    restricted: bool = False
    """Defined by a workspace folder the user has not trusted: it does not start, and its
    variables are not expanded (so no secret is read into it)."""
    expanded_secrets: tuple[str, ...] = attrs.field(default=(), eq=False, repr=False)
    """Values of secret-looking variables (``*TOKEN*``, ``*KEY*``...) expanded into any field."""

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


@attrs.define
class LoadedSettings:
    servers: dict[str, ServerConfig] = attrs.field(factory=dict)
    failed: dict[str, FailedEntry] = attrs.field(factory=dict)
    diagnostics: list[ConfigDiagnostic] = attrs.field(factory=list)
    files: list[Path] = attrs.field(factory=list)
    """Every settings file that was looked at (existing or not), for file watching."""
    other: dict[str, Any] = attrs.field(factory=dict)
    """Non-MCP top-level settings merged across agent-ls files (workspace over user)."""
    layers: list[tuple[Scope, Path, dict[str, Any]]] = attrs.field(factory=list)
    """Each agent-ls settings file's top-level object, highest precedence first (for settings
    that combine across scopes, such as permission rules). An untrusted folder's layer holds
    only what an untrusted folder may set."""
    workspaces: dict[Path, WorkspaceTrustInfo] = attrs.field(factory=dict)
    """The trust state of each workspace folder, in folder order."""

    def diagnostics_for(self, file: Path) -> list[ConfigDiagnostic]:
        return [d for d in self.diagnostics if d.file == file]


class _Problems:
    def __init__(self, file: Path, doc: jsonc.Document | None) -> None:
        self.file = file
        self.doc = doc
        self.items: list[ConfigDiagnostic] = []

    def add(
        self, path: jsonc.JsonPath, message: str, *, severity: str = "error", key: bool = False,
        server: str | None = None,
    ) -> str:
        span = self.doc.span(path, key=key) if self.doc is not None else None
        self.items.append(ConfigDiagnostic(self.file, path, message, severity, span, server))
        return message


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )


def _parse_entry(
    name: str,
    entry: Any,
    source: ConfigSource,
    problems: _Problems,
    ctx: ExpansionContext,
    *,
    restricted: bool = False,
) -> ServerConfig | FailedEntry:
    path = source.json_path

    def fail(reason: str) -> FailedEntry:
        return FailedEntry(name, source, reason)

    if not isinstance(entry, dict):
        return fail(problems.add(path, f"a server entry must be an object, not {_type_name(entry)}", server=name))
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
            err((*path, key), f'"{key}" must be a string, not {_type_name(v)}')
            return None
        if required and not v.strip():
            err((*path, key), f'"{key}" must not be empty')
            return None
        return v

    def get_str_list(key: str) -> list[str]:
        v = entry.get(key, [])
        if not isinstance(v, list):
            err((*path, key), f'"{key}" must be an array of strings, not {_type_name(v)}')
            return []
        out = []
        for i, item in enumerate(v):
            if isinstance(item, (int, float)) and not isinstance(item, bool):
                item = str(item)
            if not isinstance(item, str):
                err((*path, key, i), f"must be a string, not {_type_name(item)}")
                continue
            out.append(item)
        return out

    def get_str_map(key: str) -> dict[str, str]:
        v = entry.get(key, {})
        if not isinstance(v, dict):
            err((*path, key), f'"{key}" must be an object of strings, not {_type_name(v)}')
            return {}
        out = {}
        for k, item in v.items():
            if isinstance(item, (int, float)) and not isinstance(item, bool):
                item = str(item)
            if not isinstance(item, str):
                err((*path, key, k), f"must be a string, not {_type_name(item)}")
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
        err((*path, "disabled"), f'"disabled" must be true or false, not {_type_name(disabled)}')
        disabled = False
    protocol = entry.get("protocol", "legacy")
    if protocol not in PROTOCOL_MODES:
        err((*path, "protocol"), f'"protocol" must be one of {", ".join(PROTOCOL_MODES)}')
        protocol = "legacy"
    connect_timeout = get_timeout("connectTimeout", DEFAULT_CONNECT_TIMEOUT)
    call_timeout = get_timeout("callTimeout", DEFAULT_CALL_TIMEOUT)

    command = cwd = url = None
    args: list[str] = []
    env: dict[str, str] = {}
    headers: dict[str, str] = {}
    if transport == "stdio":
        command = get_str("command", required=True)
        args = get_str_list("args")
        env = get_str_map("env")
        cwd = get_str("cwd")
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
        oauth = _parse_oauth(entry, path, headers, problems, errors, name, x, expanded_secrets)
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
    )


def _parse_oauth(
    entry: Mapping[str, Any],
    path: jsonc.JsonPath,
    headers: Mapping[str, str],
    problems: _Problems,
    errors: list[str],
    name: str,
    x: Any,
    expanded_secrets: list[str],
) -> OAuthConfig | None:
    """The ``oauth`` setting of an HTTP entry (see :class:`OAuthConfig`)."""
    opath: jsonc.JsonPath = (*path, "oauth")
    raw = entry.get("oauth")
    has_auth_header = any(k.lower() == "authorization" for k in headers)

    def err(p: jsonc.JsonPath, message: str, key: bool = False) -> None:
        errors.append(problems.add(p, message, key=key, server=name))

    if raw is None:
        return None if has_auth_header else OAuthConfig()
    if raw is False:
        return None
    if raw is True:
        raw = {}
    if not isinstance(raw, dict):
        err(opath, f'"oauth" must be true, false or an object, not {_type_name(raw)}')
        return None
    if has_auth_header:
        problems.add(opath, "an Authorization header is set: the server gets that header, and OAuth tokens "
                     "replace it once you sign in", severity="warning", key=True, server=name)
    for k in raw:
        if k not in _OAUTH_KEYS:
            problems.add((*opath, k), f"unknown OAuth setting {k!r} is ignored", severity="warning", key=True,
                         server=name)
    values: dict[str, Any] = {"explicit": True}

    def text(key: str, value: Any, p: jsonc.JsonPath, field: str) -> None:
        if value is None:
            return
        if not isinstance(value, str) or not value.strip():
            err(p, f'"{key}" must be a non-empty string')
            return
        out = x(value, p)
        values[field] = out
        if field in _OAUTH_SECRET_FIELDS and out:
            expanded_secrets.append(out)

    for key, field in _OAUTH_STR_KEYS.items():
        text(key, raw.get(key), (*opath, key), field)
    idp = raw.get("idp")
    if idp is not None:
        if not isinstance(idp, dict):
            err((*opath, "idp"), f'"idp" must be an object, not {_type_name(idp)}')
        else:
            for key, field in _OAUTH_IDP_KEYS.items():
                text(key, idp.get(key), (*opath, "idp", key), field)
            for k in idp:
                if k not in _OAUTH_IDP_KEYS:
                    problems.add((*opath, "idp", k), f"unknown setting {k!r} is ignored", severity="warning",
                                 key=True, server=name)
    grant = raw.get("grant", "authorization_code")
    if grant not in OAUTH_GRANTS:
        err((*opath, "grant"), f'"grant" must be one of {", ".join(OAUTH_GRANTS)}')
        grant = "authorization_code"
    values["grant"] = grant
    method = values.get("token_endpoint_auth_method")
    if method is not None and method not in TOKEN_ENDPOINT_AUTH_METHODS:
        err((*opath, "tokenEndpointAuthMethod"),
            f'"tokenEndpointAuthMethod" must be one of {", ".join(TOKEN_ENDPOINT_AUTH_METHODS)}')
    scopes = raw.get("scopes")
    if scopes is not None:
        if isinstance(scopes, str):
            values["scopes"] = " ".join(x(scopes, (*opath, "scopes")).split()) or None
        elif isinstance(scopes, list) and all(isinstance(s, str) for s in scopes):
            values["scopes"] = " ".join(x(s, (*opath, "scopes", i)) for i, s in enumerate(scopes)) or None
        else:
            err((*opath, "scopes"), '"scopes" must be a string or an array of strings')
    port = raw.get("redirectPort")
    if port is not None:
        if isinstance(port, bool) or not isinstance(port, int) or not 1 <= port <= 65535:
            err((*opath, "redirectPort"), '"redirectPort" must be a port number (1-65535)')
        else:
            values["redirect_port"] = port
    timeout = raw.get("signInTimeout")
    if timeout is not None:
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or timeout <= 0:
            err((*opath, "signInTimeout"), '"signInTimeout" must be a positive number of seconds')
        else:
            values["sign_in_timeout"] = float(timeout)
    step_ups = raw.get("maxStepUps")
    if step_ups is not None:
        if isinstance(step_ups, bool) or not isinstance(step_ups, int) or step_ups < 0:
            err((*opath, "maxStepUps"), '"maxStepUps" must be a whole number >= 0')
        else:
            values["max_step_ups"] = step_ups
    url = values.get("client_metadata_url")
    if url is not None and "${" not in url:  # (unexpanded in an untrusted folder's entry)
        from urllib.parse import urlparse

        parsed = urlparse(url)
        if parsed.scheme != "https" or parsed.path in ("", "/"):
            err((*opath, "clientMetadataUrl"),
                '"clientMetadataUrl" must be an https URL with a path (the client ID metadata document)')
    issuer = values.get("issuer")
    if issuer is not None and "${" not in issuer and not issuer.startswith(("http://", "https://")):
        err((*opath, "issuer"), '"issuer" must be the authorization server\'s http(s) issuer URL')
    if grant == "client_credentials":
        if not values.get("client_id"):
            err(opath, 'client_credentials needs "clientId"', key=True)
        jwt_auth = method == "private_key_jwt" or values.get("private_key") or values.get("private_key_file") \
            or values.get("client_assertion")
        if jwt_auth:
            if not (values.get("private_key") or values.get("private_key_file") or values.get("client_assertion")):
                err(opath, 'private_key_jwt needs "privateKey", "privateKeyFile" or "clientAssertion"', key=True)
        elif not values.get("client_secret"):
            err(opath, 'client_credentials needs "clientSecret" (or a private key for private_key_jwt)', key=True)
    elif grant == "identity_assertion":
        for field, key in (("client_id", "clientId"), ("client_secret", "clientSecret"), ("issuer", "issuer"),
                           ("idp_token_endpoint", "idp.tokenEndpoint"), ("idp_id_token", "idp.idToken")):
            if not values.get(field):
                err(opath, f'identity_assertion needs "{key}"', key=True)
    return OAuthConfig(**values)


def _read_file(file: Path, problems_out: list[ConfigDiagnostic]) -> jsonc.Document | None:
    """The parsed file, None when absent or unusable (with a diagnostic naming the file).

    Never raises: one bad file (unreadable, too large, too deep, not JSON) must not stop the
    other scopes' servers.
    """
    try:
        with open(file, "rb") as f:
            data = f.read(MAX_SETTINGS_BYTES + 1)
    except FileNotFoundError:
        return None
    except OSError as e:
        problems_out.append(ConfigDiagnostic(file, (), f"cannot read the file: {e}"))
        return None
    if len(data) > MAX_SETTINGS_BYTES:
        problems_out.append(ConfigDiagnostic(
            file, (), f"the file is larger than {MAX_SETTINGS_BYTES // 1024} KiB, the limit for a settings file; "
                      "it is ignored"))
        return None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        problems_out.append(ConfigDiagnostic(file, (), f"cannot read the file: it is not UTF-8 ({e})"))
        return None
    if not text.strip():
        return jsonc.Document(value={}, spans={}, key_spans={})
    try:
        return jsonc.parse(text)
    except jsonc.JsoncError as e:
        if e.message == jsonc.EMPTY_DOCUMENT:  # only comments: as good as an empty file
            return jsonc.Document(value={}, spans={}, key_spans={})
        span = jsonc.Span(e.pos, jsonc.Pos(e.pos.line, e.pos.column + 1))
        problems_out.append(ConfigDiagnostic(file, (), f"invalid JSON: {e.message}", span=span))
        return None
    except (RecursionError, MemoryError, ValueError) as e:  # belt and braces: the parser's own limits come first
        problems_out.append(ConfigDiagnostic(file, (), f"cannot parse the file: {type(e).__name__}: {e}"))
        return None


_KNOWN_TOP_LEVEL = {"mcpServers", "model", "apiBase", "permissions", "agent", "toolActions", "mcp", "$schema"}


@attrs.frozen
class _FileRead:
    scope: Scope
    file: Path
    key: str
    """The key that holds the server entries."""
    doc: jsonc.Document | None


def _read_folder(folder: Path, loaded: LoadedSettings) -> tuple[list[_FileRead], WorkspaceRequest]:
    """A folder's workspace files (highest scope first) and what they ask for that needs trust."""
    reads: list[_FileRead] = []
    items: list[TrustItem] = []
    entries: list[EntryView] = []
    for scope, rel, key in reversed(WORKSPACE_FILES):
        file = folder / rel
        loaded.files.append(file)
        doc = _read_file(file, loaded.diagnostics)
        reads.append(_FileRead(scope, file, key, doc))
        root = doc.value if doc is not None else None
        if not isinstance(root, dict):
            continue
        if scope is Scope.WORKSPACE:
            items += split_settings(root, file)[1]
        servers = root.get(key)
        if isinstance(servers, dict):
            entries += [EntryView.from_raw(n, e, file) for n, e in servers.items() if isinstance(n, str) and n.strip()]
    return reads, WorkspaceRequest(folder, tuple(items), tuple(entries))


def _servers_in(
    read: _FileRead,
    workspace_folder: Path | None,
    ctx: ExpansionContext,
    loaded: LoadedSettings,
    *,
    agent_settings_file: bool,
    trust: WorkspaceTrustInfo | None = None,
) -> list[ServerConfig | FailedEntry]:
    """The server entries of one file; for an agent-ls settings file, also its other settings
    (into ``loaded.other`` and ``loaded.layers``). ``trust`` None: the user scope."""
    doc, file, key = read.doc, read.file, read.key
    if doc is None:
        return []
    problems = _Problems(file, doc)
    out: list[ServerConfig | FailedEntry] = []
    root = doc.value
    if not isinstance(root, dict):
        problems.add((), f"the settings file must contain a JSON object, not {_type_name(root)}")
        loaded.diagnostics.extend(problems.items)
        return []
    restricted = trust is not None and not trust.trusted
    servers = root.get(key, {})
    if agent_settings_file:
        for k in root:
            if k not in _KNOWN_TOP_LEVEL:
                problems.add((k,), f"unknown setting {k!r} is ignored", severity="warning", key=True)
        layer: dict[str, Any] = root
        if restricted:
            layer, ignored = split_settings(root, file)
            layer["mcpServers"] = servers
            for item in ignored:
                problems.add(item.path, f"ignored until you trust this workspace: {item.why}",
                             severity="information", key=True)
        for k, v in layer.items():
            if k != key and k in _KNOWN_TOP_LEVEL:
                loaded.other.setdefault(k, v)
        loaded.layers.append((read.scope, file, layer))
    if not isinstance(servers, dict):
        problems.add((key,), f'"{key}" must be an object mapping server names to entries')
        servers = {}
    for name, entry in servers.items():
        if not isinstance(name, str) or not name.strip():
            problems.add((key, name), "server names must be non-empty", key=True)
            continue
        source = ConfigSource(read.scope, file, workspace_folder, (key, name))
        out.append(_parse_entry(name, entry, source, problems, ctx, restricted=restricted))
    loaded.diagnostics.extend(problems.items)
    return out


def load_settings(
    workspace_folders: Sequence[Path] = (),
    *,
    user_settings: Path | None = None,
    environ: Mapping[str, str] | None = None,
    trust: TrustPolicy | None = None,
) -> LoadedSettings:
    """Read every scope and merge server entries by name (higher scope replaces lower).

    ``trust`` decides which workspace folders are trusted (see :mod:`agent_ls.config.trust`);
    without one, every folder that asks for something is restricted. A restricted folder's
    servers are listed (``restricted``, not started) unless a user-scope server has the same
    name, and its settings that need trust are ignored, each with a diagnostic.
    """
    env = dict(os.environ if environ is None else environ)
    policy = trust or TrustPolicy()
    loaded = LoadedSettings()
    user_file = user_settings or user_settings_path()
    primary = workspace_folders[0] if workspace_folders else None
    candidates: list[tuple[int, int, ServerConfig | FailedEntry]] = []
    docs: dict[Path, jsonc.Document] = {}

    # Workspace scopes first so that their non-MCP settings win in ``other`` (setdefault).
    for folder_index, folder in enumerate(workspace_folders):
        ctx = ExpansionContext(environ=env, workspace_folder=folder)
        reads, request = _read_folder(folder, loaded)
        info = policy.evaluate(request)
        if not info.trusted:
            info = attrs.evolve(info, ignored=request.settings)
        loaded.workspaces[folder] = info
        for read in reads:
            if read.doc is not None:
                docs[read.file] = read.doc
            entries = _servers_in(read, folder, ctx, loaded, agent_settings_file=read.scope is Scope.WORKSPACE,
                                  trust=info)
            # An untrusted folder's entries rank below the user scope: a user server of the same
            # name runs instead of them.
            rank = SCOPE_RANK[read.scope] if info.trusted else -1
            candidates.extend((rank, -folder_index, e) for e in entries)
    loaded.files.append(user_file)
    ctx = ExpansionContext(environ=env, workspace_folder=primary)
    user_read = _FileRead(Scope.USER, user_file, "mcpServers", _read_file(user_file, loaded.diagnostics))
    for e in _servers_in(user_read, primary, ctx, loaded, agent_settings_file=True):
        candidates.append((SCOPE_RANK[Scope.USER], 0, e))

    # Highest (scope rank, folder order) wins per name.
    best: dict[str, tuple[int, int, ServerConfig | FailedEntry]] = {}
    for cand in candidates:
        name = cand[2].name
        if name not in best or (cand[0], cand[1]) > (best[name][0], best[name][1]):
            best[name] = cand
    for rank, _order, entry in candidates:
        if rank < 0 and best[entry.name][2] is not entry and best[entry.name][0] == SCOPE_RANK[Scope.USER]:
            loaded.diagnostics.append(ConfigDiagnostic(
                entry.source.file, entry.source.json_path,
                f"ignored until you trust this workspace: your user-scope server '{entry.name}' runs instead",
                "information", docs[entry.source.file].span(entry.source.json_path, key=True), entry.name))
    # Where a stdio server starts when its entry has no "cwd": a workspace entry in its folder; a
    # user entry in the first folder once the user trusts it, else in the home directory (a
    # folder's .npmrc, uv.toml or .env must not steer npx, uvx or the server before that).
    user_cwd = str(primary) if primary is not None and policy.explicit(primary) else str(Path.home())
    for name in sorted(best):
        entry = best[name][2]
        if isinstance(entry, ServerConfig):
            if entry.transport == "stdio" and entry.cwd is None:
                where = entry.source.workspace_folder
                cwd = user_cwd if entry.source.scope is Scope.USER or where is None else str(where)
                entry = attrs.evolve(entry, cwd=cwd)
            loaded.servers[name] = entry
        else:
            loaded.failed[name] = entry
    return loaded

