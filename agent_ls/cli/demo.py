"""``agent-ls demo``: the first-run demo on the workspace in ``demo/``."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent_ls.cli.common import EXIT_FAIL, EXIT_OK, EXIT_USAGE, print_diagnostics, status_line
from agent_ls.cli.host import open_host


def demo_workspace() -> Path:
    return Path(__file__).resolve().parents[2] / "demo"


async def cmd_demo(args: argparse.Namespace) -> int:
    """The first-run demo: the demo workspace's servers connect, tools are listed, one call runs."""
    ws = Path(args.workspace[0]).resolve() if args.workspace else demo_workspace()
    if not ws.is_dir():
        # an installed wheel has no demo/: it ships with the source repository
        print(f"error: no demo workspace at {ws} (it ships with the agent-ls source repository, in demo/); "
              "pass --workspace DIR", file=sys.stderr)
        return EXIT_USAGE
    args.workspace = [str(ws)]
    args.yes = True  # the user asked to run the demo workspace's own servers
    print(f"agent-ls demo: workspace {ws}\n")
    manager, settings = await open_host(args)
    try:
        print_diagnostics(settings)
        print("MCP servers:")
        for s in manager.status():
            print("  " + status_line(s).replace("\n", "\n  "))
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
