"""OAuth sign-in for remote MCP servers, against the test authorization server and the SDK-written
MCP server it protects (tests/servers/oauth_server.py), over real HTTP on 127.0.0.1.

What the conformance suite does not cover: the browserless sign-in through the host's loopback
listener, a denied authorization, the sign-in timeout, the step-up cap, a server waiting for
sign-in next to a healthy stdio server, and the settings that turn OAuth off.
"""

from __future__ import annotations

import json
import time
from urllib.parse import parse_qs, urlencode, urlsplit

import httpx2
import pytest

from agent_ls.mcp.oauth.redirect import headless_opener, port_is_free
from tests.mcp.conftest import HostEnv, status_of
from tests.mcp.oauth_helpers import Opener, oauth_manager, record_of, refuse_to_open, servers, store_of
from tests.servers.launch import knob_stdio_params
from tests.servers.oauth_server import OAuthTestServers

__all__ = ["servers"]  # the fixture, from tests/mcp/oauth_helpers.py


async def test_sign_in_through_the_loopback_redirect(host: HostEnv, servers: OAuthTestServers) -> None:
    opener = Opener()
    m = await oauth_manager(host, servers, opener)
    s = status_of(m, "remote")
    # Start-up never authorizes by itself: nothing opened, nothing registered.
    assert s.state == "needs-sign-in"
    assert s.auth == {"state": "needs-sign-in", "reason": "the server requires sign-in"}
    assert s.error["phase"] == "auth"
    assert opener.urls == [] and servers.state.counts.get("register", 0) == 0
    res = await m.call_tool("remote", "whoami", {})
    assert res.is_error and "needs sign-in" in res.content

    s = await m.sign_in("remote")
    assert s.state == "connected", s.error
    assert s.auth is not None and s.auth["state"] == "signed-in"
    assert abs(s.auth["expiresAt"] - (time.time() + 3600)) < 60
    # One authorization through the real loopback listener, with PKCE and the resource.
    assert len(opener.urls) == 1
    q = parse_qs(urlsplit(opener.urls[0]).query)
    redirect = urlsplit(q["redirect_uri"][0])
    assert (redirect.scheme, redirect.hostname, redirect.path) == ("http", "127.0.0.1", "/callback")
    assert q["code_challenge_method"] == ["S256"] and q["resource"] == [servers.mcp_url]
    assert servers.state.counts["register"] == 1 and servers.state.counts["token:authorization_code"] == 1
    who = json.loads((await m.call_tool("remote", "whoami", {})).content)
    assert who["client_id"] in servers.state.clients and who["scopes"] == ["mcp:read"]
    # The listener is gone once the redirect arrived.
    assert port_is_free(redirect.port or 0)


async def test_denied_authorization_fails_with_the_servers_answer(host: HostEnv, servers: OAuthTestServers
                                                                 ) -> None:
    async def user_says_no(server: str, url: str) -> None:
        q = parse_qs(urlsplit(url).query)
        back = {"error": "access_denied", "error_description": "the user said no", "state": q["state"][0]}
        async with httpx2.AsyncClient() as http:
            await http.get(f"{q['redirect_uri'][0]}?{urlencode(back)}")

    m = await oauth_manager(host, servers, user_says_no)
    s = await m.sign_in("remote")
    assert s.state == "failed" and s.error["phase"] == "auth"
    assert s.auth is not None and s.auth["state"] == "failed"
    assert "access_denied" in s.auth["reason"] and "the user said no" in s.auth["reason"]
    assert "access_denied" in s.error["message"]


async def test_a_redirect_without_the_sign_ins_state_is_ignored(host: HostEnv, servers: OAuthTestServers) -> None:
    """Issue 25, item 8: any local page can reach the loopback listener. An ``?error=`` (or a
    code) without the state of the authorization request, or with another, is answered 400 and
    changes nothing: the sign-in keeps waiting and completes with the real redirect."""
    answers: list[tuple[int, str]] = []

    async def forged_then_real(server: str, url: str) -> None:
        callback = parse_qs(urlsplit(url).query)["redirect_uri"][0]
        async with httpx2.AsyncClient() as http:
            for forged in ({"error": "access_denied", "error_description": "aborted by a web page"},
                           {"error": "access_denied", "state": "guessed"},
                           {"code": "forged-code", "state": "guessed"},
                           {"code": "forged-code"}):
                r = await http.get(f"{callback}?{urlencode(forged)}")
                answers.append((r.status_code, r.text))
        await headless_opener(server, url)

    m = await oauth_manager(host, servers, forged_then_real)
    s = await m.sign_in("remote")
    assert [code for code, _ in answers] == [400, 400, 400, 400]
    assert all("does not carry the state" in body for _, body in answers)
    assert s.state == "connected", s.error
    assert s.auth is not None and s.auth["state"] == "signed-in"
    assert servers.state.counts["token:authorization_code"] == 1  # the forged code was never sent


