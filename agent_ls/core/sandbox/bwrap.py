"""The bubblewrap command line for a :class:`~agent_ls.core.sandbox.policy.SandboxPolicy`.

The whole file system is mounted read-only, then the writable places are bound read-write,
then the files that grant power are bound read-only over them (an empty read-only folder as
placeholder where one does not exist yet, a file's too), then the unreadable places are hidden (an empty read-only tmpfs
over a folder, ``/dev/null`` over a file). Later mounts win, so the order is the policy.

Always new PID and IPC namespaces: the command sees only its own processes (so it cannot reach
the agent's through ``/proc``). Its network has nothing but a loopback of its own: a new network
namespace per command, or the one its conversation's commands share (``join``:
:mod:`agent_ls.core.sandbox.netns`, where a background server is reachable from a later command).
When the policy lets some hosts through, something listens on 127.0.0.1:``PROXY_PORT`` inside
and leads to the proxy: in a command's own namespace a bridge (``socat``, else a small Python
script) forwarding to the proxy's Unix socket, bound in from outside; in a shared namespace the
proxy's own listener. ``HTTP(S)_PROXY`` point there. A program that ignores the variables
reaches nothing.

No ``--die-with-parent`` (it would kill background servers the command leaves running on
purpose); no ``--new-session`` (the caller kills the command's process group on timeout,
and there is no terminal to inject keystrokes into).
"""

from __future__ import annotations

import os
import shlex
import shutil
import sys
from collections.abc import Mapping, Sequence
from pathlib import Path

from agent_ls.core.sandbox.policy import SandboxPolicy

PROXY_PORT = 3128
"""Where the bridge listens inside the sandbox (its own loopback: any port is free there)."""

LOADER_VARIABLES = ("LD_PRELOAD", "LD_AUDIT", "LD_LIBRARY_PATH", "GCONV_PATH", "LOCPATH", "MALLOC_TRACE")
"""Variables the dynamic loader acts on: never in bubblewrap's own environment (code they load
would run before the sandbox exists); passed inside with ``--setenv``, where they are harmless."""

BRIDGE_SCRIPT = str(Path(__file__).with_name("bridge.py"))


def placeholder_plan(policy: SandboxPolicy) -> list[str]:
    """The power paths that do not exist and get a placeholder (their parent exists and is writable)."""
    out = []
    for power in policy.power:
        if not power.guard_missing or os.path.lexists(power.path):
            continue
        parent = os.path.dirname(power.path)
        if os.path.isdir(parent) and any(parent == w or parent.startswith(w.rstrip("/") + "/") for w in policy.writable):
            out.append(power.path)
    return out


def _bridge(proxy_socket: str) -> list[str]:
    """The command that starts the bridge inside and then runs the arguments after it."""
    socat = shutil.which("socat")
    if socat is not None:
        script = (
            f"{shlex.quote(socat)} -lf /dev/null TCP-LISTEN:{PROXY_PORT},bind=127.0.0.1,fork,reuseaddr "
            f"UNIX-CONNECT:{shlex.quote(proxy_socket)} </dev/null >/dev/null 2>&1 & bridge=$!; "
            f"for _ in 1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20; do "
            f"(exec 3<>/dev/tcp/127.0.0.1/{PROXY_PORT}) 2>/dev/null && break; sleep 0.005; done; "
            # not exec: the namespace's init lives (holding the output open) while the bridge does
            '"$@"; status=$?; kill "$bridge" 2>/dev/null; exit "$status"'
        )
        return ["/bin/bash", "-c", script, "agent-ls-bridge"]
    return [sys.executable, "-I", "-S", BRIDGE_SCRIPT, proxy_socket, str(PROXY_PORT), "--"]


LOOPBACK_NAMES = "localhost,127.0.0.1,::1"


