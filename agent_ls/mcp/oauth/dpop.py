"""DPoP sender-constrained access tokens (RFC 9449, MCP SEP-1932) for the host's OAuth.

The mcp SDK's OAuth client knows only Bearer tokens, so DPoP is an ``httpx2.Auth`` layer
around the SDK provider (:class:`DPoPAuth`); the provider does discovery, registration and the
grants as before and never sees a DPoP detail:

- **The key.** One ES256 (P-256) key per server, made the first time a token is requested
  with DPoP and kept in the server's OAuth record next to the tokens (``dpop.jwk``, a private
  JWK, in the 0600 file of :mod:`agent_ls.mcp.oauth.store`); a token bound to it and its
  refresh token are useless without it. *Sign out* forgets it with the tokens. Its private
  part is registered with :mod:`agent_ls.core.redact`.
- **Token requests** (any POST the provider makes with a ``grant_type``: authorization code,
  refresh, client credentials, jwt-bearer) carry a ``DPoP`` proof (``typ: dpop+jwt``, the
  public JWK, ``htm``, ``htu``, ``iat``, a fresh ``jti``). A ``token_type: DPoP`` answer binds
  the token: the record keeps ``dpop.ath``, the hash of that access token, and the provider is
  handed the answer as a Bearer one (the SDK's token model accepts nothing else). A Bearer
  answer is used as a Bearer token.
- **MCP requests** with a bound token go out as ``Authorization: DPoP <token>`` with a fresh
  proof carrying ``ath`` (the token's hash), on every request (POST, GET, DELETE).
- **Nonces.** ``use_dpop_nonce`` from the token endpoint (400) or the MCP server (401 with a
  ``DPoP error="use_dpop_nonce"`` challenge) is answered by resending the request with a
  proof that carries the ``DPoP-Nonce`` the server sent (at most twice in a row); the last
  nonce of each origin is remembered for this server's later proofs, and any ``DPoP-Nonce``
  header on an answer replaces it. The SDK never sees these 400/401 answers, so a nonce
  challenge never starts a new authorization.
- **When.** ``oauth.dpop``: ``true`` = always, ``false`` = never, absent = automatic: on when
  the authorization server's metadata lists ES256 in ``dpop_signing_alg_values_supported``,
  when the resource's metadata says ``dpop_bound_access_tokens_required`` or its 401 challenge
  uses the DPoP scheme, and for refreshing a token that is already DPoP-bound.

Proofs, tokens and keys never reach a log line.
"""

from __future__ import annotations

import base64
import hashlib
import json
import logging
import secrets
import time
from collections.abc import AsyncGenerator
from typing import Any, Protocol
from urllib.parse import parse_qs, urlsplit, urlunsplit

import httpx2
import jwt
from cryptography.hazmat.primitives.asymmetric import ec
from jwt.algorithms import ECAlgorithm

from agent_ls.config.oauth_config import OAuthConfig
from agent_ls.core.redact import add_secrets
from agent_ls.mcp.oauth.store import AuthRecord

log = logging.getLogger(__name__)

ALGORITHM = "ES256"
MAX_NONCE_RETRIES = 2
"""Resends of one request with a new nonce before its answer is passed on as it is."""
_METADATA_PATHS = ("/.well-known/oauth-authorization-server", "/.well-known/openid-configuration")
_RESOURCE_METADATA_PATH = "/.well-known/oauth-protected-resource"


def _b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode("ascii").rstrip("=")


def access_token_hash(token: str) -> str:
    """``ath``: base64url(SHA-256(access token)) (RFC 9449 section 4.2)."""
    return _b64url(hashlib.sha256(token.encode("ascii", "replace")).digest())


def htu_of(url: str | httpx2.URL) -> str:
    """The proof's ``htu``: the request URI without query and fragment."""
    parts = urlsplit(str(url))
    return urlunsplit((parts.scheme, parts.netloc, parts.path or "/", "", ""))


def origin_of(url: str | httpx2.URL) -> str:
    parts = urlsplit(str(url))
    return f"{parts.scheme}://{parts.netloc}"


