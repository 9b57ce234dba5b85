"""One network namespace shared by the sandboxed commands of a conversation (bubblewrap only).

Without it every sandboxed command gets a network namespace of its own, and a server a background
command starts (``python -m http.server 8123``) is reachable only from inside that command. With
it, the conversation's commands all run in one namespace: a later ``curl 127.0.0.1:8123/health``
reaches the server, and nothing else changes. The namespace has only its own loopback, as before:
nothing of the host (not its loopback either) is reachable from it.

How, without a process to keep it alive or to orphan:

- **Made once, lazily** (:func:`create`): a bubblewrap with a new user and network namespace
  (loopback up) runs :mod:`.netns_seed`, which sends descriptors of both namespaces (and, when the
  network goes through the proxy, a TCP socket bound to 127.0.0.1:``PROXY_PORT`` in it) to
  agent-ls over a socket pair, and exits. agent-ls holds the descriptors: the namespace lives as
  long as agent-ls holds them or a process is in it. When agent-ls ends, however it ends
  (``SIGKILL`` included), the kernel drops the descriptors, and the processes in it are background
  jobs that their reapers kill (:mod:`agent_ls.core.reaper`): nothing is left.
- **Joined by every command** (:meth:`SharedNetwork.join`): ``nsenter --user=/proc/AGENT/fd/U
  --net=/proc/AGENT/fd/N --preserve-credentials -- bwrap ...`` without ``--unshare-net``. The user
  namespace first, because joining a network namespace needs ``CAP_SYS_ADMIN`` in the user
  namespace that owns it; bubblewrap then makes its own nested user namespace (a user that is not
  root: no capabilities) or, run as root there, drops every capability (``--cap-drop ALL``,
  :func:`~agent_ls.core.sandbox.bwrap.bwrap_command`). The paths name descriptors agent-ls holds,
  not a process id, so a reused pid can never send a command into someone else's namespace.
- **The proxy, one per namespace**: agent-ls's :class:`~agent_ls.core.sandbox.proxy.NetworkProxy`
  accepts on the listening socket the seed made *inside* the namespace: no bridge process, no Unix
  socket bound in. Each connection goes to the proxy of the conversation's latest sandbox (the
  settings as they are now). A namespace is made for one route: the network off (no listener at
  all) or through the proxy; when the setting switches between them the conversation gets a new
  namespace, so a command started with the network off never shares one with a way out.

A namespace is retired when the conversation ends (:meth:`SharedNetwork.close`) or its route
changes; its descriptors are closed once the last command that joined it has ended.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import os
import shutil
import socket
import sys
import weakref
from collections.abc import Callable
from pathlib import Path

import attrs

from agent_ls.core.sandbox.proxy import NetworkProxy

SEED_SCRIPT = str(Path(__file__).with_name("netns_seed.py"))
CREATE_TIMEOUT = 10.0
"""Seconds the seed may take to hand over the namespace."""
_MAX_FDS = 3


class NamespaceUnavailable(RuntimeError):
    """The shared namespace cannot be made or joined here (the message says why); commands then
    get a namespace of their own, as without sharing."""


@functools.lru_cache(maxsize=1)
def nsenter_path() -> str | None:
    return shutil.which("nsenter")


def _close_fds(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


class Namespace:
    """A user and network namespace held by agent-ls (see the module docstring)."""

    def __init__(self, user_fd: int, net_fd: int, listener: socket.socket | None) -> None:
        self.user_fd = user_fd
        self.net_fd = net_fd
        self.listener = listener
        self.routed = listener is not None
        """It has the proxy's listener (the network goes through the proxy)."""
        self.inode = os.fstat(net_fd).st_ino
        """The network namespace's inode (``net:[N]`` in ``/proc/PID/ns/net``)."""
        self.server: asyncio.Server | None = None
        self.leases = 0
        self.retired = False
        self.closed = False
        # dropped without close(): the descriptors still go (the namespace with them)
        self._finalizer = weakref.finalize(self, _close_fds, [user_fd, net_fd])

    def join_prefix(self, nsenter: str) -> list[str]:
        """The command line that runs what follows it inside this namespace."""
        me = os.getpid()
        return [nsenter, f"--user=/proc/{me}/fd/{self.user_fd}", f"--net=/proc/{me}/fd/{self.net_fd}",
                "--preserve-credentials", "--"]

    def release(self) -> None:
        self.leases = max(0, self.leases - 1)
        if self.retired and self.leases == 0:
            self.close()

    def retire(self) -> None:
        """No new command joins it; it closes when the last one that did has ended."""
        self.retired = True
        if self.leases == 0:
            self.close()

    def close(self) -> None:
        if self.closed:
            return
        self.closed = True
        with contextlib.suppress(Exception):  # (the event loop may be gone at exit)
            if self.server is not None:
                self.server.close()  # closes the listener too
        self.server = None
        if self.listener is not None:
            self.listener.close()
        self._finalizer()


