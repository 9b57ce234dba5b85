"""A test OAuth authorization server and an MCP server it protects, both on 127.0.0.1.

- The **authorization server** (starlette) implements what a real one does for MCP clients:
  RFC 8414 metadata, RFC 7591 dynamic client registration, the authorization endpoint
  (PKCE S256 required; it approves at once and redirects back, like a logged-in user who
  clicks "Allow", so a headless opener can complete it; RFC 8252 loopback redirect URIs
  match on any port), the token endpoint (authorization_code, refresh_token with rotation:
  each refresh token works once, a reused one is ``invalid_grant``), RFC 7009 revocation,
  and client authentication (none / client_secret_basic / client_secret_post; an unknown or
  revoked client is ``invalid_client``).
- The **MCP server** is written with the mcp SDK (``MCPServer`` with a ``TokenVerifier`` and
  ``AuthSettings``): it answers 401 with a ``resource_metadata`` challenge, serves its
  protected resource metadata, and accepts the authorization server's access tokens. Tools:
  ``whoami`` (the client id and scopes of the token), ``echo``, and ``admin_op``, which needs
  the ``mcp:admin`` scope (a 403 ``insufficient_scope`` challenge for that tool only).

Knobs and inspection for tests (in-process): :class:`AuthServerState` holds every client,
code and token, counters, ``access_ttl`` (seconds an access token lives), ``refresh_delay``
(seconds a refresh answer takes, after the old refresh token is spent), ``refuse_scopes``
(scopes the server never grants) and ``revoke_client(client_id)``. DPoP (``dpop``,
``as_nonce``, ``rs_nonce``) and the workload identity jwt-bearer grant (``workload_key``) are
in :mod:`tests.servers.oauth_dpop`.

    async with OAuthTestServers() as servers:
        url = servers.mcp_url           # http://127.0.0.1:<port>/mcp
        servers.state.access_ttl = 2

Run standalone (``python tests/servers/oauth_server.py``) it prints
``LISTENING <mcp url> <issuer>`` on stderr and serves until killed.
"""

from __future__ import annotations

import gc

if __name__ == "__main__":  # a server process: no collection during the imports (see the end of the file)
    gc.disable()

import asyncio
import contextlib
import json
import socket
import sys
import time
from typing import Any

import uvicorn
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import AccessToken
from mcp.server.auth.settings import AuthSettings
from mcp.server.mcpserver import MCPServer
from starlette.types import ASGIApp, Message, Receive, Scope, Send

try:
    from tests.servers.oauth_authorization import (
        ADMIN_SCOPE,
        BASE_SCOPE,
        AuthServerState,
        Client,
        authorization_server,
    )
    from tests.servers.oauth_dpop import DPoPGate
except ImportError:  # run as a script: tests/servers is on sys.path
    from oauth_authorization import (  # type: ignore[no-redef]
        ADMIN_SCOPE,
        BASE_SCOPE,
        AuthServerState,
        Client,
        authorization_server,
    )
    from oauth_dpop import DPoPGate  # type: ignore[no-redef]

# Client and AuthServerState are imported from here by the tests.
__all__ = ["AuthServerState", "Client", "OAuthTestServers", "mcp_server"]


class Verifier:
    """The MCP server's TokenVerifier: asks the authorization server's state (like introspection)."""

    def __init__(self, state: AuthServerState) -> None:
        self.state = state

    async def verify_token(self, token: str) -> AccessToken | None:
        grant = self.state.access_tokens.get(token)
        if grant is None or not grant.active or (grant.expires_at is not None and grant.expires_at < time.time()):
            self.state.count("rejected_token")
            return None
        self.state.count("accepted_token")
        return AccessToken(token=token, client_id=grant.client_id, scopes=list(grant.scopes),
                           expires_at=int(grant.expires_at) if grant.expires_at else None, resource=grant.resource)