class DPoPKey:
    """An ES256 key pair that signs DPoP proofs."""

    def __init__(self, private_key: ec.EllipticCurvePrivateKey) -> None:
        self._key = private_key
        full = ECAlgorithm.to_jwk(private_key, as_dict=True)
        self.public_jwk: dict[str, str] = {k: str(full[k]) for k in ("kty", "crv", "x", "y")}
        self._private_jwk = {**self.public_jwk, "d": str(full["d"])}
        add_secrets(self._private_jwk["d"])

    @classmethod
    def generate(cls) -> DPoPKey:
        return cls(ec.generate_private_key(ec.SECP256R1()))

    @classmethod
    def from_jwk(cls, data: Any) -> DPoPKey | None:
        """The stored key, or None when the record holds none (or something unusable)."""
        if not isinstance(data, dict) or data.get("kty") != "EC" or data.get("crv") != "P-256" or "d" not in data:
            return None
        try:
            key = ECAlgorithm.from_jwk(json.dumps(data))
        except Exception:
            return None
        return cls(key) if isinstance(key, ec.EllipticCurvePrivateKey) else None

    def private_jwk(self) -> dict[str, str]:
        return dict(self._private_jwk)

    def thumbprint(self) -> str:
        """RFC 7638 JWK thumbprint (what an authorization server binds the token to: ``cnf.jkt``)."""
        canonical = json.dumps({k: self.public_jwk[k] for k in ("crv", "kty", "x", "y")},
                               separators=(",", ":"), sort_keys=True)
        return _b64url(hashlib.sha256(canonical.encode()).digest())

    def proof(self, method: str, url: str | httpx2.URL, *, nonce: str | None = None,
              access_token: str | None = None) -> str:
        claims: dict[str, Any] = {"jti": secrets.token_urlsafe(18), "htm": method.upper(), "htu": htu_of(url),
                                  "iat": int(time.time())}
        if nonce:
            claims["nonce"] = nonce
        if access_token is not None:
            claims["ath"] = access_token_hash(access_token)
        return jwt.encode(claims, self._key, algorithm=ALGORITHM,
                          headers={"typ": "dpop+jwt", "jwk": self.public_jwk})


class DPoPHost(Protocol):
    """What :class:`DPoPAuth` needs from the server's OAuth session."""

    record: AuthRecord
    dpop_nonces: dict[str, str]

    @property
    def name(self) -> str: ...

    @property
    def oauth(self) -> OAuthConfig: ...


def _split_authorization(value: str) -> tuple[str, str]:
    scheme, _, token = value.partition(" ")
    return scheme.lower(), token.strip()


def _is_token_request(request: httpx2.Request) -> bool:
    if request.method != "POST" or "x-www-form-urlencoded" not in request.headers.get("content-type", ""):
        return False
    try:
        body = request.content
    except httpx2.RequestNotRead:
        return False
    return "grant_type" in parse_qs(body.decode("utf-8", "replace"))


async def _json_body(response: httpx2.Response) -> dict[str, Any] | None:
    try:
        data = json.loads(await response.aread() or b"null")
    except Exception:
        return None
    return data if isinstance(data, dict) else None


