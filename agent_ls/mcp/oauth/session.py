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
  (:mod:`agent_ls.mcp.oauth.store`, 0600 files in a 0700 folder). The SDK provider is
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
  :class:`agent_ls.mcp.oauth.dpop.DPoPAuth` (sender-constrained tokens, RFC 9449, with the
  nonce retries); the ``jwt_bearer`` grant (workload identity federation, RFC 7523) is
  :mod:`agent_ls.mcp.oauth.wif`.
- **Secrets.** Every token, code and client secret seen is registered with
  :mod:`agent_ls.core.redact`, which masks it in status, errors and (with the redacting log
  filter) log records.

The parts: :mod:`.state` (the sign-in state and errors), :mod:`.redirect` (openers
and the loopback listener), :mod:`.providers` (the SDK providers with the host's
behaviour), :mod:`.record` (the stored record, shared between processes).
"""

from __future__ import annotations

import contextlib
import logging
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit

import httpx2
from mcp.client.auth.utils import extract_scope_from_www_auth
from mcp.shared._httpx_utils import create_mcp_http_client
from mcp.shared.auth import AuthorizationCodeResult

from agent_ls.config.entries import ServerConfig
from agent_ls.config.oauth_config import OAuthConfig
from agent_ls.core.redact import redact_live
from agent_ls.mcp.oauth.dpop import DPoPAuth
from agent_ls.mcp.oauth.providers import (
    AuthHooks,
    SessionTokenStorage,
    authorization_code_provider,
    machine_provider,
    no_pause,
)
from agent_ls.mcp.oauth.record import TokenRecord
from agent_ls.mcp.oauth.redirect import (
    AuthOpener,
    LoopbackListener,
    default_opener,
    free_loopback_port,
    port_is_free,
    redirect_uri_for,
    state_of,
)
from agent_ls.mcp.oauth.state import AuthState, RegistrationRejected, SignInError, describe_auth_error
from agent_ls.mcp.oauth.store import AuthRecord, OAuthStore

log = logging.getLogger(__name__)


class OAuthSession(TokenRecord):
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
        scope = extract_scope_from_www_auth(response)
        self._set(self.state or AuthState.SIGNED_IN,
                  "the server still answers insufficient_scope" + (f" (scope: {scope})" if scope else ""))

    def flow_failed(self, exc: BaseException) -> None:
        if isinstance(exc, RegistrationRejected):
            self.registration_rejected = True
        self._set(AuthState.FAILED, describe_auth_error(exc))

    # building the httpx auth ------------------------------------------------------------------
    def httpx_auth(self, hooks: AuthHooks) -> httpx2.Auth:
        """A fresh SDK provider for one connection attempt."""
        storage = SessionTokenStorage(self)
        provider: Any
        if self.oauth.grant in ("client_credentials", "identity_assertion", "jwt_bearer"):
            provider = machine_provider(self, storage)
        else:
            self._redirect_uri = redirect_uri_for(self._choose_port())
            provider = authorization_code_provider(self, storage, self._redirect_uri,
                                                   self._on_redirect, self._on_callback)
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

    # the person in the loop -------------------------------------------------------------------
    async def _on_redirect(self, url: str) -> None:
        if not self.interactive:
            self.challenge_pending = True
            self._set(AuthState.NEEDS_SIGN_IN, "the server requires sign-in")
            raise SignInError(f"MCP server '{self.name}' needs sign-in")
        assert self._redirect_uri is not None
        port = urlsplit(self._redirect_uri).port or 0
        listener = LoopbackListener(self.name, port, state_of(url))
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

