"""The process's own secrets (provider keys, tokens, passwords) in memory only.

The editor starts the server with the user's environment plus ``agentLs.server.env``, so a
provider key such as ``OPENAI_API_KEY`` arrives in the server's environment. Any process of
the same user can read a process's environment from ``/proc/<pid>/environ`` (a script the user
let the agent run once is enough), and every child started without an explicit environment
inherits it. :func:`take_process_secrets`, called first thing at start-up by every entry point
(``agent-ls``, ``python -m agent_ls``, ``python -m agent_ls.server``), therefore:

1. moves every variable whose name says it holds a credential (:func:`credential_env_name`:
   ``*_API_KEY``, ``*_KEY``, ``*_KEY_ID``, ``*TOKEN``, ``*SECRET``, ``*PASSWORD``, ...) from
   ``os.environ`` into this module's memory (``os.environ`` deletion also unsets it in the C
   library's ``environ``, so no child inherits it);
2. overwrites those entries in the process's *initial* environment block with NUL bytes.
   ``/proc/<pid>/environ`` shows that block (the memory between ``env_start`` and ``env_end``
   of ``/proc/self/stat``), which neither ``os.environ`` nor ``unsetenv`` ever rewrite: they only
   change which strings the C ``environ`` array points at. The block is written through
   ``/proc/self/mem``, else in place with ctypes (:func:`_scrub_initial_block`).

Whoever needs a secret reads it from here: :func:`environment` is ``os.environ`` plus the taken
secrets (variable expansion in settings, the names ``agent.shellEnvPassthrough`` gives
``bash``), :func:`process_secrets` the taken ones (the LLM adapter passes the provider's key to
litellm explicitly on every call). Values are registered with
:func:`agent_ls.core.redact.add_secrets`, so they are masked in logs and errors too.

What this does not do: the values stay in this process's memory, readable only by a process
allowed to ptrace it (the same user without Yama's ``ptrace_scope`` >= 1, or root).
``PR_SET_DUMPABLE`` alone would not have hidden ``/proc/<pid>/environ`` from root anyway.
"""

from __future__ import annotations

import os
import re
import sys
import threading
from collections.abc import Mapping

_CREDENTIAL_NAME = re.compile(
    r"(APIKEY|_KEY|_KEY_ID|TOKEN|SECRET|PASSWORD|PASSWD|PASSPHRASE)$", re.IGNORECASE)
_REGISTER_MIN = 8
"""Shorter values (``true``, ``1234``) are not masked in every log line: they would mangle them."""

_taken: dict[str, str] = {}
_lock = threading.Lock()
_done = False


def credential_env_name(name: str) -> bool:
    """Whether an environment variable holds a credential by its name (``OPENAI_API_KEY``,
    ``AWS_SECRET_ACCESS_KEY``, ``AWS_ACCESS_KEY_ID``, ``GITHUB_TOKEN``, ``DB_PASSWORD``,
    ``AZURE_CLIENT_SECRET``): the variables taken out of the process environment. Paths and
    sockets (``SSH_AUTH_SOCK``, ``AZURE_FEDERATED_TOKEN_FILE``) are not credentials."""
    return bool(_CREDENTIAL_NAME.search(name))


def take_process_secrets() -> tuple[str, ...]:
    """Move the credential variables out of the process environment into memory and wipe them
    from the initial environment block (see the module docstring). Call it before any thread
    or child process starts. Idempotent; returns the names taken (sorted)."""
    global _done
    with _lock:
        if _done:
            return tuple(sorted(_taken))
        _done = True
        names = [k for k in os.environ if credential_env_name(k)]
        for name in names:
            _taken[name] = os.environ.pop(name)  # os.environ's pop also calls unsetenv
        if names:
            from agent_ls.core.redact import add_secrets  # lazy: json, +7 modules; not for `--help`

            add_secrets(*(v for v in _taken.values() if len(v) >= _REGISTER_MIN))
            _scrub_initial_block({n.encode() for n in names})
        return tuple(sorted(names))


def process_secrets() -> Mapping[str, str]:
    """The credential variables taken at start-up (name -> value)."""
    return dict(_taken)


def environment() -> dict[str, str]:
    """The environment as the user gave it: ``os.environ`` plus the secrets taken out of it."""
    return {**os.environ, **_taken}


def _stat_env_range() -> tuple[int, int] | None:
    """(env_start, env_end) of this process (fields 50 and 51 of ``/proc/self/stat``, Linux 3.5+)."""
    try:
        with open("/proc/self/stat", "rb") as f:
            stat = f.read()
        fields = stat[stat.rindex(b")") + 2:].split()  # fields from the 3rd (state) on
        start, end = int(fields[47]), int(fields[48])
    except (OSError, ValueError, IndexError):
        return None
    return (start, end) if 0 < start < end else None


def _scrub_initial_block(names: set[bytes]) -> bool:
    """Overwrite ``NAME=value`` of each of ``names`` in the initial environment block with NULs.
    True if every such entry is gone from ``/proc/self/environ`` afterwards. Not Linux, or a
    range that cannot be read: False (never raised)."""
    if not sys.platform.startswith("linux"):
        return False
    where = _stat_env_range()
    if where is None:
        return False
    start, end = where
    try:
        with open("/proc/self/environ", "rb") as f:
            block = f.read()  # the bytes from env_start to env_end
    except OSError:
        return False
    spans: list[tuple[int, int]] = []
    offset = 0
    for entry in block.split(b"\0"):
        if entry.partition(b"=")[0] in names:
            spans.append((start + offset, len(entry)))
        offset += len(entry) + 1
    try:
        with open("/proc/self/mem", "r+b", buffering=0) as mem:
            for address, size in spans:
                mem.seek(address)
                mem.write(b"\0" * size)
    except OSError:  # a kernel that refuses writes through /proc/self/mem: the block is this
        import ctypes  # process's own stack memory, writable in place

        for address, size in spans:
            ctypes.memset(address, 0, size)
    try:
        with open("/proc/self/environ", "rb") as f:
            left = f.read()
    except OSError:
        return False
    return not any(entry.partition(b"=")[0] in names for entry in left.split(b"\0"))
