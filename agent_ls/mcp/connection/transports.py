"""How the host reaches a server: a stdio process it launches (with a bounded tail of its
stderr, its pid and exit status) or a Streamable HTTP / SSE endpoint.

Each transport is an async context manager giving the SDK its streams; the connection's owner
task enters and exits it (:mod:`agent_ls.mcp.connection.connection`). The SDK's stdio shutdown
terminates the server's process group.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno as errno_mod
import os
import shutil
from collections import deque
from collections.abc import AsyncIterator, Callable
from typing import Any

import attrs
import httpx2
from mcp.client.sse import sse_client
from mcp.client.stdio import StdioServerParameters, get_default_environment, stdio_client
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from agent_ls.config.entries import Scope, ServerConfig, ServerSandbox
from agent_ls.config.sandbox import SandboxSettings
from agent_ls.config.settings import LoadedSettings
from agent_ls.core.sandbox import Sandbox, SandboxPolicy, SandboxUnavailable, Wrapped
from agent_ls.mcp.connection.failures import SpawnError

STDERR_TAIL_LINES = 200
STDERR_LINE_MAX = 2000


class StderrTail:
    """A bounded tail of a process's stderr, fed from a pipe without ever blocking the child."""

    def __init__(self, max_lines: int = STDERR_TAIL_LINES) -> None:
        self.lines: deque[str] = deque(maxlen=max_lines)
        self._partial = ""
        self._read_fd: int | None = None
        self._write_fd: int | None = None
        self.eof = asyncio.Event()
        self._loop: asyncio.AbstractEventLoop | None = None

    def open(self) -> int:
        """Create the pipe; returns the write end for the child."""
        r, w = os.pipe()
        os.set_blocking(r, False)
        self._read_fd, self._write_fd = r, w
        self.eof = asyncio.Event()
        self._loop = asyncio.get_running_loop()
        self._loop.add_reader(r, self._on_readable)
        return w

    def close_write_end(self) -> None:
        """After the spawn: the child holds its own copy, so EOF now means the child is gone."""
        if self._write_fd is not None:
            with contextlib.suppress(OSError):
                os.close(self._write_fd)
            self._write_fd = None

    def _on_readable(self) -> None:
        assert self._read_fd is not None
        try:
            data = os.read(self._read_fd, 65536)
        except BlockingIOError:
            return
        except OSError:
            data = b""
        if not data:
            self._finish()
            return
        text = self._partial + data.decode("utf-8", errors="replace")
        parts = text.split("\n")
        self._partial = parts.pop()
        if len(self._partial) > STDERR_LINE_MAX:
            parts.append(self._partial)
            self._partial = ""
        for line in parts:
            self.add(line)

    def add(self, line: str) -> None:
        """One line of the tail (also the server's log messages, which share it)."""
        line = line.rstrip("\r")
        if len(line) > STDERR_LINE_MAX:
            line = line[:STDERR_LINE_MAX] + f" [... {len(line) - STDERR_LINE_MAX} characters cut]"
        self.lines.append(line)

    def _finish(self) -> None:
        if self._partial:
            self.add(self._partial)
            self._partial = ""
        if self._read_fd is not None and self._loop is not None:
            self._loop.remove_reader(self._read_fd)
            with contextlib.suppress(OSError):
                os.close(self._read_fd)
            self._read_fd = None
        self.eof.set()

    def close(self) -> None:
        self.close_write_end()
        if self._read_fd is not None:
            # Drain what is already there, then stop.
            with contextlib.suppress(Exception):
                self._on_readable()
            if self._read_fd is not None:
                self._finish()

    def tail(self, n: int = 40) -> list[str]:
        return list(self.lines)[-n:]


def resolve_command(config: ServerConfig) -> tuple[str | None, str]:
    """PATH lookup of a stdio command as the child will see it; returns (path, PATH used)."""
    path_var = config.env.get("PATH") or os.environ.get("PATH", os.defpath)
    command = config.command or ""
    if os.sep in command:
        cwd = config.cwd or os.getcwd()
        full = command if os.path.isabs(command) else os.path.join(cwd, command)
        return (full if os.access(full, os.X_OK) and os.path.isfile(full) else None), path_var
    return shutil.which(command, path=path_var), path_var


def child_environment(config: ServerConfig) -> dict[str, str]:
    return get_default_environment() | dict(config.env)


def _process_of(cm: Any) -> Any:
    """The server process held by the SDK's stdio_client generator (read-only, for its pid and
    exit status: the SDK does not expose it). None if the SDK's layout ever changes."""
    frame = getattr(getattr(cm, "gen", None), "ag_frame", None)
    proc = frame.f_locals.get("process") if frame is not None else None
    return proc if hasattr(proc, "returncode") else None


