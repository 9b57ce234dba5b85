"""`agent-ls acp` driven by the official TypeScript SDK (@agentclientprotocol/sdk 2.4.x) as the
client (tests/acp/ts_client.mjs, run on Node 22 from .tools): titles, config options and the
terminal as a second implementation of the protocol sees them on the wire."""

from __future__ import annotations

import asyncio
import json
import os

import pytest

from tests.acp.conftest import AGENT_COMMAND, AcpSetup
from tests.llm.scripted_server import text, tool_calls
from tests.tooling import TOOLS, _missing, require_node22

pytestmark = pytest.mark.e2e

SDK = TOOLS / "npm" / "node_modules" / "@agentclientprotocol" / "sdk"
SCRIPT = os.path.join(os.path.dirname(__file__), "ts_client.mjs")


async def test_typescript_sdk_client_sees_titles_options_and_terminal(setup: AcpSetup) -> None:
    node = require_node22()
    if not (SDK / "package.json").is_file():
        _missing(f"the npm package @agentclientprotocol/sdk ({SDK})")
    setup.user_settings["models"] = ["openai/second-model"]
    # the client's terminal runs bash only while the OS sandbox is off (tests/acp/test_terminal.py)
    setup.user_settings.setdefault("agent", {})["sandbox"] = {"enabled": False}
    setup.write()
    setup.llm.script(tool_calls([("bash", {"command": "echo from-ts-terminal"}, "call_ts")]), text("All green."))
    env = setup.env() | {"ACP_SDK": str(SDK), "AGENT_CMD": json.dumps(AGENT_COMMAND), "WORKSPACE": str(setup.ws)}
    with open(setup.stderr_file, "ab") as err:  # noqa: ASYNC230 (a local file, opened once)
        proc = await asyncio.create_subprocess_exec(str(node), SCRIPT, env=env, cwd=setup.ws,
                                                    stdout=asyncio.subprocess.PIPE, stderr=err)
        stdout, _ = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, setup.stderr_text()[-3000:]
    out = json.loads(stdout.decode().strip().splitlines()[-1])
    assert "error" not in out, out["error"]

    # config options: the model select, the choice applied to the next request
    [option] = out["configOptions"]
    assert {k: option[k] for k in ("id", "type", "category", "currentValue")} == {
        "id": "model", "type": "select", "category": "model", "currentValue": "openai/scripted"}
    assert [o["value"] for o in option["options"]] == ["openai/scripted", "openai/second-model"]
    assert out["setAnswer"]["configOptions"][0]["currentValue"] == "openai/second-model"
    assert out["badValue"]["code"] == -32602 and "unknown model" in out["badValue"]["data"]["details"]
    assert out["prompt"] == {"stopReason": "end_turn"}
    assert {r.body["model"] for r in setup.llm.requests} == {"second-model"}

    # the terminal: approved, created, waited for, read, released; embedded in the tool call
    log = out["terminalLog"]
    assert [e[0] for e in log] == ["permission", "create", "wait", "output", "release"]
    assert log[1][1:] == ["bash", ["-c", "echo from-ts-terminal"], str(setup.ws.resolve())]
    calls = [u for u in out["updates"] if u.get("toolCallId") == "call_ts"]
    embedded = [c for u in calls for c in u.get("content") or [] if c["type"] == "terminal"]
    assert embedded and {c["terminalId"] for c in embedded} == {log[2][1]}
    assert calls[-1]["status"] == "completed" and "from-ts-terminal" in calls[-1]["rawOutput"]["output"]

    # the title, and session/list without cwd
    info = [u for u in out["updates"] if u["sessionUpdate"] == "session_info_update"]
    assert info[0]["title"] == "Run the tests in the terminal" and info[0]["updatedAt"]
    assert [(s["sessionId"], s["title"], s["cwd"]) for s in out["list"]["sessions"]] == [
        (out["sessionId"], "Run the tests in the terminal", str(setup.ws.resolve()))]
