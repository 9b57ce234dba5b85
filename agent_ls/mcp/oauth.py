"""OAuth for remote (Streamable HTTP / SSE) MCP servers, on the mcp SDK's OAuth client.

The SDK (``mcp.client.auth``) does the protocol: discovery (protected resource metadata,
authorization server metadata and their fallbacks), dynamic client registration, client ID
metadata documents, PKCE, the RFC 8707 resource parameter, scope selection and step-up,
token endpoint authentication, refresh, client_credentials and the SEP-990 identity
assertion grant. This module is the host around it:

- **When a browser may open.** One :class:`OAuthSession` per server. At start-up (and for
  any connection the user did not ask to sign in) the session is *not interactive*: a server
  that answers 401 (or 403 ``insufficient_scope``) is not authorized on the spot; the request
  fails, the server shows ``needs-sign-in``, and nothing is registered or opened. Tokens that
  exist are used and refreshed silently. ``MCPManager.sign_in(name)`` makes the session
  interactive (for the rest of this process, so a later step-up on that server may open the
  page again) and reconnects; the authorization URL then goes to the *opener* (the editor's
  ``window/showDocument``, the CLI's browser/print, or :func:`headless_opener` in tests and
  the conformance client). Machine grants (client_credentials, identity_assertion) never need
  a person and always run.
- **The redirect.** A loopback listener on 127.0.0.1 receives ``code``/``state`` (or
  ``error``) at ``/callback`` and answers the browser with a small page. The port is random
  on the first sign-in; later sign-ins reuse the registered port when it is free (so a
  registration whose redirect URI the server matches exactly stays valid), else take a new
  random port and register again. ``oauth.redirectPort`` fixes it. The wait is bounded by
  ``oauth.signInTimeout`` (default 300 s), with a clear message when it runs out; the
  connection's handshake deadline is paused while a person is signing in.
- **Storage.** Tokens, the registration and the discovered metadata persist per server
  (:mod:`agent_ls.mcp.oauth_store`, 0600 files in a 0700 folder). The SDK provider is
  restored from them on start (absolute expiry, metadata), so an expired access token is
  refreshed against the right token endpoint without a person; rotated refresh tokens are
  written at once.
- **Rejected registrations.** ``invalid_client`` / ``unauthorized_client`` from the token
  endpoint (refresh or code exchange) drops a dynamic or CIMD registration; the next
  authorization registers again (``sign_in`` retries once by itself).
- **Step-up cap.** A server that keeps answering 403 ``insufficient_scope`` is
  re-authorized at most ``oauth.maxStepUps`` times in a row (default 2); after that the
  request fails with the server's answer.
- **DPoP and workload identity.** Every provider is wrapped in
  :class:`agent_ls.mcp.oauth_dpop.DPoPAuth` (sender-constrained tokens, RFC 9449, with the
  nonce retries); the ``jwt_bearer`` grant (workload identity federation, RFC 7523) is
  :mod:`agent_ls.mcp.oauth_wif`.
- **Secrets.** Every token, code and client secret seen is registered with
  :mod:`agent_ls.core.redact`, which masks it in status, errors and (with the redacting log
  filter) log records.
"""

from __future__ import annotations

import asyncio
import contextlib
import enum
import html
import logging
import socket
import time
import warnings
from collections.abc import AsyncGenerator, Callable, Iterator
from pathlib import Path
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit

import attrs
import httpx2
from filelock import Timeout
from mcp.client.auth import OAuthClientProvider, OAuthFlowError, OAuthRegistrationError, OAuthTokenError
from mcp.client.auth.extensions.client_credentials import (
    ClientCredentialsOAuthProvider,
    PrivateKeyJWTOAuthProvider,
    SignedJWTParameters,
    static_assertion_provider,
)
from mcp.client.auth.extensions.identity_assertion import IdentityAssertionOAuthProvider
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import (
    AuthorizationCodeResult,
    OAuthClientInformationFull,
    OAuthClientMetadata,
    OAuthMetadata,
    OAuthToken,
    ProtectedResourceMetadata,
)
from pydantic import AnyUrl, ValidationError

