"""What the ``agent-ls`` commands share: exit codes, the workspace folders of a command, how a
server's status reads on the terminal, and reading a line from the terminal."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_ls.config.settings import LoadedSettings
    from agent_ls.mcp.status import ServerStatus

EXIT_OK = 0
EXIT_FAIL = 1
EXIT_USAGE = 2


def workspace_folders(args: argparse.Namespace) -> list[Path]:
    return [Path(p).resolve() for p in (args.workspace or [os.getcwd()])]


def auth_text(auth: dict[str, Any] | None) -> str | None:
    if not auth:
        return None
    text = str(auth["state"])
    if "expiresAt" in auth:
        when = time.strftime("%Y-%m-%d %H:%M", time.localtime(auth["expiresAt"]))
        text += f", token expires {when}"
    if auth.get("reason"):
        text += f": {auth['reason']}"
    return text


def status_line(s: ServerStatus) -> str:
    line = f"{s.name:<20} {s.state:<26} {s.transport:<6} tools={s.tool_count:<4} ({s.scope}: {s.source})"
    auth = auth_text(s.auth)
    if auth:
        line += f"\n    auth: {auth}"
    if s.error:
        line += f"\n    error [{s.error['phase']}]: {s.error['message']}"
    if s.auth and s.auth.get("state") in ("needs-sign-in", "failed"):
        line += f"\n    sign in with: agent-ls mcp login {s.name}"
    return line



def print_diagnostics(settings: LoadedSettings) -> None:
    for d in settings.diagnostics:
        print(str(d), file=sys.stderr)



async def read_line(prompt: str) -> str | None:
    print(prompt, end="", file=sys.stderr, flush=True)
    line = await asyncio.to_thread(sys.stdin.readline)
    return line.rstrip("\n") if line else None