class ToolScopeGate:
    """ASGI wrapper: ``tools/call`` of ``admin_op`` needs ``mcp:admin`` (403 insufficient_scope)."""

    def __init__(self, app: ASGIApp, state: AuthServerState, metadata_url: str) -> None:
        self.app = app
        self.state = state
        self.metadata_url = metadata_url

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["method"] != "POST":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        try:
            msg = json.loads(body)
        except ValueError:
            msg = None
        if isinstance(msg, dict) and msg.get("method") == "tools/call" and \
                (msg.get("params") or {}).get("name") == "admin_op":
            headers = dict(scope["headers"])
            token = headers.get(b"authorization", b"").decode()[7:]
            grant = self.state.access_tokens.get(token)
            if grant is not None and ADMIN_SCOPE not in grant.scopes:
                self.state.count("insufficient_scope")
                challenge = (f'Bearer error="insufficient_scope", scope="{BASE_SCOPE} {ADMIN_SCOPE}", '
                             f'resource_metadata="{self.metadata_url}"')
                data = json.dumps({"error": "insufficient_scope"}).encode()
                await send({"type": "http.response.start", "status": 403, "headers": [
                    (b"content-type", b"application/json"), (b"content-length", str(len(data)).encode()),
                    (b"www-authenticate", challenge.encode())]})
                await send({"type": "http.response.body", "body": data})
                return
        sent = False

        async def replay() -> Message:
            nonlocal sent
            if not sent:
                sent = True
                return {"type": "http.request", "body": body, "more_body": False}
            return await receive()

        await self.app(scope, replay, send)


def mcp_server(state: AuthServerState, mcp_url: str) -> MCPServer:
    mcp = MCPServer(
        "oauth-protected",
        instructions="A test server behind OAuth.",
        token_verifier=Verifier(state),
        auth=AuthSettings(issuer_url=state.issuer, resource_server_url=mcp_url, required_scopes=[BASE_SCOPE],
                          validate_token_resource=False),
    )

    @mcp.tool()
    def whoami() -> str:
        """The client id and scopes of the caller's access token."""
        tok = get_access_token()
        return json.dumps({"client_id": tok.client_id if tok else None, "scopes": tok.scopes if tok else []})

    @mcp.tool()
    def echo(text: str) -> str:
        """Echo the text back."""
        return text

    @mcp.tool()
    def admin_op() -> str:
        """An operation that needs the mcp:admin scope."""
        return "admin ok"

    return mcp


def _bind() -> socket.socket:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    return sock


class OAuthTestServers:
    """Both servers in the running event loop (``async with``), on their own ports."""

    def __init__(self, *, access_ttl: int = 3600) -> None:
        self.state = AuthServerState(access_ttl=access_ttl)
        self._servers: list[uvicorn.Server] = []
        self._tasks: list[asyncio.Task[None]] = []
        self.mcp_url = ""

    @property
    def issuer(self) -> str:
        return self.state.issuer

    async def start(self) -> OAuthTestServers:
        as_sock, rs_sock = _bind(), _bind()
        self.state.issuer = f"http://127.0.0.1:{as_sock.getsockname()[1]}"
        self.mcp_url = f"http://127.0.0.1:{rs_sock.getsockname()[1]}/mcp"
        rs_app = mcp_server(self.state, self.mcp_url).streamable_http_app(host="127.0.0.1")
        metadata_url = f"http://127.0.0.1:{rs_sock.getsockname()[1]}/.well-known/oauth-protected-resource/mcp"
        apps: list[tuple[Any, socket.socket]] = [
            (authorization_server(self.state), as_sock),
            (DPoPGate(ToolScopeGate(rs_app, self.state, metadata_url), self.state, self.mcp_url), rs_sock),
        ]
        for app, sock in apps:
            server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on",
                                                    timeout_graceful_shutdown=1))
            server.capture_signals = contextlib.nullcontext  # type: ignore[method-assign,assignment]  # the test runner owns signals
            self._servers.append(server)
            self._tasks.append(asyncio.create_task(server.serve(sockets=[sock])))
        deadline = time.monotonic() + 15
        while not all(s.started for s in self._servers):
            if time.monotonic() > deadline or any(t.done() for t in self._tasks):
                raise RuntimeError("the OAuth test servers did not start")
            await asyncio.sleep(0.01)
        return self

    async def stop(self) -> None:
        for server in self._servers:
            server.should_exit = True
        for task in self._tasks:
            # Clients still connected (an SSE stream) get a second, then are cut off.
            with contextlib.suppress(BaseException):
                await asyncio.wait_for(asyncio.shield(task), 3)
            if not task.done():
                for server in self._servers:
                    server.force_exit = True
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(task, 5)

    async def __aenter__(self) -> OAuthTestServers:
        return await self.start()

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()


async def _main() -> None:
    servers = await OAuthTestServers().start()
    print(f"LISTENING {servers.mcp_url} {servers.issuer}", file=sys.stderr, flush=True)
    try:
        await asyncio.Event().wait()
    finally:
        await servers.stop()


if __name__ == "__main__":
    gc.freeze()  # the imports' long-lived objects: never walked again, by a collection nor at exit
    gc.enable()
    with contextlib.suppress(KeyboardInterrupt):
        asyncio.run(_main())
