"""What a workspace folder or an MCP server entry asks to be trusted with, as plain text: for
the terminal (``agent-ls``'s prompt and ``agent-ls trust``) and for editors that show text
(the ACP permission request)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from agent_ls.config.oauth_config import WORKSPACE_REFUSED
from agent_ls.core.visible import command_line, visible

if TYPE_CHECKING:
    from agent_ls.config.state import HostState
    from agent_ls.config.trust import EntryView, TrustItem, WorkspaceTrustInfo

OAUTH_NOTES = {
    "grant": "how it gets tokens",
    "issuer": "the only authorization server its credentials are sent to",
    "idp.tokenEndpoint": "receives the identity provider credentials",
    "clientMetadataUrl": "the client identity the authorization server fetches",
}
"""What an ``oauth`` setting decides, shown next to it."""


def entry_lines(view: EntryView, changes: Sequence[str], indent: str = "    ") -> list[str]:
    """An MCP server entry as written, everything that decides what runs, what is read or where
    data goes: command line, cwd, URL, env, headers, every ``oauth`` setting and every other
    non-cosmetic key (credentials masked unless they name a variable).

    Every value the folder wrote is shown with its hidden characters escaped
    (:mod:`agent_ls.core.visible`): a line break, a terminal escape sequence or a bidi override
    in an argument cannot fake, hide or reorder a line of the prompt.
    """
    lines = [f"{indent}{visible(view.name)} ({view.transport}) from {visible(str(view.source))}"]
    if view.command is not None:
        lines.append(f"{indent}  runs: {command_line(view.command, view.args)}")
    if view.cwd is not None:
        lines.append(f"{indent}  in: {visible(view.cwd)}")
    if view.url is not None:
        lines.append(f"{indent}  connects to: {visible(view.url)}")
    for k, v in view.env:
        lines.append(f"{indent}  env: {visible(k)}={visible(v)}")
    for k, v in view.headers:
        lines.append(f"{indent}  header: {visible(k)}: {visible(v)}")
    for k, v in view.oauth:
        note = (f"refused in a workspace file: {WORKSPACE_REFUSED[k]}; the server does not start"
                if k in WORKSPACE_REFUSED else OAUTH_NOTES.get(k))
        lines.append(f"{indent}  oauth.{visible(k)}: {visible(v)}" + (f"  ({note})" if note else ""))
    for k, v in view.options:
        lines.append(f"{indent}  {visible(k)}: {visible(v)}")
    if view.variables:
        lines.append(f"{indent}  receives the values of: {', '.join(visible(v) for v in view.variables)}")
    for c in changes:
        lines.append(f"{indent}  changed since you trusted it: {visible(c)}")
    return lines


def hook_lines(items: Sequence[TrustItem], indent: str = "    ") -> list[str]:
    """Each hook of a workspace file (:func:`agent_ls.config.trust.hook_trust_items`): its event,
    matcher and timeout, then its command in full on its own line, hidden characters escaped."""
    lines = []
    for item in items:
        value = item.value if isinstance(item.value, dict) else {}
        matcher = value.get("matcher")
        when = str(value.get("event")) + (f" matching {visible(str(matcher))}" if matcher not in (None, "", "*") else "")
        lines.append(f"{indent}{when} (timeout {value.get('timeout', 60):g} s) from {visible(str(item.source))} "
                     f"{visible(item.key)}")
        lines.append(f"{indent}  runs: {visible(str(value.get('command')))}")
    return lines


def describe(info: WorkspaceTrustInfo, state: HostState | None) -> str:
    """What a folder's settings files ask for that needs trust, for the terminal."""
    request = info.request
    lines = [f"Workspace {visible(str(request.folder))}: {visible(info.message)}"]
    if request.servers:
        lines.append("  MCP servers it defines:")
        for view in request.servers:
            before = state.last_trusted_entry(request.folder, view.name) if state is not None else None
            lines += entry_lines(view, view.changes_since(before))
    hooks = [i for i in request.settings if i.path[:1] == ("hooks",)]
    if hooks:
        lines.append("  Hooks it runs (commands from this folder, run on your machine):")
        lines += hook_lines(hooks)
    others = [i for i in request.settings if i.path[:1] != ("hooks",)]
    if others:
        lines.append("  Settings that need trust:")
        for item in others:
            lines.append(f"    {visible(item.key)} = {visible(item.value_text)}  ({visible(item.source.name)}: {item.why})")
    changes = info.changes()
    if changes:
        lines.append("  Changed since you last trusted it:")
        lines += [f"    {visible(c)}" for c in changes]
    return "\n".join(lines)
