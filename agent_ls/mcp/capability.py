"""Capability of an MCP tool for the approval gate.

Annotations come first (they are the server's own statement), then keywords in the
tool's name and description. Ordering of the checks matters: a destructive hint always
means write, a read-only hint means read unless the tool is also open-world.
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


def _words(text: str) -> list[str]:
    # camelCase -> camel Case, then split on everything that is not a letter
    spaced = re.sub(r"([a-z])([A-Z])", r"\1 \2", text)
    return _WORDS.findall(spaced.lower())


def infer_capability(name: str, description: str | None, annotations: Mapping[str, Any] | None) -> Capability:
    ann = annotations or {}
    if ann.get("destructiveHint") is True:
        return Capability.WRITE
    if ann.get("readOnlyHint") is True:
        return Capability.NETWORK if ann.get("openWorldHint") is True else Capability.READ
    if ann.get("openWorldHint") is True:
        return Capability.NETWORK
    if ann.get("readOnlyHint") is False:
        # Explicitly not read-only: it changes something, we just don't know how badly.
        return Capability.WRITE

    # The name is the strongest signal; the description's first sentence is the fallback.
    first_sentence = re.split(r"(?<=[.!?])\s", (description or "").strip(), maxsplit=1)[0]
    for words in (set(_words(name)), set(_words(first_sentence))):
        if words & _NETWORK:
            return Capability.NETWORK
        if words & _WRITE:
            return Capability.WRITE
        if words & _READ:
            return Capability.READ
    return Capability.UNKNOWN
