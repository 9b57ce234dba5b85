"""Workspace trust on the terminal: what a folder asks for, the prompt, ``agent-ls trust``.

The same decisions as in the editor (:mod:`agent_ls.config.trust`, remembered in the user's
``host-state.json``): a folder never trusted is restricted until the user trusts it here
(``agent-ls trust``, ``--trust-workspace``, or ``y`` at the prompt on a terminal), in the
editor, or in another process.
"""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_ls.cli.common import workspace_folders
from agent_ls.config.trust_text import describe, entry_lines

if TYPE_CHECKING:
    from agent_ls.config.entries import ServerConfig
    from agent_ls.config.settings import LoadedSettings
    from agent_ls.config.state import HostState
    from agent_ls.config.trust import TrustPolicy


async def _ask_terminal(question: str) -> bool | None:
    print(question, end="", file=sys.stderr, flush=True)
    line = await asyncio.to_thread(sys.stdin.readline)
    if not line:
        return None
    return line.strip().lower() in ("y", "yes")


async def settle_workspaces(folders: Sequence[Path], policy: TrustPolicy, *, trust: bool,
                            ask: bool) -> LoadedSettings:
    """Load the settings; for each folder that needs a decision: trust it (``trust``), ask on the
    terminal (``ask``, a terminal on stdin), or say on stderr that it is restricted and how to
    trust it. Returns the settings as they are after the decisions."""
    from agent_ls.config.settings import load_settings

    settings = load_settings(list(folders), trust=policy)
    changed = False
    for folder, info in settings.workspaces.items():
        pending = info.asks or (trust and not info.explicitly_trusted and not info.request.empty)
        if not pending:
            if info.state.value in ("declined", "editor-restricted"):
                print(f"agent-ls: {folder}: {info.message}", file=sys.stderr)
            continue
        if trust:
            answer: bool | None = True
        elif ask:
            answer = await _ask_terminal(describe(info, policy.store) + "\nTrust this workspace? [y/N] ")
        else:
            answer = None
        if answer is None:
            print(f"agent-ls: {folder}: {info.message}\n  Run `agent-ls trust --workspace {folder}` to see what "
                  "it asks for and trust it, or pass --trust-workspace.", file=sys.stderr)
            continue
        policy.record(info.request, answer)
        changed = True
    return load_settings(list(folders), trust=policy) if changed else settings


def server_trust_handler(assume_yes: bool, state: HostState | None) -> Any:
    """The per-server prompt (a workspace server that is new or changed since it was trusted)."""

    async def handler(cfg: ServerConfig) -> bool | None:
        if assume_yes:
            return True
        if not sys.stdin.isatty():
            return None
        view = cfg.view()
        before = state.last_trusted_entry(cfg.source.workspace_folder, cfg.name) if state is not None else None
        text = "\n".join([f"The workspace file {cfg.source.file} defines an MCP server:",
                          *entry_lines(view, view.changes_since(before), indent="  ")])
        return await _ask_terminal(text + "\nTrust it and start it? [y/N] ")

    return handler


async def cmd_trust_workspace(args: Any) -> int:
    """``agent-ls trust``: show what each folder asks for, then trust it (or ``--revoke``)."""
    from agent_ls.config.paths import host_state_path
    from agent_ls.config.settings import load_settings
    from agent_ls.config.state import HostState
    from agent_ls.config.trust import TrustPolicy

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
