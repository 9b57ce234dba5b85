"""Review of the agent's file changes in the editor (issue 16, item 3), through the real server.

A client with ``experimental.agentLs.reviewEdits`` gets ``agent/reviewEdit`` for every change
before it is applied: ``accept`` (the user accepted it: then ``workspace/applyEdit``),
``reject`` (nothing is applied; the model is told, with the user's reason) or ``deferred``
(applied at once; the user keeps or reverts it later, ``agent/changeOutcome``). Each outcome
is a ``file_change`` event (the chat's file card) and a record in the session database, so a
resumed session lists its changes with their outcome and ``agent/changeContent`` still has the
texts for a diff.

The editor is the test editor of test_editor_files.py: real buffers, versioned edits, syncs.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_ls.server.protocol import methods as P
from tests.harness import happens_before_end
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor
from tests.lsp.test_editor_files import FULL_EDITS, Buffers, results, start

pytestmark = pytest.mark.e2e

REVIEWS = {"agentLs": {P.REVIEW_CAPABILITY: True}}


async def start_reviewing(setup: Setup) -> tuple[Editor, Buffers]:
    """The test editor of test_editor_files.py, advertising ``reviewEdits``."""
    holder: list[Buffers] = []

    def configure(ed: Editor) -> None:
        ed.experimental = REVIEWS
        ed.workspace_edit = FULL_EDITS
        buffers = Buffers(ed)
        ed.apply_answer = buffers.apply
        holder.append(buffers)

    ed = await open_editor(setup, configure=configure)
    return ed, holder[0]


@pytest.fixture
async def reviewer(setup: Setup) -> AsyncIterator[tuple[Editor, Buffers]]:
    ed, buffers = await start_reviewing(setup)
    yield ed, buffers
    await close_editor(ed)


def file_changes(ed: Editor) -> list[dict[str, Any]]:
    return [e for e in ed.session_events() if e["type"] == "file_change"]


def unsaved_file(setup: Setup, buffers: Buffers, name: str = "calc.py") -> tuple[Path, str, str]:
    """A file open with an unsaved change of the user's: (path, uri, the buffer's text)."""
    path = setup.ws / name
    on_disk = "def f():\n    return 1\n"
    path.write_text(on_disk)
    uri = buffers.open(path, on_disk)
    typed = on_disk + "# the user's unsaved note\n"
    buffers.type(uri, typed)
    return path, uri, typed


EDIT = ("edit_file", {"path": "calc.py", "old_string": "return 1", "new_string": "value = 2\n    return value"})
AFTER = "def f():\n    value = 2\n    return value\n# the user's unsaved note\n"


async def test_deferred_review_applies_at_once_and_records_the_outcome(
        reviewer: tuple[Editor, Buffers], setup: Setup) -> None:
    ed, buffers = reviewer
    path, uri, typed = unsaved_file(setup, buffers)
    setup.llm.script(tool_calls([EDIT]), text("done"))
    result = await ed.request("agent/prompt", {"text": "change it"})
    session_id = result["sessionId"]

    [review] = ed.reviews
    assert review["before"] == typed and review["after"] == AFTER  # the buffer, unsaved change included
    assert (review["path"], review["uri"], review["added"], review["removed"], review["created"]) == (
        "calc.py", path.resolve().as_uri(), 2, 1, False)
    assert review["sessionId"] == session_id and review["turn"] == 1
    # the approval says the change goes to the review (a client reviewing before apply may answer at once)
    assert [(a["tool"], a["reviewedEdit"]) for a in ed.approvals] == [("edit_file", True)]
    tool_call = [e for e in ed.session_events() if e["type"] == "tool_call_started"][0]
    assert review["callId"] == tool_call["callId"]

    assert len(ed.applied_edits) == 1 and buffers.text(uri) == AFTER
    assert path.read_text() == "def f():\n    return 1\n"  # the disk waits for the user's save
    [change] = file_changes(ed)
    assert change["status"] == "applied" and change["changeId"] == review["changeId"]
    assert (change["shown"], change["added"], change["removed"], change["callId"]) == ("calc.py", 2, 1, review["callId"])
    # the event comes before the tool call's end (the card appears with its tool card)
    types = ed.event_types()
    assert types.index("file_change") < types.index("tool_call_finished")
    assert results(setup)[0].startswith("Edited calc.py")

    # the user reverts it in the editor: recorded, and a resume shows it
    outcome = await ed.request(P.CHANGE_OUTCOME, {"sessionId": session_id, "changeId": change["changeId"],
                                                   "outcome": "reverted"})
    assert outcome["status"] == "reverted"
    resumed = await ed.request(P.SESSIONS_RESUME, {"sessionId": session_id})
    [stored] = resumed["changes"]
    assert stored == {**{k: change[k] for k in ("changeId", "callId", "path", "shown", "added", "removed", "created",
                                                "turn", "uri", "reason")},
                      "status": "reverted", "hasContent": True}
    content = await ed.request(P.CHANGE_CONTENT, {"sessionId": session_id, "changeId": change["changeId"]})
    assert (content["before"], content["after"]) == (typed, AFTER)
    # the model hears of the revert with the next prompt; the chat shows what the user typed
    setup.llm.script(text("noted"))
    await ed.request("agent/prompt", {"text": "and now?", "sessionId": session_id})
    asked = setup.llm.requests[-1].body["messages"][-1]["content"]
    assert asked == ("[From the editor: the user reverted your change to calc.py (it has the text from before "
                     "that change again).]\n\nand now?")
    resumed = await ed.request(P.SESSIONS_RESUME, {"sessionId": session_id})
    assert resumed["messages"][-2]["display"]["text"] == "and now?"
    with pytest.raises(Exception, match="no change"):
        await ed.request(P.CHANGE_OUTCOME, {"sessionId": session_id, "changeId": "nope", "outcome": "kept"})
    with pytest.raises(Exception, match="outcome must be kept or reverted"):
        await ed.request(P.CHANGE_OUTCOME, {"sessionId": session_id, "changeId": "x", "outcome": "maybe"})


async def test_accepted_in_review_then_applied(reviewer: tuple[Editor, Buffers], setup: Setup) -> None:
    ed, buffers = reviewer
    path, uri, _typed = unsaved_file(setup, buffers)
    applied_when_asked: list[int] = []

    def accept(params: dict[str, Any]) -> dict[str, Any]:
        applied_when_asked.append(len(ed.applied_edits))
        return {"decision": "accept"}

    ed.review_answer = accept
    setup.llm.script(tool_calls([EDIT]), text("done"))
    await ed.request("agent/prompt", {"text": "change it"})
    assert applied_when_asked == [0]  # nothing was applied before the user accepted
    assert len(ed.applied_edits) == 1 and buffers.text(uri) == AFTER
    [change] = file_changes(ed)
    assert change["status"] == "accepted"


async def test_a_rejection_reaches_the_model_and_nothing_changes(
        reviewer: tuple[Editor, Buffers], setup: Setup) -> None:
    ed, buffers = reviewer
    path, uri, typed = unsaved_file(setup, buffers)
    ed.review_answer = lambda params: {"decision": "reject", "reason": "keep the constant"}
    setup.llm.script(
        tool_calls([EDIT, ("write_file", {"path": "new.py", "content": "x = 1\n"})]),
        text("ok"),
    )
    result = await ed.request("agent/prompt", {"text": "change it"})
    assert ed.applied_edits == [] and buffers.text(uri) == typed
    assert not (setup.ws / "new.py").exists()
    edited, created = results(setup)
    assert edited.startswith("Error: The user rejected this change to calc.py in the editor's review; the file "
                             "is unchanged. Their reason: keep the constant")
    assert created.startswith("Error: The user rejected this change to new.py")
    rejected = file_changes(ed)
    assert [(c["shown"], c["status"], c["reason"], c["created"]) for c in rejected] == [
        ("calc.py", "rejected", "keep the constant", False), ("new.py", "rejected", "keep the constant", True)]
    new_review = ed.reviews[1]
    assert (new_review["before"], new_review["after"], new_review["added"], new_review["created"]) == (
        "", "x = 1\n", 1, True)
    finished = [e for e in ed.session_events() if e["type"] == "tool_call_finished"]
    assert all(f["isError"] for f in finished)

    resumed = await ed.request(P.SESSIONS_RESUME, {"sessionId": result["sessionId"]})
    assert [(c["shown"], c["status"]) for c in resumed["changes"]] == [("calc.py", "rejected"), ("new.py", "rejected")]


async def test_a_review_withdrawn_by_stop_stays_proposed(reviewer: tuple[Editor, Buffers], setup: Setup) -> None:
    ed, buffers = reviewer
    path, uri, typed = unsaved_file(setup, buffers)
    asked = asyncio.Event()
    withdrawn: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def hold(params: dict[str, Any]) -> dict[str, Any]:
        asked.set()
        try:
            await asyncio.Event().wait()
        except asyncio.CancelledError:
            withdrawn.set_result(params["changeId"])
            raise
        return {}

    ed.review_answer = hold
    setup.llm.script(tool_calls([EDIT]), text("never"))
    msg_id, task = ed.start_request("agent/prompt", {"text": "change it"})
    await happens_before_end(asked, task, "the review")
    ed.cancel(msg_id)
    with pytest.raises(Exception):  # noqa: B017 - the prompt's RequestCancelled error
        await task
    assert ed.applied_edits == [] and buffers.text(uri) == typed
    session_id = ed.reviews[0]["sessionId"]
    resumed = await ed.request(P.SESSIONS_RESUME, {"sessionId": session_id})
    assert [c["status"] for c in resumed["changes"]] == ["proposed"]
    # the server withdraws its review request ($/cancelRequest): the client's handler is cancelled
    assert await withdrawn == ed.reviews[0]["changeId"]


async def test_clients_without_the_capability_are_not_asked(setup: Setup) -> None:
    ed, buffers = await start(setup)
    try:
        path, uri, _typed = unsaved_file(setup, buffers)
        setup.llm.script(tool_calls([EDIT]), text("done"))
        await ed.request("agent/prompt", {"text": "change it"})
        assert ed.reviews == [] and buffers.text(uri) == AFTER
        assert [(a["tool"], a["reviewedEdit"]) for a in ed.approvals] == [("edit_file", False)]
        [change] = file_changes(ed)
        assert (change["status"], change["added"], change["removed"]) == ("applied", 2, 1)
    finally:
        await close_editor(ed)


def test_line_counts() -> None:
    from agent_ls.agent.editor.changes import line_counts

    assert line_counts("", "a\nb\n") == (2, 0)
    assert line_counts("a\nb\nc\n", "a\nc\n") == (0, 1)
    assert line_counts("a\nb\nc\n", "a\nB\nc\nd\n") == (2, 1)
    assert line_counts("same\n", "same\n") == (0, 0)
    big_a = "".join(f"{i}\n" for i in range(30_000))
    big_b = "".join(f"{i}!\n" for i in range(30_000))
    assert line_counts(big_a, big_b) == (30_000, 30_000)  # beyond the exact limit: the middle


async def test_the_full_output_of_a_long_result(editor: Editor, setup: Setup) -> None:
    """A tool result longer than a page: the event names its handle, agent/toolOutput returns it whole."""
    long = "".join(f"line {i}\n" for i in range(8000))  # ~70k characters, more than a page (30k)
    (setup.ws / "long.txt").write_text(long)
    setup.llm.script(tool_calls([("bash", {"command": "cat long.txt"})]), text("read"))
    result = await editor.request("agent/prompt", {"text": "show it"})
    session_id = result["sessionId"]
    [finished] = [e for e in editor.session_events() if e["type"] == "tool_call_finished"]
    handle = finished["outputHandle"]
    assert handle and handle.startswith("out-") and len(finished["content"]) < len(long)
    whole = await editor.request(P.TOOL_OUTPUT, {"sessionId": session_id, "handle": handle})
    assert whole["text"].startswith(long) and whole["totalChars"] == len(whole["text"]) and whole["tool"] == "bash"
    with pytest.raises(Exception, match="there is no stored output out-99"):
        await editor.request(P.TOOL_OUTPUT, {"sessionId": session_id, "handle": "out-99"})
    with pytest.raises(Exception, match="not kept any more"):
        await editor.request(P.TOOL_OUTPUT, {"sessionId": "nope", "handle": handle})


async def test_a_subagents_edit_is_reviewed_and_carded_as_the_conversations(
        reviewer: tuple[Editor, Buffers], setup: Setup) -> None:
    """A subagent's change goes to the same review as the agent's own: ``agent/reviewEdit`` names the
    editor's session and turn and the ``agent`` call (the card the editor shows), the outcome is a
    ``file_change`` event of the conversation (the turn's file card), and the change is the
    session's (``agent/changeContent`` has its texts)."""
    ed, buffers = reviewer
    path, uri, typed = unsaved_file(setup, buffers)
    setup.llm.script(tool_calls([("agent", {"prompt": "change calc.py", "description": "edit calc"}, "call_agent")]),
                     tool_calls([EDIT]), text("changed"), text("done"))
    result = await ed.request("agent/prompt", {"text": "have a subagent change it"}, timeout=90)
    assert result["stopReason"] == "end"
    session_id = result["sessionId"]
    [review] = ed.reviews
    assert (review["sessionId"], review["turn"], review["callId"]) == (session_id, 1, "call_agent")
    assert review["before"] == typed and review["after"] == AFTER and buffers.text(uri) == AFTER
    [change] = file_changes(ed)  # the conversation's own event, not one inside the subagent's
    assert (change["changeId"], change["callId"], change["turn"], change["status"]) == (
        review["changeId"], "call_agent", 1, "applied")
    nested = [e for e in ed.session_events() if e["type"] == "subagent" and e["event"]["type"] == "file_change"]
    assert nested == []
    content = await ed.request(P.CHANGE_CONTENT, {"sessionId": session_id, "changeId": change["changeId"]})
    assert content["before"] == typed and content["after"] == AFTER
