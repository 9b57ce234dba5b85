"""A fake home with credentials (a canary SSH key), a workspace and a temp dir, and real
processes run through :meth:`agent_ls.core.sandbox.Sandbox.wrap` under the real mechanism."""

from __future__ import annotations

import asyncio
import http.server
import os
import threading
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import attrs
import pytest

from tests.mcp.conftest import HostEnv

CANARY = "CANARY-7f3a-ssh-private-key"


@attrs.frozen
class Place:
    home: Path
    ws: Path
    tmp: Path
    outside: Path

    def env(self, **extra: str) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.endswith("_PROXY") and not k.endswith("_proxy")}
        return {**env, "HOME": str(self.home), **extra}


@pytest.fixture
def place(tmp_path: Path) -> Place:
    home, ws, tmp, outside = (tmp_path / n for n in ("home", "ws", "tmp", "outside"))
    for d in (home / ".ssh", ws, tmp, outside):
        d.mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(CANARY)
    return Place(home, ws, tmp, outside)


async def run_wrapped(sandbox: object, command: str, place: Place, *, timeout: float = 60,
                      **env: str) -> tuple[int, str]:
    from agent_ls.core.sandbox import Sandbox

    assert isinstance(sandbox, Sandbox)
    wrapped = await sandbox.wrap_shell(command, cwd=str(place.ws), env=place.env(**env))
    try:
        proc = await asyncio.create_subprocess_exec(*wrapped.argv, env=wrapped.env, stdout=asyncio.subprocess.PIPE,
                                                    stderr=asyncio.subprocess.STDOUT,
                                                    stdin=asyncio.subprocess.DEVNULL)
        out, _ = await asyncio.wait_for(proc.communicate(), timeout)
    finally:
        wrapped.cleanup()
    assert proc.returncode is not None
    return proc.returncode, out.decode(errors="replace")


class _Hello(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:  # noqa: N802 - the standard library's name
        body = b"hello from the host"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *_args: object) -> None:
        pass


@pytest.fixture
def http_port() -> Iterator[int]:
    """A real HTTP server on the host's 127.0.0.1 (outside any sandbox)."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), _Hello)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server.server_address[1]
    server.shutdown()
    server.server_close()


@pytest.fixture
async def host(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[HostEnv]:
    """The MCP host tests' workspace, user settings file and managers (tests/mcp/conftest.py)."""
    monkeypatch.setenv("AGENT_LS_DATA_DIR", str(tmp_path / "data"))
    env = HostEnv(tmp_path)
    yield env
    for m in env.managers:
        await m.close()
