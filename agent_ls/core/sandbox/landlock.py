"""Landlock, the fallback when bubblewrap cannot create namespaces (user namespaces refused).

Applied in the child right before ``exec`` by this file run as a script (standard library only,
run by path: ``python3 -I -S landlock.py POLICY-JSON -- ARGV``), with ``no_new_privs`` set. Bound
directly through ``ctypes`` (three system calls): the PyPI bindings we looked at (``landlock``
1.0.0.dev5, ``py-landlock``, ``landlockpy``) are young single-maintainer packages, and the kernel
interface is small and stable.

What it enforces, and what it cannot (docs/security.md says the same):

- reads: everywhere except :attr:`SandboxPolicy.deny_read` (the folders leading to a denied
  place stay listable, their files unreadable; a denied place's own contents are not readable);
- writes: only in the writable places. Landlock grants rights down a whole tree and cannot
  take them back beneath, so the files that grant power inside the workspace are *not*
  read-only under Landlock; for that reason commands never run without asking under it
  (``autoAllow`` needs bubblewrap);
- network: TCP connections only to the proxy's port on loopback (ABI 4); no network namespace,
  so UDP is not covered;
- signals: only to processes inside the sandbox (ABI 6 scopes).
"""

from __future__ import annotations

import ctypes
import json
import os
import sys
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # the script part must not import agent-ls
    from agent_ls.core.sandbox.policy import SandboxPolicy

MIN_ABI = 4
"""Network rules (TCP connect) need ABI 4."""

_SYS_CREATE, _SYS_ADD_RULE, _SYS_RESTRICT = 444, 445, 446  # the same on every architecture
_CREATE_VERSION = 1
_RULE_PATH_BENEATH, _RULE_NET_PORT = 1, 2
_PR_SET_NO_NEW_PRIVS = 38

_EXECUTE, _WRITE_FILE, _READ_FILE, _READ_DIR = 1 << 0, 1 << 1, 1 << 2, 1 << 3
_FS_ALL_V1 = (1 << 13) - 1
_REFER, _TRUNCATE, _IOCTL_DEV = 1 << 13, 1 << 14, 1 << 15
_FILE_RIGHTS = _EXECUTE | _WRITE_FILE | _READ_FILE | _TRUNCATE | _IOCTL_DEV
_NET_CONNECT_TCP = 1 << 1
_SCOPE_SIGNAL = 1 << 1

_DEVICES = ("/dev/null", "/dev/zero", "/dev/full", "/dev/random", "/dev/urandom", "/dev/tty", "/dev/ptmx",
            "/dev/pts", "/dev/shm")


class _RulesetAttr(ctypes.Structure):
    _fields_ = [("handled_access_fs", ctypes.c_uint64), ("handled_access_net", ctypes.c_uint64),
                ("scoped", ctypes.c_uint64)]


class _PathBeneath(ctypes.Structure):
    _pack_ = 1
    _fields_ = [("allowed_access", ctypes.c_uint64), ("parent_fd", ctypes.c_int32)]


class _NetPort(ctypes.Structure):
    _fields_ = [("allowed_access", ctypes.c_uint64), ("port", ctypes.c_uint64)]


def _libc() -> ctypes.CDLL:
    return ctypes.CDLL(None, use_errno=True)


def abi_version() -> int:
    """The kernel's Landlock ABI version (0 or less: none)."""
    if not sys.platform.startswith("linux"):
        return 0
    try:
        libc = _libc()
        libc.syscall.restype = ctypes.c_long
        return int(libc.syscall(ctypes.c_long(_SYS_CREATE), None, ctypes.c_size_t(0), ctypes.c_uint32(_CREATE_VERSION)))
    except (OSError, AttributeError):
        return 0


def _fs_all(abi: int) -> int:
    rights = _FS_ALL_V1
    if abi >= 2:
        rights |= _REFER
    if abi >= 3:
        rights |= _TRUNCATE
    if abi >= 5:
        rights |= _IOCTL_DEV
    return rights


def _under(path: str, top: str) -> bool:
    return path == top or path.startswith(top.rstrip("/") + "/")


def _rules(tops: Sequence[str], rights: int, excluded: Sequence[str], out: list[tuple[str, int]],
           ancestor_rights: int = 0) -> None:
    """Rules granting ``rights`` under each of ``tops`` except beneath ``excluded``: a tree holding an
    excluded place is granted child by child (its folder itself gets ``ancestor_rights``)."""
    for top in tops:
        if any(_under(top, e) for e in excluded):
            continue
        inner = [e for e in excluded if _under(e, top)]
        if not inner:
            out.append((top, rights))
            continue
        if ancestor_rights:
            out.append((top, ancestor_rights))
        try:
            children = [os.path.join(top, n) for n in sorted(os.listdir(top))]
        except OSError:
            continue
        _rules([c for c in children if not os.path.islink(c)], rights, inner, out, ancestor_rights)


