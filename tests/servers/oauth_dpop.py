"""DPoP (RFC 9449) and the jwt-bearer grant (RFC 7523) for the test OAuth servers.

Used by :mod:`tests.servers.oauth_server` when its state asks for them:

- ``state.dpop``: the authorization server advertises ``dpop_signing_alg_values_supported``,
  checks the ``DPoP`` proof of a token request (``typ``, public ``jwk``, signature, ``htm``,
  ``htu``, ``iat``, a never-seen ``jti``) and binds the tokens it issues to the proof's key
  (``token_type: DPoP``, ``state.token_jkt``); a refresh token bound to a key needs a proof
  by the same key. ``state.as_nonce`` / ``state.rs_nonce``: the authorization server / the MCP
  server answer ``use_dpop_nonce`` with that nonce until a proof carries it.
- :class:`DPoPGate` (in front of the MCP server): a bound token must come as
  ``Authorization: DPoP <token>`` with a proof for this request (``htm``, ``htu``, ``ath``,
  the token's key); it is then handed to the SDK server as a Bearer token. A bound token sent
  as Bearer is refused.
- ``state.workload_key``: the public key of a workload identity issuer; the token endpoint
  then accepts ``grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer`` with a JWT signed by
  it (``aud`` = the issuer). ``invalid_grant`` for a bad/expired JWT, ``invalid_scope`` for the
  scope ``wif:refused``.

Every checked proof is appended to ``state.proofs`` as ``(where, claims, header)``.
"""

from __future__ import annotations

import base64
import hashlib
import json
import time
from typing import Any

import jwt
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.types import ASGIApp, Receive, Scope, Send

JWT_BEARER = "urn:ietf:params:oauth:grant-type:jwt-bearer"
REFUSED_SCOPE = "wif:refused"


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).decode().rstrip("=")


def jkt_of(jwk: dict[str, Any]) -> str:
    canonical = json.dumps({k: jwk[k] for k in ("crv", "kty", "x", "y")}, separators=(",", ":"), sort_keys=True)
    return b64url(hashlib.sha256(canonical.encode()).digest())


def ath_of(token: str) -> str:
    return b64url(hashlib.sha256(token.encode()).digest())


def verify_proof(state: Any, where: str, proof: str | None, method: str, url: str, *,
                 access_token: str | None = None) -> dict[str, Any] | str:
    """The proof's claims plus ``jkt``, or why it is refused."""
    if not proof:
        return "missing DPoP proof"
    try:
        header = jwt.get_unverified_header(proof)
    except jwt.PyJWTError:
        return "not a JWT"
    jwk = header.get("jwk")
    if header.get("typ") != "dpop+jwt" or header.get("alg") != "ES256" or not isinstance(jwk, dict) or "d" in jwk:
        return "bad header"
    try:
        key = jwt.PyJWK.from_dict(jwk, algorithm="ES256").key
        claims = jwt.decode(proof, key, algorithms=["ES256"], options={"verify_aud": False})
    except (jwt.PyJWTError, ValueError, KeyError):
        return "bad signature"
    state.proofs.append((where, claims, header))
    if claims.get("htm") != method or claims.get("htu") != url:
        return "htm/htu mismatch"
    if not isinstance(claims.get("iat"), int) or abs(time.time() - claims["iat"]) > 60:
        return "iat out of range"
    jti = claims.get("jti")
    if not isinstance(jti, str) or jti in state.seen_jtis:
        return "missing or replayed jti"
    state.seen_jtis.add(jti)
    if access_token is not None and claims.get("ath") != ath_of(access_token):
        return "ath mismatch"
    return {**claims, "jkt": jkt_of(jwk)}


def _nonce_error(status: int, nonce: str, resource: bool) -> Response:
    headers = {"DPoP-Nonce": nonce}
    if resource:
        headers["WWW-Authenticate"] = 'DPoP error="use_dpop_nonce", error_description="nonce required"'
    return JSONResponse({"error": "use_dpop_nonce", "error_description": "use the DPoP nonce"},
                        status_code=status, headers=headers)


def token_request_proof(state: Any, request: Request) -> Response | str | None:
    """For the token endpoint: None (no DPoP), the proof key's thumbprint, or an error answer."""
    proof = request.headers.get("dpop")
    if proof is not None:
        state.count("dpop_header_at_token")
    if proof is None or not state.dpop:
        return None
    claims = verify_proof(state, "token", proof, "POST", f"{state.issuer}/token")
    if isinstance(claims, str):
        state.count("bad_token_proof")
        return JSONResponse({"error": "invalid_dpop_proof", "error_description": claims}, status_code=400)
    if state.as_nonce and claims.get("nonce") != state.as_nonce:
        state.count("as_nonce_challenge")
        return _nonce_error(400, state.as_nonce, resource=False)
    return str(claims["jkt"])


def jwt_bearer_grant(state: Any, form: dict[str, str]) -> dict[str, Any] | Response:
    """Checks the workload JWT; the scopes to issue, or the error answer."""
    assertion = form.get("assertion", "")
    state.assertions.append(assertion)
    try:
        claims = jwt.decode(assertion, state.workload_key, algorithms=["ES256"], audience=state.issuer)
    except jwt.PyJWTError as e:
        return JSONResponse({"error": "invalid_grant", "error_description": f"bad assertion: {type(e).__name__}"},
                            status_code=400)
    scopes = (form.get("scope") or "mcp:read").split()
    if REFUSED_SCOPE in scopes:
        return JSONResponse({"error": "invalid_scope", "error_description": "not for workloads"}, status_code=400)
    return {"scopes": scopes, "subject": claims.get("sub")}


class DPoPGate:
    """ASGI wrapper of the MCP server: DPoP-bound tokens must come with a valid proof."""

    def __init__(self, app: ASGIApp, state: Any, mcp_url: str) -> None:
        self.app = app
        self.state = state
        self.mcp_url = mcp_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        scheme, _, token = headers.get("authorization", "").partition(" ")
        bound = self.state.token_jkt.get(token.strip())
        if bound is None and scheme.lower() != "dpop":
            await self.app(scope, receive, send)
            return
        token = token.strip()
        self.state.schemes.append(scheme)
        answer: Response | None = None
        if scheme.lower() != "dpop":
            self.state.count("bound_token_as_bearer")
            answer = JSONResponse({"error": "invalid_token"}, status_code=401,
                                  headers={"WWW-Authenticate": 'DPoP error="invalid_token"'})
        else:
            claims = verify_proof(self.state, "resource", headers.get("dpop"), scope["method"], self.mcp_url,
                                  access_token=token)
            if isinstance(claims, str) or claims["jkt"] != bound:
                self.state.count("bad_resource_proof")
                why = claims if isinstance(claims, str) else "proof key is not the token's key"
                answer = JSONResponse({"error": "invalid_dpop_proof", "error_description": why}, status_code=401,
                                      headers={"WWW-Authenticate": 'DPoP error="invalid_dpop_proof"'})
            elif self.state.rs_nonce and claims.get("nonce") != self.state.rs_nonce:
                self.state.count("rs_nonce_challenge")
                answer = _nonce_error(401, self.state.rs_nonce, resource=True)
        if answer is not None:
            await answer(scope, receive, send)
            return
        self.state.count("dpop_request_ok")
        scope = dict(scope)
        scope["headers"] = [(k, v) for k, v in scope["headers"] if k.lower() != b"authorization"] + [
            (b"authorization", f"Bearer {token}".encode())]
        await self.app(scope, receive, send)
