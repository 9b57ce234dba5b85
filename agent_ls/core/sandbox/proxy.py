"""The network proxy outside the sandbox: the only way out of a sandboxed process's network
namespace. It listens on a Unix socket (bound into the sandbox, where a bridge exposes it on the
sandbox's loopback), reads one request line per connection (``CONNECT host:port`` or an
absolute-form ``GET http://host/...``), decides the host name by the
:class:`~agent_ls.core.sandbox.policy.NetworkPolicy` (asking through ``ask_host`` where the policy
says ask), and then relays bytes both ways. A refused host gets ``403`` with a sentence naming the
host and the setting, and is kept in :attr:`NetworkProxy.refused` for the tool result.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import socket
import stat
import tempfile
import weakref
from collections.abc import Awaitable, Callable
from typing import Literal

from agent_ls.core.sandbox.policy import GrantSource, NetworkPolicy

HostAnswer = Literal["once", "session", "deny"]
AskHost = Callable[[str], Awaitable[HostAnswer]]
"""Asks the user whether a sandboxed command may reach a host: allow once, for the session, or deny."""

_MAX_HEAD = 65536

DIR_PREFIX = "agent-ls-proxy-"
"""The proxy's socket folder: ``agent-ls-proxy-<pid>-<random>`` in /tmp. A process that ends
with ``os._exit`` (the language server, the ACP agent) or is killed cannot remove its own, so
the next proxy of any agent-ls process sweeps the folders of processes that are gone
(:func:`sweep_stale`)."""

_swept: set[str] = set()


def sweep_once(base: str) -> None:
    """:func:`sweep_stale` of ``base``, once per process."""
    if base not in _swept:
        _swept.add(base)
        sweep_stale(base)


def sweep_stale(base: str) -> list[str]:
    """Remove the proxy folders in ``base`` that this user owns and whose process is gone (or,
    named before the pid was in the name, whose socket no longer answers). Returns what went."""
    removed: list[str] = []
    try:
        names = [n for n in os.listdir(base) if n.startswith(DIR_PREFIX)]
    except OSError:
        return removed
    uid = os.getuid()
    for name in names:
        path = os.path.join(base, name)
        try:
            st = os.lstat(path)
        except OSError:
            continue
        if not stat.S_ISDIR(st.st_mode) or st.st_uid != uid:
            continue
        pid_text = name[len(DIR_PREFIX):].partition("-")[0]
        if pid_text.isdigit():
            if int(pid_text) == os.getpid() or _alive(int(pid_text)):
                continue
        elif _answers(os.path.join(path, "proxy.sock")):
            continue
        shutil.rmtree(path, ignore_errors=True)
        removed.append(path)
    return removed


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process of that number
    return True


def _answers(sock_path: str) -> bool:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as probe:
        probe.settimeout(0.2)
        try:
            probe.connect(sock_path)
        except OSError:
            return False
    return True


async def _relay(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while data := await reader.read(65536):
            writer.write(data)
            await writer.drain()
    except (ConnectionError, OSError):
        pass
    finally:
        with contextlib.suppress(Exception):
            if writer.can_write_eof():
                writer.write_eof()


def _split_target(target: str, default_port: int) -> tuple[str, int] | None:
    host, port = target, default_port
    if target.startswith("["):
        end = target.find("]")
        if end < 0:
            return None
        host, rest = target[1:end], target[end + 1:]
        if rest.startswith(":"):
            port = int(rest[1:]) if rest[1:].isdigit() else -1
    elif target.count(":") == 1:
        host, _, p = target.partition(":")
        port = int(p) if p.isdigit() else -1
    if not host or not 0 < port < 65536:
        return None
    return host, port


class NetworkProxy:
    """One proxy for one sandbox (started on first use, closed with it)."""

    def __init__(self, policy: NetworkPolicy, ask_host: AskHost | None = None,
                 grants: GrantSource | None = None) -> None:
        self.policy = policy
        self.ask_host = ask_host
        self.grants = grants
        """The user's grants for the workspace: a host they name goes through (the network on)."""
        self.refused: list[str] = []
        """Hosts refused so far (a caller may take and clear it)."""
        self._session: dict[str, bool] = {}
        self._asking: dict[str, asyncio.Future[HostAnswer]] = {}
        self._server: asyncio.AbstractServer | None = None
        self._tcp: asyncio.Server | None = None
        self._dir: str | None = None
        self.socket_path: str | None = None

    async def start(self) -> str:
        """Listen (once) and return the socket's path."""
        if self._server is None:
            # A Unix socket path is limited to ~100 bytes: a short base, whatever TMPDIR says.
            base = "/tmp" if os.path.isdir("/tmp") else tempfile.gettempdir()
            sweep_once(base)
            self._dir = tempfile.mkdtemp(prefix=f"{DIR_PREFIX}{os.getpid()}-", dir=base)
            os.chmod(self._dir, 0o700)
            # a session that ends without aclose() still leaves no folder behind
            weakref.finalize(self, shutil.rmtree, self._dir, ignore_errors=True)
            self.socket_path = os.path.join(self._dir, "proxy.sock")
            self._server = await asyncio.start_unix_server(self.handle, path=self.socket_path)
        assert self.socket_path is not None
        return self.socket_path

    async def start_tcp(self) -> int:
        """Also listen on 127.0.0.1 (for Landlock, which has no network namespace to bridge into)."""
        if self._tcp is None:
            self._tcp = await asyncio.start_server(self.handle, host="127.0.0.1", port=0)
        return int(self._tcp.sockets[0].getsockname()[1])

    async def aclose(self) -> None:
        if self._tcp is not None:
            self._tcp.close()
            self._tcp = None
        if self._server is not None:
            self._server.close()
            with contextlib.suppress(Exception):
                await self._server.wait_closed()
            self._server = None
        if self._dir is not None:
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(self._dir, "proxy.sock"))
            with contextlib.suppress(OSError):
                os.rmdir(self._dir)
            self._dir = None

    async def allowed(self, host: str) -> bool:
        """Whether ``host`` may be reached now (asking the user where the policy says so)."""
        host = host.lower().rstrip(".")
        decision = self.policy.decide(host)
        if decision != "allow" and not self.policy.is_off and self.grants is not None and self.grants().allows_host(host):
            return True
        if decision != "ask":
            return decision == "allow"
        if host in self._session:
            return self._session[host]
        if self.ask_host is None:
            return False
        pending = self._asking.get(host)
        if pending is None:
            pending = asyncio.ensure_future(self.ask_host(host))
            self._asking[host] = pending
            pending.add_done_callback(lambda _f: self._asking.pop(host, None))
        try:
            answer = await asyncio.shield(pending)
        except Exception:  # noqa: BLE001 - an asker that fails refuses
            return False
        if answer == "session":
            self._session[host] = True
        return answer in ("once", "session")

    async def _refuse(self, writer: asyncio.StreamWriter, host: str, why: str) -> None:
        self.refused.append(host)
        body = (f"agent-ls sandbox: the connection to {host} was refused ({why}; "
                "see agent.sandbox.network in the agent-ls settings)\n").encode()
        writer.write(b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain\r\nConnection: close\r\n"
                     b"Content-Length: " + str(len(body)).encode() + b"\r\n\r\n" + body)
        with contextlib.suppress(Exception):
            await writer.drain()

    async def handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Serve one connection from inside a sandbox (its socket, its listener, or a shared
        namespace's listener: :mod:`agent_ls.core.sandbox.netns`)."""
        try:
            await self._serve(reader, writer)
        except (ConnectionError, OSError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ValueError):
            pass
        finally:
            with contextlib.suppress(Exception):
                writer.close()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        head = await reader.readuntil(b"\r\n\r\n")
        if len(head) > _MAX_HEAD:
            return
        lines = head.decode("latin-1").split("\r\n")
        method, _, rest = lines[0].partition(" ")
        target, _, version = rest.partition(" ")
        if method == "CONNECT":
            where = _split_target(target, 443)
            forward = b""
        else:
            scheme, sep, after = target.partition("://")
            if not sep or scheme.lower() != "http":
                writer.write(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
                return
            authority, slash, path = after.partition("/")
            where = _split_target(authority, 80)
            headers = [h for h in lines[1:] if h and not h.lower().startswith(("proxy-", "connection:"))]
            forward = (f"{method} /{path if slash else ''} {version}\r\n" + "\r\n".join(headers)
                       + "\r\nConnection: close\r\n\r\n").encode("latin-1")
        if where is None:
            writer.write(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
            return
        host, port = where
        if not await self.allowed(host):
            decision = self.policy.decide(host.lower())
            why = ("the network is off" if self.policy.is_off else "not in the allow list" if decision == "deny"
                   else "the user did not allow it" if self.ask_host is not None
                   else "asking needs a front end that can ask")
            await self._refuse(writer, host, why)
            return
        try:
            up_reader, up_writer = await asyncio.open_connection(host, port)
        except OSError as exc:
            writer.write(f"HTTP/1.1 502 Bad Gateway\r\nConnection: close\r\n\r\n{exc}\n".encode())
            return
        try:
            if method == "CONNECT":
                writer.write(b"HTTP/1.1 200 Connection established\r\n\r\n")
                await writer.drain()
            else:
                up_writer.write(forward)
            await asyncio.gather(_relay(reader, up_writer), _relay(up_reader, writer))
        finally:
            with contextlib.suppress(Exception):
                up_writer.close()
