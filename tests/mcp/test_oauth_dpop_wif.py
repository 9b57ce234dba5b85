"""DPoP sender-constrained tokens (RFC 9449) and workload identity federation (the RFC 7523
jwt-bearer grant), against the test authorization server and the SDK-written MCP server it
protects (tests/servers/oauth_server.py with tests/servers/oauth_dpop.py), over real HTTP on
127.0.0.1.

What the conformance scenarios (auth/dpop, auth/dpop-nonce, auth/wif-jwt-bearer) do not
cover: the key kept with the tokens (0600) and reused by a refresh after a restart, the
nonce remembered after one challenge, ``oauth.dpop`` on/off, the assertion file read again
for a rotated token, a refused grant reported once, and keys, proofs, tokens and assertions
kept out of logs and status.
"""

from __future__ import annotations

import json
import logging
import os
import stat
import time
import uuid
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives.asymmetric import ec

from agent_ls.config.settings import load_settings
from agent_ls.mcp.oauth.dpop import DPoPKey, access_token_hash
from tests.mcp.conftest import HostEnv, status_of
from tests.mcp.oauth_helpers import Opener, oauth_manager, record_of, refuse_to_open, servers, store_of
from tests.servers.oauth_dpop import JWT_BEARER, jkt_of
from tests.servers.oauth_server import Client, OAuthTestServers

__all__ = ["servers"]  # the fixture, from tests/mcp/oauth_helpers.py

WORKLOAD_CLIENT = "workload-agent"


def resource_proofs(servers: OAuthTestServers) -> list[dict[str, Any]]:
    return [claims for where, claims, _ in servers.state.proofs if where == "resource"]


def token_proofs(servers: OAuthTestServers) -> list[tuple[dict[str, Any], dict[str, Any]]]:
    return [(claims, header) for where, claims, header in servers.state.proofs if where == "token"]


# DPoP -----------------------------------------------------------------------------------------

async def test_dpop_token_is_bound_to_the_key_kept_with_the_tokens(host: HostEnv,
                                                                    servers: OAuthTestServers) -> None:
    servers.state.dpop = True  # advertised in the metadata: automatic mode uses it
    m = await oauth_manager(host, servers, Opener())
    s = await m.sign_in("remote")
    assert s.state == "connected", s.error
    assert (await m.call_tool("remote", "echo", {"text": "bound"})).content == "bound"

    rec = record_of(host, "remote", servers.mcp_url)
    access = rec["tokens"]["access_token"]
    # The authorization server bound the token to the proof's key, and that key is the stored one.
    jwk = rec["dpop"]["jwk"]
    assert set(jwk) == {"kty", "crv", "x", "y", "d"} and jwk["crv"] == "P-256"
    assert servers.state.token_jkt[access] == jkt_of(jwk)
    assert rec["dpop"]["ath"] == access_token_hash(access)
    path = store_of(host).path_for("remote", servers.mcp_url)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    # The token request carried a proof (public key only) for the token endpoint.
    (claims, header), = token_proofs(servers)
    assert header["typ"] == "dpop+jwt" and header["alg"] == "ES256" and "d" not in header["jwk"]
    assert claims["htm"] == "POST" and claims["htu"] == f"{servers.issuer}/token" and "ath" not in claims
    # Every MCP request: the DPoP scheme and a fresh proof with the token's hash.
    assert servers.state.schemes and {x.lower() for x in servers.state.schemes} == {"dpop"}
    proofs = resource_proofs(servers)
    assert len(proofs) >= 3 and all(p["ath"] == access_token_hash(access) for p in proofs)
    assert all(p["htu"] == servers.mcp_url for p in proofs)
    assert len({p["jti"] for p in proofs}) == len(proofs)
    for bad in ("bound_token_as_bearer", "bad_resource_proof", "bad_token_proof"):
        assert servers.state.counts.get(bad, 0) == 0, bad
    assert servers.state.counts["dpop_request_ok"] >= 3


