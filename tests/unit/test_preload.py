"""The early import of what the first mcp/status needs (agent_ls/server/preload.py): it loads
the settings and preview modules in a daemon thread, and never the MCP SDK or litellm (those
stay after initialize)."""

from __future__ import annotations

import json
import subprocess
import sys

CHECK = """
import json, sys
from agent_ls.server import preload
thread = preload.start()
thread.join(60)
print(json.dumps({"daemon": thread.daemon, "alive": thread.is_alive(),
                  "loaded": [m in sys.modules for m in preload.FIRST_STATUS_MODULES],
                  "heavy": [m for m in ("mcp", "litellm", "pydantic") if m in sys.modules]}))
"""


def test_preload_imports_the_first_status_modules_and_nothing_heavy() -> None:
    out = subprocess.run([sys.executable, "-c", CHECK], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    got = json.loads(out.stdout)
    assert got["daemon"] and not got["alive"]
    assert all(got["loaded"]), got
    assert got["heavy"] == [], f"preload must not import {got['heavy']}: they belong after initialize"