from agent_ls.config.entries import ServerConfig
from agent_ls.config.oauth_config import OAuthConfig
from agent_ls.core.redact import add_secrets, redact_live
from agent_ls.mcp.oauth_dpop import DPoPAuth
from agent_ls.mcp.oauth_store import AuthRecord, OAuthStore
from agent_ls.mcp.oauth_wif import JWTBearerOAuthProvider, assertion_source

log = logging.getLogger(__name__)

CALLBACK_PATH = "/callback"
LOOPBACK_HOST = "127.0.0.1"
REFRESH_LOCK_TIMEOUT = 40.0
"""Seconds a refresh waits for another process's refresh of the same server (beyond a token
request's own timeout), then goes ahead without the lock."""
_REJECTED_CLIENT_ERRORS = ("invalid_client", "unauthorized_client")


class AuthState(enum.StrEnum):
    NEEDS_SIGN_IN = "needs-sign-in"
    SIGNING_IN = "signing-in"
    SIGNED_IN = "signed-in"
    FAILED = "failed"


class SignInError(Exception):
    """Signing in to a server did not work (the message says why, without secrets)."""


class SignInTimeout(SignInError):
    """Nobody completed the authorization page in time."""


class SignInDenied(SignInError):
    """The authorization server redirected back with an error (the user said no, ...)."""


class RegistrationRejected(SignInError):
    """The authorization server rejected the stored client registration; it was dropped."""


class AuthOpener(Protocol):
    async def __call__(self, server: str, url: str) -> None:
        """Show ``url`` (the authorization page for ``server``) to the user."""
        ...


# Openers -------------------------------------------------------------------------------------

def open_in_gui_browser(url: str) -> bool:
    """Open ``url`` in a graphical browser; never in a console browser, which would take
    over the terminal (or the language server's stdio). Returns whether one was started."""
    import webbrowser

    try:
        browser = webbrowser.get()
    except webbrowser.Error:
        return False
    if isinstance(browser, webbrowser.GenericBrowser) and not isinstance(browser, webbrowser.BackgroundBrowser):
        return False  # www-browser, lynx, w3m...: foreground console browsers
    if isinstance(browser, webbrowser.UnixBrowser) and not getattr(browser, "background", True):
        return False
    try:
        return bool(browser.open(url))
    except Exception:
        return False


async def default_opener(server: str, url: str) -> None:
    """Used when the host has no opener: log the URL and try a graphical browser."""
    log.warning("MCP server %s: open this URL to sign in: %s", server, url)
    await asyncio.to_thread(open_in_gui_browser, url)


async def headless_opener(server: str, url: str) -> None:
    """Complete an authorization without a person: GET the authorization URL, and follow the
    authorization server's redirect to the loopback listener (GET it). Works with servers that
    approve without a login page (the conformance suite's, the tests'); anything else fails
    with the page's status."""
    async with create_mcp_http_client(timeout=httpx2.Timeout(15.0)) as http:
        resp = await http.get(url, follow_redirects=False)
        location = resp.headers.get("location")
        if resp.status_code not in (301, 302, 303, 307, 308) or not location:
            body = resp.text[:300].strip()
            raise SignInError(
                f"the authorization page answered HTTP {resp.status_code} instead of redirecting back"
                + (f": {body}" if body else "")
            )
        target = urlsplit(location)
        if target.hostname not in (LOOPBACK_HOST, "localhost", "::1"):
            raise SignInError(f"the authorization server redirected to {target.scheme}://{target.netloc}, "
                              "not to the loopback listener")
        await http.get(location, follow_redirects=False)


# Loopback redirect listener ------------------------------------------------------------------

def free_loopback_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind((LOOPBACK_HOST, 0))
        return int(s.getsockname()[1])


