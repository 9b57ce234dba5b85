"""Payloads of the ``workspace/executeCommand`` commands: the ones code actions carry
(:class:`ActionArgs`) and ``agent-ls.trustWorkspace`` (:class:`TrustWorkspaceArgs`,
:class:`TrustWorkspaceCommandResult`). The
command's arguments are structured here (:func:`action_args`, :func:`trust_workspace_args`): a
bad argument is an ``InvalidParams`` error that names the field.

Mirrored in ``editor-extension/src/protocol/commands.ts``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import attrs

from agent_ls.server.protocol.codec import InvalidParams, _register, parse
from agent_ls.server.protocol.methods import CMD_TRUST_WORKSPACE
from agent_ls.server.protocol.prompt import Range


@_register
@attrs.define
class AskResult:
    """Result of ``agent-ls.ask`` and ``agent-ls.runMcpPrompt``: a turn started in the background."""

    session_id: str
    started: bool
    text: str = ""
    """The user message the turn was started with."""


@_register
@attrs.define
class ActionArgs:
    """The argument every agent-ls command of a code action carries (built by the code action)."""

    uri: str
    range: Range
    text: str = ""
    """The selected text (or the lines of the diagnostics when nothing is selected)."""
    language_id: str = ""
    mode: str = "ask"
    """``agent-ls.ask``: ``ask``, ``fix`` or ``explain``."""
    diagnostics: str = ""
    """``fix`` / ``explain``: the diagnostics' messages."""
    question: str | None = None
    """``agent-ls.ask`` in ``ask`` mode: the user's question (a default one when absent)."""
    session_id: str | None = None
    """Continue this chat session (a new one when absent)."""
    server: str | None = None
    """``agent-ls.runMcpPrompt``: the MCP server."""
    name: str | None = None
    """``agent-ls.runMcpPrompt``: the prompt."""
    argument: str | None = None
    """``agent-ls.runMcpPrompt``: the prompt argument the selection fills."""
    index: int | None = None
    """``agent-ls.runToolAction``: position in ``toolActions``."""
    title: str | None = None
    """``agent-ls.runToolAction``: the action's title (checked against ``index``)."""


def action_args(args: Sequence[Any]) -> ActionArgs:
    """The one object argument of a code action's command."""
    if len(args) != 1 or not isinstance(args[0], dict):
        raise InvalidParams("invalid params: this command takes exactly one object argument")
    return parse(ActionArgs, args[0])


@_register
@attrs.define
class TrustWorkspaceArgs:
    """The optional argument of ``agent-ls.trustWorkspace``: one folder to ask about (the
    argument may also be the path itself)."""

    folder: str


@_register
@attrs.define
class FolderDecision:
    """``agent-ls.trustWorkspace``: the user's answer about one folder (null: no decision)."""

    folder: str
    trusted: bool | None


@_register
@attrs.define
class ServerDecision:
    """``agent-ls.trustWorkspace``: the user's answer about one workspace MCP server (null: no decision)."""

    server: str
    folder: str
    trusted: bool | None


@_register
@attrs.define
class TrustWorkspaceCommandResult:
    """Result of ``agent-ls.trustWorkspace``: what was asked, and the answers."""

    folders: list[FolderDecision]
    servers: list[ServerDecision]


def trust_workspace_args(args: Sequence[Any]) -> TrustWorkspaceArgs | None:
    """``agent-ls.trustWorkspace``'s argument: none (every folder), a path, or ``{"folder": path}``."""
    if not args:
        return None
    if len(args) == 1 and isinstance(args[0], str):
        return TrustWorkspaceArgs(folder=args[0])
    if len(args) == 1 and isinstance(args[0], dict):
        return parse(TrustWorkspaceArgs, args[0])
    raise InvalidParams(f"invalid params: {CMD_TRUST_WORKSPACE} takes no argument, or one folder "
                        '(a path or {"folder": path})')
