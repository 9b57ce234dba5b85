"""Before a command runs: the workspace trust decisions (trusted, asked on the terminal, or
restricted) and the MCP host started on the settings after them."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from agent_ls.cli.common import workspace_folders

if TYPE_CHECKING:
    from agent_ls.config.settings import LoadedSettings
    from agent_ls.mcp.manager import MCPManager


async def settle(args: argparse.Namespace) -> tuple[Any, Any, LoadedSettings]:
    """The trust decisions for the folders (trust, ask on a terminal, or say they are restricted)
    and the settings after them: ``(state store, policy, settings)``."""
    from agent_ls.cli.workspace_trust import settle_workspaces
    from agent_ls.config.paths import host_state_path
    from agent_ls.config.state import HostState
    from agent_ls.config.trust import TrustPolicy

    state = HostState(host_state_path())
    policy = TrustPolicy(state)
    trust = bool(getattr(args, "trust_workspace", False) or getattr(args, "yes", False))
    settings = await settle_workspaces(workspace_folders(args), policy, trust=trust, ask=sys.stdin.isatty())
    return state, policy, settings


async def open_host(args: argparse.Namespace) -> tuple[MCPManager, LoadedSettings]:
    from agent_ls.cli.workspace_trust import server_trust_handler
    from agent_ls.mcp.host import start_host

    state, policy, _ = await settle(args)
    handler = server_trust_handler(getattr(args, "yes", False), state)
    manager, settings = await start_host(workspace_folders(args), trust=policy, state=state, trust_handler=handler)
    await manager.wait_ready(timeout=args.wait)
    return manager, settings
