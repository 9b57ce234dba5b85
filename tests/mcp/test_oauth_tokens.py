"""OAuth tokens of remote MCP servers, against the test authorization server and the SDK-written
MCP server it protects (tests/servers/oauth_server.py), over real HTTP on 127.0.0.1.

What the conformance suite does not cover: refresh rotation persisted across a restart of the
host, sign-out, a revoked or rejected registration, file permissions, secrets kept out of
status/errors/logs, tokens kept per server name and URL, and hosts or processes that refresh
the same tokens at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import stat
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from agent_ls.mcp.oauth.redirect import headless_opener
from agent_ls.mcp.oauth.store import OAuthStore, record_key
from tests.mcp.conftest import HostEnv, status_of
from tests.mcp.oauth_helpers import Opener, oauth_manager, record_of, refuse_to_open, servers, store_of
from tests.servers.oauth_server import OAuthTestServers

__all__ = ["servers"]  # the fixture, from tests/mcp/oauth_helpers.py


async def test_refresh_rotation_is_persisted_across_a_restart(host: HostEnv, servers: OAuthTestServers) -> None:
    servers.state.access_ttl = 1
    m1 = await oauth_manager(host, servers, Opener())
    assert (await m1.sign_in("remote")).state == "connected"
    first = record_of(host, "remote", servers.mcp_url)
    rt1 = first["tokens"]["refresh_token"]
    await m1.close()
    time.sleep(1.2)  # the access token expires (the test server and the stored expiry agree)

    # A new host process: no person, no browser; the stored refresh token gets a new pair.
    m2 = await oauth_manager(host, servers, refuse_to_open)
    s2 = status_of(m2, "remote")
    assert s2.state == "connected", s2.error
    assert s2.auth is not None and s2.auth["state"] == "signed-in"
    assert servers.state.counts["refresh"] == 1
    second = record_of(host, "remote", servers.mcp_url)
    rt2 = second["tokens"]["refresh_token"]
    assert rt2 != rt1 and second["expiresAt"] > first["expiresAt"]
    assert not servers.state.refresh_tokens[rt1].active  # rotated: the old one is spent
    assert (await m2.call_tool("remote", "echo", {"text": "after refresh"})).content == "after refresh"
    await m2.close()
    time.sleep(1.2)

    # Once more: the rotated token was persisted, so the next refresh does not reuse rt1.
    m3 = await oauth_manager(host, servers, refuse_to_open)
    assert status_of(m3, "remote").state == "connected"
    assert servers.state.counts["refresh"] == 2
    assert servers.state.counts.get("refresh_reuse", 0) == 0
    assert record_of(host, "remote", servers.mcp_url)["tokens"]["refresh_token"] not in (rt1, rt2)
    assert servers.state.counts["register"] == 1 and servers.state.counts["authorize"] == 1


async def test_sign_out_clears_tokens_and_registration(host: HostEnv, servers: OAuthTestServers) -> None:
    m = await oauth_manager(host, servers, Opener())
    await m.sign_in("remote")
    path = store_of(host).path_for("remote", servers.mcp_url)
    rec = json.loads(path.read_text())
    old_client = rec["client"]["client_id"]
    refresh = rec["tokens"]["refresh_token"]

    s = await m.sign_out("remote")
    assert not path.exists()
    assert s.state == "needs-sign-in" and s.auth == {"state": "needs-sign-in", "reason": "the server requires sign-in"}
    assert not servers.state.refresh_tokens[refresh].active  # revoked at the server (RFC 7009)
    assert (await m.call_tool("remote", "whoami", {})).is_error

    # Signing in again registers anew (the old registration was forgotten).
    assert (await m.sign_in("remote")).state == "connected"
    new_client = record_of(host, "remote", servers.mcp_url)["client"]["client_id"]
    assert new_client != old_client and servers.state.counts["register"] == 2


async def test_a_revoked_registration_is_dropped_and_redone(host: HostEnv, servers: OAuthTestServers) -> None:
    m1 = await oauth_manager(host, servers, Opener())
    await m1.sign_in("remote")
    client_a = record_of(host, "remote", servers.mcp_url)["client"]["client_id"]
    await m1.close()
    servers.state.revoke_client(client_a)  # the server forgets the client and its tokens
    servers.state.expire_access_tokens()

    # At start-up the stored access token is refused and the refresh answers invalid_client:
    # the registration is dropped (no browser opens), and the server waits for sign-in.
    m2 = await oauth_manager(host, servers, refuse_to_open, oauth={"signInTimeout": 20})
    s = status_of(m2, "remote")
    assert s.state == "needs-sign-in", s
    rec = record_of(host, "remote", servers.mcp_url)
    assert rec["client"] is None and rec["tokens"] is None
    assert s.auth is not None and "invalid_client" in s.auth["reason"]
    await m2.close()

    opener = Opener()
    m3 = await oauth_manager(host, servers, opener, oauth={"signInTimeout": 20})
    s3 = await m3.sign_in("remote")
    assert s3.state == "connected", s3.error
    client_b = record_of(host, "remote", servers.mcp_url)["client"]["client_id"]
    assert client_b != client_a and servers.state.counts["register"] == 2
    assert json.loads((await m3.call_tool("remote", "whoami", {})).content)["client_id"] == client_b


async def test_a_registration_rejected_at_the_code_exchange_is_redone(host: HostEnv, servers: OAuthTestServers
                                                                      ) -> None:
    revoked: list[str] = []

    async def opener(server: str, url: str) -> None:
        await headless_opener(server, url)  # the redirect (with the code) reached the host...
        if not revoked:
            client_id = parse_qs(urlsplit(url).query)["client_id"][0]
            revoked.append(client_id)
            servers.state.revoke_client(client_id)  # ...then the registration disappears

    m = await oauth_manager(host, servers, opener)
    s = await m.sign_in("remote")
    assert s.state == "connected", s.error
    assert servers.state.counts["register"] == 2 and len(revoked) == 1
    assert record_of(host, "remote", servers.mcp_url)["client"]["client_id"] != revoked[0]


async def test_token_files_are_private(host: HostEnv, servers: OAuthTestServers) -> None:
    m = await oauth_manager(host, servers, Opener())
    await m.sign_in("remote")
    root = store_of(host).root
    path = store_of(host).path_for("remote", servers.mcp_url)
    assert path.name == f"{record_key('remote', servers.mcp_url)}.json"
    assert stat.S_IMODE(root.stat().st_mode) == 0o700
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert [p.name for p in root.iterdir()] == [path.name]  # no temporary files left behind
    rec = json.loads(path.read_text())
    assert rec["tokens"]["access_token"] in servers.state.access_tokens
    # Nothing of it in the settings file.
    assert rec["tokens"]["access_token"] not in host.user_file.read_text()
    # A file someone widened is narrowed again before it is read.
    os.chmod(path, 0o644)
    assert store_of(host).load("remote", servers.mcp_url) is not None
    assert stat.S_IMODE(path.stat().st_mode) == 0o600


async def test_no_token_in_status_errors_or_logs(host: HostEnv, servers: OAuthTestServers,
                                                 caplog: pytest.LogCaptureFixture) -> None:
    caplog.set_level(logging.DEBUG)
    servers.state.access_ttl = 1
    m = await oauth_manager(host, servers, Opener())
    await m.sign_in("remote")
    await m.call_tool("remote", "whoami", {})
    await m.call_tool("remote", "admin_op", {})  # step-up: a second authorization
    await m.close()
    time.sleep(1.2)
    m2 = await oauth_manager(host, servers, refuse_to_open)  # refresh at start-up
    await m2.call_tool("remote", "echo", {"text": "x"})
    servers.state.revoke_client(record_of(host, "remote", servers.mcp_url)["client"]["client_id"])
    failed = await m2.call_tool("remote", "echo", {"text": "y"})  # refused now: an error path
    statuses = repr(m.status()) + repr(m2.status())
    secrets = [*servers.state.all_token_values(),
               *(c.secret for c in servers.state.clients.values() if c.secret),
               *(q for q in servers.state.codes)]
    rec_secret = (record_of(host, "remote", servers.mcp_url).get("client") or {}).get("client_secret")
    if rec_secret:
        secrets.append(rec_secret)
    assert len(secrets) >= 6
    logs = caplog.text
    assert "HTTP Request: POST" in logs  # the HTTP traffic was logged...
    for value in secrets:
        assert value not in logs, "a token reached the log"  # ...with every token masked
        assert value not in statuses
        assert value not in failed.content
    assert "code=***" in logs  # the redirect's authorization code is masked too


async def test_tokens_are_per_server_name_and_url(host: HostEnv, servers: OAuthTestServers) -> None:
    m = await oauth_manager(host, servers, Opener(), extra={"twin": {"type": "http", "url": servers.mcp_url}})
    await m.sign_in("remote")
    assert status_of(m, "remote").state == "connected"
    assert status_of(m, "twin").state == "needs-sign-in"  # same URL, another entry: its own sign-in
    assert store_of(host).load("twin", servers.mcp_url) is None
    assert store_of(host).load("remote", servers.mcp_url + "/other") is None


def test_store_path_is_outside_settings(tmp_path: Path) -> None:
    store = OAuthStore(tmp_path / "oauth")
    assert store.path_for("a", "http://x/mcp") != store.path_for("a", "http://y/mcp")
    assert store.path_for("a", "http://x/mcp") != store.path_for("b", "http://x/mcp")


# Two host processes on one OAuth store (two editor windows, the terminal chat) --------------


async def test_a_second_host_takes_the_rotated_tokens_instead_of_spending_its_own(
        host: HostEnv, servers: OAuthTestServers) -> None:
    """Window A refreshes (the refresh token rotates); window B, whose access token expired
    too, must not send its spent copy of the refresh token (invalid_grant, and the failure used
    to wipe the good tokens from disk): it takes A's fresh pair from the store."""
    servers.state.access_ttl = 1
    a = await oauth_manager(host, servers, Opener())
    assert (await a.sign_in("remote")).state == "connected"
    rt1 = record_of(host, "remote", servers.mcp_url)["tokens"]["refresh_token"]
    b = await oauth_manager(host, servers, refuse_to_open)  # started later: reads the stored pair
    assert status_of(b, "remote").state == "connected"
    servers.state.access_ttl = 3600
    await asyncio.sleep(1.2)  # both copies of the access token expire

    assert (await a.call_tool("remote", "echo", {"text": "from a"})).content == "from a"
    assert servers.state.counts["refresh"] == 1 and not servers.state.refresh_tokens[rt1].active

    res = await b.call_tool("remote", "echo", {"text": "from b"})
    assert not res.is_error and res.content == "from b"
    assert servers.state.counts.get("refresh_reuse", 0) == 0
    assert servers.state.counts["refresh"] == 1  # B used A's fresh access token, no second refresh
    rec = record_of(host, "remote", servers.mcp_url)
    assert servers.state.refresh_tokens[rec["tokens"]["refresh_token"]].active
    assert status_of(b, "remote").auth["state"] == "signed-in"
    assert servers.state.counts["authorize"] == 1  # nobody had to sign in again


