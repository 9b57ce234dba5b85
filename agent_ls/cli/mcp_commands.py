"""``agent-ls mcp status | tools | call | trust | login | logout``: the configured MCP servers
from the terminal, on the same host code as the editor."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from typing import TYPE_CHECKING, Any

from agent_ls.cli.common import (
    EXIT_FAIL,
    EXIT_OK,
    EXIT_USAGE,
    print_diagnostics,
    status_line,
)
from agent_ls.cli.host import open_host, settle
from agent_ls.mcp.oauth.redirect import AuthOpener, open_in_gui_browser

if TYPE_CHECKING:
    from agent_ls.mcp.status import ServerStatus


async def cmd_status(args: argparse.Namespace) -> int:
    manager, settings = await open_host(args)
    try:
        statuses = manager.status()
        if args.json:
            print(json.dumps({
                "servers": [_status_json(s) for s in statuses],
                "diagnostics": [str(d) for d in settings.diagnostics],
            }, indent=2))
        else:
            print_diagnostics(settings)
            if not statuses:
                print("No MCP servers are configured.")
            for s in statuses:
                print(status_line(s))
        return EXIT_OK
    finally:
        await manager.close()


def _status_json(s: ServerStatus) -> dict[str, Any]:
    return {
        "name": s.name,
        "state": s.state,
        "transport": s.transport,
        "scope": s.scope,
        "source": s.source,
        "toolCount": s.tool_count,
        "promptCount": s.prompt_count,
        "resourceCount": s.resource_count,
        "error": s.error,
        "stderrTail": list(s.stderr_tail),
        "serverInfo": s.server_info,
        "protocolVersion": s.protocol_version,
        "restarts": s.restarts,
        "pid": s.pid,
        "auth": s.auth,
        "tools": [{"name": t.name, "original": t.original, "capability": t.capability} for t in s.tools],
    }


async def cmd_tools(args: argparse.Namespace) -> int:
    manager, settings = await open_host(args)
    try:
        print_diagnostics(settings)
        tools = [t for t in manager.tools() if not args.server or t.server == args.server]
        if args.server and args.server not in manager.server_names():
            print(f"error: no MCP server named {args.server!r} is configured", file=sys.stderr)
            return EXIT_FAIL
        if args.json:
            print(json.dumps([{
                "name": t.spec.name, "server": t.server, "original": t.spec.display_name,
                "capability": t.spec.capability.value, "description": t.spec.description,
                "inputSchema": t.spec.input_schema,
            } for t in tools], indent=2))
        else:
            for t in tools:
                desc = (t.spec.description or "").strip().splitlines()
                print(f"{t.spec.name}  [{t.spec.capability.value}]  ({t.server}: {t.spec.display_name})")
                if desc:
                    print(f"    {desc[0][:100]}")
            for s in manager.status():
                if (not args.server or s.name == args.server) and s.error:
                    print(f"({s.name}: {s.state}: {s.error['message']})", file=sys.stderr)
        return EXIT_OK
    finally:
        await manager.close()


async def cmd_call(args: argparse.Namespace) -> int:
    try:
        arguments = json.loads(args.arguments) if args.arguments else {}
    except json.JSONDecodeError as e:
        print(f"error: the arguments are not valid JSON: {e}", file=sys.stderr)
        return EXIT_USAGE
    if not isinstance(arguments, dict):
        print("error: the arguments must be a JSON object", file=sys.stderr)
        return EXIT_USAGE
    manager, settings = await open_host(args)
    try:
        print_diagnostics(settings)
        result = await manager.call_tool(args.server, args.tool, arguments)
        if args.json:
            print(json.dumps({
                "isError": result.is_error, "content": result.content, "structured": result.structured,
                "attachments": [{"kind": a.kind, "mimeType": a.mime_type, "uri": a.uri} for a in result.attachments],
                "truncatedChars": result.truncated_chars,
            }, indent=2))
        else:
            print(result.content)
            for a in result.attachments:
                print(f"[attachment: {a.kind} {a.mime_type or ''} {a.uri or ''}]".rstrip())
        return EXIT_FAIL if result.is_error else EXIT_OK
    finally:
        await manager.close()


async def cmd_trust(args: argparse.Namespace) -> int:
    host, settings = await settle(args)
    state = host.state
    cfg = settings.servers.get(args.server)
    if cfg is None:
        print(f"error: no MCP server named {args.server!r} is configured", file=sys.stderr)
        return EXIT_FAIL
    if not cfg.needs_trust:
        print(f"error: '{args.server}' is defined in your user settings: it needs no trust", file=sys.stderr)
        return EXIT_FAIL
    if cfg.restricted and not args.deny:
        print(f"error: '{args.server}' is defined by a workspace you have not trusted; run `agent-ls trust` "
              "to see what the workspace asks for and trust it", file=sys.stderr)
        return EXIT_FAIL
    state.set_trust(cfg.source.workspace_folder, cfg.trust_key(), not args.deny, name=cfg.name,
                    entry=cfg.view().snapshot())
    print(f"{'Denied' if args.deny else 'Trusted'} '{args.server}' from {cfg.source.file}")
    return EXIT_OK


def _cli_opener(open_browser: bool) -> AuthOpener:
    async def opener(server: str, url: str) -> None:
        print(f"\nSign in to '{server}': open this URL in your browser\n\n  {url}\n", file=sys.stderr, flush=True)
        if open_browser and await asyncio.to_thread(open_in_gui_browser, url):
            print("(opened in your browser; waiting for the redirect...)", file=sys.stderr, flush=True)

    return opener


async def cmd_login(args: argparse.Namespace) -> int:
    host, _ = await settle(args)
    manager = await host.start(auth_opener=_cli_opener(not args.no_browser), sign_in_timeout=args.timeout)
    settings = host.current_settings
    try:
        if args.server not in manager.server_names():
            print_diagnostics(settings)
            print(f"error: no MCP server named {args.server!r} is configured", file=sys.stderr)
            return EXIT_FAIL
        await manager.wait_ready(timeout=args.wait)
        try:
            s = await manager.sign_in(args.server)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_FAIL
        print(status_line(s))
        if s.state in ("connected", "connected-listing-failed"):
            print(f"Signed in to '{s.name}'." if s.auth else f"'{s.name}' connected without signing in.")
            return EXIT_OK
        return EXIT_FAIL
    finally:
        await manager.close()


async def cmd_logout(args: argparse.Namespace) -> int:
    host, _ = await settle(args, ask_servers=False)  # signing out starts no workspace server
    manager = await host.start()
    settings = host.current_settings
    try:
        if args.server not in manager.server_names():
            print_diagnostics(settings)
            print(f"error: no MCP server named {args.server!r} is configured", file=sys.stderr)
            return EXIT_FAIL
        try:
            s = await manager.sign_out(args.server)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_FAIL
        print(f"Signed out of '{s.name}': its tokens and client registration are forgotten.")
        print(status_line(s))
        return EXIT_OK
    finally:
        await manager.close()
