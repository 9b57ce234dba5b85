"""Before a command runs: the runtime host of the folders, its questions asked on the terminal
(:class:`TerminalQuestions`), the workspace trust decisions (trusted, asked on the terminal, or
restricted) and the MCP host started on the settings after them."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from agent_ls.cli.common import workspace_folders
from agent_ls.cli.questions import TerminalQuestions
from agent_ls.cli.workspace_trust import settle_workspaces
from agent_ls.runtime.host import RuntimeHost
from agent_ls.runtime.questions import NoQuestions

if TYPE_CHECKING:

    from agent_ls.config.settings import LoadedSettings
    from agent_ls.mcp.manager import MCPManager


def runtime_host(args: argparse.Namespace, *, ask_servers: bool = True) -> RuntimeHost:
    """The host of the command's folders, its questions on the terminal (``ask_servers``: False,
    workspace servers that wait for trust stay waiting). No MCP sampling: only ``agent-ls chat``
    has a model to offer, and attaches its own."""
    questions = TerminalQuestions(assume_yes=bool(getattr(args, "yes", False)), ask=sys.stdin.isatty())
    host = RuntimeHost(lambda: workspace_folders(args), questions if ask_servers else NoQuestions(), sampling=False)
    questions.host = host
    return host


async def settle(args: argparse.Namespace, *, ask_servers: bool = True) -> tuple[RuntimeHost, LoadedSettings]:
    """The trust decisions for the folders (trust, ask on a terminal, or say they are restricted)
    and the settings after them."""
    host = runtime_host(args, ask_servers=ask_servers)
    trust = bool(getattr(args, "trust_workspace", False) or getattr(args, "yes", False))
    questions = TerminalQuestions(ask=sys.stdin.isatty(), host=host)  # workspaces are asked even when servers are not
    settings = await settle_workspaces(host, questions, trust=trust)
    return host, settings


async def start(host: RuntimeHost, args: argparse.Namespace, **options: Any) -> MCPManager:
    """Every MCP server of the settled ``host`` started (``options`` go to the manager:
    ``auth_opener``, ``sign_in_timeout``...) and waited for (``--wait``)."""
    manager = await host.start(**options)
    await manager.wait_ready(timeout=args.wait)
    return manager


async def open_host(args: argparse.Namespace, **options: Any) -> tuple[MCPManager, LoadedSettings]:
    """:func:`settle`, then :func:`start`."""
    host, _ = await settle(args)
    manager = await start(host, args, **options)
    assert host.settings is not None
    return manager, host.settings
