"""The OS sandbox over ACP (issue 47; ``agent-ls acp`` as a real process, the scripted model, real
bubblewrap): ``bash`` cannot read the canary key or write outside the workspace, and the
network question reaches the client's ``session/request_permission`` with allow once / for the
session / always; "always" is kept as the user's grant and a later command is not asked again."""

from __future__ import annotations

import json
import sys
from typing import Any

import pytest
from acp import text_block

from agent_ls.core.sandbox import Mechanism, detect
from tests.acp.conftest import AcpSetup, start_agent
from tests.llm.scripted_server import text, tool_calls
from tests.sandbox.conftest import CANARY
from tests.sandbox.conftest import http_port as http_port  # the fixture

pytestmark = pytest.mark.skipif(detect().mechanism is not Mechanism.BUBBLEWRAP, reason="bubblewrap does not work here")

# "localhost" stands for a remote host here: through the proxy, although the sandbox's loopback
# names skip it by default (a conversation's commands share a loopback where its servers listen)
FETCH = (f"{sys.executable} -c \"import os, urllib.request as u, sys; os.environ['no_proxy'] = ''; "
         "os.environ['NO_PROXY'] = ''; print(u.urlopen(sys.argv[1], timeout=5).read().decode())\"")


def tool_results(body: dict[str, Any]) -> list[str]:
    return [m["content"] for m in body["messages"] if m["role"] == "tool"]


async def test_bash_is_contained_and_the_network_question_offers_always(setup: AcpSetup, http_port: int,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    home, tmp, outside = setup.root / "home", setup.root / "tmp", setup.root / "outside"
    for d in (home / ".ssh", tmp, outside):
        d.mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(CANARY)
    monkeypatch.setenv("HOME", str(home))  # the agent's environment (setup.env() copies this one's)
    monkeypatch.setenv("TMPDIR", str(tmp))
    setup.user_settings["agent"]["sandbox"] = {"autoAllow": True}
    setup.write()
    url = f"http://localhost:{http_port}/"
    async with start_agent(setup) as (conn, _proc, client):
        # the canary command names a protected path (it asks even with autoAllow): allowed once,
        # so the sandbox is what keeps the key; then the host: always
        client.permission_answers = ["allow_once", "allow_always:always"]
        client.default_answer = "reject_once"
        sid = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        setup.llm.script(
            tool_calls([("bash", {"command": f"cat ~/.ssh/id_ed25519; touch {outside}/x"}, "call_1")]),
            tool_calls([("bash", {"command": f"{FETCH} {url}"}, "call_2")]),
            text("done"),
        )
        await conn.prompt(session_id=sid, prompt=[text_block("go")])
        first, second = tool_results(setup.llm.requests[-1].body)
        assert CANARY not in first and "Read-only file system" in first and not (outside / "x").exists()
        assert "hello from the host" in second
        network = client.permission_requests[1]
        names = {o.option_id: o.name for o in network["options"]}
        assert names["allow_once"] == "Allow once"
        assert names["allow_always"] == "Allow localhost for this session"
        assert names["allow_always:always"] == "Always allow localhost in this workspace"
        state = json.loads((setup.data / "host-state.json").read_text())
        assert state["sandbox"][str(setup.ws.resolve())]["hosts"] == ["localhost"]
        # a new session: the kept host goes through unasked
        sid2 = (await conn.new_session(cwd=str(setup.ws), mcp_servers=[])).session_id
        setup.llm.script(tool_calls([("bash", {"command": f"{FETCH} {url}"}, "call_3")]), text("again"))
        await conn.prompt(session_id=sid2, prompt=[text_block("again")])
        assert "hello from the host" in tool_results(setup.llm.requests[-1].body)[-1]
        assert len(client.permission_requests) == 2
