"""Conformance client: the official MCP conformance suite drives agent-ls's own host code.

    scripts/run_conformance.sh .venv/bin/python scripts/conformance_client.py

The suite appends the test server's URL as the last argument and names the scenario in
``MCP_CONFORMANCE_SCENARIO``. The client configures one Streamable HTTP server entry with
that URL, starts it through :class:`agent_ls.mcp.manager.MCPManager` exactly as the editor
does (settings -> manager -> connection -> SDK), then does what the scenario asks:
``tools_call`` calls ``add_numbers``, the elicitation scenario calls its tool with an
elicitation handler that accepts with no content (the host fills the schema defaults),
``sse-retry`` calls ``test_reconnection``. Exit status 0 means the host did its part.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

import mcp_types as types  # noqa: E402

from agent_ls.config.settings import load_settings  # noqa: E402
from agent_ls.mcp.manager import MCPManager  # noqa: E402

SCENARIO_TOOLS = {
    "tools_call": ("add_numbers", {"a": 2, "b": 3}),
    "elicitation-sep1034-client-defaults": ("test_client_elicitation_defaults", {}),
    "sse-retry": ("test_reconnection", {}),
}


async def accept_with_defaults(server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
    # A user who submits the form without touching it: the host must apply the defaults.
    return types.ElicitResult(action="accept", content={})


async def run(url: str, scenario: str) -> int:
    with tempfile.TemporaryDirectory() as d:
        user = Path(d) / "settings.json"
        user.write_text(json.dumps({"mcpServers": {"conformance": {"type": "http", "url": url,
                                                                   "connectTimeout": 20}}}))
        settings = load_settings([], user_settings=user)
        manager = MCPManager(roots=[Path(d)], elicitation_handler=accept_with_defaults)
        await manager.apply(settings)
        await manager.wait_ready(25)
        try:
            status = manager.status()[0]
            if status.state != "connected":
                print(f"server did not connect: {status.state} {status.error}", file=sys.stderr)
                return 1
            names = [t.spec.display_name for t in manager.tools()]
            print(f"connected; tools: {names}", file=sys.stderr)
            todo = SCENARIO_TOOLS.get(scenario)
            if todo is None and names and scenario not in ("initialize",):
                todo = (names[0], {})
            if todo is not None:
                tool, args = todo
                result = await manager.call_tool("conformance", tool, args)
                print(f"{tool} -> error={result.is_error} {result.content[:500]}", file=sys.stderr)
                if result.is_error and scenario in SCENARIO_TOOLS:
                    return 1
            return 0
        finally:
            await manager.close()


def main() -> int:
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    if len(sys.argv) < 2:
        print("usage: conformance_client.py SERVER_URL", file=sys.stderr)
        return 2
    return asyncio.run(run(sys.argv[-1], os.environ.get("MCP_CONFORMANCE_SCENARIO", "")))


if __name__ == "__main__":
    sys.exit(main())
