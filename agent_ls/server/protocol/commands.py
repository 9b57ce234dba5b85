"""Payloads of the ``workspace/executeCommand`` commands that code actions carry.

Mirrored in ``editor-extension/src/protocol/commands.ts`` (the commands' argument,
``ActionArgs``, is defined with the code actions: :mod:`agent_ls.server.handlers.code_actions`).
"""

from __future__ import annotations

import attrs

from agent_ls.server.protocol.codec import _register


@_register
@attrs.define
class AskResult:
    """Result of ``agent-ls.ask`` and ``agent-ls.runMcpPrompt``: a turn started in the background."""

    session_id: str
    started: bool
    text: str = ""
    """The user message the turn was started with."""
