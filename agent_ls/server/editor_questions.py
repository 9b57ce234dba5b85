"""The language server's :class:`~agent_ls.runtime.questions.Questions`: what the runtime asks
the user, asked of the editor (:class:`LspQuestions`). Here: may a workspace server run
(``mcp/trustServer``), an MCP server's form (``mcp/elicit``) and MCP sampling consent
(``mcp/sample``: a missing, failed or malformed answer is a deny; the
:class:`~agent_ls.agent.sampling.Sampler` tells the MCP server why); tool approval is :mod:`agent_ls.server.approval`, workspace trust
:func:`agent_ls.server.workspaces.decide`. Every question goes through one ``ask()``
(:mod:`agent_ls.server.ask`).
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING

import attrs

from agent_ls.core.visible import command_line, visible
from agent_ls.runtime.questions import TrustAnswer
from agent_ls.server.approval import EditorApprover
from agent_ls.server.ask import AskFailed, ask
from agent_ls.server.protocol.methods import ELICIT, ELICIT_ACTIONS, SAMPLE, SAMPLING_ANSWERS, TRUST_SERVER
from agent_ls.server.protocol.questions import (
    ElicitParams,
    ElicitResultPayload,
    SampleMessage,
    SampleParams,
    SampleResult,
    TrustServerResult,
)
from agent_ls.server.workspaces import DONT_RUN, decide, entry_payload, plain_question

if TYPE_CHECKING:
    # lazy: pydantic, +106 modules, ~210 ms at start-up
    import mcp_types as types

    from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, SessionScope
    from agent_ls.agent.sampling import SamplingRequest
    from agent_ls.config.entries import ServerConfig
    from agent_ls.config.trust import WorkspaceTrustInfo
    from agent_ls.runtime.host import RuntimeHost
    from agent_ls.server.client import EditorClient

log = logging.getLogger("agent_ls.server")


@attrs.define
class TrustPrompts:
    """The trust questions open now (``ls.trust_prompts``; the workspace questions are the
    lifecycle's: :attr:`agent_ls.runtime.lifecycle.HostLifecycle.workspace_prompts`)."""

    servers: set[str] = attrs.field(factory=set)
    """The workspace MCP servers whose trust question waits for an answer now."""


async def ask_server_trust(client: EditorClient, runtime: RuntimeHost, prompts: TrustPrompts,
                           cfg: ServerConfig) -> bool | None:
    """``mcp/trustServer``: may this workspace-defined server run (its whole entry, what changed)?

    An editor that answers it with method not found (a plain LSP editor) is asked with
    ``window/showMessageRequest`` instead, from then on; the ``agent-ls.trustWorkspace`` command
    asks again about a server left undecided. ``prompts.servers`` names the servers asked about now.
    """
    manager = runtime.manager
    changes = manager.trust_changes(cfg) if manager is not None else []
    prompts.servers.add(cfg.name)
    try:
        if TRUST_SERVER not in client.unsupported:
            params = entry_payload(cfg.view(), changes)
            try:
                answer = await ask(client, TRUST_SERVER, params, TrustServerResult,
                                   fallback=TrustServerResult(trusted=None))
                return answer.trusted
            except AskFailed as e:
                if not e.method_not_found:
                    log.info("no trust decision for %s from the editor (%s); it stays awaiting-trust", cfg.name, e)
                    return None
                client.unsupported.add(TRUST_SERVER)
                log.info("the editor does not know %s: asking with window/showMessageRequest", TRUST_SERVER)
        return await _ask_server_plainly(client, cfg, changes)
    finally:
        prompts.servers.discard(cfg.name)


async def _ask_server_plainly(client: EditorClient, cfg: ServerConfig, changes: list[str]) -> bool | None:
    # lazy: +5 modules, ~9 ms at start-up
    from agent_ls.config.trust_text import entry_lines

    view = cfg.view()
    folder = cfg.source.workspace_folder
    again = " (changed since you last trusted it)" if changes else ""
    what = f"runs {command_line(view.command, view.args)}" if view.command is not None else \
        f"connects to {visible(view.url or '')}"
    message = (f"agent-ls: the workspace folder {visible(str(folder))} defines the MCP server "
               f"{visible(cfg.name)}{again}, which {what}. It does not run until you trust it. Trust it?")

    def details() -> str:
        return "\n".join([f"The MCP server {visible(cfg.name)} of the workspace folder {visible(str(folder))}:",
                          *entry_lines(view, changes)])

    return await plain_question(client, message, details, keep=DONT_RUN, subject=f"the MCP server {cfg.name}")


async def ask_elicit(client: EditorClient, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
    """An MCP server asks the user for input: the form goes to the editor, the answer back."""
    # lazy: pydantic, +106 modules, ~210 ms at start-up
    import mcp_types as types

    schema = getattr(params, "requested_schema", None) or {}
    message = getattr(params, "message", "") or ""
    payload = ElicitParams(server=server, message=message, requested_schema=schema)
    try:
        answer = await ask(client, ELICIT, payload, ElicitResultPayload, fallback=ElicitResultPayload(action="cancel"))
    except AskFailed as e:
        log.info("elicitation from %s was not answered: %s", server, e)
        return types.ElicitResult(action="cancel")
    if answer.action not in ELICIT_ACTIONS:
        log.info("elicitation from %s: unknown action %r, sent as cancel", server, answer.action)
        return types.ElicitResult(action="cancel")
    content = answer.content if answer.action == "accept" else None
    return types.ElicitResult(action=answer.action, content=content)  # type: ignore[arg-type]


async def ask_sampling_consent(client: EditorClient, request: SamplingRequest) -> str:
    """``mcp/sample`` to the editor: ``allow_once``, ``allow_session`` or ``deny``."""
    params = SampleParams(
        server=request.server,
        messages=[SampleMessage(role=m.role, text=m.text) for m in request.messages],
        max_tokens=request.max_tokens,
        model=request.model,
        system_prompt=request.system_prompt,
        requested_max_tokens=request.requested_max_tokens,
        omitted_messages=request.omitted_messages,
        endpoint=getattr(request, "endpoint", None),
    )
    try:
        answer = (await ask(client, SAMPLE, params, SampleResult, fallback=SampleResult("deny"))).answer
    except AskFailed as e:
        if not e.malformed:
            raise  # the Sampler tells the MCP server that the user could not be asked
        log.warning("sampling consent for %s: malformed answer from the editor (%s): denied", request.server, e)
        return "deny"
    if answer not in SAMPLING_ANSWERS:
        log.warning("sampling consent for %s: unknown answer %r from the editor: denied", request.server, answer)
        return "deny"
    log.info("sampling request from %s (model %s): %s", request.server, request.model, answer)
    return answer


class LspQuestions:
    """Every question of the runtime, asked of the editor (custom requests, or the standard
    ``window/showMessageRequest`` for a plain LSP editor)."""

    def __init__(self, client: EditorClient, runtime: RuntimeHost, prompts: TrustPrompts) -> None:
        self.client = client
        self.runtime = runtime
        self.prompts = prompts
        self.approver = EditorApprover(client)

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer | SessionScope:
        """A session's call or a direct one (``agent/approve``, :class:`EditorApprover`)."""
        answer: ApprovalAnswer | SessionScope = await self.approver(request)
        return answer

    async def trust_server(self, config: ServerConfig) -> TrustAnswer | None:
        return TrustAnswer.of(await ask_server_trust(self.client, self.runtime, self.prompts, config))

    async def trust_workspace(self, info: WorkspaceTrustInfo) -> TrustAnswer | None:
        return TrustAnswer.of(await decide(self.client, self.runtime, info))

    async def elicit(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        return await ask_elicit(self.client, server, params)

    async def sampling_consent(self, request: SamplingRequest) -> str:
        return await ask_sampling_consent(self.client, request)