def port_is_free(port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((LOOPBACK_HOST, port))
        except OSError:
            return False
    return True


def redirect_uri_for(port: int) -> str:
    return f"http://{LOOPBACK_HOST}:{port}{CALLBACK_PATH}"


def _page(title: str, text: str) -> bytes:
    return (
        "<!doctype html><html><head><meta charset='utf-8'><title>agent-ls</title></head>"
        f"<body style='font-family:sans-serif;margin:3em'><h2>{html.escape(title)}</h2>"
        f"<p>{html.escape(text)}</p></body></html>"
    ).encode()


class LoopbackListener:
    """A one-shot HTTP listener on 127.0.0.1 for the authorization redirect."""

    def __init__(self, server: str, port: int) -> None:
        self.server_name = server
        self.port = port
        self._server: asyncio.AbstractServer | None = None
        self._result: asyncio.Future[AuthorizationCodeResult] | None = None

    @property
    def redirect_uri(self) -> str:
        return redirect_uri_for(self.port)

    async def start(self) -> None:
        self._result = asyncio.get_running_loop().create_future()
        try:
            self._server = await asyncio.start_server(self._handle, LOOPBACK_HOST, self.port, reuse_address=True)
        except OSError as e:
            raise SignInError(
                f"cannot listen on {LOOPBACK_HOST}:{self.port} for the sign-in redirect: {e.strerror or e}"
            ) from e

    async def wait(self, timeout: float) -> AuthorizationCodeResult:
        assert self._result is not None
        try:
            return await asyncio.wait_for(asyncio.shield(self._result), timeout)
        except TimeoutError:
            raise SignInTimeout(
                f"sign-in to '{self.server_name}' was not completed within {timeout:g}s "
                "(oauth.signInTimeout); sign in again to retry"
            ) from None

    async def close(self) -> None:
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._server.wait_closed(), 2)
            self._server = None
        if self._result is not None and not self._result.done():
            self._result.cancel()

    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        status, body = "404 Not Found", _page("Not found", "This is agent-ls's sign-in listener.")
        try:
            line = await asyncio.wait_for(reader.readline(), 10)
            for _ in range(200):  # headers: ignored, but read so the client sees an answer
                h = await asyncio.wait_for(reader.readline(), 10)
                if h in (b"\r\n", b"\n", b""):
                    break
            parts = line.decode("latin-1").split(" ")
            if len(parts) >= 2 and parts[0] in ("GET", "POST"):
                target = urlsplit(parts[1])
                if target.path == CALLBACK_PATH:
                    status, body = self._callback(parse_qs(target.query))
        except (TimeoutError, ConnectionError, UnicodeError):
            return
        try:
            head = (f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\n"
                    f"Content-Length: {len(body)}\r\nCache-Control: no-store\r\nConnection: close\r\n\r\n")
            writer.write(head.encode() + body)
            await writer.drain()
        except ConnectionError:
            pass
        finally:
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    def _callback(self, params: dict[str, list[str]]) -> tuple[str, bytes]:
        def one(key: str) -> str | None:
            values = params.get(key)
            return values[0] if values else None

        fut = self._result
        if fut is None or fut.done():
            return "409 Conflict", _page("Already done", "This sign-in has already finished; close this tab.")
        error = one("error")
        if error:
            desc = one("error_description") or ""
            fut.set_exception(SignInDenied(
                f"the authorization server answered {error}" + (f": {desc}" if desc else "")))
            return "200 OK", _page("Sign-in failed", f"{error}: {desc}".strip(": ") + ". You can close this tab.")
        code = one("code")
        if not code:
            return "400 Bad Request", _page("Sign-in failed", "The redirect carried no authorization code.")
        add_secrets(code)
        fut.set_result(AuthorizationCodeResult(code=code, state=one("state"), iss=one("iss")))
        return "200 OK", _page(f"Signed in to {self.server_name}",
                               "agent-ls has the authorization. You can close this tab.")


# The SDK providers with the host's behaviour --------------------------------------------------

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
    from mcp.client.auth.utils import extract_field_from_www_auth

    return extract_field_from_www_auth(response, "error") == "insufficient_scope"


async def _oauth_error_code(response: httpx2.Response) -> str | None:
    try:
        data = (await response.aread()) or b""
        import json

        body = json.loads(data)
    except Exception:
        return None
    err = body.get("error") if isinstance(body, dict) else None
    return err if isinstance(err, str) else None


