"""Capability of an MCP tool for the approval gate.

MCP's tool annotations are hints with spec defaults (``readOnlyHint`` false,
``destructiveHint`` true, ``openWorldHint`` true). Only a tool that is shown to be read-only
*and* closed-world is classed read (runs without asking); everything else asks. The table
(also in docs/security.md, "MCP tool classes"):

==========================================================  ==========================  ========
annotations                                                 words (name, description)   class
==========================================================  ==========================  ========
``readOnlyHint: true`` and ``destructiveHint: true``        any                         unknown
``destructiveHint: true``                                   any                         write
``readOnlyHint: false``                                     any                         write
``openWorldHint: true``, or any hint given without it       any                         network
``readOnlyHint: true``, ``openWorldHint: false``            network                     unknown
``readOnlyHint: true``, ``openWorldHint: false``            write, read or none         read
``openWorldHint: false`` only                               network                     unknown
``openWorldHint: false`` only                               write / read / none         write / read / unknown
no hint at all                                              network / write             network / write
no hint at all                                              read                        network
no hint at all                                              none                        unknown
==========================================================  ==========================  ========

Words are the keywords of the tool's name and of the first sentence of its description
together; the riskier reading wins (network over write over read), so "Run a SQL statement"
makes a tool named ``query`` a write. An explicit read-only, closed-world statement outweighs
write words (a calculator's ``add``), not words that say data leaves (``send``, ``upload``,
``url``): those contradict "closed world" and ask. Read runs unasked; write, network and
unknown ask.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent_ls.core.tools import Capability

_WORDS = re.compile(r"[a-z]+")

_NETWORK = {
    "fetch", "http", "https", "url", "web", "browse", "browser", "download", "upload", "internet",
    "webhook", "curl", "scrape", "crawl", "email", "mail", "slack", "publish", "send",
    "tweet", "navigate",
}
_WRITE = {
    "write", "create", "delete", "remove", "update", "edit", "modify", "set", "put", "insert", "drop",
    "move", "rename", "add", "append", "patch", "commit", "push", "merge", "deploy", "execute", "exec",
    "run", "kill", "install", "uninstall", "save", "upsert", "truncate", "reset", "close", "archive",
    "replace", "apply", "start", "stop", "restart", "destroy", "mkdir", "rm", "chmod", "assign", "approve",
    "transfer", "trigger",
}
_READ = {
    "read", "get", "list", "search", "find", "query", "show", "describe", "view", "fetchone", "lookup",
    "inspect", "count", "stat", "status", "info", "head", "tail", "cat", "ls", "grep", "glob", "diff",
    "log", "explain", "check", "validate", "echo", "ping", "time", "convert", "calculate", "compute",
    "analyze", "summarize", "resolve", "tree", "current",
}
_HINTS = ("readOnlyHint", "destructiveHint", "openWorldHint", "idempotentHint")


def _words(text: str) -> list[str]:
    # camelCase -> camel Case, then split on everything that is not a letter
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return _WORDS.findall(spaced.lower())


def words_capability(name: str, description: str | None) -> Capability:
    """What the keywords of the name and the description's first sentence say, the riskier
    reading first: network, then write, then read; unknown when no keyword is there."""
    first_sentence = re.split(r"(?<=[.!?])\s", (description or "").strip(), maxsplit=1)[0]
    words = set(_words(name)) | set(_words(first_sentence))
    if words & _NETWORK:
        return Capability.NETWORK
    if words & _WRITE:
        return Capability.WRITE
    if words & _READ:
        return Capability.READ
    return Capability.UNKNOWN


def infer_capability(name: str, description: str | None, annotations: Mapping[str, Any] | None) -> Capability:
    ann = annotations or {}
    hint = {k: v for k in _HINTS if isinstance(v := ann.get(k), bool)}  # only real booleans count
    words = words_capability(name, description)
    read_only, destructive, open_world = (hint.get(k) for k in _HINTS[:3])
    if read_only is True and destructive is True:
        return Capability.UNKNOWN  # the server contradicts itself
    if destructive is True or read_only is False:
        return Capability.WRITE
    if open_world is True or (hint and open_world is None):
        # MCP's default for a missing openWorldHint is true: an annotated tool that does not
        # say it is closed-world may reach anywhere (send what it is given).
        return Capability.NETWORK
    if read_only is True:  # and closed-world
        return Capability.UNKNOWN if words is Capability.NETWORK else Capability.READ
    if open_world is False:
        return Capability.UNKNOWN if words is Capability.NETWORK else words
    # No hint at all: MCP's defaults say open world, so read words alone never make a tool run
    # unasked (an unannotated ``lookup_docs`` may send what it is given anywhere).
    return Capability.NETWORK if words is Capability.READ else words
