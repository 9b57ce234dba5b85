"""One server's token record: the SDK's storage calls, and sharing the record with the other
host processes (a second editor window, the terminal chat).

The record (tokens, registration, discovered metadata, the DPoP key) persists in the
:class:`agent_ls.mcp.oauth.store.OAuthStore`; :class:`TokenRecord` is the part of
:class:`agent_ls.mcp.oauth.session.OAuthSession` that reads and writes it: newer tokens another
process saved are adopted, a refresh holds the inter-process lock until its answer is saved,
and a rejected registration is dropped.
"""

from __future__ import annotations

import contextlib
import logging
import time
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from filelock import Timeout
from mcp.shared.auth import OAuthClientInformationFull, OAuthMetadata, OAuthToken, ProtectedResourceMetadata
from pydantic import AnyUrl, ValidationError

from agent_ls.core.redact import add_secrets
from agent_ls.mcp.oauth.state import REJECTED_CLIENT_ERRORS, AuthState
from agent_ls.mcp.oauth.store import AuthRecord, OAuthStore

if TYPE_CHECKING:
    from agent_ls.config.oauth_config import OAuthConfig

log = logging.getLogger(__name__)

REFRESH_LOCK_TIMEOUT = 40.0
"""Seconds a refresh waits for another process's refresh of the same server (beyond a token
request's own timeout), then goes ahead without the lock."""


class TokenRecord:
    """The stored record of one server's OAuth session (mixed into ``OAuthSession``)."""

    store: OAuthStore
    record: AuthRecord
    state: AuthState | None
    _redirect_uri: str | None
    _provider_context: Any
    _refresh_lock: Any

    if TYPE_CHECKING:
        @property
        def name(self) -> str: ...

        @property
        def url(self) -> str: ...

        @property
        def oauth(self) -> OAuthConfig: ...

        def _set(self, state: AuthState | None, reason: str | None = None) -> None: ...

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
        elif error in REJECTED_CLIENT_ERRORS:
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