async def test_a_refresh_after_a_restart_proves_the_same_key(host: HostEnv, servers: OAuthTestServers) -> None:
    servers.state.dpop = True
    servers.state.access_ttl = 1
    m1 = await oauth_manager(host, servers, Opener())
    assert (await m1.sign_in("remote")).state == "connected"
    key1 = record_of(host, "remote", servers.mcp_url)["dpop"]["jwk"]
    await m1.close()
    servers.state.access_ttl = 3600
    refreshes = servers.state.counts.get("refresh", 0)
    time.sleep(1.2)

    m2 = await oauth_manager(host, servers, refuse_to_open)  # a new process: refresh, no person
    assert status_of(m2, "remote").state == "connected", status_of(m2, "remote").error
    assert servers.state.counts["refresh"] == refreshes + 1
    assert servers.state.counts.get("refresh_wrong_key", 0) == 0
    rec = record_of(host, "remote", servers.mcp_url)
    assert rec["dpop"]["jwk"] == key1
    assert servers.state.token_jkt[rec["tokens"]["access_token"]] == jkt_of(key1)
    assert (await m2.call_tool("remote", "echo", {"text": "after refresh"})).content == "after refresh"
    assert servers.state.counts.get("authorize", 0) == 1


async def test_nonce_challenges_are_retried_and_the_nonce_remembered(host: HostEnv,
                                                                     servers: OAuthTestServers) -> None:
    servers.state.dpop = True
    servers.state.as_nonce = "as-nonce-1"
    servers.state.rs_nonce = "rs-nonce-1"
    m = await oauth_manager(host, servers, Opener())
    s = await m.sign_in("remote")
    assert s.state == "connected", s.error
    for i in range(3):
        assert (await m.call_tool("remote", "echo", {"text": f"n{i}"})).content == f"n{i}"
    counts = servers.state.counts
    # One challenge each; the token request and every later MCP request carry the nonce.
    assert counts["as_nonce_challenge"] == 1 and counts["rs_nonce_challenge"] == 1
    assert counts["token:authorization_code"] == 2 and counts["authorize"] == 1  # no new authorization
    assert [c.get("nonce") for c, _ in token_proofs(servers)] == [None, "as-nonce-1"]
    nonces = [p.get("nonce") for p in resource_proofs(servers)]
    assert nonces[0] is None and nonces[1:] and all(n == "rs-nonce-1" for n in nonces[1:])

    # A server that changes its nonce: the new one is taken from the challenge.
    servers.state.rs_nonce = "rs-nonce-2"
    assert (await m.call_tool("remote", "echo", {"text": "again"})).content == "again"
    assert counts["rs_nonce_challenge"] == 2
    assert resource_proofs(servers)[-1]["nonce"] == "rs-nonce-2"


@pytest.mark.parametrize(("advertised", "setting"), [
    (True, False),   # "dpop": false: a Bearer token even though the server offers DPoP
    (False, True),   # "dpop": true: a proof is sent; a server without DPoP answers Bearer, used as such
    (False, None),   # automatic, not advertised: plain Bearer, no proof at all
])
async def test_the_dpop_setting(host: HostEnv, servers: OAuthTestServers, advertised: bool,
                                setting: bool | None) -> None:
    servers.state.dpop = advertised
    oauth = {"dpop": setting} if setting is not None else None
    m = await oauth_manager(host, servers, Opener(), oauth=oauth)
    assert (await m.sign_in("remote")).state == "connected"
    assert (await m.call_tool("remote", "echo", {"text": "x"})).content == "x"
    rec = record_of(host, "remote", servers.mcp_url)
    assert servers.state.token_jkt == {}
    assert servers.state.schemes == []  # Bearer all along
    assert servers.state.counts.get("dpop_header_at_token", 0) == (1 if setting else 0)
    if setting:
        assert rec["dpop"]["jwk"] and rec["dpop"]["ath"] is None  # a proof was made, the token is not bound
    else:
        assert rec.get("dpop") is None  # never made a key


