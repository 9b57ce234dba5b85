"""The OS sandbox over LSP (issue 47; the real server over stdio, the scripted model, real
bubblewrap): ``bash`` cannot read the canary key or write outside the workspace, each result is
marked for the chat's card (``tool_call_finished``'s ``sandbox``), the network question reaches
the editor with once / session / always, "always" is kept as the user's grant, and the grants
are listed, added ("allow for this workspace") and revoked with ``agent/sandboxGrants`` and
``agent/setSandboxGrant``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_ls.core.sandbox import Mechanism, detect
from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor
from tests.sandbox.conftest import CANARY
from tests.sandbox.conftest import http_port as http_port  # the fixture

pytestmark = [pytest.mark.e2e,
              pytest.mark.skipif(detect().mechanism is not Mechanism.BUBBLEWRAP, reason="bubblewrap does not work here")]

# "localhost" stands for a remote host here: through the proxy, although the sandbox's loopback
# names skip it by default (a conversation's commands share a loopback where its servers listen)
FETCH = (f"{sys.executable} -c \"import os, urllib.request as u, sys; os.environ['no_proxy'] = ''; "
         "os.environ['NO_PROXY'] = ''; print(u.urlopen(sys.argv[1], timeout=5).read().decode())\"")


def sandboxed_home(setup: Setup) -> tuple[Path, Path]:
    """A fake home with the canary key, its own temp dir, and a folder outside everything writable."""
    home, tmp, outside = setup.root / "home", setup.root / "tmp", setup.root / "outside"
    for d in (home / ".ssh", tmp, outside):
        d.mkdir(parents=True)
    (home / ".ssh" / "id_ed25519").write_text(CANARY)
    setup.extra_env.update({"HOME": str(home), "TMPDIR": str(tmp)})
    setup.user_settings["agent"]["sandbox"] = {"autoAllow": True}
    return home, outside


def finished(editor: Editor) -> list[dict[str, Any]]:
    return [e["event"] for e in editor.events if e["event"]["type"] == "tool_call_finished"]


async def test_bash_is_contained_marked_and_the_network_always_answer_is_kept(setup: Setup, http_port: int) -> None:
    _home, outside = sandboxed_home(setup)
    url = f"http://localhost:{http_port}/"
    setup.llm.script(
        tool_calls([("bash", {"command": f"cat ~/.ssh/id_ed25519; touch {outside}/x"})]),
        tool_calls([("bash", {"command": f"{FETCH} {url}"})]),
        text("done"),
        tool_calls([("bash", {"command": f"touch {outside}/x && {FETCH} {url}"})]),
        text("again"),
    )
    editor = await open_editor(setup)
    try:
        async def answer(req: dict[str, Any]) -> dict[str, Any]:
            # the canary command names a protected path (it asks even with autoAllow): allowed
            # once, so the sandbox is what keeps the key; the host: always
            if req["tool"] == "sandbox_network":
                return {"answer": "allow_session", "scope": "always"}
            return {"answer": "allow_once"}

        editor.default_approval = answer  # type: ignore[assignment]
        result = await editor.request("agent/prompt", {"text": "go"}, timeout=90)
        assert result["stopReason"] == "end"
        first, second = finished(editor)
        assert CANARY not in first["content"] and "Read-only file system" in first["content"]
        assert not (outside / "x").exists()
        assert first["sandbox"]["mode"] == "sandboxed" and first["sandbox"]["mechanism"] == "bubblewrap"
        assert first["sandbox"]["network"] == "proxy" and first["sandbox"]["paths"] == [str(outside.resolve())]
        # the network question reached the editor with the three answers
        bash_asked, asked = editor.approvals
        assert bash_asked["tool"] == "bash" and "protected path" in bash_asked["reason"]
        assert asked["tool"] == "sandbox_network" and asked["arguments"] == {"host": "localhost"}
        assert [s["id"] for s in asked["scopes"]] == ["session", "always"]
        assert asked["scopes"][1]["label"] == "Always allow localhost in this workspace"
        assert "hello from the host" in second["content"] and not second["isError"]
        # "always" is the user's grant, kept outside the workspace; listed for the editor
        state = json.loads(setup.state_file.read_text())
        assert state["sandbox"][str(setup.ws.resolve())]["hosts"] == ["localhost"]
        grants = await editor.request(P.SANDBOX_GRANTS)
        assert grants["folders"] == [{"folder": str(setup.ws), "hosts": ["localhost"], "writes": []}]
        assert grants["enabled"] is True and grants["mechanism"] == "bubblewrap"
        assert grants["message"].startswith("commands run in an OS sandbox: bubblewrap")
        # "Allow for this workspace" on the refused place: the next command writes there, unasked
        grants = await editor.request(P.SET_SANDBOX_GRANT, {"kind": "writes", "value": first["sandbox"]["paths"][0],
                                                            "granted": True})
        assert grants["folders"][0]["writes"] == [str(outside.resolve())]
        editor.events.clear()
        result = await editor.request("agent/prompt", {"text": "again", "sessionId": result["sessionId"]}, timeout=90)
        [third] = finished(editor)
        assert (outside / "x").exists() and "hello from the host" in third["content"], third["content"]
        assert len(editor.approvals) == 2  # the kept host was not asked again
        # revoked: listed no more
        grants = await editor.request(P.SET_SANDBOX_GRANT, {"kind": "hosts", "value": "localhost", "granted": False})
        assert grants["folders"][0]["hosts"] == []
    finally:
        await close_editor(editor)
