"""The sandbox as the rest of agent-ls uses it: which mechanism this machine has
(:func:`detect`), and :meth:`Sandbox.wrap`, the one function that turns a command (argv, cwd,
environment) into the command that runs it confined. ``bash``, stdio MCP servers and hooks all
go through it.

Where no mechanism works, :meth:`Sandbox.wrap` raises :class:`SandboxUnavailable` with the
reason: the caller must then ask the user before running anything unconfined (never silently).
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import enum
import functools
import logging
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence

import attrs

from agent_ls.core.sandbox import landlock
from agent_ls.core.sandbox.bwrap import PROXY_PORT, bwrap_command, placeholder_plan, proxy_environment
from agent_ls.core.sandbox.netns import Joined, NamespaceUnavailable, SharedNetwork
from agent_ls.core.sandbox.policy import Grants, GrantSource, SandboxPolicy
from agent_ls.core.sandbox.proxy import AskHost, NetworkProxy
from agent_ls.core.sandbox.seatbelt import seatbelt_command

log = logging.getLogger("agent_ls.core.sandbox")

FORCE_VARIABLE = "AGENT_LS_SANDBOX_MECHANISM"
"""``bubblewrap``, ``landlock`` or ``none``: use that mechanism (tests force the fallbacks)."""


class Mechanism(enum.StrEnum):
    BUBBLEWRAP = "bubblewrap"
    LANDLOCK = "landlock"
    SEATBELT = "sandbox-exec"
    NONE = "none"


@attrs.frozen
class Availability:
    mechanism: Mechanism
    detail: str
    """What is in use (``bubblewrap 0.8.0``), or why nothing is."""
    notes: tuple[str, ...] = ()
    """Why a better mechanism was passed over."""

    @property
    def available(self) -> bool:
        return self.mechanism is not Mechanism.NONE

    def sentence(self) -> str:
        if not self.available:
            return f"no OS sandbox is available: {self.detail}; every command asks before it runs"
        extra = f" ({'; '.join(self.notes)})" if self.notes else ""
        return f"commands run in an OS sandbox: {self.detail}{extra}"


class SandboxUnavailable(RuntimeError):
    """No mechanism can confine the command (the message says why)."""


def _probe_bwrap(path: str) -> str | None:
    """None when bubblewrap can build a sandbox here, else why not."""
    try:
        done = subprocess.run([path, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--unshare-pid",
                               "--unshare-net", "--", "true"], capture_output=True, timeout=10, check=False)
    except (OSError, subprocess.TimeoutExpired) as exc:
        return f"bubblewrap could not start ({exc})"
    if done.returncode != 0:
        why = done.stderr.decode(errors="replace").strip().splitlines()
        return f"bubblewrap cannot create namespaces here ({why[-1] if why else f'exit {done.returncode}'})"
    return None


def _bwrap_version(path: str) -> str:
    with contextlib.suppress(OSError, subprocess.SubprocessError):
        out = subprocess.run([path, "--version"], capture_output=True, timeout=5, check=False, text=True).stdout
        if out.strip():
            return out.strip()
    return "bubblewrap"


@functools.lru_cache(maxsize=4)
def _detect(force: str | None, platform: str) -> Availability:
    if platform == "darwin":
        if force in (None, "sandbox-exec") and shutil.which("sandbox-exec"):
            return Availability(Mechanism.SEATBELT, "macOS sandbox-exec")
        return Availability(Mechanism.NONE, "sandbox-exec is not available on this Mac")
    if not platform.startswith("linux"):
        return Availability(Mechanism.NONE, f"no sandbox mechanism is implemented for {platform}")
    if force == "none":
        return Availability(Mechanism.NONE, f"turned off by {FORCE_VARIABLE}=none")
    notes: list[str] = []
    if force in (None, "bubblewrap"):
        path = shutil.which("bwrap")
        if path is None:
            notes.append("bubblewrap is not installed (Debian/Ubuntu: apt-get install bubblewrap)")
        elif (why := _probe_bwrap(path)) is not None:
            notes.append(why)
        else:
            return Availability(Mechanism.BUBBLEWRAP, _bwrap_version(path))
    if force in (None, "landlock"):
        abi = landlock.abi_version()
        if abi >= landlock.MIN_ABI:
            return Availability(Mechanism.LANDLOCK, f"Landlock ABI {abi} (no network namespace: TCP connections "
                                "only to the proxy)", tuple(notes))
        notes.append("Landlock is not available in this kernel" if abi <= 0
                     else f"Landlock ABI {abi} is too old (need {landlock.MIN_ABI})")
    return Availability(Mechanism.NONE, "; ".join(notes) or f"{FORCE_VARIABLE}={force} is not a mechanism")


@functools.lru_cache(maxsize=1)
def _bwrap_path() -> str:
    return shutil.which("bwrap") or "bwrap"


_detect_lock = threading.Lock()


def detect() -> Availability:
    """The best mechanism this machine has (probed once per forced choice; a probe under way,
    :func:`detect_soon`'s, is waited for rather than run twice)."""
    with _detect_lock:
        return _detect(os.environ.get(FORCE_VARIABLE) or None, sys.platform)


def detect_soon() -> None:
    """Start :func:`detect` in a thread: its probes are child processes (``bwrap``, 20 ms or
    more of waiting, not CPU), so a front end that starts it first finds the answer ready when
    its first session's ``bash`` tool describes the sandbox, instead of waiting in its event loop
    (issue 46)."""
    threading.Thread(target=detect, name="agent-ls sandbox probe", daemon=True).start()


SWEEP_DELAY = 2.0
"""Seconds an unused placeholder stays before it is removed: removing a mount point a namespace
just released takes milliseconds, and the next command of an edit-test loop reuses it."""

_placeholder_lock = threading.Lock()
_placeholder_users: dict[str, int] = {}
"""Placeholders (mount points bubblewrap created in a workspace) -> sandboxed processes using them."""


def _hold_placeholders(policy: SandboxPolicy) -> tuple[list[str], list[str]]:
    """(the missing power paths to mount placeholders on, every placeholder path now held). A
    placeholder another command created is held too, so it is not removed under this one (a
    mount point removed from outside is detached inside, which would reopen the path)."""
    with _placeholder_lock:
        missing = placeholder_plan(policy)
        ours = [p.path for p in policy.power if p.path in _placeholder_users and p.path not in missing]
        held = missing + ours
        for p in held:
            _placeholder_users[p] = _placeholder_users.get(p, 0) + 1
        return missing, held


def _release_placeholders(paths: Sequence[str]) -> None:
    with _placeholder_lock:
        for p in paths:
            _placeholder_users[p] = max(0, _placeholder_users.get(p, 1) - 1)
    if paths:
        timer = threading.Timer(SWEEP_DELAY, sweep_placeholders)
        timer.daemon = True
        timer.start()


def is_placeholder(path: str) -> bool:
    """``path`` is one of our placeholders now (an empty file or folder a sandboxed command's
    mount point made): not the user's file. Checkpoints skip it (a command's placeholder is not a
    change the turn made)."""
    with _placeholder_lock:
        if path not in _placeholder_users:
            return False
    try:
        if os.path.islink(path):
            return False
        return os.path.getsize(path) == 0 if os.path.isfile(path) else os.path.isdir(path) and not os.listdir(path)
    except OSError:
        return False


_swept: dict[str, float] = {}
"""Placeholders removed lately -> when (a file watcher reports their removal a moment later)."""
_SWEPT_MEMORY = 30.0


def placeholder_event(path: str) -> bool:
    """A file watcher's event at ``path`` is only a sandboxed command's placeholder coming or
    going (not a change of the user's): a settings watcher need not reload for it."""
    if is_placeholder(path):
        return True
    with _placeholder_lock:
        when = _swept.get(path)
    return when is not None and time.monotonic() - when < _SWEPT_MEMORY and not os.path.lexists(path)


def sweep_placeholders() -> None:
    """Remove the empty placeholders no sandboxed process of ours uses any more (a real file
    someone wrote there meanwhile stays). Also run at exit."""
    with _placeholder_lock:
        for p, users in list(_placeholder_users.items()):
            if users > 0:
                continue
            _placeholder_users.pop(p)
            with contextlib.suppress(OSError):
                if os.path.isdir(p) and not os.path.islink(p):
                    os.rmdir(p)  # only when empty
                    _swept[p] = time.monotonic()
                elif os.path.isfile(p) and not os.path.islink(p) and os.path.getsize(p) == 0:
                    os.unlink(p)
                    _swept[p] = time.monotonic()
        now = time.monotonic()
        for p in [p for p, when in _swept.items() if now - when > _SWEPT_MEMORY]:
            del _swept[p]


atexit.register(sweep_placeholders)


def _release(placeholders: Sequence[str], joined: Joined | None) -> None:
    _release_placeholders(placeholders)
    if joined is not None:
        joined.release()


@functools.lru_cache(maxsize=1)
def _warn_unshared(why: str) -> None:
    log.warning("sandboxed commands get a network namespace each (a server one starts is not reachable "
                "from the next): %s", why)


@attrs.frozen
class Wrapped:
    """A command ready to start confined."""

    argv: list[str]
    env: dict[str, str]
    mechanism: Mechanism
    cleanup: Callable[[], None] = lambda: None
    """Call once the process (and anything it left running) has ended."""


class Sandbox:
    """One policy, its network proxy (started on first use) and the mechanism that enforces it."""

    def __init__(self, policy: SandboxPolicy, *, ask_host: AskHost | None = None,
                 availability: Availability | None = None, grants: GrantSource | None = None) -> None:
        self.policy = policy
        self._availability = availability
        self.grants: GrantSource = grants if grants is not None else Grants
        """The user's grants for this workspace (read again for every command and host)."""
        self.proxy = NetworkProxy(policy.network, ask_host, self.grants)

    @property
    def availability(self) -> Availability:
        if self._availability is None:
            self._availability = detect()
        return self._availability

    def take_refused(self) -> list[str]:
        """The hosts the proxy refused since the last call (for the tool result)."""
        out = list(dict.fromkeys(self.proxy.refused))
        self.proxy.refused.clear()
        return out

    async def wrap(self, argv: Sequence[str], *, cwd: str | None = None,
                   env: Mapping[str, str] | None = None, network: SharedNetwork | None = None) -> Wrapped:
        """The seam every spawn goes through: ``argv`` (run in ``cwd``, default the first root,
        with ``env``, default this process's) as a confined command. :class:`SandboxUnavailable`
        when nothing can confine it.

        ``network``: the conversation's shared network namespace (:mod:`.netns`; bubblewrap only):
        the command joins it, so what its earlier commands left listening on the loopback is
        reachable. Where it cannot be made, the command gets a namespace of its own (said once in
        the log). Landlock has no network namespace (the host's is shared, TCP connections only
        to the proxy's port), so it is not used there."""
        avail = self.availability
        if not avail.available:
            raise SandboxUnavailable(avail.sentence())
        where = cwd if cwd is not None else self.policy.roots[0]
        environ = dict(os.environ if env is None else env)
        off = self.policy.network.is_off
        granted = self.policy.with_grants(self.grants())
        if avail.mechanism is Mechanism.BUBBLEWRAP:
            joined = await self._join(network) if network is not None else None
            try:
                socket_path = None if off or joined is not None else await self.proxy.start()
                policy = granted.refreshed()  # the power files as they are now (a .git made since)
                missing, held = await asyncio.to_thread(_hold_placeholders, policy)
            except BaseException:
                if joined is not None:
                    joined.release()
                raise
            try:
                args, outer = bwrap_command(policy, argv, cwd=where, env=environ, bwrap=_bwrap_path(),
                                            proxy_socket=socket_path, placeholders=missing,
                                            join=joined.prefix if joined is not None else (),
                                            shared_proxy=joined is not None and joined.routed)
            except BaseException:
                _release_placeholders(held)
                if joined is not None:
                    joined.release()
                raise
            return Wrapped(args, outer, avail.mechanism, functools.partial(_release, held, joined))
        socket_path = None if off else await self.proxy.start()
        if avail.mechanism is Mechanism.LANDLOCK:
            port = await self.proxy.start_tcp() if socket_path is not None else None
            args, outer = landlock.landlock_command(granted, argv, cwd=where, env=environ, proxy_port=port)
            if port is not None:
                outer.update(proxy_environment(port))
            return Wrapped(args, outer, avail.mechanism)
        if avail.mechanism is Mechanism.SEATBELT:  # pragma: no cover - macOS only
            port = await self.proxy.start_tcp() if socket_path is not None else None
            environ.update(proxy_environment(port) if port is not None else {})
            if self.policy.temp_dir:
                environ["TMPDIR"] = self.policy.temp_dir
            return Wrapped(seatbelt_command(granted, argv, proxy_port=port), environ, avail.mechanism)
        raise SandboxUnavailable(avail.sentence())

    async def _join(self, network: SharedNetwork) -> Joined | None:
        """A place in the conversation's namespace (None: the command gets its own)."""
        try:
            return await network.join(_bwrap_path(), None if self.policy.network.is_off else self.proxy, PROXY_PORT)
        except NamespaceUnavailable as exc:
            _warn_unshared(str(exc))
            return None

    async def wrap_shell(self, command: str, *, cwd: str | None = None,
                         env: Mapping[str, str] | None = None, network: SharedNetwork | None = None) -> Wrapped:
        """:meth:`wrap` for a command line run with ``bash -c``."""
        return await self.wrap(["bash", "-c", command], cwd=cwd, env=env, network=network)

    async def aclose(self) -> None:
        await self.proxy.aclose()
