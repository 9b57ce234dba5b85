"""The agent's file changes without an editor process (issue 16, item 3): the review the file
tools ask for (:class:`agent_ls.agent.editor.changes.EditReviewer`), what they report for the call
that runs (``current_call``), and the change store in the session database."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.editor.changes import (
    MAX_KEPT_CHARS,
    CallContext,
    ChangeStore,
    Proposal,
    ReviewAnswer,
    current_call,
)
from agent_ls.agent.events import FileChange
from agent_ls.agent.store import SessionStore
from tests.agent.test_editor_files import FakeEditor, run, tools_for


class ReviewingEditor(FakeEditor):
    def __init__(self, decision: str, reason: str | None = None, **kw: Any) -> None:
        super().__init__(**kw)
        self.proposals: list[Proposal] = []
        self.decision = ReviewAnswer(decision, reason)

    def reviews_edits(self) -> bool:
        return True

    async def review_edit(self, proposal: Proposal) -> ReviewAnswer:
        self.proposals.append(proposal)
        return self.decision


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "ws"
    r.mkdir()
    return r.resolve()


async def _in_call(coro_fn: Any, reports: list[tuple[str, str | None, bool]]) -> Any:
    async def report(change: FileChange, before: str | None, after: str | None, notify: bool) -> None:
        reports.append((change.status, change.reason, notify))

    token = current_call.set(CallContext("s1", "call-1", 3, report))
    try:
        return await coro_fn()
    finally:
        current_call.reset(token)


async def test_a_rejected_change_is_not_applied_and_says_why(root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    editor = ReviewingEditor("reject", "not now")
    tools = tools_for(root, editor)
    reports: list[tuple[str, str | None, bool]] = []
    result = await _in_call(lambda: run(tools, "edit_file", path="a.py", old_string="x = 1", new_string="x = 2"),
                            reports)
    assert result.is_error and "The user rejected this change to a.py" in result.content
    assert "Their reason: not now" in result.content
    assert editor.edits == [] and (root / "a.py").read_text() == "x = 1\n"
    [proposal] = editor.proposals
    assert (proposal.before, proposal.after, proposal.added, proposal.removed, proposal.call_id, proposal.turn) == (
        "x = 1\n", "x = 2\n", 1, 1, "call-1", 3)
    assert reports == [("proposed", None, False), ("rejected", "not now", True)]


async def test_accepted_and_deferred_changes_are_applied_and_reported(root: Path) -> None:
    (root / "a.py").write_text("x = 1\n")
    for decision, status in (("accept", "accepted"), ("deferred", "applied")):
        editor = ReviewingEditor(decision)
        tools = tools_for(root, editor)
        reports: list[tuple[str, str | None, bool]] = []
        result = await _in_call(lambda t=tools: run(t, "edit_file", path="a.py", old_string="x = 1",
                                                    new_string="x = 2"), reports)
        assert not result.is_error and len(editor.edits) == 1
        assert reports == [("proposed", None, False), (status, None, True)]


async def test_changes_to_disk_are_reviewed_too(root: Path) -> None:
    """Text an editor buffer cannot hold goes to the disk, after the same review."""
    editor = ReviewingEditor("reject")
    tools = tools_for(root, editor)
    result = await _in_call(lambda: run(tools, "write_file", path="nul.bin", content="a\x00b"), [])
    assert result.is_error and not (root / "nul.bin").exists() and editor.proposals[0].created
    editor.decision = ReviewAnswer("accept")
    reports: list[tuple[str, str | None, bool]] = []
    result = await _in_call(lambda: run(tools, "write_file", path="nul.bin", content="a\x00b"), reports)
    assert not result.is_error and (root / "nul.bin").read_bytes() == b"a\x00b" and editor.edits == []
    assert reports[-1] == ("accepted", None, True)


async def test_without_a_running_call_nothing_is_reported(root: Path) -> None:
    tools = tools_for(root, FakeEditor())
    result = await run(tools, "write_file", path="n.py", content="n = 1\n")
    assert not result.is_error


def test_the_change_store(tmp_path: Path) -> None:
    sessions = SessionStore(tmp_path / "s.sqlite3")
    sid = sessions.create_session().id
    store = ChangeStore(sessions.path)
    change = FileChange(change_id="c1", call_id="k1", path="/w/a.py", shown="a.py", added=2, removed=1,
                        status="proposed", turn=1, uri="file:///w/a.py")
    store.record(sid, change, "before\n", "after\n")
    store.record(sid, FileChange(change_id="c1", call_id="k1", path="/w/a.py", shown="a.py", added=2, removed=1,
                                 status="rejected", reason="no", turn=1), None, None)
    [rec] = store.list(sid)
    assert (rec["status"], rec["reason"], rec["has_content"], rec["uri"]) == ("rejected", "no", True, "file:///w/a.py")
    found = store.content(sid, "c1")
    assert found is not None and found[1:] == ("before\n", "after\n") and found[0]["status"] == "rejected"
    assert store.set_status(sid, "c1", "reverted") is not None and store.list(sid)[0]["status"] == "reverted"
    assert store.set_status(sid, "nope", "kept") is None and store.content(sid, "nope") is None
    # too long to keep: recorded without its texts
    big = "x" * (MAX_KEPT_CHARS // 2 + 1)
    store.record(sid, FileChange(change_id="c2", call_id=None, path="/w/b", shown="b", added=1, removed=1,
                                 status="applied"), big, big)
    assert [r["has_content"] for r in store.list(sid)] == [True, False]
    # the rows go with their session
    assert sessions.delete_session(sid)
    assert store.list(sid) == []
    store.close()
    sessions.close()
