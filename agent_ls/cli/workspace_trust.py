"""Workspace trust on the terminal: what a folder asks for, the prompt, ``agent-ls trust``.

The same decisions as in the editor (:mod:`agent_ls.config.trust`, remembered in the user's
``host-state.json``): a folder never trusted is restricted until the user trusts it here
(``agent-ls trust``, ``--trust-workspace``, or ``y`` at the prompt on a terminal), in the
editor, or in another process.
"""

from __future__ import annotations

import asyncio
import sys
from typing import TYPE_CHECKING, Any

from agent_ls.cli.common import workspace_folders
from agent_ls.config.paths import host_state_path
from agent_ls.config.settings import load_settings
from agent_ls.config.state import HostState
from agent_ls.config.trust import TrustPolicy
from agent_ls.config.trust_text import describe, entry_lines
from agent_ls.runtime.questions import TrustAnswer

if TYPE_CHECKING:
    from agent_ls.config.entries import ServerConfig
    from agent_ls.config.settings import LoadedSettings
    from agent_ls.config.trust import WorkspaceTrustInfo
    from agent_ls.runtime.host import RuntimeHost
    from agent_ls.runtime.questions import Questions


async def _ask_terminal(question: str) -> bool | None:
    print(question, end="", file=sys.stderr, flush=True)
    line = await asyncio.to_thread(sys.stdin.readline)
    if not line:
        return None
    return line.strip().lower() in ("y", "yes")


async def ask_workspace_trust(info: WorkspaceTrustInfo, state: HostState | None) -> bool | None:
    """The terminal's question about a folder (what it asks for, then y/N)."""
    return await _ask_terminal(describe(info, state) + "\nTrust this workspace? [y/N] ")


async def settle_workspaces(host: RuntimeHost, questions: Questions, *, trust: bool) -> LoadedSettings:
    """Load the host's settings; for each folder that needs a decision: trust it (``trust``), ask
    ``questions`` (the terminal), or say on stderr that it is restricted and how to trust it.
    Returns the settings as they are after the decisions (the host's from then on)."""
    settings = await host.load()
    changed = False
    for folder, info in settings.workspaces.items():
        pending = info.asks or (trust and not info.explicitly_trusted and not info.request.empty)
        if not pending:
            if info.state.value in ("declined", "editor-restricted"):
                print(f"agent-ls: {folder}: {info.message}", file=sys.stderr)
            continue
        answer = TrustAnswer.TRUST if trust else await questions.trust_workspace(info)
        if answer is None:
            print(f"agent-ls: {folder}: {info.message}\n  Run `agent-ls trust --workspace {folder}` to see what "
                  "it asks for and trust it, or pass --trust-workspace.", file=sys.stderr)
            continue
        await host.record_workspace(info.request, answer)
        changed = True
    return await host.load() if changed else settings


async def ask_server_trust(cfg: ServerConfig, state: HostState | None) -> bool | None:
    """The per-server prompt (a workspace server that is new or changed since it was trusted)."""
    view = cfg.view()
    before = state.last_trusted_entry(cfg.source.workspace_folder, cfg.name) if state is not None else None
    text = "\n".join([f"The workspace file {cfg.source.file} defines an MCP server:",
                      *entry_lines(view, view.changes_since(before), indent="  ")])
    return await _ask_terminal(text + "\nTrust it and start it? [y/N] ")


async def cmd_trust_workspace(args: Any) -> int:
    """``agent-ls trust``: show what each folder asks for, then trust it (or ``--revoke``)."""
    state = HostState(host_state_path())
    policy = TrustPolicy(state)
    settings = load_settings(workspace_folders(args), trust=policy)
    for folder, info in settings.workspaces.items():
        print(describe(info, state))
        if args.show:
            continue
        policy.record(info.request, not args.revoke)
        print(f"{'Restricted' if args.revoke else 'Trusted'} {folder}"
              + ("" if args.revoke or not info.request.servers else
                 f" and its {len(info.request.servers)} MCP server entr{'y' if len(info.request.servers) == 1 else 'ies'}"))
    return 0
