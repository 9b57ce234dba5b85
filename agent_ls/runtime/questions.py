"""What the runtime asks the user, as one interface each front end implements once.

The language server asks the editor (custom requests through :func:`agent_ls.server.ask.ask`,
``window/showMessageRequest`` for a plain LSP editor:
:class:`agent_ls.server.editor_questions.LspQuestions`), ACP asks the client inside a turn
(``session/request_permission``: :class:`agent_ls.acp.host.SessionHost`), the terminal asks on
stdin (:class:`agent_ls.cli.questions.TerminalQuestions`). :class:`NoQuestions` is nobody to
ask: every question gets its safe answer (deny, stay restricted, cancel).

The runtime host (:class:`agent_ls.runtime.host.RuntimeHost`) wires a ``Questions`` into the MCP
manager (server trust, elicitation, sampling consent) and records the trust answers; session
assembly (:mod:`agent_ls.runtime.sessions`) hands ``approve`` to the permission gate.
"""

from __future__ import annotations

import enum
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    # lazy: pydantic, +106 modules, ~210 ms at server start-up
    import mcp_types as types

    from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, SessionScope
    from agent_ls.agent.sampling import SamplingAnswer, SamplingRequest
    from agent_ls.config.entries import ServerConfig
    from agent_ls.config.trust import WorkspaceTrustInfo


class TrustAnswer(enum.StrEnum):
    """An answer to a trust question (None, where one is returned: no decision)."""

    TRUST = "trust"
    """Trusted, and remembered (the same record as ``agent-ls trust``)."""
    TRUST_ONCE = "trust_once"
    """Trusted for this process only (ACP's ``allow_once``)."""
    KEEP_RESTRICTED = "keep_restricted"
    """Not trusted, and remembered."""

    @classmethod
    def of(cls, trusted: bool | None) -> TrustAnswer | None:
        """A yes/no/no answer as a remembered answer."""
        return None if trusted is None else (cls.TRUST if trusted else cls.KEEP_RESTRICTED)


class Questions(Protocol):
    """The user's say, as a front end asks for it. No method raises for a user who cannot be
    asked: it returns the safe answer (except :meth:`sampling_consent`, which may raise so that the
    MCP server is told the user could not be asked)."""

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer | SessionScope:
        """May this tool call run (once, for the session in one of the offered scopes, or not)?"""
        ...

    async def trust_server(self, config: ServerConfig) -> TrustAnswer | None:
        """May this MCP server of a workspace file run?"""
        ...

    async def trust_workspace(self, info: WorkspaceTrustInfo) -> TrustAnswer | None:
        """May this workspace folder's settings and servers apply?"""
        ...

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        """An MCP server's form (``elicitation/create``): accept with content, decline or cancel."""
        ...

    async def sampling_consent(self, request: SamplingRequest) -> SamplingAnswer | str:
        """May this MCP server's ``sampling/createMessage`` go to the model?"""
        ...


class NoQuestions:
    """Nobody to ask: tool calls that need asking are denied, workspace files stay untrusted,
    forms are declined (as with no elicitation handler), sampling is denied."""

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer | SessionScope:
        # lazy: wcmatch and shlex, +17 modules, ~26 ms at server start-up
        from agent_ls.agent.permissions import ApprovalAnswer

        return ApprovalAnswer.DENY

    async def trust_server(self, config: ServerConfig) -> TrustAnswer | None:
        return None

    async def trust_workspace(self, info: WorkspaceTrustInfo) -> TrustAnswer | None:
        return None

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        # lazy: pydantic, +106 modules, ~210 ms at server start-up
        import mcp_types as types

        return types.ElicitResult(action="decline")

    async def sampling_consent(self, request: SamplingRequest) -> SamplingAnswer | str:
        return "deny"
