"""Before a command runs: the runtime host of the folders, its questions asked on the terminal
(:class:`TerminalQuestions`), the workspace trust decisions (trusted, asked on the terminal, or
restricted) and the MCP host started on the settings after them: at once for the ``mcp``
commands (:func:`open_host`), in the background for ``agent-ls chat`` (:func:`chat_lifecycle`,
the lifecycle of the language server and ACP)."""

from __future__ import annotations

import argparse
import sys
from typing import TYPE_CHECKING, Any

from agent_ls.cli.common import workspace_folders
from agent_ls.cli.questions import TerminalQuestions
from agent_ls.cli.workspace_trust import settle_workspaces
from agent_ls.core.tasks import BackgroundTasks
from agent_ls.runtime.host import RuntimeHost
from agent_ls.runtime.lifecycle import HostLifecycle, LogListener
from agent_ls.runtime.questions import NoQuestions

if TYPE_CHECKING:
    from collections.abc import Sequence
    from pathlib import Path

    from agent_ls.config.settings import LoadedSettings
    from agent_ls.mcp.manager import MCPManager
    from agent_ls.runtime.model_library import ModelLibrary


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


class TerminalListener(LogListener):
    """The host's events in ``agent-ls chat``: logged (a server that fails is a warning line on
    stderr), the settings' diagnostics left to the command (it printed them at their place)."""

    def settings_read(self, settings: LoadedSettings, broken: Sequence[Path]) -> None:
        pass


def chat_lifecycle(host: RuntimeHost, models: ModelLibrary, tasks: BackgroundTasks) -> HostLifecycle:
    """The lifecycle of the chat's settled ``host``, as ACP's: the MCP host starts in the background
    once the first model request has gone out or the chat waits for its user (the request never
    competes with the MCP SDK's import), the SDK only when a server is configured; a session gets
    the servers connected by then and is told the others are starting. The folders' trust was
    settled already (:func:`settle`)."""
    return HostLifecycle(host, TerminalListener(), tasks, models=models, preview_first=False,
                         ask_workspaces=False, mcp_on_demand=True, request_first=True)


async def ask_servers_first(lifecycle: HostLifecycle) -> None:
    """The servers' trust questions on the terminal before the host starts (``--yes``: trusted);
    each server nobody could decide on (no terminal) is named on stderr with how to trust it: it
    stays stopped. The host does not ask again."""
    undecided = await lifecycle.ask_servers_first()
    questions = lifecycle.runtime.questions
    if isinstance(questions, TerminalQuestions):
        questions.servers_asked = True
    for cfg in undecided:
        folder = cfg.source.workspace_folder
        why = "no answer" if sys.stdin.isatty() else "stdin is not a terminal"
        print(f"agent-ls: the MCP server '{cfg.name}' of {cfg.source.file} was not started: it needs your trust "
              f"({why}).\n  Run `agent-ls mcp trust {cfg.name}"
              + (f" -w {folder}" if folder is not None else "") + "` to trust it, or pass --yes.", file=sys.stderr)