async def create(bwrap: str, *, routed: bool, port: int) -> Namespace:
    """A new user and network namespace (loopback up); ``routed``: with a socket bound to
    127.0.0.1:``port`` inside, not yet accepting. :class:`NamespaceUnavailable` when it cannot be made."""
    ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_STREAM)
    env = {"PATH": os.environ.get("PATH", os.defpath)}  # our own script: nothing of the user's environment
    # (no --dev: an unprivileged bubblewrap would then nest a second user namespace, and the seed
    # could not name the one that owns the network namespace)
    argv = [bwrap, "--ro-bind", "/", "/", "--unshare-user", "--unshare-net", "--",
            sys.executable, "-I", "-S", SEED_SCRIPT, str(theirs.fileno()), str(port if routed else 0)]
    try:
        with ours:
            try:
                proc = await asyncio.create_subprocess_exec(
                    *argv, env=env, pass_fds=(theirs.fileno(),), stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.PIPE, start_new_session=True)
            finally:
                theirs.close()
            ours.settimeout(CREATE_TIMEOUT)
            try:
                _, fds, _, _ = await asyncio.to_thread(socket.recv_fds, ours, 64, _MAX_FDS, socket.MSG_CMSG_CLOEXEC)
            except OSError as exc:
                fds = []
                why = str(exc)
            else:
                why = ""
            try:
                _, err = await asyncio.wait_for(proc.communicate(), CREATE_TIMEOUT)
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(proc.wait(), CREATE_TIMEOUT)
                err = b"timed out"
    except OSError as exc:
        raise NamespaceUnavailable(f"bubblewrap could not start ({exc})") from None
    if len(fds) != (3 if routed else 2):
        _close_fds(fds)
        detail = err.decode(errors="replace").strip().splitlines()
        raise NamespaceUnavailable("the shared network namespace could not be made ("
                                   + (detail[-1] if detail else why or f"exit {proc.returncode}") + ")")
    listener = socket.socket(fileno=fds[2]) if routed else None
    return Namespace(fds[0], fds[1], listener)


@attrs.frozen
class Joined:
    """A command's place in a shared namespace."""

    prefix: list[str]
    """Put before bubblewrap's command line (``nsenter ... --``)."""
    routed: bool
    """The proxy listens on 127.0.0.1:``PROXY_PORT`` in the namespace."""
    release: Callable[[], None]
    """Call once the command (and all it left running) has ended."""


class SharedNetwork:
    """The network namespace of one conversation (made at its first sandboxed command); closed
    with the conversation (:meth:`close`)."""

    def __init__(self) -> None:
        self._ns: Namespace | None = None
        self._proxy: NetworkProxy | None = None
        self._lock: asyncio.Lock | None = None
        self.closed = False

    @property
    def inode(self) -> int | None:
        """The current namespace's inode (None: none yet)."""
        return self._ns.inode if self._ns is not None and not self._ns.retired else None

    async def join(self, bwrap: str, proxy: NetworkProxy | None, port: int) -> Joined:
        """A place in the namespace for one command: with the network through ``proxy`` (its
        listener on 127.0.0.1:``port`` inside), or off (None). :class:`NamespaceUnavailable`
        when there is none to join (the caller gives the command a namespace of its own)."""
        nsenter = nsenter_path()
        if nsenter is None:
            raise NamespaceUnavailable("nsenter (util-linux) is not installed")
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self.closed:
                raise NamespaceUnavailable("the conversation has ended")
            routed = proxy is not None
            ns = self._ns
            if ns is None or ns.routed != routed:
                if ns is not None:
                    ns.retire()  # a route out appears or goes: never share across that
                ns = self._ns = await create(bwrap, routed=routed, port=port)
            if proxy is not None:
                self._proxy = proxy
                if ns.server is None and ns.listener is not None:
                    ns.server = await asyncio.start_server(self._serve, sock=ns.listener)
            ns.leases += 1
        return Joined(ns.join_prefix(nsenter), ns.routed, ns.release)

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        proxy = self._proxy
        if proxy is None:
            writer.close()
            return
        await proxy.handle(reader, writer)

    def close(self) -> None:
        """The conversation has ended: no command joins any more; the namespace's descriptors
        (and the proxy's listener in it) go once the last command that joined has ended."""
        self.closed = True
        if self._ns is not None:
            self._ns.retire()
        self._proxy = None
