"""The mcp SDK's OAuth providers with the host's behaviour, and building the one a server's
grant needs.

:class:`_HostFlow` wraps the SDK's ``_auth_flow`` (refresh before a new sign-in, step-up on
403 ``insufficient_scope``, a failed authorization fails one request instead of the
connection); :class:`_StoredState` restores what the SDK keeps only in memory from the token
store and reacts to rejected registrations. :func:`authorization_code_provider` and
:func:`machine_provider` build the provider of one connection attempt.
"""

from __future__ import annotations

import contextlib
import json
import warnings
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any, Protocol

import attrs
import httpx2
from mcp.client.auth import OAuthClientProvider, OAuthTokenError
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
    static_assertion_provider,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.client.auth.utils import extract_field_from_www_auth
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthToken,
)
from pydantic import AnyUrl

from agent_ls.config.oauth_config import OAuthConfig
from agent_ls.core.redact import add_secrets
from agent_ls.mcp.oauth.state import REJECTED_CLIENT_ERRORS, RegistrationRejected, SignInError
from agent_ls.mcp.oauth.wif import JWTBearerOAuthProvider, assertion_source, read_credential_file


class ProviderSession(Protocol):
    """What the providers ask of a server's OAuth state: :class:`agent_ls.mcp.oauth.session.OAuthSession`
    (which builds them, so they know it only by this protocol)."""

    @property
    def url(self) -> str: ...
    @property
    def oauth(self) -> OAuthConfig: ...
    # the stored record (agent_ls.mcp.oauth.record.TokenRecord)
    def stored_tokens(self) -> OAuthToken | None: ...
    def save_tokens(self, tokens: OAuthToken, context: Any = None) -> None: ...
    def client_info(self) -> OAuthClientInformationFull | None: ...
    def save_client_info(self, info: OAuthClientInformationFull) -> None: ...
    def adopt_newer(self, context: Any) -> bool: ...
    def restore_context(self, context: Any) -> None: ...
    async def acquire_refresh_lock(self) -> None: ...
    async def release_refresh_lock(self) -> None: ...
    def refresh_failed(self, status: int, error: str | None, context: Any) -> None: ...
    def drop_registration(self, context: Any, error: str | None) -> bool: ...
    # the sign-in state
    def may_authorize(self, response: httpx2.Response, *, ready: bool) -> bool: ...
    def request_ok(self, *, has_token: bool, after_step_up: bool = False) -> None: ...
    def still_insufficient(self, response: httpx2.Response) -> None: ...
    def flow_failed(self, exc: BaseException) -> None: ...


@attrs.frozen
class AuthHooks:
    """What the auth flow needs from the connection that uses it."""

    pause_deadline: Callable[[], contextlib.AbstractContextManager[None]]
    """Stops the connection's handshake deadline while a person is signing in."""
    ready: Callable[[], bool]
    """Whether the connection is past its handshake (a failed authorization then fails only
    the request, not the connection)."""


def _is_insufficient_scope(response: httpx2.Response) -> bool:
    if response.status_code != 403:
        return False
    return extract_field_from_www_auth(response, "error") == "insufficient_scope"


async def _oauth_error_code(response: httpx2.Response) -> str | None:
    try:
        data = (await response.aread()) or b""
        body = json.loads(data)
    except Exception:
        return None
    err = body.get("error") if isinstance(body, dict) else None
    return err if isinstance(err, str) else None


class _HostFlow:
    """The host's wrapper around an SDK provider's flow (mixed in before the SDK class)."""

    _session: ProviderSession
    _hooks: AuthHooks

    async def _auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        session = self._session
        context = getattr(self, "context", None)
        if getattr(self, "_initialized", False) and context is not None and context.current_tokens is not None \
                and not context.is_token_valid():
            # Expired here: another host process may already hold a fresh pair.
            session.adopt_newer(context)
        inner = super()._auth_flow(request)  # type: ignore[misc]
        first = True
        refreshed = False
        stepping_up = False
        original: httpx2.Response | None = None
        try:
            try:
                outgoing = await inner.__anext__()
            except StopAsyncIteration:
                return
            while True:
                response = yield outgoing
                if outgoing is request:
                    original = response
                    if first:
                        first = False
                        if response.status_code == 401 and not refreshed and self._refresh_first():
                            # The SDK answers a 401 with a whole new authorization; a stored
                            # refresh token is worth a try first (revoked or early-expired
                            # access tokens), and needs no person.
                            refreshed = first = True
                            await inner.aclose()
                            inner = super()._auth_flow(request)  # type: ignore[misc]
                            outgoing = await inner.__anext__()
                            continue
                        challenged = response.status_code == 401 or _is_insufficient_scope(response)
                        if challenged:
                            if not session.may_authorize(response, ready=self._hooks.ready()):
                                return  # the request fails with the server's answer
                            stepping_up = response.status_code == 403
                        elif response.status_code < 400:
                            session.request_ok(has_token="authorization" in request.headers)
                    elif response.status_code < 400:
                        session.request_ok(has_token=True, after_step_up=stepping_up)
                    elif _is_insufficient_scope(response):
                        session.still_insufficient(response)
                try:
                    outgoing = await inner.asend(response)
                except StopAsyncIteration:
                    return
        except Exception as e:
            session.flow_failed(e)
            if self._hooks.ready() and original is not None:
                return  # only this request fails; the connection stays up
            raise
        finally:
            await inner.aclose()
            await session.release_refresh_lock()

    def _refresh_first(self) -> bool:
        """Mark the access token expired so the next flow refreshes it, if it can."""
        context = getattr(self, "context", None)
        tokens = getattr(context, "current_tokens", None)
        if context is None or tokens is None or not tokens.refresh_token or context.client_info is None:
            return False
        context.token_expiry_time = 1.0  # long past (0 would read as 'no expiry')
        return True


