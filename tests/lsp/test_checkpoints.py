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
        # a rewind is the user's action: the model is offered no tool that rewinds or restores
        offered = {t["function"]["name"] for r in setup.llm.requests for t in r.body.get("tools") or []}
        assert "bash" in offered and not {n for n in offered if any(w in n for w in ("rewind", "checkpoint", "redo"))}

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

        # the redo's plan first (the editor shows it before the user confirms): nothing changes yet
        plan = await ed.request(P.REDO, {"sessionId": sid, "preview": True})
        assert plan["done"] is False and plan["conversation"] is True  # the rewind took the conversation
        assert {(a["path"].rsplit("/", 1)[-1], a["action"]) for a in plan["actions"]} == {
            ("made.txt", "recreate"), ("old.txt", "delete")}
        assert not (setup.ws / "made.txt").exists() and (setup.ws / "old.txt").exists()
        redone = await ed.request(P.REDO, {"sessionId": sid})
        assert redone["done"] is True and (setup.ws / "made.txt").exists()
        assert redone["actions"] == plan["actions"] and redone["conversation"] is True
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


async def test_the_rewind_preview_flags_protected_files(setup: Setup) -> None:
    """Issue 40 item 4: the plan the editor shows names why a file is protected (here the agent
    wrote ``.vscode/tasks.json``, the user allowing it once); an ordinary file has no flag."""
    ed = await open_editor(setup)
    ed.default_approval = "allow_once"
    try:
        setup.llm.script(tool_calls([("write_file", {"path": ".vscode/tasks.json", "content": "{}\n"}),
                                     ("write_file", {"path": "plain.txt", "content": "x\n"})]), text("done"))
        sid = (await ed.request(P.PROMPT, {"text": "make tasks"}))["sessionId"]
        assert (setup.ws / ".vscode" / "tasks.json").exists()
        found = (await ed.request(P.CHECKPOINTS, {"sessionId": sid}))["checkpoints"]
        preview = await ed.request(P.REWIND, {"checkpointId": found[0]["id"], "preview": True})
        flags = {a["path"].rsplit("/", 1)[-1]: a.get("protected") for a in preview["actions"]}
        assert "VS Code runs tasks" in (flags["tasks.json"] or "")
        assert flags["plain.txt"] is None
        await ed.request(P.REWIND, {"checkpointId": found[0]["id"], "conversation": False})
        assert not (setup.ws / ".vscode" / "tasks.json").exists()  # restored (to nothing) like any file
    finally:
        await close_editor(ed)
