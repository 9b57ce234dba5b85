"""The ``oauth`` setting of an HTTP MCP server entry, validated, every variable expanded."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urlparse

import attrs

from agent_ls.config import jsonc
from agent_ls.config.diagnostics import Problems, type_name

OAUTH_GRANTS = ("authorization_code", "client_credentials", "identity_assertion", "jwt_bearer")
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
    "assertion": "assertion",
    "assertionFile": "assertion_file",
}
_OAUTH_IDP_KEYS = {
    "tokenEndpoint": "idp_token_endpoint",
    "clientId": "idp_client_id",
    "clientSecret": "idp_client_secret",
    "idToken": "idp_id_token",
}
_OAUTH_SECRET_FIELDS = ("client_secret", "private_key", "client_assertion", "idp_client_secret", "idp_id_token",
                        "assertion")
_OAUTH_KEYS = {*_OAUTH_STR_KEYS, "grant", "scopes", "redirectPort", "signInTimeout", "maxStepUps", "idp", "dpop"}

OAUTH_SECRET_KEYS = frozenset({"clientSecret", "privateKey", "clientAssertion", "assertion", "idp.clientSecret",
                               "idp.idToken"})
"""``oauth`` settings (dotted) whose values are credentials: never shown, only that they are set."""

_SENT = "it is a credential agent-ls sends to an authorization server the MCP server names"
WORKSPACE_REFUSED: dict[str, str] = {
    "assertionFile": "agent-ls would read that file on your machine and send its content as a credential",
    "privateKeyFile": "agent-ls would read that private key file on your machine and sign credentials with it",
    "privateKey": _SENT,
    "clientSecret": _SENT,
    "clientAssertion": _SENT,
    "assertion": _SENT,
    "idp.clientSecret": _SENT,
    "idp.idToken": _SENT,
}
"""OAuth settings (dotted under ``oauth``) that a workspace file may not set, and why: each reads
a file for a credential or carries one (a ``${env:VAR}`` in it would hand the user's secret to
whichever authorization server the workspace's MCP server names). Only the user's own settings
may set them (issue 25)."""


def workspace_refusal(key: str) -> str:
    """The diagnostic for ``oauth.<key>`` written in a workspace file."""
    return (f'"{key}" is refused in a workspace file: {WORKSPACE_REFUSED[key]}. Define this server in your '
            "user settings to use it")


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
    """``authorization_code`` (a person signs in), ``client_credentials`` (a machine client),
    ``identity_assertion`` (SEP-990: an enterprise IdP's ID token exchanged for an ID-JAG) or
    ``jwt_bearer`` (workload identity federation, RFC 7523: the workload's JWT, from
    ``assertionFile`` or ``assertion``, exchanged for an access token)."""
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
    assertion: str | None = attrs.field(default=None, repr=False)
    """jwt_bearer: the workload JWT itself (usually ``${env:VAR}``)."""
    assertion_file: str | None = None
    """jwt_bearer: a file holding the workload JWT (a Kubernetes projected service account token,
    a CI OIDC token file), read again for every token request so a rotated token is picked up."""
    dpop: bool | None = None
    """DPoP sender-constrained tokens (RFC 9449): None = automatic (on when the authorization
    server advertises ``dpop_signing_alg_values_supported`` with ES256, or the resource asks for
    DPoP), True = always send proofs, False = never."""

    @property
    def secrets(self) -> tuple[str, ...]:
        return tuple(v for v in (getattr(self, f) for f in _OAUTH_SECRET_FIELDS) if isinstance(v, str) and v)

    @property
    def interactive(self) -> bool:
        """Whether signing in needs a person (a browser)."""
        return self.grant == "authorization_code"

    def fingerprint_data(self) -> dict[str, Any]:
        return attrs.asdict(self)


def parse_oauth(
    entry: Mapping[str, Any],
    path: jsonc.JsonPath,
    headers: Mapping[str, str],
    problems: Problems,
    errors: list[str],
    name: str,
    x: Any,
    expanded_secrets: list[str],
    *,
    workspace: bool = False,
) -> OAuthConfig | None:
    """The ``oauth`` setting of an HTTP entry (see :class:`OAuthConfig`). From a workspace file
    (``workspace``), the settings of :data:`WORKSPACE_REFUSED` are errors at their key."""
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
        err(opath, f'"oauth" must be true, false or an object, not {type_name(raw)}')
        return None
    if has_auth_header:
        problems.add(opath, "an Authorization header is set: the server gets that header, and OAuth tokens "
                     "replace it once you sign in", severity="warning", key=True, server=name)
    for k in raw:
        if k not in _OAUTH_KEYS:
            problems.add((*opath, k), f"unknown OAuth setting {k!r} is ignored", severity="warning", key=True,
                         server=name)
    values: dict[str, Any] = {"explicit": True}
    refused: list[str] = []

    def text(key: str, value: Any, p: jsonc.JsonPath, field: str) -> None:
        if value is None:
            return
        dotted = jsonc.format_path(p[len(opath):])
        if workspace and dotted in WORKSPACE_REFUSED:
            err(p, workspace_refusal(dotted), key=True)
            refused.append(dotted)
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
            err((*opath, "idp"), f'"idp" must be an object, not {type_name(idp)}')
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
    dpop = raw.get("dpop")
    if dpop is not None:
        if not isinstance(dpop, bool):
            err((*opath, "dpop"), '"dpop" must be true or false (absent: automatic)')
        else:
            values["dpop"] = dpop
    url = values.get("client_metadata_url")
    if url is not None and "${" not in url:  # (unexpanded in an untrusted folder's entry)
        parsed = urlparse(url)
        if parsed.scheme != "https" or parsed.path in ("", "/"):
            err((*opath, "clientMetadataUrl"),
                '"clientMetadataUrl" must be an https URL with a path (the client ID metadata document)')
    issuer = values.get("issuer")
    if issuer is not None and "${" not in issuer and not issuer.startswith(("http://", "https://")):
        err((*opath, "issuer"), '"issuer" must be the authorization server\'s http(s) issuer URL')
    if refused:
        pass  # what the grant would need is not asked for: the refusal says what to do
    elif grant == "client_credentials":
        if not values.get("client_id"):
            err(opath, 'client_credentials needs "clientId"', key=True)
        jwt_auth = method == "private_key_jwt" or values.get("private_key") or values.get("private_key_file") \
            or values.get("client_assertion")
        if jwt_auth:
            if not (values.get("private_key") or values.get("private_key_file") or values.get("client_assertion")):
                err(opath, 'private_key_jwt needs "privateKey", "privateKeyFile" or "clientAssertion"', key=True)
        elif not values.get("client_secret"):
            err(opath, 'client_credentials needs "clientSecret" (or a private key for private_key_jwt)', key=True)
    elif grant == "jwt_bearer":
        if not values.get("client_id"):
            err(opath, 'jwt_bearer needs "clientId"', key=True)
        if not (values.get("assertion") or values.get("assertion_file")):
            err(opath, 'jwt_bearer needs "assertionFile" (a file with the workload JWT) or "assertion"', key=True)
        elif values.get("assertion") and values.get("assertion_file"):
            err((*opath, "assertion"), 'set "assertionFile" or "assertion", not both')
    elif grant == "identity_assertion":
        for field, key in (("client_id", "clientId"), ("client_secret", "clientSecret"), ("issuer", "issuer"),
                           ("idp_token_endpoint", "idp.tokenEndpoint"), ("idp_id_token", "idp.idToken")):
            if not values.get(field):
                err(opath, f'identity_assertion needs "{key}"', key=True)
    return OAuthConfig(**values)