class _StoredState:
    """Restores what the SDK keeps only in memory (expiry, metadata) from the stored record,
    and reacts to rejected registrations."""

    _session: ProviderSession
    context: Any
    _initialized: bool

    async def _initialize(self) -> None:
        self._session.adopt_newer(None)
        await super()._initialize()  # type: ignore[misc]
        self._session.restore_context(self.context)

    async def _refresh_token(self) -> httpx2.Request:
        # Hold the record's inter-process lock until the answer is saved, and refresh with the
        # newest stored refresh token (another process may have rotated ours meanwhile).
        await self._session.acquire_refresh_lock()
        try:
            self._session.adopt_newer(self.context)
            return await super()._refresh_token()  # type: ignore[misc,no-any-return]
        except BaseException:
            await self._session.release_refresh_lock()
            raise

    async def _handle_refresh_response(self, response: httpx2.Response) -> bool:
        try:
            if response.status_code != 200:
                error = await _oauth_error_code(response)
                self._session.refresh_failed(response.status_code, error, self.context)
            return bool(await super()._handle_refresh_response(response))  # type: ignore[misc]
        finally:
            await self._session.release_refresh_lock()

    async def _handle_token_response(self, response: httpx2.Response) -> None:
        if response.status_code not in (200, 201):
            error = await _oauth_error_code(response)
            if error in REJECTED_CLIENT_ERRORS and self._session.drop_registration(self.context, error):
                raise RegistrationRejected(
                    f"the authorization server rejected the client registration ({error}); it was dropped "
                    "and will be redone at the next sign-in"
                )
            detail = f" ({error})" if error else ""
            hint = " - check oauth.clientId / oauth.clientSecret" if error in REJECTED_CLIENT_ERRORS else ""
            raise OAuthTokenError(f"HTTP {response.status_code}{detail}{hint}")
        await super()._handle_token_response(response)  # type: ignore[misc]


class HostOAuthProvider(_HostFlow, _StoredState, OAuthClientProvider):
    """Authorization code + PKCE (with DCR / CIMD / a pre-registered client)."""


class HostClientCredentialsProvider(_HostFlow, _StoredState, ClientCredentialsOAuthProvider):
    """client_credentials with client_secret_basic / client_secret_post."""


class HostPrivateKeyJWTProvider(_HostFlow, _StoredState, PrivateKeyJWTOAuthProvider):
    """client_credentials with private_key_jwt (a signed assertion)."""


class HostIdentityAssertionProvider(_HostFlow, IdentityAssertionOAuthProvider):
    """SEP-990: the enterprise IdP's ID token exchanged for an ID-JAG, then the jwt-bearer grant."""


class HostJWTBearerProvider(_HostFlow, _StoredState, JWTBearerOAuthProvider):
    """Workload identity federation: the workload's own JWT and the jwt-bearer grant."""


# Storage adapter ------------------------------------------------------------------------------

