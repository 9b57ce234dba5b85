"""``agent/reviewEdit`` goes through the one ask() (agent_ls/server/ask.py) like every other
question the language server asks the editor.

:meth:`LspEditorFiles.review_edit` on the real server with its JSON-RPC side replaced by the
recorder of test_ask.py: a client without ``reviewEdits`` is not asked (a reject: nothing is
changed unasked), an error or a broken answer is a reject with the reason, a stopped turn
withdraws the question (``$/cancelRequest``).
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcInternalError

from agent_ls.agent.editor.changes import Proposal, ReviewAnswer
from agent_ls.server.editor.editor_files import LspEditorFiles
from agent_ls.server.protocol.methods import REVIEW_CAPABILITY, REVIEW_EDIT
from agent_ls.server.server import AgentLanguageServer
from tests.unit.test_ask import RecordingProtocol, _sent

PROPOSAL = Proposal(change_id="ch1", session_id="s1", call_id="c1", turn=2, path=Path("/ws/calc.py"),
                    shown="calc.py", uri="file:///ws/calc.py", before="a\n", after="b\n", added=1, removed=1,
                    created=False)


def editor(monkeypatch: pytest.MonkeyPatch, *, reviews: bool) -> tuple[LspEditorFiles, RecordingProtocol]:
    ls = AgentLanguageServer()
    recorder = RecordingProtocol()
    experimental = {"agentLs": {REVIEW_CAPABILITY: True}} if reviews else None
    recorder.client_capabilities = lsp.ClientCapabilities(experimental=experimental)
    monkeypatch.setattr(ls, "protocol", recorder)
    return LspEditorFiles(ls.client), recorder


async def test_the_review_is_asked_with_the_proposal_and_answered(monkeypatch: pytest.MonkeyPatch) -> None:
    files, recorder = editor(monkeypatch, reviews=True)
    task = asyncio.ensure_future(files.review_edit(PROPOSAL))
    await _sent(recorder)
    (method, params, _), = recorder.requests
    assert method == REVIEW_EDIT
    assert params == {"changeId": "ch1", "uri": "file:///ws/calc.py", "path": "calc.py", "before": "a\n",
                      "after": "b\n", "added": 1, "removed": 1, "created": False, "sessionId": "s1",
                      "callId": "c1", "turn": 2}
    recorder.answer({"decision": "reject", "reason": "not like this"})
    assert await task == ReviewAnswer("reject", "not like this")


async def test_a_client_without_review_edits_is_not_asked(monkeypatch: pytest.MonkeyPatch) -> None:
    files, recorder = editor(monkeypatch, reviews=False)
    answer = await asyncio.wait_for(files.review_edit(PROPOSAL), 5)  # (asking it would wait for ever)
    assert answer == ReviewAnswer("reject", "the editor does not review edits")
    assert recorder.requests == [] and recorder.notifications == []


@pytest.mark.parametrize(("error", "result", "says"), [
    (JsonRpcInternalError("boom"), None, "boom"),
    (None, {"decision": 3}, "decision"),
])
async def test_an_error_or_a_broken_answer_is_a_reject_with_the_reason(
        monkeypatch: pytest.MonkeyPatch, error: Exception | None, result: Any, says: str) -> None:
    files, recorder = editor(monkeypatch, reviews=True)
    task = asyncio.ensure_future(files.review_edit(PROPOSAL))
    await _sent(recorder)
    recorder.answer(result, error=error)
    answer = await task
    assert answer.decision == "reject"
    assert answer.reason is not None and answer.reason.startswith("the editor could not show the review (")
    assert says in answer.reason


async def test_an_unknown_decision_is_a_reject(monkeypatch: pytest.MonkeyPatch) -> None:
    files, recorder = editor(monkeypatch, reviews=True)
    task = asyncio.ensure_future(files.review_edit(PROPOSAL))
    await _sent(recorder)
    recorder.answer({"decision": "maybe"})
    assert await task == ReviewAnswer("reject", "the editor answered 'maybe'")


async def test_a_stopped_turn_withdraws_the_review(monkeypatch: pytest.MonkeyPatch) -> None:
    files, recorder = editor(monkeypatch, reviews=True)
    task = asyncio.ensure_future(files.review_edit(PROPOSAL))
    await _sent(recorder)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    await asyncio.wait_for(_withdrawn(recorder), 5)  # the request's own task sends it on its next step
    assert recorder.cancelled_ids() == [recorder.requests[0][2]]


async def _withdrawn(recorder: RecordingProtocol) -> None:
    while not recorder.cancelled_ids():
        await asyncio.sleep(0)