class _HostFlow:
    """The host's wrapper around an SDK provider's flow (mixed in before the SDK class)."""

    _session: OAuthSession
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

    _session: OAuthSession
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
            if error in _REJECTED_CLIENT_ERRORS and self._session.drop_registration(self.context, error):
                raise RegistrationRejected(
                    f"the authorization server rejected the client registration ({error}); it was dropped "
                    "and will be redone at the next sign-in"
                )
            detail = f" ({error})" if error else ""
            hint = " - check oauth.clientId / oauth.clientSecret" if error in _REJECTED_CLIENT_ERRORS else ""
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

    def __init__(self, session: OAuthSession) -> None:
        self.session = session

    async def get_tokens(self) -> OAuthToken | None:
        return self.session.stored_tokens()

    async def set_tokens(self, tokens: OAuthToken) -> None:
        self.session.save_tokens(tokens)

    async def get_client_info(self) -> OAuthClientInformationFull | None:
        return self.session.client_info()

    async def set_client_info(self, client_info: OAuthClientInformationFull) -> None:
        self.session.save_client_info(client_info)


# The per-server session -----------------------------------------------------------------------

class OAuthSession:
    """OAuth state of one server for the life of the host (survives reconnects)."""

    def __init__(
        self,
        config: ServerConfig,
        store: OAuthStore,
        *,
        opener: Callable[[], AuthOpener | None],
        on_change: Callable[[], None] = lambda: None,
        sign_in_timeout: float | None = None,
    ) -> None:
        assert config.oauth is not None and config.url is not None
        self.config = config
        self.store = store
        self._opener = opener
        self._on_change = on_change
        self._sign_in_timeout = sign_in_timeout
        self.interactive = False
        self.state: AuthState | None = None
        self.reason: str | None = None
        self.step_ups = 0
        self.challenge_pending = False
        """Set when a challenge was refused (not interactive) during the current attempt."""
        self.registration_rejected = False
        self._redirect_uri: str | None = None
        self._provider_context: Any = None
        self._hooks = AuthHooks(pause_deadline=no_pause, ready=lambda: False)
        self._pause: contextlib.AbstractContextManager[None] | None = None
        self._listener: LoopbackListener | None = None
        self._refresh_lock: Any = None
        self.dpop_nonces: dict[str, str] = {}
        """The last DPoP nonce each origin (authorization server, MCP server) sent."""
        self.record = store.load(self.name, self.url) or AuthRecord(server=self.name, url=self.url)
        self._learn_secrets()
        if self.record.tokens:
            self.state = AuthState.SIGNED_IN

    # identity -------------------------------------------------------------------------------
    @property
    def name(self) -> str:
        return self.config.name

    @property
    def url(self) -> str:
        assert self.config.url is not None
        return self.config.url

    @property
    def oauth(self) -> OAuthConfig:
        assert self.config.oauth is not None
        return self.config.oauth

    @property
    def sign_in_timeout(self) -> float:
        return self._sign_in_timeout if self._sign_in_timeout is not None else self.oauth.sign_in_timeout

    def update_config(self, config: ServerConfig) -> None:
        self.config = config

    # status ---------------------------------------------------------------------------------
    def status(self) -> dict[str, Any] | None:
        if self.state is None:
            return None
        out: dict[str, Any] = {"state": self.state.value}
        if self.state is AuthState.SIGNED_IN and self.record.expires_at is not None:
            out["expiresAt"] = int(self.record.expires_at)
        if self.reason:
            out["reason"] = redact_live(self.reason, self.config.secrets)
        return out

    def _set(self, state: AuthState | None, reason: str | None = None) -> None:
        if state == self.state and reason == self.reason:
            return
        self.state, self.reason = state, reason
        try:
            self._on_change()
        except Exception:
            log.exception("auth status listener failed")

    def needs_sign_in_reason(self) -> str | None:
        if self.state is AuthState.NEEDS_SIGN_IN:
            return self.reason or "sign-in required"
        return None

    # lifecycle ------------------------------------------------------------------------------
    def begin_attempt(self) -> None:
        self.challenge_pending = False
        self.registration_rejected = False

    def begin_sign_in(self) -> None:
        """The user asked: authorizations for this server may open the page from now on."""
        self.interactive = True
        self.step_ups = 0
        self._set(AuthState.SIGNING_IN)

    def sign_in_finished(self, ok: bool, reason: str | None) -> None:
        if ok:
            self._set(AuthState.SIGNED_IN if self.record.tokens else None)
        elif self.state is not AuthState.FAILED:
            self._set(AuthState.FAILED, reason or "sign-in did not complete")

    async def sign_out(self) -> None:
        """Forget tokens and registration (revoking the tokens where the server offers it)."""
        await self._revoke()
        self.store.delete(self.name, self.url)
        self.record = AuthRecord(server=self.name, url=self.url)
        self.interactive = False
        self.step_ups = 0
        self._set(None)

    async def _revoke(self) -> None:
        tokens = self.record.tokens or {}
        endpoint = (self.record.metadata.get("oauth") or {}).get("revocation_endpoint")
        client = self.record.client or {}
        if not endpoint or not tokens or not client.get("client_id"):
            return
        data = {"client_id": client["client_id"]}
        if client.get("client_secret"):
            data["client_secret"] = client["client_secret"]
        try:
            async with create_mcp_http_client(timeout=httpx2.Timeout(5.0)) as http:
                for kind in ("refresh_token", "access_token"):
                    if tokens.get(kind):
                        await http.post(endpoint, data={**data, "token": tokens[kind], "token_type_hint": kind})
        except Exception as e:  # best effort: sign-out works offline too
            log.info("MCP server %s: token revocation failed: %s", self.name, type(e).__name__)

    # decisions made inside the flow ---------------------------------------------------------
    def may_authorize(self, response: httpx2.Response, *, ready: bool) -> bool:
        """Called on a 401/403-insufficient_scope: go on with (re-)authorization or not."""
        step_up = response.status_code == 403
        from mcp.client.auth.utils import extract_scope_from_www_auth

        scope = extract_scope_from_www_auth(response)
        scope_txt = f" (scope: {scope})" if scope else ""
        if not self.oauth.explicit and response.status_code == 401 and not self.record.tokens:
            challenge = response.headers.get("www-authenticate", "").lower()
            if "bearer" not in challenge and "dpop" not in challenge:
                return False  # a plain 401, not an OAuth challenge: the request fails as is
        if self.oauth.interactive and not self.interactive:
            self.challenge_pending = True
            why = (f"the server asks for more permission{scope_txt}; sign in again to grant it" if step_up
                   else "the server requires sign-in" + scope_txt)
            if self.state is AuthState.NEEDS_SIGN_IN and self.reason and not step_up:
                why = self.reason  # keep the more specific reason (a refused refresh token, ...)
            self._set(AuthState.NEEDS_SIGN_IN, why)
            return False
        if step_up:
            if self.step_ups >= self.oauth.max_step_ups:
                self._set(self.state if self.state is not None else AuthState.SIGNED_IN,
                          f"the server still refuses with insufficient_scope{scope_txt} after "
                          f"{self.step_ups} re-authorizations (oauth.maxStepUps); giving up")
                return False
            self.step_ups += 1
        if self.oauth.interactive:
            self._set(AuthState.SIGNING_IN)
        return True

    def request_ok(self, *, has_token: bool, after_step_up: bool = False) -> None:
        if not has_token or not self.record.tokens:
            return
        if after_step_up:
            self.step_ups = 0
            self._set(AuthState.SIGNED_IN)
        elif self.state in (None, AuthState.SIGNING_IN, AuthState.FAILED):
            self._set(AuthState.SIGNED_IN)

    def still_insufficient(self, response: httpx2.Response) -> None:
        from mcp.client.auth.utils import extract_scope_from_www_auth

        scope = extract_scope_from_www_auth(response)
        self._set(self.state or AuthState.SIGNED_IN,
                  "the server still answers insufficient_scope" + (f" (scope: {scope})" if scope else ""))

    def flow_failed(self, exc: BaseException) -> None:
        if isinstance(exc, RegistrationRejected):
            self.registration_rejected = True
        self._set(AuthState.FAILED, describe_auth_error(exc))

    # the SDK's storage calls ------------------------------------------------------------------
    def stored_tokens(self) -> OAuthToken | None:
        if not self.record.tokens:
            return None
        try:
            return OAuthToken.model_validate(self.record.tokens)
        except ValidationError:
            return None

    def save_tokens(self, tokens: OAuthToken, context: Any = None) -> None:
        add_secrets(tokens.access_token, tokens.refresh_token)
        self.record.tokens = tokens.model_dump(mode="json", exclude_none=True)
        self.record.expires_at = time.time() + int(tokens.expires_in) if tokens.expires_in is not None else None
        ctx = context if context is not None else getattr(self, "_provider_context", None)
        if ctx is not None:
            self._remember_metadata(ctx)
        self.store.save(self.record)
        self._set(AuthState.SIGNED_IN)

    def client_info(self) -> OAuthClientInformationFull | None:
        o = self.oauth
        if o.client_id and o.grant == "authorization_code":
            method = o.token_endpoint_auth_method or ("client_secret_basic" if o.client_secret else "none")
            redirect = [AnyUrl(self._redirect_uri)] if self._redirect_uri else None
            return OAuthClientInformationFull(client_id=o.client_id, client_secret=o.client_secret,
                                              token_endpoint_auth_method=method, redirect_uris=redirect)
        if not self.record.client:
            return None
        try:
            return OAuthClientInformationFull.model_validate(self.record.client)
        except ValidationError:
            return None

    def save_client_info(self, info: OAuthClientInformationFull) -> None:
        if self.oauth.client_id:
            return  # pre-registered: comes from the settings, never stored
        add_secrets(info.client_secret)
        self.record.client = info.model_dump(mode="json", exclude_none=True)
        self.record.client_source = "cimd" if info.client_id == self.oauth.client_metadata_url else "dcr"
        if self._redirect_uri:
            port = urlsplit(self._redirect_uri).port
            self.record.redirect_port = port
        self.store.save(self.record)

    # sharing the record with other host processes -------------------------------------------
    def adopt_newer(self, context: Any) -> bool:
        """Take the stored tokens when another host process (a second editor window, the
        terminal chat) saved newer ones since this one read the record: spending our copy of a
        rotated refresh token would fail, and the failure used to wipe the good tokens."""
        disk = self.store.load(self.name, self.url)
        if disk is None or not disk.tokens or disk.tokens == self.record.tokens \
                or disk.updated_at <= self.record.updated_at:
            return False
        log.info("MCP server %s: using the tokens another agent-ls process saved", self.name)
        client_changed = disk.client != self.record.client
        self.record.tokens, self.record.expires_at = disk.tokens, disk.expires_at
        self.record.dpop = disk.dpop  # the key those tokens are bound to
        if not self.oauth.client_id and disk.client:
            self.record.client, self.record.client_source = disk.client, disk.client_source
        self.record.updated_at = disk.updated_at
        self._learn_secrets()
        if context is not None:
            context.current_tokens = self.stored_tokens()
            context.token_expiry_time = disk.expires_at
            if client_changed:
                context.client_info = self.client_info()
        if self.state is not AuthState.SIGNED_IN:
            self._set(AuthState.SIGNED_IN)
        return True

    async def acquire_refresh_lock(self) -> None:
        if self._refresh_lock is not None:
            return
        lock = self.store.refresh_lock(self.name, self.url)
        try:
            await lock.acquire(timeout=REFRESH_LOCK_TIMEOUT)
        except Timeout:
            log.warning("MCP server %s: another agent-ls process held the token lock for %.0f s; refreshing "
                        "without it", self.name, REFRESH_LOCK_TIMEOUT)
            return
        self._refresh_lock = lock

    async def release_refresh_lock(self) -> None:
        lock, self._refresh_lock = self._refresh_lock, None
        if lock is not None:
            with contextlib.suppress(Exception):
                await lock.release()

    def restore_context(self, context: Any) -> None:
        """After the SDK loaded tokens: the absolute expiry and the discovered metadata."""
        self._provider_context = context
        if context.current_tokens is not None and self.record.expires_at is not None:
            context.token_expiry_time = self.record.expires_at
        md = self.record.metadata
        try:
            if context.oauth_metadata is None and isinstance(md.get("oauth"), dict):
                context.oauth_metadata = OAuthMetadata.model_validate(md["oauth"])
            if context.protected_resource_metadata is None and isinstance(md.get("resource"), dict):
                context.protected_resource_metadata = ProtectedResourceMetadata.model_validate(md["resource"])
            if context.auth_server_url is None and isinstance(md.get("authServer"), str):
                context.auth_server_url = md["authServer"]
        except ValidationError:
            self.record.metadata = {}

    def _remember_metadata(self, context: Any) -> None:
        md: dict[str, Any] = {}
        if getattr(context, "oauth_metadata", None) is not None:
            md["oauth"] = context.oauth_metadata.model_dump(mode="json", exclude_none=True)
        if getattr(context, "protected_resource_metadata", None) is not None:
            md["resource"] = context.protected_resource_metadata.model_dump(mode="json", exclude_none=True)
        if getattr(context, "auth_server_url", None):
            md["authServer"] = context.auth_server_url
        if md:
            self.record.metadata = md

    def refresh_failed(self, status: int, error: str | None, context: Any) -> None:
        log.info("MCP server %s: token refresh failed: HTTP %s %s", self.name, status, error or "")
        disk = self.store.load(self.name, self.url)
        others = disk is not None and disk.tokens and disk.tokens != self.record.tokens
        self.record.tokens = None
        self.record.expires_at = None
        if others:
            # Another process saved other tokens (it refreshed without the lock, or signed in
            # again): not the refused ones, so they stay on disk and the next attempt takes them.
            self.record.updated_at = 0.0
        elif error in _REJECTED_CLIENT_ERRORS:
            self.drop_registration(context, error)
        else:
            self.store.save(self.record)
        self._set(AuthState.NEEDS_SIGN_IN if self.oauth.interactive else None,
                  f"the refresh token was not accepted ({error or f'HTTP {status}'}); sign in again")

    def drop_registration(self, context: Any, error: str | None) -> bool:
        """Forget a registration the server rejected; False for a pre-registered client."""
        if self.oauth.client_id:
            return False
        log.warning("MCP server %s: the authorization server rejected the client registration (%s); "
                    "dropping it so the next authorization registers again", self.name, error)
        self.record.client = None
        self.record.client_source = None
        self.store.save(self.record)
        if context is not None:
            context.client_info = None
        return True

    def _learn_secrets(self) -> None:
        tokens = self.record.tokens or {}
        add_secrets(tokens.get("access_token"), tokens.get("refresh_token"),
                    (self.record.client or {}).get("client_secret"),
                    ((self.record.dpop or {}).get("jwk") or {}).get("d"))

    # building the httpx auth ------------------------------------------------------------------
    def httpx_auth(self, hooks: AuthHooks) -> httpx2.Auth:
        """A fresh SDK provider for one connection attempt."""
        o = self.oauth
        storage = SessionTokenStorage(self)
        provider: Any
        if o.grant == "client_credentials":
            provider = self._client_credentials_provider(storage)
        elif o.grant == "identity_assertion":
            provider = self._identity_assertion_provider(storage)
        elif o.grant == "jwt_bearer":
            assert o.client_id is not None
            method = o.token_endpoint_auth_method if o.token_endpoint_auth_method in (
                "client_secret_basic", "client_secret_post") else "client_secret_basic"
            provider = HostJWTBearerProvider(self.url, storage, o.client_id, assertion_source(o),
                                             client_secret=o.client_secret, token_endpoint_auth_method=method,
                                             scope=o.scopes, issuer=o.issuer)
        else:
            self._redirect_uri = redirect_uri_for(self._choose_port())
            metadata = OAuthClientMetadata(
                client_name=o.client_name,
                redirect_uris=[AnyUrl(self._redirect_uri)],
                grant_types=["authorization_code", "refresh_token"],
                response_types=["code"],
                token_endpoint_auth_method=o.token_endpoint_auth_method if o.client_id else None,  # type: ignore[arg-type]
            )
            provider = HostOAuthProvider(
                self.url, metadata, storage,
                redirect_handler=self._on_redirect, callback_handler=self._on_callback,
                client_metadata_url=o.client_metadata_url,
            )
        provider._session = self
        provider._hooks = hooks
        self._hooks = hooks
        return DPoPAuth(provider, self)

    def _choose_port(self) -> int:
        o = self.oauth
        if o.redirect_port:
            return o.redirect_port
        port = self.record.redirect_port
        if not self.interactive:
            return port or 0
        if port and port_is_free(port):
            return port
        new = free_loopback_port()
        if self.record.client and self.record.client_source == "dcr":
            registered = [str(u) for u in self.record.client.get("redirect_uris") or []]
            if redirect_uri_for(new) not in registered:
                log.info("MCP server %s: the registered redirect port %s is taken; registering again with %s",
                         self.name, port, new)
                self.record.client = None
                self.record.client_source = None
        self.record.redirect_port = new
        return new

    def _client_credentials_provider(self, storage: SessionTokenStorage) -> Any:
        o = self.oauth
        assert o.client_id is not None
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # no issuer configured: the SDK's deprecation notice
            if o.token_endpoint_auth_method == "private_key_jwt" or o.private_key or o.private_key_file \
                    or o.client_assertion:
                if o.client_assertion:
                    assertion = static_assertion_provider(o.client_assertion)
                else:
                    key = o.private_key or Path(o.private_key_file or "").expanduser().read_text(encoding="utf-8")
                    add_secrets(key)
                    assertion = SignedJWTParameters(
                        issuer=o.client_id, subject=o.client_id, signing_key=key,
                        signing_algorithm=o.signing_algorithm,
                    ).create_assertion_provider()
                return HostPrivateKeyJWTProvider(self.url, storage, o.client_id, assertion, scope=o.scopes,
                                                 issuer=o.issuer)
            method = o.token_endpoint_auth_method if o.token_endpoint_auth_method in (
                "client_secret_basic", "client_secret_post") else "client_secret_basic"
            return HostClientCredentialsProvider(self.url, storage, o.client_id, o.client_secret or "",
                                                 token_endpoint_auth_method=method,  # type: ignore[arg-type]
                                                 scope=o.scopes, issuer=o.issuer)

    def _identity_assertion_provider(self, storage: SessionTokenStorage) -> Any:
        o = self.oauth
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
            self.url, storage, o.client_id, o.client_secret, o.issuer, fetch_id_jag, scope=o.scopes,
            token_endpoint_auth_method=method,  # type: ignore[arg-type]
        )

    # the person in the loop -------------------------------------------------------------------
    async def _on_redirect(self, url: str) -> None:
        if not self.interactive:
            self.challenge_pending = True
            self._set(AuthState.NEEDS_SIGN_IN, "the server requires sign-in")
            raise SignInError(f"MCP server '{self.name}' needs sign-in")
        assert self._redirect_uri is not None
        port = urlsplit(self._redirect_uri).port or 0
        listener = LoopbackListener(self.name, port)
        await listener.start()
        self._listener = listener
        pause = self._hooks.pause_deadline()
        pause.__enter__()
        self._pause = pause
        self._set(AuthState.SIGNING_IN)
        opener = self._opener() or default_opener
        try:
            await opener(self.name, url)
        except SignInError:
            await self._end_wait()
            raise
        except Exception as e:
            await self._end_wait()
            raise SignInError(f"could not open the sign-in page: {type(e).__name__}: {e}") from e

    async def _on_callback(self) -> AuthorizationCodeResult:
        listener = self._listener
        if listener is None:
            raise SignInError("no sign-in is in progress")
        try:
            return await listener.wait(self.sign_in_timeout)
        finally:
            await self._end_wait()

    async def _end_wait(self) -> None:
        listener, self._listener = self._listener, None
        if listener is not None:
            await listener.close()
        pause, self._pause = self._pause, None
        if pause is not None:
            pause.__exit__(None, None, None)


