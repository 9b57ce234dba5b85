"""``agent-ls``: the language server (no arguments, or ``serve``) and headless commands over
the same host code.

    agent-ls [serve]                        serve LSP on stdio (what the editor runs)
    agent-ls doctor                         the whole setup: model and key, the OS sandbox, servers
    agent-ls mcp status [--json]            servers, state, tool counts, last error
    agent-ls mcp tools [SERVER] [--json]    tools with model-facing and original names
    agent-ls mcp call SERVER TOOL '{json}'  call one tool and print its result
    agent-ls mcp doctor [SERVER]            resolved argv/cwd/env (secrets redacted), PATH
                                            lookup, the phase that failed, stderr tail
    agent-ls mcp trust SERVER [--deny]      remember the trust decision for a workspace server
    agent-ls trust [--revoke | --show]      what the workspace's settings ask for; trust it
    agent-ls hooks list [--json]            the hooks in effect and where each comes from
    agent-ls mcp login SERVER               sign in to an OAuth server (opens the browser or
                                            prints the URL; waits for the redirect)
    agent-ls mcp logout SERVER              forget its tokens and client registration
    agent-ls chat [--model M] [PROMPT]      chat with the agent (one-shot or interactive)
    agent-ls demo                           the first-run demo on the workspace in demo/
    agent-ls checkpoints list [--session ID] [--json]
                                            the checkpoints taken before each prompt
    agent-ls checkpoints restore CHECKPOINT [--code|--conversation|--both] [--yes]
                                            rewind files and/or the conversation (shows each file first)
    agent-ls acp                            serve the Agent Client Protocol on stdio (Zed, Neovim...)

Every command takes ``--workspace DIR`` (repeatable; default: the current directory). A folder
whose settings files ask for something that needs trust (MCP servers, model, endpoint, allow
rules, ...) is restricted until you trust it: at the prompt (on a terminal), with
``--trust-workspace``, with ``agent-ls trust``, or in the editor.
"""

import argparse
import asyncio
import importlib
from collections.abc import Callable, Coroutine, Sequence
from typing import Any

# Only what `serve` needs is imported at module level: the language server must answer
# `initialize` fast, and the MCP SDK alone costs ~0.8 s to import. The command modules (tens of
# milliseconds of attrs classes and settings code) are imported when their command runs.
from agent_ls import __version__


def _command(module: str, name: str) -> Callable[[argparse.Namespace], Coroutine[Any, Any, int]]:
    """``agent_ls.cli.<module>.<name>``, imported when the command runs (not for ``serve``)."""

    def run(args: argparse.Namespace) -> Coroutine[Any, Any, int]:
        cmd: Callable[[argparse.Namespace], Coroutine[Any, Any, int]] = getattr(
            importlib.import_module(f"agent_ls.cli.{module}"), name)
        return cmd(args)

    return run


