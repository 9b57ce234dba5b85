"""The terminal's questions: :class:`TerminalQuestions` (the CLI's
:class:`~agent_ls.runtime.questions.Questions`) and the texts it asks with: tool approval (the
whole call, one key per choice), MCP sampling consent, workspace and server trust
(:mod:`agent_ls.cli.workspace_trust`). Asked on stderr, answered on stdin."""

from __future__ import annotations

import json
import sys
from typing import TYPE_CHECKING

from agent_ls.agent.permissions import ApprovalAnswer
from agent_ls.cli.common import read_line
from agent_ls.cli.workspace_trust import ask_server_trust, ask_workspace_trust
from agent_ls.core.visible import visible
from agent_ls.runtime.questions import NoQuestions, TrustAnswer

if TYPE_CHECKING:
    import mcp_types as types

    from agent_ls.agent.permissions import ApprovalRequest, SessionScope
    from agent_ls.agent.sampling import SamplingAnswer, SamplingRequest
    from agent_ls.config.entries import ServerConfig
    from agent_ls.config.trust import WorkspaceTrustInfo
    from agent_ls.runtime.host import RuntimeHost

_SCOPE_KEYS = {"exact": "e", "prefix": "p", "tool": "s", "always": "a"}


class TerminalQuestions:
    """The terminal's :class:`~agent_ls.runtime.questions.Questions`: asked on stderr, answered on
    stdin (a terminal only; otherwise nothing is decided). ``assume_yes`` (``--yes``) trusts
    workspace servers without asking."""

    def __init__(self, *, assume_yes: bool = False, ask: bool = True, host: RuntimeHost | None = None) -> None:
        self.assume_yes = assume_yes
        self.ask = ask
        self.host = host
        self.servers_asked = False
        """The servers' trust questions were asked before the host started (``agent-ls chat``):
        the host does not ask again (no question competes with the chat for the terminal)."""

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer | SessionScope:
        return approval_answer(request, await read_line(approval_prompt(request)))

    async def trust_server(self, config: ServerConfig) -> TrustAnswer | None:
        if self.assume_yes:
            return TrustAnswer.TRUST
        if self.servers_asked or not self.ask or not sys.stdin.isatty():
            return None
        state = self.host.state if self.host is not None else None
        return TrustAnswer.of(await ask_server_trust(config, state))

    async def trust_workspace(self, info: WorkspaceTrustInfo) -> TrustAnswer | None:
        if not self.ask:
            return None
        return TrustAnswer.of(await ask_workspace_trust(info, self.host.state if self.host is not None else None))

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        return await NoQuestions().elicit(server, params)  # no forms on the terminal: declined

    async def sampling_consent(self, request: SamplingRequest) -> SamplingAnswer | str:
        return await sampling_consent(request)


def approval_prompt(request: ApprovalRequest) -> str:
    """The terminal's approval question: the whole call (every argument, never cut, hidden
    characters escaped), why it asks, and one key per choice; the session choices name their
    scope (``[p] Allow `git status` … for this session``)."""
    spec = request.spec
    lines = [f"\n[approve] {visible(spec.name)}"
             + (f" (MCP server {visible(spec.server)!s}, tool {visible(spec.display_name or '')})" if spec.server else "")]
    args = request.arguments if isinstance(request.arguments, dict) else {}
    command = args.get("command") if spec.source == "builtin" and spec.name == "bash" else None
    if isinstance(command, str):
        lines.append(f"  command: {visible(command)}")
        rest = {k: v for k, v in args.items() if k != "command"}
        if rest:
            lines.append(f"  arguments: {visible(json.dumps(rest, ensure_ascii=False))}")
    else:
        lines.append(f"  arguments: {visible(json.dumps(args, ensure_ascii=False))}")
    lines.append(f"  ({visible(request.reason)})")
    if request.sensitive:
        lines.append(f"  protected: {visible(request.sensitive)}")
    lines.append("  [o] allow once")
    lines += [f"  [{_SCOPE_KEYS.get(s.id, s.id)}] {visible(s.label)}" for s in request.scopes]
    lines.append("  [d] deny")
    return "\n".join(lines) + "\n  choice? "


def approval_answer(request: ApprovalRequest, line: str | None) -> ApprovalAnswer | SessionScope:
    """The answer for what the user typed; anything unknown (or end of input) denies."""
    answer = (line or "").strip().lower()
    if answer in ("o", "once", "y", "yes"):
        return ApprovalAnswer.ALLOW_ONCE
    for scope in request.scopes:
        if answer == _SCOPE_KEYS.get(scope.id, scope.id):
            return scope
    if answer in ("s", "session") and request.scopes:
        return request.scopes[0]  # the narrowest offered scope
    return ApprovalAnswer.DENY


async def sampling_consent(request: SamplingRequest) -> SamplingAnswer:
    """The terminal's sampling consent (:meth:`TerminalQuestions.sampling_consent`)."""
    # lazy: the MCP SDK's types (~0.25 s), asked for only once an MCP server runs
    from agent_ls.agent.sampling import SamplingAnswer

    lines = [f"\n[sampling] MCP server '{request.server}' asks the model {request.model} "
             f"(at most {request.max_tokens} tokens)"
             + (f" at {request.endpoint}" if request.endpoint else "")]
    if request.system_prompt:
        lines.append(f"  system: {request.system_prompt[:300]}")
    if request.omitted_messages:
        lines.append(f"  ({request.omitted_messages} earlier messages not shown)")
    for m in request.messages:
        lines.append(f"  {m.role}: {m.text[:300]}")
    line = await read_line("\n".join(lines) + "\n  allow [o]nce, for the [s]ession, or [d]eny? ")
    answer = (line or "").strip().lower()
    if answer in ("o", "once", "y", "yes"):
        return SamplingAnswer.ALLOW_ONCE
    if answer in ("s", "session"):
        return SamplingAnswer.ALLOW_SESSION
    return SamplingAnswer.DENY
