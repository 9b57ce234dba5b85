"""What `agent-ls acp` has loaded when its first prompt's model request goes out (issue 46): the
ACP SDK's schema imported light (its models built at first use, most never), no litellm (the
requests go to the shared model host), no MCP SDK without a server configured.

The agent process gets a ``sitecustomize`` (on its ``PYTHONPATH``) with a thread that, once the
test creates a trigger file, writes the process's modules and the schema's models not built yet.
The test creates it while the model holds the first request open: what is loaded by then is a
matter of order, never of timing."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from pathlib import Path
from typing import Any

import pytest
from acp import text_block

from tests.acp.conftest import AcpSetup, start_agent
from tests.harness import wait_for
from tests.llm.scripted_server import hang
from tests.tooling import REPO_ROOT

pytestmark = pytest.mark.e2e

PROBE = '''
import json, os, sys, threading, time

_trigger = os.environ.pop("AGENT_LS_TEST_LOADED_AT", None)  # (not inherited by the agent's children)


def _write():
    while not os.path.exists(_trigger):
        time.sleep(0.02)
    schema = sys.modules.get("acp.schema")
    models = [c for c in vars(schema).values() if isinstance(c, type) and hasattr(c, "__pydantic_complete__")
              and c.__module__ == "acp.schema"] if schema is not None else []
    with open(_trigger + ".json.part", "w") as f:
        json.dump({"modules": sorted(sys.modules), "models": len(models),
                   "unbuilt": sorted(c.__name__ for c in models if not c.__pydantic_complete__)}, f)
    os.replace(_trigger + ".json.part", _trigger + ".json")


if _trigger:
    threading.Thread(target=_write, daemon=True).start()
'''


class ProbedSetup(AcpSetup):
    def __init__(self, root: Path, llm: Any) -> None:
        super().__init__(root, llm)
        self.probe = root / "probe"
        self.probe.mkdir()
        (self.probe / "sitecustomize.py").write_text(PROBE)
        self.trigger = root / "loaded"

    def env(self) -> dict[str, str]:
        e = super().env()
        e.update({"PYTHONPATH": f"{self.probe}{os.pathsep}{REPO_ROOT}", "AGENT_LS_TEST_LOADED_AT": str(self.trigger)})
        return e


async def test_at_the_first_model_request_the_schema_is_light_and_litellm_and_mcp_are_not_loaded(
        tmp_path: Path, llm_server: Any) -> None:
    llm_server.clear()
    probed = ProbedSetup(tmp_path, llm_server)
    probed.write()
    async with start_agent(probed) as (conn, _proc, _client):
        sid = (await asyncio.wait_for(conn.new_session(cwd=str(probed.ws), mcp_servers=[]), 60)).session_id
        llm_server.script(hang())
        turn = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("hi")]))
        try:
            await wait_for(lambda: llm_server.requests, 300, what="the first model request")  # (a cold model host)
            probed.trigger.touch()
            out = probed.trigger.with_name("loaded.json")
            await wait_for(out.exists, what="the probe's list")
            loaded = json.loads(out.read_text())
        finally:
            await conn.cancel(session_id=sid)
            with contextlib.suppress(Exception):
                await asyncio.wait_for(turn, 30)
            llm_server.clear()
    modules = set(loaded["modules"])
    assert "acp.schema" in modules and "agent_ls.acp.session" in modules
    # the schema came in light: most models are still unbuilt when the first request goes out
    assert loaded["models"] > 200 and len(loaded["unbuilt"]) > loaded["models"] / 2, loaded["unbuilt"]
    assert "ForkSessionRequest" in loaded["unbuilt"]
    assert not {m for m in modules if m.split(".")[0] in ("litellm", "mcp", "openai")}
