"""``agent-ls``: the language server (no arguments, or ``serve``) and headless commands over
the same host code.

    agent-ls [serve]                        serve LSP on stdio (what the editor runs)
    agent-ls mcp status [--json]            servers, state, tool counts, last error
    agent-ls mcp tools [SERVER] [--json]    tools with model-facing and original names
    agent-ls mcp call SERVER TOOL '{json}'  call one tool and print its result
    agent-ls mcp doctor [SERVER]            resolved argv/cwd/env (secrets redacted), PATH
                                            lookup, the phase that failed, stderr tail
    agent-ls mcp trust SERVER [--deny]      remember the trust decision for a workspace server
    agent-ls trust [--revoke | --show]      what the workspace's settings ask for; trust it
    agent-ls mcp login SERVER               sign in to an OAuth server (opens the browser or
                                            prints the URL; waits for the redirect)
    agent-ls mcp logout SERVER              forget its tokens and client registration
    agent-ls chat [--model M] [PROMPT]      chat with the agent (one-shot or interactive)
    agent-ls demo                           the first-run demo on the workspace in demo/
    agent-ls acp                            serve the Agent Client Protocol on stdio (Zed, Neovim...)

Every command takes ``--workspace DIR`` (repeatable; default: the current directory). A folder
whose settings files ask for something that needs trust (MCP servers, model, endpoint, allow
rules, ...) is restricted until you trust it: at the prompt (on a terminal), with
``--trust-workspace``, with ``agent-ls trust``, or in the editor.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import logging
import os
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

# Only what `serve` needs is imported at module level: the language server must answer
# `initialize` fast, and the MCP SDK alone costs ~0.8 s to import. Commands import lazily.
if TYPE_CHECKING:
    from agent_ls.config.entries import ServerConfig
    from agent_ls.config.settings import LoadedSettings
    from agent_ls.mcp.manager import MCPManager, ServerStatus

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2


def _folders(args: argparse.Namespace) -> list[Path]:
    return [Path(p).resolve() for p in (args.workspace or [os.getcwd()])]


def _auth_text(auth: dict[str, Any] | None) -> str | None:
    if not auth:
        return None
    text = str(auth["state"])
    if "expiresAt" in auth:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(auth["expiresAt"]))
        text += f", token expires {when}"
    if auth.get("reason"):
        text += f": {auth['reason']}"
    return text


def _status_line(s: ServerStatus) -> str:
    line = f"{s.name:<20} {s.state:<26} {s.transport:<6} tools={s.tool_count:<4} ({s.scope}: {s.source})"
    auth = _auth_text(s.auth)
    if auth:
        line += f"\n    auth: {auth}"
    if s.error:
        line += f"\n    error [{s.error['phase']}]: {s.error['message']}"
    if s.auth and s.auth.get("state") in ("needs-sign-in", "failed"):
        line += f"\n    sign in with: agent-ls mcp login {s.name}"
    return line


async def _settle(args: argparse.Namespace) -> tuple[Any, Any, LoadedSettings]:
    """The trust decisions for the folders (trust, ask on a terminal, or say they are restricted)
    and the settings after them: ``(state store, policy, settings)``."""
    from agent_ls.config.paths import host_state_path
    from agent_ls.config.state import HostState
    from agent_ls.config.trust import TrustPolicy
    from agent_ls.trust_cli import settle_workspaces

    state = HostState(host_state_path())
    policy = TrustPolicy(state)
    trust = bool(getattr(args, "trust_workspace", False) or getattr(args, "yes", False))
    settings = await settle_workspaces(_folders(args), policy, trust=trust, ask=sys.stdin.isatty())
    return state, policy, settings


async def _open(args: argparse.Namespace) -> tuple[MCPManager, LoadedSettings]:
    from agent_ls.mcp.host import start_host
    from agent_ls.trust_cli import server_trust_handler

    state, policy, _ = await _settle(args)
    handler = server_trust_handler(getattr(args, "yes", False), state)
    manager, settings = await start_host(_folders(args), trust=policy, state=state, trust_handler=handler)
    await manager.wait_ready(timeout=args.wait)
    return manager, settings


def _print_diagnostics(settings: LoadedSettings) -> None:
    for d in settings.diagnostics:
        print(str(d), file=sys.stderr)


async def cmd_status(args: argparse.Namespace) -> int:
    manager, settings = await _open(args)
    try:
        statuses = manager.status()
        if args.json:
            print(json.dumps({
                "servers": [_status_json(s) for s in statuses],
                "diagnostics": [str(d) for d in settings.diagnostics],
            }, indent=2))
        else:
            _print_diagnostics(settings)
            if not statuses:
                print("No MCP servers are configured.")
            for s in statuses:
                print(_status_line(s))
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
    manager, settings = await _open(args)
    try:
        _print_diagnostics(settings)
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
    manager, settings = await _open(args)
    try:
        _print_diagnostics(settings)
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


def _login_shell_lookup(command: str) -> str | None:
    shell = os.environ.get("SHELL", "/bin/bash")
    try:
        out = subprocess.run([shell, "-lc", f"command -v {command!s}"], capture_output=True, text=True,
                             timeout=5, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = out.stdout.strip().splitlines()
    return found[-1] if out.returncode == 0 and found else None


def _doctor_config(cfg: ServerConfig) -> list[str]:
    from agent_ls.core.redact import MASK, redact
    from agent_ls.mcp.connection import child_environment, resolve_command

    lines = [f"  defined in: {cfg.source.file} ({cfg.source.scope.value} scope)", f"  transport: {cfg.transport}"]
    if cfg.transport == "stdio":
        resolved, path_var = resolve_command(cfg)
        argv = [resolved or cfg.command or "", *cfg.args]
        lines.append(f"  argv: {json.dumps([redact(a, cfg.secrets) for a in argv])}")
        lines.append(f"  cwd: {cfg.cwd or os.getcwd()}")
        env = child_environment(cfg)
        lines.append("  env given to the server (values of configured variables hidden):")
        for k in sorted(env):
            shown = MASK if k in cfg.env else env[k]
            lines.append(f"    {k}={shown}")
        if resolved:
            lines.append(f"  command: {cfg.command} -> {resolved}")
        else:
            lines.append(f"  command: {cfg.command!r} NOT FOUND on PATH={path_var}")
            if cfg.command and os.sep not in cfg.command:
                alt = _login_shell_lookup(cfg.command)
                if alt:
                    lines.append(
                        f"  hint: your login shell finds it at {alt}; the editor was probably started "
                        f"with a different PATH. Use the full path in \"command\" or set env.PATH."
                    )
    else:
        lines.append(f"  url: {redact(cfg.url or '', cfg.secrets)}")
        for k in sorted(cfg.headers):
            lines.append(f"  header {k}: {MASK}")
        o = cfg.oauth
        if o is None:
            lines.append("  oauth: off")
        else:
            parts = [f"grant {o.grant}", "configured" if o.explicit else "automatic (on a Bearer challenge)"]
            if o.client_id:
                parts.append(f"client id {o.client_id}" + (" (secret set)" if o.client_secret else ""))
            if o.client_metadata_url:
                parts.append(f"client metadata {o.client_metadata_url}")
            if o.issuer:
                parts.append(f"issuer {o.issuer}")
            lines.append("  oauth: " + ", ".join(parts))
            from agent_ls.mcp.host import oauth_store_path
            from agent_ls.mcp.oauth_store import OAuthStore

            store = OAuthStore(oauth_store_path())
            path = store.path_for(cfg.name, cfg.url or "")
            rec = store.load(cfg.name, cfg.url or "")
            if rec is None:
                lines.append(f"  tokens: none stored ({path})")
            else:
                what = ["tokens" if rec.tokens else "no tokens",
                        f"registration ({rec.client_source})" if rec.client else "no registration"]
                if rec.tokens and rec.tokens.get("refresh_token"):
                    what.append("refresh token")
                lines.append(f"  tokens: {', '.join(what)} in {path}")
    lines.append(f"  timeouts: connect {cfg.connect_timeout:g}s, call {cfg.call_timeout:g}s; protocol {cfg.protocol}")
    return lines


async def cmd_doctor(args: argparse.Namespace) -> int:
    manager, settings = await _open(args)
    print("Settings files:")
    for f in settings.files:
        print(f"  {'found  ' if f.exists() else 'missing'} {f}")
    if settings.diagnostics:
        print("Problems in settings:")
        for d in settings.diagnostics:
            print(f"  {d}")
    for folder, info in settings.workspaces.items():
        print(f"Workspace {folder}: {info.message}")
    bad = 0
    try:
        statuses = {s.name: s for s in manager.status()}
        names = [args.server] if args.server else manager.server_names()
        for name in names:
            s = statuses.get(name)
            if s is None:
                print(f"\n{name}: not configured")
                bad += 1
                continue
            print(f"\n{name}: {s.state}")
            cfg = settings.servers.get(name)
            if cfg is not None:
                print("\n".join(_doctor_config(cfg)))
            if s.error:
                err = s.error
                extra = "".join(f", {k} {err[k]}" for k in ("errno", "exitCode", "httpStatus") if k in err)
                print(f"  FAILED in phase '{err['phase']}'{extra}: {err['message']}")
            if s.state in ("connected", "connected-listing-failed"):
                print(f"  server: {s.server_info or '?'}, protocol {s.protocol_version}, "
                      f"{s.tool_count} tools, {s.prompt_count} prompts, {s.resource_count} resources")
            elif s.state == "awaiting-trust":
                restricted = cfg is not None and cfg.restricted
                how = "`agent-ls trust` (the workspace)" if restricted else f"`agent-ls mcp trust {name}`"
                print(f"  waiting for your trust: run {how} (or answer the editor's prompt)")
            auth = _auth_text(s.auth)
            if auth:
                print(f"  auth: {auth}")
            if s.auth and s.auth.get("state") in ("needs-sign-in", "failed"):
                print(f"  sign in: run `agent-ls mcp login {name}` (or Sign in on the server in the editor)")
            if s.stderr_tail:
                print("  stderr (last lines):")
                for line in s.stderr_tail[-15:]:
                    print(f"    {line}")
            if s.state not in ("connected", "disabled"):
                bad += 1
        return EXIT_FAIL if bad else EXIT_OK
    finally:
        await manager.close()


async def cmd_trust(args: argparse.Namespace) -> int:
    state, _policy, settings = await _settle(args)
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


async def cmd_trust_workspace(args: argparse.Namespace) -> int:
    from agent_ls.trust_cli import cmd_trust_workspace as run

    return await run(args, _folders(args))


def _cli_opener(open_browser: bool) -> Any:
    async def opener(server: str, url: str) -> None:
        print(f"\nSign in to '{server}': open this URL in your browser\n\n  {url}\n", file=sys.stderr, flush=True)
        if open_browser:
            from agent_ls.mcp.oauth import open_in_gui_browser

            if await asyncio.to_thread(open_in_gui_browser, url):
                print("(opened in your browser; waiting for the redirect...)", file=sys.stderr, flush=True)

    return opener


async def cmd_login(args: argparse.Namespace) -> int:
    from agent_ls.mcp.host import start_host
    from agent_ls.trust_cli import server_trust_handler

    folders = _folders(args)
    state, policy, _ = await _settle(args)
    manager, settings = await start_host(folders, trust=policy, state=state,
                                         trust_handler=server_trust_handler(getattr(args, "yes", False), state),
                                         auth_opener=_cli_opener(not args.no_browser), sign_in_timeout=args.timeout)
    try:
        if args.server not in manager.server_names():
            _print_diagnostics(settings)
            print(f"error: no MCP server named {args.server!r} is configured", file=sys.stderr)
            return EXIT_FAIL
        await manager.wait_ready(timeout=args.wait)
        try:
            s = await manager.sign_in(args.server)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_FAIL
        print(_status_line(s))
        if s.state in ("connected", "connected-listing-failed"):
            print(f"Signed in to '{s.name}'." if s.auth else f"'{s.name}' connected without signing in.")
            return EXIT_OK
        return EXIT_FAIL
    finally:
        await manager.close()


async def cmd_logout(args: argparse.Namespace) -> int:
    from agent_ls.mcp.host import start_host

    folders = _folders(args)
    state, policy, _ = await _settle(args)
    manager, settings = await start_host(folders, trust=policy, state=state)
    try:
        if args.server not in manager.server_names():
            _print_diagnostics(settings)
            print(f"error: no MCP server named {args.server!r} is configured", file=sys.stderr)
            return EXIT_FAIL
        try:
            s = await manager.sign_out(args.server)
        except ValueError as e:
            print(f"error: {e}", file=sys.stderr)
            return EXIT_FAIL
        print(f"Signed out of '{s.name}': its tokens and client registration are forgotten.")
        print(_status_line(s))
        return EXIT_OK
    finally:
        await manager.close()


async def _read_line(prompt: str) -> str | None:
    print(prompt, end="", file=sys.stderr, flush=True)
    line = await asyncio.to_thread(sys.stdin.readline)
    return line.rstrip("\n") if line else None


async def cmd_chat(args: argparse.Namespace) -> int:
    """A terminal chat on the same session code the editor uses."""
    import signal

    from agent_ls.agent import events as ev
    from agent_ls.agent.builtin_tools import builtin_tools
    from agent_ls.agent.config import agent_settings
    from agent_ls.agent.events import Event
    from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, PermissionGate, PermissionRules
    from agent_ls.agent.registry import ToolRegistry
    from agent_ls.agent.session import Session
    from agent_ls.agent.store import SessionStore
    from agent_ls.agent.workspace import Workspace
    from agent_ls.config.paths import user_data_dir
    from agent_ls.mcp.skills import SkillCatalog

    folders = _folders(args)
    _state, _policy, settings = await _settle(args)
    agent = agent_settings(settings)
    for problem in agent.problems:
        print(f"settings: {problem}", file=sys.stderr)
    store = SessionStore.for_workspace(user_data_dir(), folders[0])
    if args.list_sessions:
        for info in store.list_sessions():
            print(f"{info.id}  {info.message_count:>4} messages  {info.title or ''}")
        return EXIT_OK
    if args.delete_session:
        if not store.delete_session(args.delete_session):
            print(f"error: no session {args.delete_session!r} in this workspace", file=sys.stderr)
            return EXIT_USAGE
        print(f"Deleted session {args.delete_session}")
        return EXIT_OK
    llm = agent.llm_config(args.model)
    if llm is None:
        print("error: no model is configured. Pass --model, set AGENT_LS_MODEL, or put \"model\" in "
              "settings.json (any litellm model, e.g. anthropic/claude-sonnet-4-5, or ollama/qwen3 with "
              "\"apiBase\": \"http://127.0.0.1:11434\").", file=sys.stderr)
        return EXIT_USAGE
    session_id = args.resume
    if args.continue_last:
        sessions = store.list_sessions()
        session_id = sessions[0].id if sessions else None

    async def approve(request: ApprovalRequest) -> ApprovalAnswer:
        argv = json.dumps(request.arguments)[:300]
        line = await _read_line(f"\n[approve] {request.spec.name} {argv}\n  ({request.reason})\n"
                                "  allow [o]nce, for the [s]ession, or [d]eny? ")
        answer = (line or "").strip().lower()
        if answer in ("o", "once", "y", "yes"):
            return ApprovalAnswer.ALLOW_ONCE
        if answer in ("s", "session"):
            return ApprovalAnswer.ALLOW_SESSION
        return ApprovalAnswer.DENY

    manager, _ = await _open(args)
    _attach_terminal_sampling(manager, agent, llm.model)
    try:
        registry = ToolRegistry(builtin_tools(Workspace(folders), bash_timeout=agent.bash_timeout,
                                              outputs=agent.output_store()), manager,
                                defer=agent.defer_mcp_tools, skills=SkillCatalog(manager))
        gate = PermissionGate(PermissionRules(agent.allow, agent.ask, agent.deny), approve)
        session = Session(llm=llm, registry=registry, gate=gate, roots=folders, store=store,
                          session_id=session_id, max_steps=agent.max_steps, extra_instructions=agent.instructions)
        print(f"[session {session.session_id}, model {llm.model}]", file=sys.stderr)

        def sink(event: Event) -> None:
            if isinstance(event, ev.TextDelta):
                print(event.text, end="", flush=True)
            elif isinstance(event, ev.ToolCallStarted):
                print(f"\n[tool] {event.name} {json.dumps(event.arguments)[:200]}", file=sys.stderr, flush=True)
            elif isinstance(event, ev.ToolCallFinished):
                first = (event.content.strip().splitlines() or [""])[0][:160]
                print(f"[tool {'error' if event.is_error else 'ok'}] {first}", file=sys.stderr, flush=True)
            elif isinstance(event, ev.TurnError):
                print(f"\n[error] {event.message}", file=sys.stderr, flush=True)
            elif isinstance(event, ev.TurnFinished):
                u = event.usage
                print(f"\n[{event.stop_reason}; tokens in {u.input_tokens}, out {u.output_tokens}, "
                      f"cache read {u.cache_read_tokens}]", file=sys.stderr, flush=True)

        async def one(prompt: str) -> str:
            loop = asyncio.get_running_loop()
            task = asyncio.ensure_future(session.prompt(prompt, sink))
            loop.add_signal_handler(signal.SIGINT, task.cancel)
            try:
                result = await task
                return result.stop_reason
            except asyncio.CancelledError:
                print("\n[cancelled]", file=sys.stderr)
                return "cancelled"
            finally:
                loop.remove_signal_handler(signal.SIGINT)

        if args.prompt:
            reason = await one(" ".join(args.prompt))
            return EXIT_OK if reason == "end" else EXIT_FAIL
        while True:
            line = await _read_line("\n> ")
            if line is None or line.strip() in ("/exit", "/quit"):
                return EXIT_OK
            if line.strip():
                await one(line)
    finally:
        await manager.close()
        store.close()


def _attach_terminal_sampling(manager: MCPManager, agent: Any, model: str) -> None:
    """MCP sampling in ``agent-ls chat``: consent is asked on the terminal, like approvals;
    the chat's model (``--model`` included) answers unless ``agent.sampling.model`` is set."""
    import attrs

    from agent_ls.agent.sampling import Sampler, SamplingAnswer, SamplingRequest

    settings = attrs.evolve(agent, model=model)

    async def consent(request: SamplingRequest) -> SamplingAnswer:
        lines = [f"\n[sampling] MCP server '{request.server}' asks the model {request.model} "
                 f"(at most {request.max_tokens} tokens)"
                 + (f" at {request.endpoint}" if request.endpoint else "")]
        if request.system_prompt:
            lines.append(f"  system: {request.system_prompt[:300]}")
        if request.omitted_messages:
            lines.append(f"  ({request.omitted_messages} earlier messages not shown)")
        for m in request.messages:
            lines.append(f"  {m.role}: {m.text[:300]}")
        line = await _read_line("\n".join(lines) + "\n  allow [o]nce, for the [s]ession, or [d]eny? ")
        answer = (line or "").strip().lower()
        if answer in ("o", "once", "y", "yes"):
            return SamplingAnswer.ALLOW_ONCE
        if answer in ("s", "session"):
            return SamplingAnswer.ALLOW_SESSION
        return SamplingAnswer.DENY

    manager.set_sampling_handler(Sampler(lambda: settings, consent))


