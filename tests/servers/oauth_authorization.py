"""The test OAuth authorization server of :mod:`tests.servers.oauth_server` (starlette) and its
state, on which the tests turn knobs and read counters.

It implements what a real one does for MCP clients: RFC 8414 metadata, RFC 7591 dynamic client
registration, the authorization endpoint (PKCE S256 required; it approves at once and redirects
back, like a logged-in user who clicks "Allow", so a headless opener can complete it; RFC 8252
loopback redirect URIs match on any port), the token endpoint (authorization_code,
refresh_token with rotation: each refresh token works once, a reused one is ``invalid_grant``),
RFC 7009 revocation, and client authentication (none / client_secret_basic /
client_secret_post; an unknown or revoked client is ``invalid_client``). DPoP and the workload
identity jwt-bearer grant are in :mod:`tests.servers.oauth_dpop`.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import secrets
import time
from typing import Any
from urllib.parse import unquote, urlencode, urlsplit

import attrs
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, RedirectResponse, Response
from starlette.routing import Route

try:
    from tests.servers.oauth_dpop import JWT_BEARER, jwt_bearer_grant, token_request_proof
except ImportError:  # run as a script: tests/servers is on sys.path
    from oauth_dpop import JWT_BEARER, jwt_bearer_grant, token_request_proof  # type: ignore[no-redef]

LOOPBACK = ("127.0.0.1", "localhost", "[::1]", "::1")
ADMIN_SCOPE = "mcp:admin"
BASE_SCOPE = "mcp:read"


@attrs.define
class Client:
    client_id: str
    secret: str | None
    auth_method: str
    redirect_uris: list[str]


@attrs.define
class Grant:
    client_id: str
    scopes: list[str]
    resource: str | None
    expires_at: float | None = None
    active: bool = True


@attrs.define
class AuthServerState:
    issuer: str = ""
    access_ttl: int = 3600
    refresh_delay: float = 0.0
    refuse_scopes: set[str] = attrs.field(factory=set)
    clients: dict[str, Client] = attrs.field(factory=dict)
    codes: dict[str, dict[str, Any]] = attrs.field(factory=dict)
    access_tokens: dict[str, Grant] = attrs.field(factory=dict)
    refresh_tokens: dict[str, Grant] = attrs.field(factory=dict)
    counts: dict[str, int] = attrs.field(factory=dict)
    authorize_requests: list[dict[str, str]] = attrs.field(factory=list)
    dpop: bool = False
    as_nonce: str | None = None
    rs_nonce: str | None = None
    workload_key: Any = None
    token_jkt: dict[str, str] = attrs.field(factory=dict)
    """Access and refresh tokens bound to a DPoP key (its thumbprint)."""
    proofs: list[tuple[str, dict[str, Any], dict[str, Any]]] = attrs.field(factory=list)
    seen_jtis: set[str] = attrs.field(factory=set)
    schemes: list[str] = attrs.field(factory=list)
    assertions: list[str] = attrs.field(factory=list)
    token_forms: list[dict[str, str]] = attrs.field(factory=list)

    def count(self, what: str) -> None:
        self.counts[what] = self.counts.get(what, 0) + 1

    def revoke_client(self, client_id: str) -> None:
        """The registration is gone: every use of it is ``invalid_client`` from now on."""
        self.clients.pop(client_id, None)
        for grant in [*self.access_tokens.values(), *self.refresh_tokens.values()]:
            if grant.client_id == client_id:
                grant.active = False

    def expire_access_tokens(self) -> None:
        for grant in self.access_tokens.values():
            grant.expires_at = time.time() - 1

    def issue(self, client_id: str, scopes: list[str], resource: str | None, jkt: str | None = None,
              refresh_token: bool = True) -> dict[str, Any]:
        access = "at-" + secrets.token_urlsafe(24)
        refresh = "rt-" + secrets.token_urlsafe(24)
        self.access_tokens[access] = Grant(client_id, scopes, resource, time.time() + self.access_ttl)
        out = {"access_token": access, "token_type": "DPoP" if jkt else "Bearer", "expires_in": self.access_ttl,
               "scope": " ".join(scopes)}
        if refresh_token:
            self.refresh_tokens[refresh] = Grant(client_id, scopes, resource)
            out["refresh_token"] = refresh
        if jkt:
            self.token_jkt[access] = self.token_jkt[refresh] = jkt
        return out

    def all_token_values(self) -> list[str]:
        return [*self.access_tokens, *self.refresh_tokens]


def _error(error: str, description: str, status: int = 400) -> JSONResponse:
    return JSONResponse({"error": error, "error_description": description}, status_code=status)


def _s256(verifier: str) -> str:
    return base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).decode().rstrip("=")


def _redirect_matches(requested: str, registered: list[str]) -> bool:
    if requested in registered:
        return True
    req = urlsplit(requested)
    if req.hostname not in LOOPBACK:
        return False
    for r in registered:  # RFC 8252 section 7.3: any port for loopback redirect URIs
        reg = urlsplit(r)
        if reg.scheme == req.scheme and reg.hostname == req.hostname and reg.path == req.path:
            return True
    return False


def authorization_server(state: AuthServerState) -> Starlette:
    async def metadata(request: Request) -> Response:
        iss = state.issuer
        return JSONResponse({
            "issuer": iss,
            "authorization_endpoint": f"{iss}/authorize",
            "token_endpoint": f"{iss}/token",
            "registration_endpoint": f"{iss}/register",
            "revocation_endpoint": f"{iss}/revoke",
            "response_types_supported": ["code"],
            "grant_types_supported": ["authorization_code", "refresh_token"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": ["none", "client_secret_basic", "client_secret_post"],
            "scopes_supported": [BASE_SCOPE, ADMIN_SCOPE],
            **({"dpop_signing_alg_values_supported": ["ES256"]} if state.dpop else {}),
            **({"grant_types_supported": ["authorization_code", "refresh_token", JWT_BEARER]}
               if state.workload_key is not None else {}),
        })

    async def register(request: Request) -> Response:
        body = await request.json()
        uris = body.get("redirect_uris") or []
        if not uris:
            return _error("invalid_redirect_uri", "redirect_uris is required")
        method = body.get("token_endpoint_auth_method") or "client_secret_post"
        client = Client("client-" + secrets.token_hex(8), None if method == "none" else "cs-" + secrets.token_urlsafe(16),
                        method, list(uris))
        state.clients[client.client_id] = client
        state.count("register")
        out = {"client_id": client.client_id, "redirect_uris": client.redirect_uris,
               "token_endpoint_auth_method": method, "client_id_issued_at": int(time.time()),
               "grant_types": body.get("grant_types") or ["authorization_code", "refresh_token"]}
        if client.secret:
            out["client_secret"] = client.secret
        return JSONResponse(out, status_code=201)

    async def authorize(request: Request) -> Response:
        q = dict(request.query_params)
        state.authorize_requests.append(q)
        state.count("authorize")
        client = state.clients.get(q.get("client_id", ""))
        if client is None:  # RFC 6749 4.1.2.1: never redirect for an unknown client
            return _error("invalid_client", "unknown client_id")
        redirect = q.get("redirect_uri", "")
        if not _redirect_matches(redirect, client.redirect_uris):
            return _error("invalid_request", "redirect_uri is not registered for this client")
        if q.get("code_challenge_method") != "S256" or not q.get("code_challenge"):
            return _error("invalid_request", "PKCE with S256 is required")
        code = "code-" + secrets.token_urlsafe(16)
        requested = (q.get("scope") or BASE_SCOPE).split()
        state.codes[code] = {"client_id": client.client_id, "redirect_uri": redirect,
                             "challenge": q["code_challenge"], "resource": q.get("resource"),
                             "scopes": [s for s in requested if s not in state.refuse_scopes],
                             "expires": time.time() + 120}
        params = {"code": code, "iss": state.issuer}
        if q.get("state"):
            params["state"] = q["state"]
        return RedirectResponse(f"{redirect}?{urlencode(params)}", status_code=302)

    def authenticate(request: Request, form: dict[str, str]) -> Client | Response:
        header = request.headers.get("authorization", "")
        client_id, secret = form.get("client_id"), form.get("client_secret")
        if header.lower().startswith("basic "):
            raw = base64.b64decode(header[6:]).decode()
            cid, _, sec = raw.partition(":")
            client_id, secret = unquote(cid), unquote(sec)
        client = state.clients.get(client_id or "")
        if client is None:
            return _error("invalid_client", "unknown or revoked client", 401)
        if client.secret is not None and secret != client.secret:
            return _error("invalid_client", "bad client credentials", 401)
        return client

    async def token(request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        grant_type = form.get("grant_type")
        state.count(f"token:{grant_type}")
        state.token_forms.append(form)
        jkt = token_request_proof(state, request)
        if isinstance(jkt, Response):
            return jkt
        client = authenticate(request, form)
        if isinstance(client, Response):
            return client
        if grant_type == JWT_BEARER and state.workload_key is not None:
            granted = jwt_bearer_grant(state, form)
            if isinstance(granted, Response):
                return granted
            return JSONResponse(state.issue(client.client_id, granted["scopes"], form.get("resource"), jkt,
                                            refresh_token=False), headers={"Cache-Control": "no-store"})
        if grant_type == "authorization_code":
            entry = state.codes.pop(form.get("code", ""), None)
            if entry is None or entry["client_id"] != client.client_id or entry["expires"] < time.time():
                return _error("invalid_grant", "unknown or expired code")
            if entry["redirect_uri"] != form.get("redirect_uri"):
                return _error("invalid_grant", "redirect_uri mismatch")
            if _s256(form.get("code_verifier", "")) != entry["challenge"]:
                return _error("invalid_grant", "PKCE verification failed")
            return JSONResponse(state.issue(client.client_id, entry["scopes"], entry["resource"], jkt),
                                headers={"Cache-Control": "no-store"})
        if grant_type == "refresh_token":
            rt = form.get("refresh_token", "")
            grant = state.refresh_tokens.get(rt)
            if grant is None or grant.client_id != client.client_id:
                return _error("invalid_grant", "unknown refresh token")
            if not grant.active:
                state.count("refresh_reuse")
                return _error("invalid_grant", "refresh token already used or revoked")
            if state.token_jkt.get(rt) not in (None, jkt):
                state.count("refresh_wrong_key")
                return _error("invalid_grant", "the refresh token is bound to another DPoP key")
            grant.active = False  # rotation: one use only
            state.count("refresh")
            if state.refresh_delay:
                await asyncio.sleep(state.refresh_delay)  # a slow token endpoint
            return JSONResponse(state.issue(client.client_id, grant.scopes, grant.resource, jkt),
                                headers={"Cache-Control": "no-store"})
        return _error("unsupported_grant_type", f"grant_type {grant_type!r} is not supported")

    async def revoke(request: Request) -> Response:
        form = {k: str(v) for k, v in (await request.form()).items()}
        tok = form.get("token", "")
        for table in (state.access_tokens, state.refresh_tokens):
            if tok in table:
                table[tok].active = False
                state.count("revoke")
        return Response(status_code=200)

    return Starlette(routes=[
        Route("/.well-known/oauth-authorization-server", metadata),
        Route("/register", register, methods=["POST"]),
        Route("/authorize", authorize),
        Route("/token", token, methods=["POST"]),
        Route("/revoke", revoke, methods=["POST"]),
    ])