async def test_sign_in_times_out_with_a_clear_message(host: HostEnv, servers: OAuthTestServers) -> None:
    opener = Opener(complete=False)  # the user never finishes on the authorization page
    m = await oauth_manager(host, servers, opener, oauth={"signInTimeout": 1})
    started = time.monotonic()
    s = await m.sign_in("remote")
    assert time.monotonic() - started < 20
    assert len(opener.urls) == 1
    assert s.state == "failed" and s.error["phase"] == "auth"
    assert s.auth is not None and s.auth["state"] == "failed"
    assert "was not completed within 1s" in s.auth["reason"] and "signInTimeout" in s.auth["reason"]
    port = urlsplit(parse_qs(urlsplit(opener.urls[0]).query)["redirect_uri"][0]).port
    assert port is not None and port_is_free(port)
    # Signing in again works and reuses the registered redirect port.
    opener.complete = True
    s2 = await m.sign_in("remote")
    assert s2.state == "connected"
    port2 = urlsplit(parse_qs(urlsplit(opener.urls[1]).query)["redirect_uri"][0]).port
    assert port2 == port and servers.state.counts["register"] == 1


async def test_step_up_is_capped(host: HostEnv, servers: OAuthTestServers) -> None:
    servers.state.refuse_scopes = {"mcp:admin"}  # the server asks for a scope it never grants
    opener = Opener()
    m = await oauth_manager(host, servers, opener, oauth={"maxStepUps": 1})
    await m.sign_in("remote")
    assert servers.state.counts["authorize"] == 1
    for _ in range(3):
        res = await m.call_tool("remote", "admin_op", {})
        assert res.is_error
    # One sign-in plus one step-up; after that the 403 goes back to the caller.
    assert servers.state.counts["authorize"] == 2
    s = status_of(m, "remote")
    assert s.state == "connected"
    assert s.auth is not None and "maxStepUps" in s.auth["reason"]
    assert (await m.call_tool("remote", "echo", {"text": "still fine"})).content == "still fine"


async def test_step_up_succeeds_and_is_not_offered_without_the_user(host: HostEnv, servers: OAuthTestServers
                                                                    ) -> None:
    m = await oauth_manager(host, servers, Opener())
    await m.sign_in("remote")
    assert (await m.call_tool("remote", "admin_op", {})).content == "admin ok"
    assert servers.state.counts["authorize"] == 2
    scopes = record_of(host, "remote", servers.mcp_url)["tokens"]["scope"].split()
    assert {"mcp:read", "mcp:admin"} <= set(scopes)
    await m.close()

    # A new process with tokens that lack the scope: the step-up is not done behind the
    # user's back; the call fails and the server says why.
    servers.state.refuse_scopes = set()
    for grant in servers.state.access_tokens.values():
        grant.scopes = ["mcp:read"]
    m2 = await oauth_manager(host, servers, refuse_to_open)
    res = await m2.call_tool("remote", "admin_op", {})
    assert res.is_error and "sign in" in res.content
    s = status_of(m2, "remote")
    assert s.state == "connected"
    assert s.auth is not None and s.auth["state"] == "needs-sign-in" and "more permission" in s.auth["reason"]


async def test_a_server_waiting_for_sign_in_does_not_disturb_a_stdio_server(host: HostEnv,
                                                                            servers: OAuthTestServers) -> None:
    m = await oauth_manager(host, servers, refuse_to_open, extra={"local": knob_stdio_params()})
    local, remote = status_of(m, "local"), status_of(m, "remote")
    assert local.state == "connected" and local.auth is None
    assert remote.state == "needs-sign-in"
    assert (await m.call_tool("local", "echo", {"text": "hi"})).content == "hi"
    assert {t.server for t in m.tools()} == {"local"}
    # Signing in later adds the remote tools; the stdio server is untouched.
    pid = local.pid
    m.set_auth_opener(Opener())
    assert (await m.sign_in("remote")).state == "connected"
    assert {t.server for t in m.tools()} == {"local", "remote"}
    assert status_of(m, "local").pid == pid


async def test_sign_in_rejects_servers_without_oauth(host: HostEnv, servers: OAuthTestServers) -> None:
    m = await oauth_manager(host, servers, refuse_to_open, extra={"local": knob_stdio_params()})
    with pytest.raises(ValueError, match="does not use OAuth"):
        await m.sign_in("local")
    with pytest.raises(ValueError, match="does not use OAuth"):
        await m.sign_out("local")


async def test_oauth_false_and_authorization_header_turn_it_off(host: HostEnv, servers: OAuthTestServers) -> None:
    m = await host.manager({
        "off": {"type": "http", "url": servers.mcp_url, "oauth": False},
        "header": {"type": "http", "url": servers.mcp_url, "headers": {"Authorization": "Bearer nope"}},
    }, auth_opener=refuse_to_open, oauth_store=store_of(host))
    for name in ("off", "header"):
        s = status_of(m, name)
        assert s.state == "failed" and s.auth is None
    assert servers.state.counts.get("register", 0) == 0
    with pytest.raises(ValueError):
        await m.sign_in("off")