class SessionTokenStorage:
    """The SDK's ``TokenStorage`` over one server's record in the :class:`OAuthStore`."""

    def __init__(self, session: ProviderSession) -> None:
        self.session = session

    async def get_tokens(self) -> OAuthToken | None:
        return self.session.stored_tokens()

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.session.save_tokens(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.session.client_info()

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.session.save_client_info(client_info)


@contextlib.contextmanager
def no_pause() -> Iterator[None]:
    yield


# Building the provider of one connection attempt ----------------------------------------------

def authorization_code_provider(
    session: ProviderSession, storage: SessionTokenStorage, redirect_uri: str,
    redirect_handler: Callable[[str], Awaitable[None]],
    callback_handler: Callable[[], Awaitable[AuthorizationCodeResult]],
) -> Any:
    """Authorization code + PKCE, the redirect going to ``redirect_uri`` (the loopback listener)."""
    o = session.oauth
    metadata = OAuthClientMetadata(
        client_name=o.client_name,
        redirect_uris=[AnyUrl(redirect_uri)],
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
        token_endpoint_auth_method=o.token_endpoint_auth_method if o.client_id else None,  # type: ignore[arg-type]
    )
    return HostOAuthProvider(
        session.url, metadata, storage,
        redirect_handler=redirect_handler, callback_handler=callback_handler,
        client_metadata_url=o.client_metadata_url,
    )


def machine_provider(session: ProviderSession, storage: SessionTokenStorage) -> Any:
    """The grants that never need a person: client_credentials, identity_assertion, jwt_bearer."""
    o = session.oauth
    if o.grant == "client_credentials":
        return _client_credentials_provider(session, storage)
    if o.grant == "identity_assertion":
        return _identity_assertion_provider(session, storage)
    assert o.grant == "jwt_bearer" and o.client_id is not None
    method = o.token_endpoint_auth_method if o.token_endpoint_auth_method in (
        "client_secret_basic", "client_secret_post") else "client_secret_basic"
    return HostJWTBearerProvider(session.url, storage, o.client_id, assertion_source(o),
                                 client_secret=o.client_secret, token_endpoint_auth_method=method,
                                 scope=o.scopes, issuer=o.issuer)


def _client_credentials_provider(session: ProviderSession, storage: SessionTokenStorage) -> Any:
    o = session.oauth
    assert o.client_id is not None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # no issuer configured: the SDK's deprecation notice
        if o.token_endpoint_auth_method == "private_key_jwt" or o.private_key or o.private_key_file \
                or o.client_assertion:
            if o.client_assertion:
                assertion = static_assertion_provider(o.client_assertion)
            else:
                key = o.private_key or read_credential_file(Path(o.private_key_file or "").expanduser(),
                                                            "oauth.privateKeyFile")
                add_secrets(key)
                assertion = SignedJWTParameters(
                    issuer=o.client_id, subject=o.client_id, signing_key=key,
                    signing_algorithm=o.signing_algorithm,
                ).create_assertion_provider()
            return HostPrivateKeyJWTProvider(session.url, storage, o.client_id, assertion, scope=o.scopes,
                                             issuer=o.issuer)
        method = o.token_endpoint_auth_method if o.token_endpoint_auth_method in (
            "client_secret_basic", "client_secret_post") else "client_secret_basic"
        return HostClientCredentialsProvider(session.url, storage, o.client_id, o.client_secret or "",
                                             token_endpoint_auth_method=method,  # type: ignore[arg-type]
                                             scope=o.scopes, issuer=o.issuer)

def _identity_assertion_provider(session: ProviderSession, storage: SessionTokenStorage) -> Any:
    o = session.oauth
    assert o.client_id and o.client_secret and o.issuer and o.idp_token_endpoint and o.idp_id_token

    async def fetch_id_jag(audience: str, resource: str) -> str:
        data = {
            "grant_type": "urn:ietf:params:oauth:grant-type:token-exchange",
            "requested_token_type": "urn:ietf:params:oauth:token-type:id-jag",
            "subject_token": o.idp_id_token,
            "subject_token_type": "urn:ietf:params:oauth:token-type:id_token",
            "audience": audience,
            "resource": resource,
        }
        if o.idp_client_id:
            data["client_id"] = o.idp_client_id
        if o.idp_client_secret:
            data["client_secret"] = o.idp_client_secret
        if o.scopes:
            data["scope"] = o.scopes
        async with create_mcp_http_client(timeout=httpx2.Timeout(30.0)) as http:
            resp = await http.post(o.idp_token_endpoint or "", data=data)
        if resp.status_code != 200:
            raise SignInError(f"the identity provider refused the token exchange: HTTP {resp.status_code}"
                              + (f" ({await _oauth_error_code(resp)})" if resp.content else ""))
        token = resp.json().get("access_token")
        if not isinstance(token, str) or not token:
            raise SignInError("the identity provider's token exchange answer has no access_token")
        add_secrets(token)
        return token

    method = o.token_endpoint_auth_method if o.token_endpoint_auth_method in (
        "client_secret_basic", "client_secret_post") else "client_secret_post"
    return HostIdentityAssertionProvider(
        session.url, storage, o.client_id, o.client_secret, o.issuer, fetch_id_jag, scope=o.scopes,
        token_endpoint_auth_method=method,  # type: ignore[arg-type]
    )