def describe_auth_error(exc: BaseException) -> str:
    """A message for status and errors: what failed, never a token."""
    if isinstance(exc, SignInError):
        msg = str(exc)
    elif isinstance(exc, OAuthRegistrationError):
        msg = f"client registration failed: {exc}"
    elif isinstance(exc, OAuthTokenError):
        msg = f"token request failed: {exc}"
    elif isinstance(exc, OAuthFlowError):
        msg = f"authorization failed: {exc}"
    elif isinstance(exc, httpx2.HTTPError):
        msg = f"cannot reach the authorization server: {type(exc).__name__}: {exc}"
    else:
        msg = f"authorization failed: {type(exc).__name__}: {exc}"
    return redact_live(msg)


def is_auth_error(exc: BaseException) -> bool:
    return isinstance(exc, (SignInError, OAuthFlowError))


@contextlib.contextmanager
def no_pause() -> Iterator[None]:
    yield


__all__ = [
    "AuthHooks",
    "AuthOpener",
    "AuthState",
    "LoopbackListener",
    "OAuthSession",
    "RegistrationRejected",
    "SignInDenied",
    "SignInError",
    "SignInTimeout",
    "default_opener",
    "describe_auth_error",
    "headless_opener",
    "is_auth_error",
    "open_in_gui_browser",
]
