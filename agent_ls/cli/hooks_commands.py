"""``agent-ls hooks list``: the hooks in effect for the workspace and where each comes from, and
the hooks a folder defines that wait for its trust."""

from __future__ import annotations

import json
import sys
from typing import Any

from agent_ls.cli.common import EXIT_OK, workspace_folders
from agent_ls.config.paths import host_state_path
from agent_ls.config.settings import load_settings
from agent_ls.config.state import HostState
from agent_ls.config.trust import TrustPolicy
from agent_ls.core.visible import visible


async def cmd_hooks_list(args: Any) -> int:
    settings = load_settings(workspace_folders(args), trust=TrustPolicy(HostState(host_state_path())))
    waiting = [(folder, item) for folder, info in settings.workspaces.items() if not info.trusted
               for item in info.request.settings if item.path[:1] == ("hooks",)]
    problems = [d for d in settings.diagnostics if d.json_path[:1] == ("hooks",) and d.severity != "information"]
    if args.json:
        print(json.dumps({
            "hooks": [{"event": h.event, "matcher": h.matcher, "command": h.command, "timeout": h.timeout,
                       "scope": h.scope, "file": str(h.source) if h.source else None,
                       "path": list(h.path)} for h in settings.hooks],
            "awaitingTrust": [{"folder": str(folder), "file": str(item.source), "path": list(item.path), **item.value}
                              for folder, item in waiting],
            "problems": [str(d) for d in problems],
        }, indent=2))
        return EXIT_OK
    if not settings.hooks:
        print("No hooks in effect.")
    for h in settings.hooks:
        matcher = f" matching {visible(h.matcher)}" if h.matcher not in (None, "", "*") else ""
        print(f"{h.event}{matcher} (timeout {h.timeout:g} s, {h.scope}: {visible(h.where)})")
        print(f"    runs: {visible(h.command)}")
    if waiting:
        print("\nNot in effect until you trust the workspace (`agent-ls trust`):")
        for folder, item in waiting:
            print(f"{item.value['event']} ({visible(str(folder))}: {visible(str(item.source))}: {visible(item.key)})")
            print(f"    runs: {visible(str(item.value['command']))}")
    for d in problems:
        print(str(d), file=sys.stderr)
    return EXIT_OK
