"""Workload identity federation: the RFC 7523 JWT-bearer grant (MCP SEP-1933).

A workload (a CI job, a pod, a VM) already holds a JWT from its platform's identity provider:
a Kubernetes projected service account token, a cloud instance identity token, a CI OIDC
token. The MCP server's authorization server trusts that issuer, and exchanges the JWT for an
access token at its token endpoint (``grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer``,
the JWT as ``assertion``). No person, no browser, no client secret is needed.

:class:`JWTBearerOAuthProvider` is that grant on the SDK's OAuth client (discovery through
the protected resource metadata, the RFC 8707 ``resource``, the issuer pin of
``oauth.issuer``); the host mixes its own behaviour in (``HostJWTBearerProvider`` in
:mod:`agent_ls.mcp.oauth.session`). The JWT comes from :func:`assertion_source`: ``oauth.assertionFile``
is read again for every token request, so a token file the platform rotates is always fresh;
``oauth.assertion`` is a value (usually ``${env:VAR}``). A refused grant (``invalid_grant``,
``invalid_scope``, ``unauthorized_client``) fails the request with the server's error; the
host does not retry it or fall back to another grant. The JWT is registered as a secret the
moment it is read, so it never reaches a log line, the status or an error.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from pathlib import Path
from urllib.parse import urlparse

import anyio
import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthFlowError, TokenStorage
from mcp.client.auth.utils import issuers_match
from mcp.shared.auth import JWT_BEARER_GRANT_TYPE, OAuthClientInformationFull, OAuthClientMetadata

from agent_ls.config.oauth_config import OAuthConfig
from agent_ls.core.files import read_regular_file
from agent_ls.core.redact import add_secrets

AssertionProvider = Callable[[], Awaitable[str]]

CREDENTIAL_FILE_LIMIT = 64 * 1024
"""The largest credential file read (a JWT or a PEM key is a few kilobytes)."""


def read_credential_file(path: Path, setting: str) -> str:
    """A credential file named by the user's settings (``oauth.assertionFile``,
    ``oauth.privateKeyFile``): a regular file only (a FIFO, device or directory is refused, never
    waited on), at most :data:`CREDENTIAL_FILE_LIMIT` bytes, UTF-8, registered as a secret.
    Raises :class:`OAuthFlowError` saying which setting and why (never the content)."""
    try:
        data = read_regular_file(path, CREDENTIAL_FILE_LIMIT)
    except OSError as e:
        raise OAuthFlowError(f"cannot read {path} ({setting}): {e.strerror or type(e).__name__}") from None
    if len(data) > CREDENTIAL_FILE_LIMIT:
        raise OAuthFlowError(f"{path} ({setting}) is larger than {CREDENTIAL_FILE_LIMIT // 1024} KiB: "
                             "not a credential file")
    try:
        text = data.decode("utf-8").strip()
    except UnicodeDecodeError:
        raise OAuthFlowError(f"{path} ({setting}) is not UTF-8 text") from None
    if not text:
        raise OAuthFlowError(f"{path} ({setting}) is empty")
    add_secrets(text)
    return text


def assertion_source(oauth: OAuthConfig) -> AssertionProvider:
    """The workload JWT of a ``jwt_bearer`` entry: the file's current content, or the value."""
    if oauth.assertion_file:
        path = Path(oauth.assertion_file).expanduser()

        async def from_file() -> str:
            return await anyio.to_thread.run_sync(read_credential_file, path,
                                                  "the workload identity token file, oauth.assertionFile")

        return from_file

    value = (oauth.assertion or "").strip()

    async def from_value() -> str:
        if not value:
            raise OAuthFlowError("oauth.assertion is empty (an unset environment variable?)")
        add_secrets(value)
        return value

    return from_value


class JWTBearerOAuthProvider(OAuthClientProvider):
    """``httpx2.Auth`` for the jwt-bearer grant with a workload's JWT.

    ``client_id`` identifies the client at the authorization server; with ``client_secret`` it
    authenticates (``client_secret_basic`` / ``client_secret_post``), without one it is a
    public client (``none``: ``client_id`` in the body). ``issuer``, when given, is the only
    authorization server the JWT is sent to.
    """

    def __init__(
        self,
        server_url: str,
        storage: TokenStorage,
        client_id: str,
        assertion_provider: AssertionProvider,
        *,
        client_secret: str | None = None,
        token_endpoint_auth_method: str = "none",
        scope: str | None = None,
        issuer: str | None = None,
    ) -> None:
        if issuer is not None and urlparse(issuer).scheme not in ("http", "https"):
            raise ValueError(f"issuer must be the authorization server's http(s) issuer URL, got {issuer!r}")
        method = token_endpoint_auth_method if client_secret else "none"
        client_metadata = OAuthClientMetadata(
            redirect_uris=None,
            grant_types=[JWT_BEARER_GRANT_TYPE],
            token_endpoint_auth_method=method,  # type: ignore[arg-type]
            scope=scope,
        )
        super().__init__(server_url, client_metadata, storage, None, None)
        self._assertion_provider = assertion_provider
        self._issuer = issuer
        self._scope = scope
        self._fixed_client_info = OAuthClientInformationFull(
            redirect_uris=None,
            client_id=client_id,
            client_secret=client_secret,
            grant_types=[JWT_BEARER_GRANT_TYPE],
            token_endpoint_auth_method=method,
            scope=scope,
        )

    async def _initialize(self) -> None:
        self.context.current_tokens = await self.context.storage.get_tokens()
        self.context.client_info = self._fixed_client_info
        self._initialized = True

    def _select_authorization_server(self, advertised: list[str]) -> str:
        if self._issuer is not None:
            for server in advertised:
                if issuers_match(server, self._issuer):
                    return server
        return advertised[0]

    def _check_issuer(self) -> None:
        if self._issuer is None:
            return
        metadata = self.context.oauth_metadata
        if metadata is not None and issuers_match(str(metadata.issuer), self._issuer):
            return
        self.context.oauth_metadata = None
        self.context.clear_tokens()
        found = f"{metadata.issuer}" if metadata is not None else "no authorization server metadata"
        raise OAuthFlowError(f"the workload JWT is only sent to {self._issuer} (oauth.issuer); found {found}")

    async def _perform_authorization(self) -> httpx2.Request:
        self._check_issuer()
        assertion = await self._assertion_provider()
        data: dict[str, str] = {"grant_type": JWT_BEARER_GRANT_TYPE, "assertion": assertion}
        headers = {"Content-Type": "application/x-www-form-urlencoded"}
        data, headers = self.context.prepare_token_auth(data, headers)
        info = self._fixed_client_info
        if info.token_endpoint_auth_method == "none":
            data["client_id"] = info.client_id
        if self.context.should_include_resource_param(self.context.protocol_version):
            data["resource"] = self.context.get_resource_url()
        scope = self._scope or self.context.client_metadata.scope
        if scope:
            data["scope"] = scope
        return httpx2.Request("POST", self._get_token_endpoint(), data=data, headers=headers)


__all__ = ["AssertionProvider", "JWTBearerOAuthProvider", "assertion_source"]