def proxy_environment(port: int = PROXY_PORT, *, own_loopback: bool = False) -> dict[str, str]:
    """The proxy variables. ``own_loopback``: the command's loopback is its conversation's (a
    shared namespace: :mod:`agent_ls.core.sandbox.netns`), where its own servers listen, so
    loopback names do not go through the proxy (which would take them to the host's loopback)."""
    url = f"http://127.0.0.1:{port}"
    env = {k: url for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")}
    skip = LOOPBACK_NAMES if own_loopback else ""
    env.update({"NO_PROXY": skip, "no_proxy": skip})
    return env


def bwrap_command(
    policy: SandboxPolicy,
    argv: Sequence[str],
    *,
    cwd: str,
    env: Mapping[str, str],
    bwrap: str = "bwrap",
    proxy_socket: str | None = None,
    placeholders: Sequence[str] = (),
    join: Sequence[str] = (),
    shared_proxy: bool = False,
) -> tuple[list[str], dict[str, str]]:
    """The argv that runs ``argv`` confined by ``policy``, and the environment to start it with.

    ``proxy_socket``: the proxy's Unix socket (None: no network at all). ``placeholders``: the
    missing power paths to guard (:func:`placeholder_plan`; the caller removes them afterwards).
    ``join``: the command that enters a shared network namespace (:mod:`agent_ls.core.sandbox.netns`),
    put before bubblewrap, which then makes no network namespace of its own; ``shared_proxy``: the
    proxy listens on 127.0.0.1:``PROXY_PORT`` in it (``proxy_socket`` is not used then)."""
    args = [*join, bwrap, "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--unshare-pid", "--unshare-ipc", *(() if join else ("--unshare-net",)), "--unshare-uts",
            "--unshare-cgroup-try"]
    if os.geteuid() == 0:
        # bubblewrap run by root keeps root's capabilities inside (in the shared namespace's user
        # namespace, or the host's): enough to unmount a hidden place and read what it hides
        args += ["--cap-drop", "ALL"]
    for place in policy.writable:
        if os.path.isdir(place):
            args += ["--bind", place, place]
    for power in policy.power:
        if os.path.lexists(power.path):
            if os.path.islink(power.path):
                # bwrap follows a symlink destination; keep the link itself from being replaced by
                # binding what it points to only when that exists (else the dangling name is guarded).
                target = os.path.realpath(power.path)
                if os.path.exists(target):
                    args += ["--ro-bind", target, target]
                continue
            args += ["--ro-bind", power.path, power.path]
        elif power.path in placeholders:
            # An empty read-only folder, also for a missing file (.mcp.json): nothing can be
            # created there, and git passes over an empty folder (`git add -A` would fail on a
            # device such as /dev/null, and stage an empty file).
            args += ["--tmpfs", power.path, "--remount-ro", power.path]
    for place in policy.deny_read:
        if os.path.islink(place) or not os.path.exists(place):
            continue
        if os.path.isdir(place):
            args += ["--tmpfs", place, "--remount-ro", place]
        else:
            args += ["--ro-bind", "/dev/null", place]
    outer = {k: v for k, v in env.items() if k not in LOADER_VARIABLES}
    for name in LOADER_VARIABLES:
        if name in env:
            args += ["--setenv", name, env[name]]
    if policy.temp_dir:
        args += ["--setenv", "TMPDIR", policy.temp_dir]
    inner_argv = list(argv)
    if join and shared_proxy:
        for k, v in proxy_environment(own_loopback=True).items():
            args += ["--setenv", k, v]
    elif proxy_socket is not None and not join:
        sock_dir = os.path.dirname(proxy_socket)
        args += ["--ro-bind", sock_dir, sock_dir]
        for k, v in proxy_environment().items():
            args += ["--setenv", k, v]
        inner_argv = _bridge(proxy_socket) + inner_argv
    else:
        for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
            args += ["--unsetenv", k]
    args += ["--chdir", cwd, "--", *inner_argv]
    return args, outer
