"""Payloads of the sandbox's workspace grants (issue 47): ``agent/sandboxGrants`` and
``agent/setSandboxGrant``. A grant is the user's decision, kept in ``host-state.json`` (outside
the workspace): a host the network proxy lets through, or a place sandboxed commands may write.

Mirrored in ``editor-extension/src/protocol/sandbox.ts``.
"""

from __future__ import annotations

import attrs

from agent_ls.server.protocol.codec import _register


@_register
@attrs.define
class SetSandboxGrantParams:
    """``agent/setSandboxGrant``: add (``granted``) or remove one grant for a workspace folder."""

    kind: str
    """``hosts`` (a host name or ``*.domain`` pattern) or ``writes`` (an absolute folder)."""
    value: str
    granted: bool
    folder: str | None = None
    """The workspace folder (a path); default the first one."""


@_register
@attrs.define
class SandboxGrantsPayload:
    """The grants of one workspace folder."""

    folder: str
    hosts: list[str]
    writes: list[str]


@_register
@attrs.define
class SandboxGrantsResult:
    """``agent/sandboxGrants`` and ``agent/setSandboxGrant``: every folder's grants, and whether
    commands run in the sandbox at all (the chat's header says so when they do not)."""

    folders: list[SandboxGrantsPayload]
    enabled: bool = True
    """``agent.sandbox.enabled`` (false: the user turned it off)."""
    mechanism: str = "none"
    """``bubblewrap``, ``landlock``, ``sandbox-exec`` or ``none`` (no mechanism works here)."""
    message: str = ""
    """The sandbox's state in one sentence (what is used, or why nothing is and what that means)."""