class DPoPAuth(httpx2.Auth):
    """Wraps the SDK provider of one connection attempt (see the module docstring)."""

    def __init__(self, inner: httpx2.Auth, session: DPoPHost) -> None:
        self.inner = inner
        self.session = session
        self._as_algorithms: list[str] | None = None
        self._resource_asks = False
        self._announced = False
        self._loaded: tuple[str, DPoPKey] | None = None

    # deciding -----------------------------------------------------------------------------
    def _bound_hash(self) -> str | None:
        ath = (self.session.record.dpop or {}).get("ath")
        return ath if isinstance(ath, str) else None

    def _wanted(self) -> bool:
        mode = self.session.oauth.dpop
        if mode is not None:
            return mode
        if self._bound_hash() is not None or self._resource_asks:
            return True  # refreshing a bound token / the resource wants DPoP
        return self._as_algorithms is not None and ALGORITHM in self._as_algorithms

    def _key(self) -> DPoPKey:
        """The record's key (another process may have replaced the record's key and tokens
        together), or a new one."""
        rec = self.session.record
        jwk = (rec.dpop or {}).get("jwk")
        d = jwk.get("d") if isinstance(jwk, dict) else None
        if self._loaded is not None and d == self._loaded[0]:
            return self._loaded[1]
        key = DPoPKey.from_jwk(jwk)
        if key is None:
            key = DPoPKey.generate()
            rec.dpop = {"jwk": key.private_jwk(), "ath": None}  # saved with the tokens
        self._loaded = (key.private_jwk()["d"], key)
        return key

    # decorating requests ------------------------------------------------------------------
    def _sign_token_request(self, request: httpx2.Request) -> bool:
        if not self._wanted():
            request.headers.pop("DPoP", None)
            return False
        if not self._announced:
            self._announced = True
            log.info("MCP server %s: requesting a DPoP-bound token (%s)", self.session.name, ALGORITHM)
        nonce = self.session.dpop_nonces.get(origin_of(request.url))
        request.headers["DPoP"] = self._key().proof(request.method, request.url, nonce=nonce)
        return True

    def _sign_resource_request(self, request: httpx2.Request) -> bool:
        scheme, token = _split_authorization(request.headers.get("authorization", ""))
        bound = self._bound_hash()
        if scheme not in ("bearer", "dpop") or not token or bound is None or access_token_hash(token) != bound:
            request.headers.pop("DPoP", None)
            return False
        nonce = self.session.dpop_nonces.get(origin_of(request.url))
        request.headers["Authorization"] = f"DPoP {token}"
        request.headers["DPoP"] = self._key().proof(request.method, request.url, nonce=nonce, access_token=token)
        return True

    # reading answers ----------------------------------------------------------------------
    def _take_nonce(self, response: httpx2.Response) -> bool:
        """Remember a ``DPoP-Nonce`` the server sent (any answer may carry a new one)."""
        nonce = response.headers.get("dpop-nonce")
        if not nonce:
            return False
        self.session.dpop_nonces[origin_of(response.request.url)] = nonce
        return True

    async def _token_nonce_challenge(self, response: httpx2.Response) -> bool:
        got_nonce = self._take_nonce(response)
        if response.status_code != 400 or not got_nonce:
            return False
        body = await _json_body(response)
        return bool(body and body.get("error") == "use_dpop_nonce")

    def _resource_nonce_challenge(self, response: httpx2.Response) -> bool:
        got_nonce = self._take_nonce(response)
        challenge = response.headers.get("www-authenticate", "")
        return response.status_code == 401 and got_nonce and "use_dpop_nonce" in challenge

    async def _token_answer(self, response: httpx2.Response) -> httpx2.Response:
        """Bind a DPoP token to the key; hand the provider a Bearer-typed answer."""
        if response.status_code not in (200, 201):
            return response
        body = await _json_body(response)
        token = body.get("access_token") if body else None
        if body is None or not isinstance(token, str):
            return response
        rec = self.session.record
        token_type = str(body.get("token_type") or "")
        if token_type.lower() != "dpop":
            if rec.dpop is not None:
                rec.dpop["ath"] = None
            if self.session.oauth.dpop:
                log.warning("MCP server %s: the authorization server issued a %s token, not a DPoP-bound "
                            "one; using it as it is", self.session.name, token_type or "untyped")
            return response
        add_secrets(token, body.get("refresh_token"))
        self._key()
        assert rec.dpop is not None
        rec.dpop["ath"] = access_token_hash(token)
        body["token_type"] = "Bearer"
        return httpx2.Response(response.status_code, json=body, request=response.request,
                               headers={"cache-control": "no-store"})

    async def _observe(self, request: httpx2.Request, response: httpx2.Response) -> None:
        """Learn from discovery answers whether DPoP is offered or required."""
        if request.method != "GET" or response.status_code != 200:
            return
        path = request.url.path
        if any(p in path for p in _METADATA_PATHS):
            body = await _json_body(response)
            algs = body.get("dpop_signing_alg_values_supported") if body else None
            self._as_algorithms = [str(a) for a in algs] if isinstance(algs, list) else None
            if self._as_algorithms and ALGORITHM not in self._as_algorithms and self.session.oauth.dpop is None:
                log.info("MCP server %s: the authorization server's DPoP algorithms (%s) do not include %s; "
                         "not using DPoP", self.session.name, ", ".join(self._as_algorithms), ALGORITHM)
        elif _RESOURCE_METADATA_PATH in path:
            body = await _json_body(response)
            if body and body.get("dpop_bound_access_tokens_required") is True:
                self._resource_asks = True

    def _observe_challenge(self, response: httpx2.Response) -> None:
        if response.status_code == 401 and response.headers.get("www-authenticate", "").lower().startswith("dpop"):
            self._resource_asks = True

    # the flow -----------------------------------------------------------------------------
    async def async_auth_flow(self, request: httpx2.Request) -> AsyncGenerator[httpx2.Request, httpx2.Response]:
        flow = self.inner.async_auth_flow(request)
        try:
            try:
                outgoing = await flow.__anext__()
            except StopAsyncIteration:
                return
            while True:
                if outgoing is request:
                    signed = self._sign_resource_request(outgoing)
                    response = yield outgoing
                    for _ in range(MAX_NONCE_RETRIES):
                        if not (self._resource_nonce_challenge(response) and signed):
                            break
                        self._sign_resource_request(outgoing)
                        response = yield outgoing
                    self._observe_challenge(response)
                elif _is_token_request(outgoing):
                    signed = self._sign_token_request(outgoing)
                    response = yield outgoing
                    if signed:
                        for _ in range(MAX_NONCE_RETRIES):
                            if not await self._token_nonce_challenge(response):
                                break
                            self._sign_token_request(outgoing)
                            response = yield outgoing
                        response = await self._token_answer(response)
                else:
                    response = yield outgoing
                    await self._observe(outgoing, response)
                try:
                    outgoing = await flow.asend(response)
                except StopAsyncIteration:
                    return
        finally:
            await flow.aclose()


__all__ = ["ALGORITHM", "DPoPAuth", "DPoPKey", "access_token_hash", "htu_of"]