# Workload identity federation ---------------------------------------------------------------

def workload_issuer(servers: OAuthTestServers) -> ec.EllipticCurvePrivateKey:
    key = ec.generate_private_key(ec.SECP256R1())
    servers.state.workload_key = key.public_key()
    servers.state.clients[WORKLOAD_CLIENT] = Client(WORKLOAD_CLIENT, None, "none", [])
    return key


def workload_jwt(key: ec.EllipticCurvePrivateKey, audience: str, subject: str = "system:serviceaccount:ci:agent",
                 lifetime: int = 300) -> str:
    now = int(time.time())
    return jwt.encode({"iss": "https://k8s.example", "sub": subject, "aud": audience, "iat": now,
                       "exp": now + lifetime, "jti": str(uuid.uuid4())}, key, algorithm="ES256")


def wif_oauth(servers: OAuthTestServers, **extra: Any) -> dict[str, Any]:
    return {"grant": "jwt_bearer", "clientId": WORKLOAD_CLIENT, "issuer": servers.issuer, **extra}


async def test_jwt_bearer_grant_reads_the_token_file_for_every_request(host: HostEnv, servers: OAuthTestServers,
                                                                       tmp_path: Path) -> None:
    key = workload_issuer(servers)
    token_file = tmp_path / "projected" / "token"
    token_file.parent.mkdir()
    first = workload_jwt(key, servers.issuer)
    token_file.write_text(first + "\n")
    m = await oauth_manager(host, servers, refuse_to_open, oauth=wif_oauth(servers, assertionFile=str(token_file)))
    s = status_of(m, "remote")
    assert s.state == "connected", s.error  # a machine grant: no sign-in, no browser
    assert s.auth is not None and s.auth["state"] == "signed-in"
    form = servers.state.token_forms[-1]
    assert form["grant_type"] == JWT_BEARER and form["assertion"] == first
    assert form["client_id"] == WORKLOAD_CLIENT and form["resource"] == servers.mcp_url
    assert "client_secret" not in form

    # The platform rotates the file; the next token request (the access token expired) uses it.
    second = workload_jwt(key, servers.issuer, subject="rotated")
    token_file.write_text(second)
    servers.state.expire_access_tokens()
    assert (await m.call_tool("remote", "echo", {"text": "later"})).content == "later"
    assert servers.state.assertions == [first, second]
    assert servers.state.counts[f"token:{JWT_BEARER}"] == 2
    assert status_of(m, "remote").auth["state"] == "signed-in"