def demo_workspace() -> Path:
    return Path(__file__).resolve().parent.parent / "demo"


async def cmd_demo(args: argparse.Namespace) -> int:
    """The first-run demo: the demo workspace's servers connect, tools are listed, one call runs."""
    ws = Path(args.workspace[0]).resolve() if args.workspace else demo_workspace()
    args.workspace = [str(ws)]
    args.yes = True  # the user asked to run the demo workspace's own servers
    print(f"agent-ls demo: workspace {ws}\n")
    manager, settings = await _open(args)
    try:
        _print_diagnostics(settings)
        print("MCP servers:")
        for s in manager.status():
            print("  " + _status_line(s).replace("\n", "\n  "))
        tools = manager.tools()
        print(f"\nTools ({len(tools)}), as the agent sees them:")
        for t in tools:
            print(f"  {t.spec.name:<44} [{t.spec.capability.value:<7}] {t.server}: {t.spec.display_name}")
        print("\nCalling notes.add_note, then notes.search_notes:")
        first = await manager.call_tool("notes", "add_note", {"title": "hello", "body": "agent-ls demo note"})
        print(f"  add_note -> {first.content}")
        second = await manager.call_tool("notes", "search_notes", {"query": "demo"})
        print(f"  search_notes -> {second.content}")
        ok = not first.is_error and not second.is_error
        print("\nDemo " + ("finished: the host works." if ok else "FAILED (see above)."))
        return EXIT_OK if ok else EXIT_FAIL
    finally:
        await manager.close()


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agent-ls", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--log-level", default="WARNING", help="log level for stderr (default WARNING)")
    sub = parser.add_subparsers(dest="command")

    def common(p: argparse.ArgumentParser) -> None:
        p.add_argument("--workspace", "-w", action="append", help="workspace folder (repeatable)")
        p.add_argument("--wait", type=float, default=60.0, help="seconds to wait for servers (default 60)")
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

    p = sub.add_parser("chat", help="chat with the agent in the terminal")
    common(p)
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

    sub.add_parser("serve", help="serve the language server on stdio (the default)")
    sub.add_parser("acp", help="serve the Agent Client Protocol on stdio (Zed, JetBrains, Neovim, Emacs)")

    p = sub.add_parser("demo", help="run the first-run demo")
    common(p)
    p.set_defaults(func=cmd_demo)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    logging.basicConfig(level=getattr(logging, str(args.log_level).upper(), logging.WARNING),
                        stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
    from agent_ls.core.redact import RedactingFilter

    for handler in logging.getLogger().handlers:
        handler.addFilter(RedactingFilter())  # tokens never reach the terminal
    if args.command is None or args.command == "serve":
        return serve()
    if args.command == "acp":
        from agent_ls.acp import main as acp_main

        return acp_main()
    return asyncio.run(args.func(args))


def serve() -> int:
    """Serve LSP on stdio (what editors run). Nothing else may write to stdout."""
    from agent_ls.server.server import create_server

    create_server().start_io()
    return EXIT_OK


if __name__ == "__main__":
    sys.exit(main())
