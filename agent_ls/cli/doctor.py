"""``agent-ls doctor`` (the model and its key, the OS sandbox, then every server) and
``agent-ls mcp doctor``: why a server does not work: the settings files and their problems,
each server's resolved command line, environment (configured values hidden), PATH lookup, OAuth
state, the phase that failed and the tail of its stderr."""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import subprocess
from typing import TYPE_CHECKING

from agent_ls.cli.common import EXIT_FAIL, EXIT_OK, auth_text
from agent_ls.cli.host import open_host
from agent_ls.core.redact import MASK, redact
from agent_ls.mcp.connection.transports import child_environment, resolve_command
from agent_ls.mcp.host import oauth_store_path
from agent_ls.mcp.oauth.store import OAuthStore

if TYPE_CHECKING:
    from agent_ls.config.entries import ServerConfig
    from agent_ls.config.sandbox import SandboxSettings


PROGRAM_NAME = re.compile(r"[A-Za-z0-9_][A-Za-z0-9._+-]*")
"""What the login shell is asked to look up: a plain program name and nothing else."""


def _login_shell_lookup(command: str) -> str | None:
    """Where your login shell finds ``command`` (a plain program name only: the name comes from
    a settings file, and the shell must never run any of it)."""
    if not PROGRAM_NAME.fullmatch(command):
        return None
    shell = os.environ.get("SHELL", "/bin/bash")
    try:
        out = subprocess.run([shell, "-lc", f"command -v {shlex.quote(command)}"], capture_output=True, text=True,
                             timeout=5, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = out.stdout.strip().splitlines()
    return found[-1] if out.returncode == 0 and found else None


def _doctor_config(cfg: ServerConfig, awaiting_trust: bool) -> list[str]:
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
        lines.append(f"  sandbox: {'on' if cfg.sandbox is not None else 'off'}"
                     + (f" ({cfg.sandbox.network.describe()})" if cfg.sandbox is not None else ""))
        if resolved:
            lines.append(f"  command: {cfg.command} -> {resolved}")
        else:
            lines.append(f"  command: {cfg.command!r} NOT FOUND on PATH={path_var}")
            # Not for an entry you have not trusted: nothing of it may run, not even in a lookup.
            if cfg.command and os.sep not in cfg.command and not (awaiting_trust or cfg.restricted):
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
    manager, settings = await open_host(args)
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
                print("\n".join(_doctor_config(cfg, awaiting_trust=s.state == "awaiting-trust")))
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
            auth = auth_text(s.auth)
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


def sandbox_lines(box: SandboxSettings, roots: list[str]) -> list[str]:
    """The OS sandbox's state: the mechanism (or why none), and what it allows (issue 47)."""
    from agent_ls.core.sandbox import detect

    if not box.enabled:
        return ["Sandbox: off (agent.sandbox.enabled is false): every command runs with your full rights "
                "(and asks as the permission rules say)"]
    found = detect()
    lines = [f"Sandbox: {found.sentence()}"]
    for note in found.notes:
        lines.append(f"  passed over: {note}")
    if found.available:
        policy = box.policy(roots)
        lines += [f"  writable: {', '.join(policy.writable)}",
                  f"  unreadable: {', '.join(policy.deny_read)}",
                  f"  network: {policy.network.describe()}",
                  f"  autoAllow: {'on' if box.auto_allow else 'off'}"
                  + (" (no effect under Landlock)" if box.auto_allow and found.mechanism.value == "landlock" else "")]
        lines += grant_lines(roots)
    return lines


def grant_lines(roots: list[str]) -> list[str]:
    """Your workspace grants (kept in host-state.json, outside the workspace), each with how to undo it."""
    from pathlib import Path

    from agent_ls.config.sandbox import workspace_grants

    found = workspace_grants([Path(r) for r in roots])
    if not found.hosts and not found.writes:
        return ["  your grants for this workspace: none"]
    out = ["  your grants for this workspace (undo: Agent: Sandbox Permissions in VS Code, or "
           "agent/setSandboxGrant):"]
    out += [f"    writable: {w}" for w in found.writes]
    out += [f"    host: {h}" for h in found.hosts]
    return out


async def cmd_overview(args: argparse.Namespace) -> int:
    """``agent-ls doctor``: the whole setup: the model and its key, the sandbox, then every server
    (``agent-ls mcp doctor``)."""
    from agent_ls.agent.config import agent_settings
    from agent_ls.cli.host import settle
    from agent_ls.runtime.model_library import credentials_problem

    host, _ = await settle(args)
    assert host.settings is not None
    agent = agent_settings(host.settings)
    llm = agent.llm_config()
    status = EXIT_OK
    if llm is None:
        print("Model: none configured (set \"model\" in the settings or AGENT_LS_MODEL)")
    else:
        problem = credentials_problem(llm)
        if problem is None:
            key = "key: found" if not llm.api_base else f"endpoint {llm.api_base}"
        else:
            key, status = f"key: MISSING: {problem}", EXIT_FAIL
        print(f"Model: {llm.model} ({key})")
    roots = [str(w) for w in (args.workspace or [os.getcwd()])]
    print("\n".join(sandbox_lines(agent.sandbox, roots)))
    print()
    args.server = None
    servers = await cmd_doctor(args)
    return status if status != EXIT_OK else servers
