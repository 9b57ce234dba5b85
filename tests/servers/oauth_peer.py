"""A second agent-ls host process for the OAuth tests: an ``MCPManager`` on the same OAuth
store as the test's own, like a second editor window or the terminal chat.

    python tests/servers/oauth_peer.py --store DIR --settings FILE --workspace DIR

It connects (never opening a browser), prints ``READY <state>`` and then answers one line per
command read from stdin: ``call <server> <tool> <json args>`` prints the result as JSON
(``{"isError": ..., "content": ...}``), ``status <server>`` prints the server's status as JSON,
``quit`` (or the end of stdin) closes the manager and exits. Logs go to stderr.
"""

from __future__ import annotations

import gc

if __name__ == "__main__":  # a server process: no collection during the imports (see the end of the file)
    gc.disable()

import argparse
import asyncio
import json
import logging
import sys
from pathlib import Path

from agent_ls.config.settings import load_settings
from agent_ls.mcp.manager import MCPManager
from agent_ls.mcp.oauth.store import OAuthStore


async def refuse(server: str, url: str) -> None:
    raise RuntimeError(f"the peer process does not open browsers ({server})")


def say(line: str) -> None:
    sys.stdout.write(line + "\n")
    sys.stdout.flush()


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--store", type=Path, required=True)
    ap.add_argument("--settings", type=Path, required=True)
    ap.add_argument("--workspace", type=Path, required=True)
    args = ap.parse_args()
    logging.basicConfig(level=logging.INFO, stream=sys.stderr)
    manager = MCPManager(roots=[args.workspace], auth_opener=refuse, oauth_store=OAuthStore(args.store))
    await manager.apply(load_settings([args.workspace], user_settings=args.settings))
    await manager.wait_ready(30)
    say("READY " + " ".join(f"{s.name}={s.state}" for s in manager.status()))
    loop = asyncio.get_running_loop()
    try:
        while True:
            line = (await loop.run_in_executor(None, sys.stdin.readline)).strip()
            if not line or line == "quit":
                break
            cmd, _, rest = line.partition(" ")
            if cmd == "call":
                server, tool, raw = rest.split(" ", 2)
                res = await manager.call_tool(server, tool, json.loads(raw))
                say(json.dumps({"isError": res.is_error, "content": res.content}))
            elif cmd == "status":
                s = next(s for s in manager.status() if s.name == rest)
                say(json.dumps({"state": s.state, "auth": s.auth}))
            else:
                say(json.dumps({"error": f"unknown command {cmd}"}))
    finally:
        await manager.close()


if __name__ == "__main__":
    gc.freeze()  # the imports' long-lived objects: never walked again, by a collection nor at exit
    gc.enable()
    asyncio.run(main())
