"""The MCP servers of scripts/bench_agent.py: the real servers it lists (npm reference servers with
placeholder credentials, mcp-server-time, the knob test server), connecting them through the
MCP host, and a fixed tool layer over a subset of their tools.

Imported by bench_agent.py (a sibling on sys.path when it runs as a script), after it has put the
repository on sys.path.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from agent_ls.config.settings import load_settings
from agent_ls.core.tools import Tool
from agent_ls.mcp.manager import MCPManager

REPO = Path(__file__).resolve().parent.parent
KNOB = REPO / "tests" / "servers" / "knob_server.py"
NPM_BIN = Path(os.environ.get("AGENT_LS_NPM_BIN", REPO / ".tools" / "npm" / "node_modules" / ".bin"))

# Placeholder credentials: the servers check that the variable is set, and are only listed.
PLACEHOLDER = "placeholder-no-network"
NPM_SERVERS: dict[str, tuple[str, list[str], dict[str, str]]] = {
    "brave-search": ("mcp-server-brave-search", [], {"BRAVE_API_KEY": PLACEHOLDER}),
    "everything": ("mcp-server-everything", ["stdio"], {}),
    "filesystem": ("mcp-server-filesystem", [], {}),
    "github": ("mcp-server-github", [], {"GITHUB_PERSONAL_ACCESS_TOKEN": PLACEHOLDER}),
    "gitlab": ("mcp-server-gitlab", [], {"GITLAB_PERSONAL_ACCESS_TOKEN": PLACEHOLDER}),
    "google-maps": ("mcp-server-google-maps", [], {"GOOGLE_MAPS_API_KEY": PLACEHOLDER}),
    "memory": ("mcp-server-memory", [], {"MEMORY_FILE_PATH": "${workspaceFolder}/memory.jsonl"}),
    "sequential-thinking": ("mcp-server-sequential-thinking", [], {}),
    "slack": ("mcp-server-slack", [], {"SLACK_BOT_TOKEN": PLACEHOLDER, "SLACK_TEAM_ID": "T0000000"}),
}


def real_server_entries() -> dict[str, dict[str, Any]]:
    entries: dict[str, dict[str, Any]] = {}
    for name, (binary, args, env) in NPM_SERVERS.items():
        path = NPM_BIN / binary
        if not path.exists():
            raise SystemExit(f"{path} is missing: run bash scripts/setup.sh (it installs the npm MCP servers)")
        entries[name] = {"command": str(path), "args": args, "env": env, "connectTimeout": 90}
    time_server = shutil.which("mcp-server-time") or str(Path(sys.executable).with_name("mcp-server-time"))
    if not Path(time_server).exists():
        raise SystemExit("mcp-server-time is missing: pip install -e '.[dev]' (scripts/setup.sh does it)")
    entries["time"] = {"command": time_server, "args": []}
    entries["knob"] = {"command": sys.executable, "args": [str(KNOB)]}
    return entries


async def connect(entries: dict[str, dict[str, Any]], tmp: Path, ws: Path) -> MCPManager:
    user = tmp / f"user-{len(entries)}-{time.monotonic_ns()}.json"
    user.write_text(json.dumps({"mcpServers": entries}))
    manager = MCPManager(roots=[ws])
    await manager.apply(load_settings([ws], user_settings=user))
    await manager.wait_ready(120)
    for s in manager.status():
        if s.state != "connected":
            await manager.close()
            raise SystemExit(f"server {s.name} did not connect: {s.state} {s.error}")
    return manager


class StaticSource:
    """A fixed MCP tool layer (a subset of the manager's tools) for the registry."""

    def __init__(self, tools: Sequence[Tool]) -> None:
        self._tools = list(tools)

    async def refresh_if_dirty(self) -> bool:
        return False

    def tools(self) -> list[Tool]:
        return self._tools

    def instructions(self) -> str:
        return ""


def server_of(tool: Tool) -> str:
    return tool.spec.server or "?"