async def test_a_refused_workload_jwt_fails_once_and_stays_secret(host: HostEnv, servers: OAuthTestServers,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    workload_issuer(servers)
    stranger = ec.generate_private_key(ec.SECP256R1())  # not the issuer the server trusts
    bad = workload_jwt(stranger, servers.issuer)
    host.environ["WORKLOAD_JWT"] = bad
    m = await oauth_manager(host, servers, refuse_to_open, oauth=wif_oauth(servers, assertion="${env:WORKLOAD_JWT}"))
    s = status_of(m, "remote")
    assert s.state == "failed" and s.error["phase"] == "auth"
    assert "invalid_grant" in s.error["message"]
    assert s.auth is not None and s.auth["state"] == "failed"
    time.sleep(0.5)
    assert servers.state.counts[f"token:{JWT_BEARER}"] == 1  # not retried, no other grant tried
    assert set(servers.state.counts) & {"token:authorization_code", "token:client_credentials", "register"} == set()
    assert servers.state.assertions == [bad]
    text = caplog.text + repr(m.status())
    assert bad not in text and bad.split(".")[2] not in text


async def test_a_token_file_that_is_not_a_regular_file_is_refused_without_waiting(
        host: HostEnv, servers: OAuthTestServers, tmp_path: Path) -> None:
    """The user's own ``assertionFile`` naming a FIFO (or a device) fails with what it is: the
    read never blocks on it and nothing is sent to the token endpoint (issue 25, item 3)."""
    workload_issuer(servers)
    fifo = tmp_path / "token.fifo"
    os.mkfifo(fifo)
    m = await oauth_manager(host, servers, refuse_to_open, oauth=wif_oauth(servers, assertionFile=str(fifo)))
    s = status_of(m, "remote")
    assert s.state == "failed" and "a named pipe (FIFO)" in s.error["message"], s.error
    assert "oauth.assertionFile" in s.error["message"]
    assert servers.state.counts.get(f"token:{JWT_BEARER}", 0) == 0 and servers.state.assertions == []


async def test_jwt_bearer_with_dpop_keeps_every_secret_out_of_logs(host: HostEnv, servers: OAuthTestServers,
                                                                    tmp_path: Path,
                                                                    caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    key = workload_issuer(servers)
    servers.state.dpop = True
    servers.state.rs_nonce = "rs-nonce"
    assertion = workload_jwt(key, servers.issuer)
    token_file = tmp_path / "token"
    token_file.write_text(assertion)
    m = await oauth_manager(host, servers, refuse_to_open, oauth=wif_oauth(servers, assertionFile=str(token_file)))
    assert status_of(m, "remote").state == "connected", status_of(m, "remote").error
    assert (await m.call_tool("remote", "echo", {"text": "wif+dpop"})).content == "wif+dpop"
    rec = record_of(host, "remote", servers.mcp_url)
    access = rec["tokens"]["access_token"]
    assert servers.state.token_jkt[access] == jkt_of(rec["dpop"]["jwk"])
    assert servers.state.counts["rs_nonce_challenge"] == 1 and servers.state.counts["dpop_request_ok"] >= 2
    await m.close()

    secrets = [assertion, access, rec["dpop"]["jwk"]["d"], *servers.state.all_token_values()]
    text = caplog.text + repr(m.status())
    assert "HTTP Request: POST" in caplog.text
    for value in secrets:
        assert value not in text


# Settings ------------------------------------------------------------------------------------

def test_settings_validation(tmp_path: Path) -> None:
    user = tmp_path / "settings.json"
    user.write_text(json.dumps({"mcpServers": {
        "a": {"type": "http", "url": "https://a.example/mcp", "oauth": {"grant": "jwt_bearer"}},
        "b": {"type": "http", "url": "https://b.example/mcp", "oauth": {"dpop": "yes"}},
        "c": {"type": "http", "url": "https://c.example/mcp",
              "oauth": {"grant": "jwt_bearer", "clientId": "x", "assertionFile": "/run/token", "dpop": True}},
    }}))
    loaded = load_settings([], user_settings=user, environ={})
    messages = " | ".join(str(d) for d in loaded.diagnostics)
    assert 'jwt_bearer needs "clientId"' in messages
    assert 'jwt_bearer needs "assertionFile"' in messages
    assert '"dpop" must be true or false' in messages
    good = loaded.servers["c"]
    assert good.oauth is not None and good.oauth.dpop is True and good.oauth.assertion_file == "/run/token"
    assert not good.oauth.interactive


def test_proof_shape() -> None:
    key = DPoPKey.generate()
    again = DPoPKey.from_jwk(key.private_jwk())
    assert again is not None and again.thumbprint() == key.thumbprint() == jkt_of(key.public_jwk)
    proof = key.proof("get", "https://mcp.example/mcp?x=1#f", nonce="n", access_token="tok")
    header = jwt.get_unverified_header(proof)
    claims = jwt.decode(proof, jwt.PyJWK.from_dict(header["jwk"], algorithm="ES256").key, algorithms=["ES256"])
    assert claims["htm"] == "GET" and claims["htu"] == "https://mcp.example/mcp"
    assert claims["nonce"] == "n" and claims["ath"] == access_token_hash("tok")
    assert DPoPKey.from_jwk({"kty": "RSA"}) is None