@contextlib.asynccontextmanager
async def stdio_transport(
    cfg: ServerConfig, *, new_stderr: Callable[[], StderrTail], on_process: Callable[[Any], None],
) -> AsyncIterator[Any]:
    """Launch the server: ``new_stderr()`` gives the tail its stderr goes to (once the command
    and working directory are known to exist), ``on_process`` receives the process."""
    resolved, path_var = resolve_command(cfg)
    if resolved is None:
        raise SpawnError(
            f"command {cfg.command!r} not found on PATH (PATH={path_var})"
            if os.sep not in (cfg.command or "")
            else f"command {cfg.command!r} does not exist or is not executable",
            errno_mod.ENOENT,
        )
    if cfg.cwd is not None and not os.path.isdir(cfg.cwd):
        raise SpawnError(f"working directory {cfg.cwd!r} does not exist", errno_mod.ENOENT)
    box: Sandbox | None = None
    wrapped: Wrapped | None = None
    if cfg.sandbox is not None:
        box = Sandbox(server_policy(cfg))
        try:
            wrapped = await box.wrap([resolved, *cfg.args], cwd=cfg.cwd or os.getcwd(), env=child_environment(cfg))
        except SandboxUnavailable as exc:
            await box.aclose()
            raise SpawnError(f"not started: {exc}. Set \"sandbox\": false in the user settings' entry "
                             "to run it without one", errno_mod.EPERM) from None
        params = StdioServerParameters(command=wrapped.argv[0], args=wrapped.argv[1:], env=wrapped.env, cwd=cfg.cwd)
    else:
        params = StdioServerParameters(command=resolved, args=list(cfg.args), env=dict(cfg.env), cwd=cfg.cwd)
    stderr = new_stderr()
    wfd = stderr.open()
    errfile = os.fdopen(wfd, "w", closefd=False)
    try:
        try:
            cm = stdio_client(params, errlog=errfile)
            streams = await cm.__aenter__()
        except OSError as e:
            raise SpawnError(f"cannot start {resolved!r}: {e.strerror or e}", e.errno) from e
        stderr.close_write_end()
        on_process(_process_of(cm))
        try:
            yield streams
        except BaseException as e:
            if not await cm.__aexit__(type(e), e, e.__traceback__):
                raise
        else:
            await cm.__aexit__(None, None, None)
    finally:
        errfile.close()
        stderr.close_write_end()
        if wrapped is not None:
            wrapped.cleanup()
        if box is not None:
            await box.aclose()


def server_policy(cfg: ServerConfig) -> SandboxPolicy:
    """The sandbox of a stdio server: its working folder (else the workspace folder that defines it)
    is writable; a missing ``.git`` there gets no placeholder (a server lives long, and an empty
    ``.git`` folder would break git for the user meanwhile)."""
    assert cfg.sandbox is not None
    root = cfg.cwd or (str(cfg.source.workspace_folder) if cfg.source.workspace_folder else os.getcwd())
    settings = SandboxSettings(allow_write=cfg.sandbox.allow_write, deny_read=cfg.sandbox.deny_read,
                               network=cfg.sandbox.network)
    return attrs.evolve(settings.policy([root]), guard_git=False).refreshed()


def with_sandbox(settings: LoadedSettings) -> dict[str, ServerConfig]:
    """The servers of ``settings`` with their sandbox combined with ``agent.sandbox``: off when the
    user turned the sandbox off; the user's unreadable and writable places added; a workspace
    server's network rule (trusted with its entry) kept within the user's (a server has nobody
    to ask: a host its rule would ask about is refused)."""
    agent = settings.merged_sections().agent
    box = SandboxSettings.from_section(agent.sandbox if agent is not None else None)
    out = {}
    for name, cfg in settings.servers.items():
        own = cfg.sandbox
        if own is not None:
            if not box.enabled:
                cfg = attrs.evolve(cfg, sandbox=None)
            else:
                network = own.network
                if cfg.source.scope is not Scope.USER:
                    network = network.narrowed_by(box.network)  # the trusted entry's rule, within the user's
                cfg = attrs.evolve(cfg, sandbox=ServerSandbox(network, box.allow_write + own.allow_write,
                                                              box.deny_read + own.deny_read))
        out[name] = cfg
    return out


@contextlib.asynccontextmanager
async def http_transport(cfg: ServerConfig, auth: Callable[[], Any]) -> AsyncIterator[Any]:
    """Streamable HTTP (or SSE) to ``cfg.url``; ``auth()`` gives the httpx auth (OAuth) or None."""
    assert cfg.url is not None
    httpx_auth = auth()
    if cfg.transport == "sse":
        async with sse_client(cfg.url, headers=dict(cfg.headers), timeout=cfg.connect_timeout,
                              auth=httpx_auth) as streams:
            yield streams
        return
    http = create_mcp_http_client(
        headers=dict(cfg.headers) or None,
        timeout=httpx2.Timeout(cfg.connect_timeout, read=max(cfg.call_timeout, 300.0)),
        auth=httpx_auth,
    )
    async with http, streamable_http_client(cfg.url, http_client=http) as streams:
        yield streams