cmd_status = _command("mcp_commands", "cmd_status")
cmd_tools = _command("mcp_commands", "cmd_tools")
cmd_call = _command("mcp_commands", "cmd_call")
cmd_trust = _command("mcp_commands", "cmd_trust")
cmd_login = _command("mcp_commands", "cmd_login")
cmd_logout = _command("mcp_commands", "cmd_logout")
cmd_doctor = _command("doctor", "cmd_doctor")
cmd_overview = _command("doctor", "cmd_overview")
cmd_chat = _command("chat", "cmd_chat")
cmd_trust_workspace = _command("workspace_trust", "cmd_trust_workspace")
cmd_demo = _command("demo", "cmd_demo")
cmd_hooks_list = _command("hooks_commands", "cmd_hooks_list")


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-ls", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log-level", default="WARNING", help="log level for stderr (default WARNING)")
    parser.add_argument("--version", action="version", version=f"agent-ls {__version__}")
    sub = parser.add_subparsers(dest="command")

    def common(p: argparse.ArgumentParser, wait: float = 60.0, wait_help: str = "") -> None:
        p.add_argument("--workspace", "-w", action="append", help="workspace folder (repeatable)")
        p.add_argument("--wait", type=float, default=wait,
                       help=wait_help or f"seconds to wait for servers (default {wait:g})")
        p.add_argument("--yes", "-y", action="store_true",
                       help="answer yes to trust questions (the workspace and its servers)")
        p.add_argument("--trust-workspace", action="store_true",
                       help="trust the workspace folders (their settings and the MCP servers they define now)")

    mcp = sub.add_parser("mcp", help="inspect and use the configured MCP servers")
    msub = mcp.add_subparsers(dest="mcp_command", required=True)
    p = msub.add_parser("status", help="servers and their state")
    common(p)
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_status)
    p = msub.add_parser("tools", help="list tools")
    common(p)
    p.add_argument("server", nargs="?")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_tools)
    p = msub.add_parser("call", help="call a tool")
    common(p)
    p.add_argument("server")
    p.add_argument("tool")
    p.add_argument("arguments", nargs="?", default="{}")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_call)
    p = msub.add_parser("doctor", help="diagnose servers")
    common(p)
    p.add_argument("server", nargs="?")
    p.set_defaults(func=cmd_doctor)
    p = msub.add_parser("trust", help="trust (or --deny) a workspace server")
    common(p)
    p.add_argument("server")
    p.add_argument("--deny", action="store_true")
    p.set_defaults(func=cmd_trust)
    p = msub.add_parser("login", help="sign in to an OAuth server")
    common(p)
    p.add_argument("server")
    p.add_argument("--no-browser", action="store_true", help="only print the URL")
    p.add_argument("--timeout", type=float, default=None,
                   help="seconds to wait for the sign-in (default: the server's oauth.signInTimeout, 300)")
    p.set_defaults(func=cmd_login)
    p = msub.add_parser("logout", help="forget an OAuth server's tokens and registration")
    common(p)
    p.add_argument("server")
    p.set_defaults(func=cmd_logout)

    p = sub.add_parser("doctor", help="the whole setup: model and key, the OS sandbox, servers")
    common(p, wait=10.0)
    p.set_defaults(func=cmd_overview)

    p = sub.add_parser("chat", help="chat with the agent in the terminal")
    common(p, wait=0.0, wait_help="seconds to wait for the MCP servers before the first prompt (default 0: the "
           "prompt goes at once, and tool_search waits for the servers still starting that it needs)")
    p.add_argument("prompt", nargs="*", help="one-shot prompt (interactive when absent)")
    p.add_argument("--model", "-m", help="litellm model string (overrides settings and AGENT_LS_MODEL)")
    p.add_argument("--resume", help="resume a session by id")
    p.add_argument("--continue", dest="continue_last", action="store_true", help="resume the latest session")
    p.add_argument("--list-sessions", action="store_true", help="list this workspace's sessions")
    p.add_argument("--delete-session", metavar="ID", help="delete a session and its messages")
    p.set_defaults(func=cmd_chat)

    p = sub.add_parser("trust", help="show what the workspace's settings ask for and trust it (or --revoke)")
    p.add_argument("--workspace", "-w", action="append", help="workspace folder (repeatable)")
    p.add_argument("--revoke", action="store_true", help="restrict the workspace again")
    p.add_argument("--show", action="store_true", help="only show what it asks for and its state")
    p.set_defaults(func=cmd_trust_workspace)

    p = sub.add_parser("hooks", help="the hooks in effect").add_subparsers(dest="hooks_command", required=True) \
        .add_parser("list", help="the hooks in effect and where each comes from")
    p.add_argument("--workspace", "-w", action="append", help="workspace folder (repeatable)")
    p.add_argument("--json", action="store_true")
    p.set_defaults(func=cmd_hooks_list)
    importlib.import_module("agent_ls.cli.checkpoints").add_commands(sub)  # `checkpoints list|restore|redo`

    sub.add_parser("serve", help="serve the language server on stdio (the default)")
    sub.add_parser("acp", help="serve the Agent Client Protocol on stdio (Zed, JetBrains, Neovim, Emacs)")

    p = sub.add_parser("demo", help="run the first-run demo")
    common(p)
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    from agent_ls.core.process_secrets import take_process_secrets  # first: before any thread or child

    take_process_secrets()  # provider keys in memory only, not in /proc/<pid>/environ
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None or args.command == "serve":
        from agent_ls.server import serve  # lazy: the language server, for `serve` only

        serve(str(args.log_level))
    if args.command != "acp":
        from agent_ls.cli.terminal import install  # lazy: +3 modules, only for a terminal

        install()  # a repository's text reaches the terminal with its escape sequences shown, not run
    from agent_ls.core.redact import log_to_stderr  # lazy: json, +7 modules, ~6 ms; not for --help

    log_to_stderr(str(args.log_level))  # tokens never reach the terminal
    if args.command == "acp":
        from agent_ls.acp import main as acp_main  # lazy: the ACP front end, for `acp` only

        return acp_main()
    if args.command == "chat":
        from agent_ls.core.imports import collector_paused, front_end_start

        with front_end_start():  # as ACP's: attrs' methods from their cache, the sandbox probe in a thread
            with collector_paused():
                chat = args.func(args)  # (imports the chat's modules)
            return asyncio.run(chat)
    return asyncio.run(args.func(args))