def _strings(value: object) -> list[str]:
    return [str(v) for v in value] if isinstance(value, list) else []


def plan(policy_json: Mapping[str, object], abi: int) -> list[tuple[str, int]]:
    """The (path, rights) rules for a policy (as :func:`landlock_command` writes it)."""
    deny = _strings(policy_json.get("deny_read"))
    write = _strings(policy_json.get("write"))
    out: list[tuple[str, int]] = []
    _rules(["/"], _EXECUTE | _READ_FILE | _READ_DIR, deny, out, ancestor_rights=_READ_DIR)
    _rules([w for w in write if os.path.isdir(w)], _fs_all(abi), deny, out)
    _rules([d for d in _DEVICES if os.path.exists(d)], _fs_all(abi), deny, out)
    return out


def restrict(policy_json: Mapping[str, object]) -> None:
    """Confine this process (and what it executes) for good."""
    libc = _libc()
    libc.syscall.restype = ctypes.c_long
    abi = abi_version()
    if abi < MIN_ABI:
        raise OSError(f"Landlock ABI {abi} is not enough (need {MIN_ABI})")
    attr = _RulesetAttr(_fs_all(abi), _NET_CONNECT_TCP, _SCOPE_SIGNAL if abi >= 6 else 0)
    size = ctypes.sizeof(_RulesetAttr) if abi >= 6 else 16
    fd = libc.syscall(ctypes.c_long(_SYS_CREATE), ctypes.byref(attr), ctypes.c_size_t(size), ctypes.c_uint32(0))
    if fd < 0:
        raise OSError(ctypes.get_errno(), "landlock_create_ruleset failed")
    try:
        for path, rights in plan(policy_json, abi):
            try:
                pfd = os.open(path, os.O_PATH | os.O_CLOEXEC)
            except OSError:
                continue
            try:
                if not os.path.isdir(path):
                    rights &= _FILE_RIGHTS
                rule = _PathBeneath(rights, pfd)
                if libc.syscall(ctypes.c_long(_SYS_ADD_RULE), ctypes.c_int(fd), ctypes.c_int(_RULE_PATH_BENEATH),
                                ctypes.byref(rule), ctypes.c_uint32(0)) < 0:
                    raise OSError(ctypes.get_errno(), f"landlock_add_rule failed for {path}")
            finally:
                os.close(pfd)
        port = policy_json.get("proxy_port")
        if isinstance(port, int):
            net = _NetPort(_NET_CONNECT_TCP, port)
            if libc.syscall(ctypes.c_long(_SYS_ADD_RULE), ctypes.c_int(fd), ctypes.c_int(_RULE_NET_PORT),
                            ctypes.byref(net), ctypes.c_uint32(0)) < 0:
                raise OSError(ctypes.get_errno(), "landlock_add_rule failed for the proxy port")
        if libc.prctl(_PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
            raise OSError(ctypes.get_errno(), "prctl(PR_SET_NO_NEW_PRIVS) failed")
        if libc.syscall(ctypes.c_long(_SYS_RESTRICT), ctypes.c_int(fd), ctypes.c_uint32(0)) < 0:
            raise OSError(ctypes.get_errno(), "landlock_restrict_self failed")
    finally:
        os.close(fd)


def landlock_command(policy: SandboxPolicy, argv: Sequence[str], *, cwd: str, env: Mapping[str, str],
                     proxy_port: int | None) -> tuple[list[str], dict[str, str]]:
    """The argv that runs ``argv`` under Landlock (this file as the launcher), and its environment."""
    from agent_ls.core.sandbox.bwrap import LOADER_VARIABLES

    # Loader variables would act on the launcher before it confines itself: set after, for the exec.
    later = {k: env[k] for k in LOADER_VARIABLES if k in env}
    spec = {"deny_read": list(policy.deny_read), "write": list(policy.writable), "proxy_port": proxy_port,
            "env": later}
    out = {k: v for k, v in env.items() if k not in later}
    if policy.temp_dir:
        out["TMPDIR"] = policy.temp_dir
    if proxy_port is None:
        for k in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy"):
            out.pop(k, None)
    launcher = [sys.executable, "-I", "-S", os.path.abspath(__file__), json.dumps(spec), cwd, "--"]
    return launcher + list(argv), out


def main() -> int:
    spec, cwd, sep, *argv = sys.argv[1:]
    if sep != "--" or not argv:
        sys.stderr.write("usage: landlock.py POLICY-JSON CWD -- ARGV...\n")
        return 2
    try:
        policy = json.loads(spec)
        restrict(policy)
        os.environ.update(policy.get("env", {}))
        os.chdir(cwd)
        os.execvp(argv[0], argv)
    except OSError as exc:
        sys.stderr.write(f"agent-ls sandbox (Landlock): {exc}\n")
        return 126
    return 127


if __name__ == "__main__":
    sys.exit(main())
