"""Model-facing names for MCP tools: ``mcp__<server>__<tool>``.

Providers accept ``^[a-zA-Z0-9_-]{1,64}$``. Names are sanitized (every other character
becomes ``_``), capped at 64 characters with a stable hash suffix of the original
``(server, tool)`` pair when longer, and collisions (two originals that sanitize to the same
name) are resolved deterministically: the pairs are processed in sorted order and every
pair after the first gets the hash suffix, so the result depends only on the set of names.

Every name maps to exactly one (server, tool) pair: the server segment never contains ``__``
and never starts or ends with ``_`` (:func:`server_segment`), so the first ``__`` after
``mcp__`` always ends the server. A server name that would break this (``github::ci`` would
read as server ``github``, tool ``ci__delete_repo``) is encoded: its runs of other characters
become one ``_`` and a hash of the original name is appended (``github_ci_1f0c2a9e``), so a
rule ``mcp__github__*`` never matches it.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable

MAX_NAME = 64
PREFIX = "mcp"
SEP = "__"
_BAD = re.compile(r"[^A-Za-z0-9_-]")
_DIGEST_CHARS = 8
"""The hash suffix of a cut name: ``_`` and this many hex digits."""


def sanitize(part: str) -> str:
    cleaned = _BAD.sub("_", part)
    return cleaned or "_"


def server_segment(server: str) -> str:
    """The server's part of its tools' names: :func:`sanitize`, encoded when it would make the
    name ambiguous (a ``__`` inside, ``_`` at either end)."""
    cleaned = sanitize(server)
    if "__" not in cleaned and not cleaned.startswith("_") and not cleaned.endswith("_"):
        return cleaned
    digest = hashlib.sha256(server.encode("utf-8", "surrogatepass")).hexdigest()[:8]
    stem = re.sub("_+", "_", cleaned).strip("_")
    return f"{stem}_{digest}" if stem else digest


def _digest(server: str, tool: str) -> str:
    return hashlib.sha256(f"{server}\0{tool}".encode()).hexdigest()[:_DIGEST_CHARS]


def _with_suffix(base: str, server: str, tool: str) -> str:
    suffix = "_" + _digest(server, tool)
    return base[: MAX_NAME - len(suffix)] + suffix


def tool_name(server: str, tool: str) -> str:
    """The name for one tool, ignoring collisions with others."""
    base = f"{PREFIX}{SEP}{server_segment(server)}{SEP}{sanitize(tool)}"
    if len(base) <= MAX_NAME:
        return base
    return _with_suffix(base, server, tool)


def could_name(server: str, name: str) -> bool:
    """Whether a tool of ``server`` could have the model-facing ``name``: it starts with the
    server's ``mcp__<segment>__``, or it was cut to :data:`MAX_NAME` with a hash suffix inside
    that prefix (a very long server name)."""
    prefix = f"{PREFIX}{SEP}{server_segment(server)}{SEP}"
    if name.startswith(prefix):
        return True
    kept = MAX_NAME - 1 - _DIGEST_CHARS  # what a cut name keeps before its suffix
    return len(name) == MAX_NAME and len(prefix) > kept and prefix.startswith(name[:kept])


def assign_names(pairs: Iterable[tuple[str, str]]) -> dict[tuple[str, str], str]:
    """Names for every ``(server, tool)`` pair: unique, valid, deterministic."""
    out: dict[tuple[str, str], str] = {}
    used: set[str] = set()
    for server, tool in sorted(set(pairs)):
        name = tool_name(server, tool)
        if name in used:
            name = _with_suffix(f"{PREFIX}{SEP}{server_segment(server)}{SEP}{sanitize(tool)}", server, tool)
            salt = 0
            while name in used:  # a hash collision on top of a name collision: practically never
                salt += 1
                name = _with_suffix(name, server, f"{tool}#{salt}")
        used.add(name)
        out[(server, tool)] = name
    return out