async def test_two_processes_refreshing_at_once_take_turns(host: HostEnv, servers: OAuthTestServers) -> None:
    """A real second process on the same store: both hosts get a 401 at the same moment and
    refresh; the record's lock makes the second wait for the first's rotated token, so no
    refresh token is spent twice and both calls succeed."""
    a = await oauth_manager(host, servers, Opener())
    assert (await a.sign_in("remote")).state == "connected"
    rt1 = record_of(host, "remote", servers.mcp_url)["tokens"]["refresh_token"]
    peer = await asyncio.create_subprocess_exec(
        sys.executable, str(Path(__file__).parents[1] / "servers" / "oauth_peer.py"),
        "--store", str(store_of(host).root), "--settings", str(host.user_file),
        "--workspace", str(host.workspace),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE,
        env={**os.environ, "PYTHONPATH": str(Path(__file__).parents[2])},
    )
    assert peer.stdin is not None and peer.stdout is not None and peer.stderr is not None
    try:
        ready = (await asyncio.wait_for(peer.stdout.readline(), 60)).decode()
        assert ready.startswith("READY") and "remote=connected" in ready, ready
        servers.state.expire_access_tokens()  # both processes' access token is refused from now on
        servers.state.refresh_delay = 1.0  # the first refresh is still in flight when the second starts

        async def peer_call() -> dict[str, Any]:
            assert peer.stdin is not None and peer.stdout is not None
            peer.stdin.write(b'call remote echo {"text": "from the peer"}\n')
            await peer.stdin.drain()
            return json.loads(await asyncio.wait_for(peer.stdout.readline(), 60))  # type: ignore[no-any-return]

        theirs, ours = await asyncio.gather(peer_call(), a.call_tool("remote", "echo", {"text": "from a"}))
        assert theirs == {"isError": False, "content": "from the peer"}
        assert not ours.is_error and ours.content == "from a"
        assert servers.state.counts.get("refresh_reuse", 0) == 0
        assert 1 <= servers.state.counts["refresh"] <= 2 and not servers.state.refresh_tokens[rt1].active
        rec = record_of(host, "remote", servers.mcp_url)
        assert servers.state.refresh_tokens[rec["tokens"]["refresh_token"]].active
        peer.stdin.write(b"status remote\n")
        await peer.stdin.drain()
        status = json.loads(await asyncio.wait_for(peer.stdout.readline(), 30))
        assert status["state"] == "connected" and status["auth"]["state"] == "signed-in"
        assert status_of(a, "remote").auth["state"] == "signed-in"
        assert servers.state.counts["authorize"] == 1
    finally:
        if peer.returncode is None:
            with contextlib.suppress(Exception):
                peer.stdin.write(b"quit\n")
                await peer.stdin.drain()
            try:
                await asyncio.wait_for(peer.wait(), 20)
            except TimeoutError:
                peer.kill()
                await peer.wait()
        err = (await peer.stderr.read()).decode(errors="replace")
        for secret in servers.state.all_token_values():
            assert secret not in err  # the peer's log stays free of tokens too
