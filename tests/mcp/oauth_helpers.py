"""Shared by the OAuth tests (test_oauth_sign_in.py, test_oauth_tokens.py, test_oauth_dpop_wif.py):
the test authorization server as a fixture (``servers``), a recording browser opener, the token
store and its records, and a manager with one OAuth-protected remote server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent_ls.mcp.manager import MCPManager
from agent_ls.mcp.oauth.redirect import headless_opener
from agent_ls.mcp.oauth.store import OAuthStore
from tests.mcp.conftest import HostEnv
from tests.servers.oauth_server import OAuthTestServers


class Opener:
    """Records the authorization URLs; completes them headlessly unless told not to."""

    def __init__(self, complete: bool = True) -> None:
        self.complete = complete
        self.urls: list[str] = []

    async def __call__(self, server: str, url: str) -> None:
        self.urls.append(url)
        if self.complete:
            await headless_opener(server, url)


async def refuse_to_open(server: str, url: str) -> None:
    raise AssertionError(f"a browser would have opened for {server} without the user asking: {url}")


@pytest.fixture
async def servers() -> AsyncIterator[OAuthTestServers]:
    async with OAuthTestServers() as s:
        yield s


def store_of(host: HostEnv) -> OAuthStore:
    return OAuthStore(host.root / "data" / "oauth")


def record_of(host: HostEnv, name: str, url: str) -> dict[str, Any]:
    path = store_of(host).path_for(name, url)
    return json.loads(path.read_text())  # type: ignore[no-any-return]


async def oauth_manager(host: HostEnv, servers: OAuthTestServers, opener: Any, *, oauth: Any = None,
                        extra: dict[str, Any] | None = None, **kwargs: Any) -> MCPManager:
    entry: dict[str, Any] = {"type": "http", "url": servers.mcp_url}
    if oauth is not None:
        entry["oauth"] = oauth
    return await host.manager({"remote": entry, **(extra or {})}, auth_opener=opener,
                              oauth_store=store_of(host), **kwargs)

