"""Checkpoints and rewind over LSP (issue 40 through the runtime's conversations, issue 39):
``agent/checkpoints`` lists the checkpoint taken before each prompt with what its turn changed
(here a shell command), ``agent/rewind`` previews then restores files and conversation, and
``agent/redo`` undoes it; bad ids and a busy session are clear errors."""

from __future__ import annotations

import pytest
from pygls.exceptions import JsonRpcException

from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Setup, close_editor, open_editor

pytestmark = pytest.mark.e2e


async def test_rewind_over_lsp_restores_a_turns_shell_changes_and_its_messages(setup: Setup) -> None:
    setup.user_settings["permissions"] = {"allow": ["bash"]}
    (setup.ws / "old.txt").write_text("old\n")
    ed = await open_editor(setup)
    try:
        setup.llm.script(text("hi"), tool_calls([("bash", {"command": "echo x > made.txt && rm old.txt"})]),
                         text("done"))
        sid = (await ed.request(P.PROMPT, {"text": "say hi"}))["sessionId"]
        await ed.request(P.PROMPT, {"text": "change things", "sessionId": sid})
        assert (setup.ws / "made.txt").exists() and not (setup.ws / "old.txt").exists()
        found = (await ed.request(P.CHECKPOINTS, {"sessionId": sid}))["checkpoints"]
        assert [c["promptIndex"] for c in found] == [0, 1]
        second = found[1]
        assert sorted(p.rsplit("/", 1)[-1] for p in second["changed"]) == ["made.txt", "old.txt"]
        assert second["prompt"] == "change things" and second["finished"] is not None

        preview = await ed.request(P.REWIND, {"checkpointId": second["id"], "preview": True})
        assert preview["done"] is False
        assert {(a["path"].rsplit("/", 1)[-1], a["action"]) for a in preview["actions"]} == {
            ("made.txt", "delete"), ("old.txt", "recreate")}
        assert (setup.ws / "made.txt").exists()  # a preview changes nothing

        done = await ed.request(P.REWIND, {"checkpointId": second["id"]})
        assert done["done"] is True and done["conversation"] is True
        assert (setup.ws / "old.txt").read_text() == "old\n" and not (setup.ws / "made.txt").exists()
        resumed = await ed.request(P.SESSIONS_RESUME, {"sessionId": sid})
        assert [m["content"] for m in resumed["messages"] if m["role"] == "user"] == ["say hi"]

        redone = await ed.request(P.REDO, {"sessionId": sid})
        assert redone["done"] is True and (setup.ws / "made.txt").exists()
        resumed = await ed.request(P.SESSIONS_RESUME, {"sessionId": sid})
        assert [m["content"] for m in resumed["messages"] if m["role"] == "user"] == ["say hi", "change things"]

        with pytest.raises(JsonRpcException, match="nope") as err:
            await ed.request(P.REWIND, {"checkpointId": "nope"})
        assert err.value.code == P.REQUEST_FAILED
        with pytest.raises(JsonRpcException) as err:
            await ed.request(P.REDO, {"sessionId": sid})  # nothing left to redo
        assert err.value.code == P.REQUEST_FAILED
    finally:
        await close_editor(ed)
