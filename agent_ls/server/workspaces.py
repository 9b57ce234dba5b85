"""Workspace trust as the server sees it: the policy, the remembered decisions, the payloads.

What the status (``workspaces``), the trust prompts and the trust handlers share: the editor's
own trust from the initialization options, the :class:`~agent_ls.config.trust.TrustPolicy` of
this window, the user's remembered decisions (``host-state.json``), a workspace folder and its
MCP server entries as the editor is shown them, asking the user about a folder
(``agent/trustWorkspace``, or ``window/showMessageRequest`` for a plain LSP editor) and
recording a decision.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from agent_ls.core.visible import visible
from agent_ls.runtime.questions import TrustAnswer
from agent_ls.server.ask import AskFailed, ask
from agent_ls.server.protocol.mcp import WorkspaceStatusPayload
from agent_ls.server.protocol.methods import CMD_TRUST_WORKSPACE, TRUST_WORKSPACE
from agent_ls.server.protocol.questions import (
    TrustServerParams,
    TrustWorkspaceParams,
    TrustWorkspaceResult,
    WorkspaceSettingPayload,
)

if TYPE_CHECKING:

    from agent_ls.config.trust import EntryView, TrustItem, WorkspaceRequest, WorkspaceTrustInfo
    from agent_ls.runtime.host import RuntimeHost
    from agent_ls.server.client import EditorClient

log = logging.getLogger("agent_ls.server")


def editor_trust_from(options: Any) -> bool:
    """The editor's trust from the initialization options (absent: the editor has no such notion)."""
    if isinstance(options, dict):
        return options.get("workspaceTrusted") is not False
    value = getattr(options, "workspaceTrusted", None)
    return value is not False


def entry_payload(view: EntryView, changes: list[str]) -> TrustServerParams:
    return TrustServerParams(
        server=view.name, command=view.command or "", args=list(view.args), source=str(view.source), cwd=view.cwd,
        transport=view.transport, env=dict(view.env), url=view.url, headers=dict(view.headers),
        variables=list(view.variables), changes=changes, oauth=dict(view.oauth), options=dict(view.options),
        refused=list(view.refused))


def _setting(item: TrustItem) -> WorkspaceSettingPayload:
    return WorkspaceSettingPayload(source=str(item.source), key=item.key, value=item.value_text, why=item.why)


def _entry_changes(runtime: RuntimeHost, folder: Path, view: EntryView) -> list[str]:
    return view.changes_since(runtime.state.last_trusted_entry(folder, view.name))


def workspaces_payload(runtime: RuntimeHost) -> list[WorkspaceStatusPayload]:
    settings = runtime.settings
    if settings is None:
        return []
    out = []
    for folder, info in settings.workspaces.items():
        servers = [] if info.trusted else [entry_payload(v, _entry_changes(runtime, folder, v)) for v in info.request.servers]
        out.append(WorkspaceStatusPayload(folder=str(folder), state=info.state.value, message=info.message,
                                          ignored=[_setting(i) for i in info.ignored], servers=servers))
    return out


def trust_workspace_params(runtime: RuntimeHost, info: WorkspaceTrustInfo) -> TrustWorkspaceParams:
    folder = info.request.folder
    return TrustWorkspaceParams(
        folder=str(folder),
        servers=[entry_payload(v, _entry_changes(runtime, folder, v)) for v in info.request.servers],
        settings=[_setting(i) for i in info.request.settings],
        changes=info.changes(),
        previously_trusted=info.previous_settings is not None,
    )


async def record(runtime: RuntimeHost, requests: list[WorkspaceRequest], trusted: bool) -> None:
    """Remember the decision on each folder (the caller reloads the settings)."""
    answer = TrustAnswer.TRUST if trusted else TrustAnswer.KEEP_RESTRICTED
    for request in requests:
        await runtime.record_workspace(request, answer)


TRUST, KEEP, SHOW, DONT_RUN = "Trust", "Keep restricted", "Show what it wants", "Don't run it"
"""The answers of the plain questions (``window/showMessageRequest``); ``DONT_RUN`` is the "no"
of a workspace MCP server's question."""


async def decide(client: EditorClient, runtime: RuntimeHost, info: WorkspaceTrustInfo) -> bool | None:
    """Ask the user about a folder: ``agent/trustWorkspace``, or, for an editor that does not
    know it, ``window/showMessageRequest``. ``None``: no decision (dismissed, withdrawn)."""
    if TRUST_WORKSPACE not in client.unsupported:
        try:
            answer = await ask(client, TRUST_WORKSPACE, trust_workspace_params(runtime, info), TrustWorkspaceResult,
                               fallback=TrustWorkspaceResult(trusted=None))
            return answer.trusted
        except AskFailed as e:
            if not e.method_not_found:
                raise
            client.unsupported.add(TRUST_WORKSPACE)
            log.info("the editor does not know %s: asking with window/showMessageRequest", TRUST_WORKSPACE)
    return await ask_plainly(client, runtime, info)


def _summary(info: WorkspaceTrustInfo) -> str:
    request = info.request
    parts = []
    if request.servers:
        names = ", ".join(visible(v.name) for v in request.servers)
        parts.append(f"{len(request.servers)} MCP server{'s' if len(request.servers) != 1 else ''} ({names})")
    if request.settings:
        keys = ", ".join(dict.fromkeys(visible(i.key) for i in request.settings))
        parts.append(f"settings that need trust ({keys})")
    return " and ".join(parts) or "settings that need trust"


async def ask_plainly(client: EditorClient, runtime: RuntimeHost, info: WorkspaceTrustInfo) -> bool | None:
    """The workspace trust question as a standard ``window/showMessageRequest``
    (:func:`plain_question`)."""
    # lazy: +5 modules, ~9 ms at start-up
    from agent_ls.config.trust_text import describe

    folder = info.request.folder
    again = " (changed since you last trusted it)" if info.previous_settings is not None else ""
    message = (f"agent-ls: the workspace folder {visible(str(folder))}{again} defines {_summary(info)}. They are "
               "ignored until you trust the folder. Trust it?")
    return await plain_question(client, message, lambda: describe(info, runtime.state), keep=KEEP,
                                subject=str(folder))


async def plain_question(client: EditorClient, message: str, details: Callable[[], str], *, keep: str,
                         subject: str) -> bool | None:
    """A trust question as a standard ``window/showMessageRequest``: Trust / ``keep`` / Show what
    it wants, for an editor without the custom question (a workspace folder, a workspace MCP server).

    "Show what it wants" shows the whole text (``details()``: what each server runs, where it
    connects, which values it receives; the settings) as ``window/showMessage`` and in the log,
    then asks again with Trust / ``keep``. ``None``: dismissed (the log names the command that
    asks again).
    """
    actions = [TRUST, keep, SHOW]
    while True:
        raw = await client.request(lsp.WINDOW_SHOW_MESSAGE_REQUEST, lsp.ShowMessageRequestParams(
            type=lsp.MessageType.Warning, message=message, actions=[lsp.MessageActionItem(title=t) for t in actions]))
        title = raw.get("title") if isinstance(raw, dict) else getattr(raw, "title", None)
        if title == SHOW and SHOW in actions:
            text = details()
            log.info("what %s asks for:\n%s", visible(subject), text)
            client.show(lsp.MessageType.Info, text)
            actions = [TRUST, keep]
            continue
        if title not in (TRUST, keep):
            log.info("no trust decision for %s (the question was dismissed); ask again with the %s command",
                     visible(subject), CMD_TRUST_WORKSPACE)
            return None
        return title == TRUST
