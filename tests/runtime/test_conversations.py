"""The conversation service (agent_ls.runtime.conversations) as the front ends rely on it, against
the scripted LLM on loopback: one turn at a time (a second prompt is refused with ``Busy``, also
while a front end holds the turn slot for its own work), cancel from anywhere, set-model on a live
session, a settings change that rebuilds the session keeping "allow for this session", and the
transcript of a resumed session with its plan."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent import events as ev
from agent_ls.agent.config import AgentSettings
from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, SessionScope
from agent_ls.agent.store import SessionStore
from agent_ls.runtime.conversations import BadChoice, Busy, Conversations, UnknownSession
from agent_ls.runtime.questions import NoQuestions
from agent_ls.runtime.sessions import FrontEnd
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls
from tests.llm.scripted_turns import hang, slow_text

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


class Asking(NoQuestions):
    """The front end's questions: every approval is answered with ``answer`` and recorded."""

    def __init__(self, answer: Callable[[ApprovalRequest], ApprovalAnswer | SessionScope]) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def approve(self, request: ApprovalRequest) -> ApprovalAnswer | SessionScope:
        self.asked.append(request.spec.name)
        return self.answer(request)


class Setup:
    def __init__(self, tmp_path: Path, llm: ScriptedLLM) -> None:
        self.ws = tmp_path / "ws"
        self.ws.mkdir()
        self.db = tmp_path / "sessions.sqlite3"
        self.agent = AgentSettings(model="openai/scripted", models=("openai/other",), api_base=llm.openai_base,
                                   max_retries=0)
        self.questions = Asking(lambda r: ApprovalAnswer.ALLOW_ONCE)

    def service(self) -> Conversations:
        async def no_host() -> None:
            return None

        return Conversations(folders=lambda: [self.ws], settings=lambda: self.agent, host=no_host,
                             front=lambda: FrontEnd(questions=self.questions), store=SessionStore(self.db))


@pytest.fixture
async def setup(tmp_path: Path, llm: ScriptedLLM) -> AsyncIterator[Setup]:
    yield Setup(tmp_path, llm)


async def started(llm: ScriptedLLM, count: int = 1) -> None:
    """Wait until the model has received ``count`` requests."""
    for _ in range(500):
        if len(llm.requests) >= count:
            return
        await asyncio.sleep(0.01)
    raise AssertionError(f"the model got {len(llm.requests)} request(s), not {count}")


async def test_a_second_prompt_is_refused_while_a_turn_runs(setup: Setup, llm: ScriptedLLM) -> None:
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        llm.script(slow_text(20, delay=0.1), text("second"))
        first = asyncio.ensure_future(conversations.prompt(session, "first"))
        await started(llm)
        assert conversations.busy(session.session_id)
        with pytest.raises(Busy):
            await conversations.prompt(session, "again")
        with pytest.raises(Busy):
            await conversations.prompt(session, "/compact")  # a compaction is a turn too
        with pytest.raises(Busy):
            async with conversations.turn_slot(session.session_id):
                pass
        with pytest.raises(Busy):
            await conversations.delete(session.session_id)
        result = await asyncio.wait_for(first, 30)
        assert result.stop_reason == "end" and len(llm.requests) == 1  # the refused prompts never reached it
        assert not conversations.busy(session.session_id)
        assert (await conversations.prompt(session, "now")).text == "second"
    finally:
        await conversations.close()


async def test_cancel_ends_the_turn_whoever_started_it(setup: Setup, llm: ScriptedLLM) -> None:
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        sid = session.session_id
        assert await conversations.cancel(sid) is False  # no turn running
        events: list[Any] = []
        llm.script(hang(), text("after"))
        turn = asyncio.ensure_future(conversations.prompt(session, "wait", events.append))
        await started(llm)
        assert await conversations.cancel(sid) is True
        # the turn has ended when cancel returns, its turn_finished said so
        assert turn.done() and turn.cancelled()
        assert [e.stop_reason for e in events if isinstance(e, ev.TurnFinished)] == ["cancelled"]
        assert not conversations.busy(sid) and conversations.turn_running(sid) is None
        assert (await asyncio.wait_for(conversations.prompt(session, "again"), 30)).text == "after"
    finally:
        await conversations.close()


async def test_the_turn_slot_covers_a_front_ends_own_work(setup: Setup, llm: ScriptedLLM) -> None:
    """ACP asks its trust questions and expands MCP prompts inside the slot: a prompt from
    elsewhere meanwhile is refused, the holder's own prompt goes ahead, cancel reaches it."""
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        sid = session.session_id
        waiting = asyncio.Event()
        llm.script(text("held"))

        async def front_end_turn() -> str:
            async with conversations.turn_slot(sid):
                waiting.set()
                await asyncio.sleep(0.2)  # e.g. a trust question
                return (await conversations.prompt(session, "mine")).text

        holder = asyncio.ensure_future(front_end_turn())
        await waiting.wait()
        with pytest.raises(Busy):
            await conversations.prompt(session, "theirs")
        assert await asyncio.wait_for(holder, 30) == "held"

        question = asyncio.Event()

        async def asks_forever() -> None:
            async with conversations.turn_slot(sid):
                question.set()
                await asyncio.Event().wait()

        asking = asyncio.ensure_future(asks_forever())
        await question.wait()
        assert await conversations.cancel(sid) is True
        assert asking.cancelled() and not conversations.busy(sid)
    finally:
        await conversations.close()


async def test_set_model_on_a_live_session(setup: Setup, llm: ScriptedLLM) -> None:
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        sid = session.session_id
        llm.script(text("one"), text("two"))
        await conversations.prompt(session, "first")
        choice = await conversations.set_model(sid, "openai/other")
        assert (choice.current, choice.default, choice.models) == ("openai/other", "openai/scripted",
                                                                  ["openai/scripted", "openai/other"])
        assert session.llm.model == "openai/other"  # the live session, not a rebuilt one
        assert await conversations.open(sid) is session
        await conversations.prompt(session, "second")
        assert [r.body["model"] for r in llm.requests] == ["scripted", "other"]
        assert (await conversations.info(sid)).model == "openai/other"  # kept with it in the store
        assert (await conversations.models(sid)).current == "openai/other"
        with pytest.raises(BadChoice, match="unknown model 'openai/gpt-9'"):
            await conversations.set_model(sid, "openai/gpt-9")
        with pytest.raises(UnknownSession):
            await conversations.set_model("no-such-session", "openai/other")
    finally:
        await conversations.close()


async def test_a_settings_change_rebuilds_the_session_keeping_allowed_answers(setup: Setup, llm: ScriptedLLM) -> None:
    setup.questions = Asking(lambda r: r.scopes[-1])  # "allow for this session"
    conversations = setup.service()
    try:
        session = await conversations.open()
        assert session is not None
        sid = session.session_id
        llm.script(tool_calls([("write_file", {"path": "a.txt", "content": "A"})]), text("wrote a"),
                   tool_calls([("write_file", {"path": "b.txt", "content": "B"})]), text("wrote b"))
        await conversations.prompt(session, "write a")
        assert setup.questions.asked == ["write_file"] and (setup.ws / "a.txt").read_text() == "A"

        setup.agent = AgentSettings(model="openai/scripted", api_base=llm.openai_base, max_retries=0,
                                    instructions="Be brief.")
        conversations.settings_changed()
        rebuilt = await conversations.open(sid)
        assert rebuilt is not None and rebuilt is not session
        assert "Be brief." in rebuilt.frozen.text  # the settings as they are now
        assert [m["role"] for m in rebuilt.history if m["role"] != "system"][:2] == ["user", "assistant"]
        await conversations.prompt(rebuilt, "write b")
        assert setup.questions.asked == ["write_file"]  # not asked again: the answer was kept
        assert (setup.ws / "b.txt").read_text() == "B"

        await conversations.release(sid)  # a front end done with it: the answers go with it
        fresh = await conversations.open(sid)
        assert fresh is not None and "write_file" not in " ".join(fresh.gate.session_allowed)
    finally:
        await conversations.close()


async def test_the_transcript_of_a_resumed_session_has_its_plan(setup: Setup, llm: ScriptedLLM) -> None:
    steps = [{"content": "read the code", "status": "completed"}, {"content": "fix it", "status": "in_progress"}]
    first = setup.service()
    try:
        session = await first.open()
        assert session is not None
        sid = session.session_id
        llm.script(tool_calls([("update_plan", {"steps": steps}, "call_plan")]), text("planned"))
        await first.prompt(session, "plan it")
        live = await first.transcript(sid)
    finally:
        await first.close()

    again = setup.service()  # another process: nothing live, all from the store
    try:
        assert again.live(sid) is None
        for transcript in (live, await again.transcript(sid)):
            assert [(e.content, e.status) for e in transcript.plan] == [("read the code", "completed"),
                                                                       ("fix it", "in_progress")]
            roles = [m["role"] for m in transcript.messages if m["role"] != "system"]
            assert roles == ["user", "assistant", "tool", "assistant"]
            (result,) = [m for m in transcript.messages if m["role"] == "tool"]
            assert result["tool_call_id"] == "call_plan" and result["run"]["isError"] is False
        with pytest.raises(UnknownSession):
            await again.transcript("no-such-session")
    finally:
        await again.close()


# the conversation hooks, run by the service for every front end (issue 43 through issue 39) ---------
def _hook_script(ws: Path, name: str, body: str) -> str:
    path = ws / f"{name}.sh"
    path.write_text(f"#!/bin/sh\ncat > {ws / (name + '.json')}\n{body}\n")
    path.chmod(0o755)
    return str(path)


async def test_the_service_runs_the_conversation_hooks(setup: Setup, llm: ScriptedLLM) -> None:
    """SessionStart at the first open, UserPromptSubmit before the prompt (its context reaches
    the model), each run said in the chat; a blocking UserPromptSubmit stops the prompt before
    the model, as the turn's error; PreCompact can stop /compact."""
    import json

    from agent_ls.config.hooks import HookSpec

    ws = setup.ws
    start = _hook_script(ws, "start", 'echo "this repository uses tabs"')
    submit = _hook_script(ws, "submit", 'echo "ticket ABC-123"')
    setup.agent = AgentSettings(model="openai/scripted", api_base=llm.openai_base, max_retries=0, hooks=(
        HookSpec("SessionStart", start, None, 30.0), HookSpec("UserPromptSubmit", submit, None, 30.0)))
    service = setup.service()
    session = await service.open()
    assert session is not None
    events: list[Any] = []
    llm.script(text("ok"))
    result = await service.prompt(session, "fix the parser", events.append)
    assert result.text == "ok"
    sent = json.dumps(llm.requests[-1].body["messages"])
    assert "this repository uses tabs" in sent and "ticket ABC-123" in sent
    shown = [(e.event, e.outcome) for e in events if isinstance(e, ev.HookRan)]
    # SessionStart ran when the session opened: shown at the start of its first turn, once
    assert shown == [("SessionStart", "ran"), ("UserPromptSubmit", "ran")], shown
    assert not any(isinstance(e, ev.ContextCompacted) for e in events)  # no "notice" stands in for them

    block = _hook_script(ws, "block", 'echo "no secrets in prompts" >&2; exit 2')
    compact = _hook_script(ws, "compact", 'echo "not now" >&2; exit 2')
    setup.agent = AgentSettings(model="openai/scripted", api_base=llm.openai_base, max_retries=0, hooks=(
        HookSpec("UserPromptSubmit", block, None, 30.0), HookSpec("PreCompact", compact, None, 30.0)))
    service.settings_changed()
    session = await service.open(session.session_id)
    assert session is not None
    asked = len(llm.requests)
    events.clear()
    result = await service.prompt(session, "my key is sk-123", events.append)
    assert result.stop_reason == "error" and result.error is not None
    assert result.error.kind == "hook_blocked" and "no secrets in prompts" in result.error.message
    assert len(llm.requests) == asked  # never sent
    assert any(isinstance(e, ev.TurnFinished) and e.stop_reason == "error" for e in events)
    (blocked,) = [e for e in events if isinstance(e, ev.HookRan)]
    assert (blocked.event, blocked.outcome, blocked.command) == ("UserPromptSubmit", "blocked", block)
    assert "no secrets in prompts" in blocked.message and "no secrets in prompts" in blocked.output
    events.clear()
    result = await service.prompt(session, "/compact", events.append)
    assert result.stop_reason == "error" and result.error is not None and "not now" in result.error.message
    assert [(e.event, e.outcome) for e in events if isinstance(e, ev.HookRan)] == [("PreCompact", "blocked")]
    await service.close()


# checkpoints through the service (issue 40 on issue 39's observer points) -----------------------------
async def test_a_turn_is_checkpointed_and_rewound_with_its_shell_changes(
        setup: Setup, llm: ScriptedLLM, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A checkpoint before each prompt records what the turn changed by any path (here a
    built-in write and a shell command that creates, deletes and renames); rewinding code and
    conversation puts the files and the history back, and redo undoes the rewind."""
    monkeypatch.setenv("AGENT_LS_DATA_DIR", str(tmp_path / "data"))
    ws = setup.ws
    (ws / "old.txt").write_text("old\n")
    (ws / "keep.txt").write_text("keep\n")
    service = Conversations(folders=lambda: [ws], settings=lambda: setup.agent, host=_no_host,
                            front=lambda: FrontEnd(questions=setup.questions), store=SessionStore(setup.db),
                            checkpoints=True)
    session = await service.open()
    assert session is not None
    llm.script(text("hello"))
    await service.prompt(session, "just talk")
    llm.script(tool_calls([("write_file", {"path": "new.txt", "content": "N"}),
                           ("bash", {"command": "rm old.txt && mv keep.txt kept.txt && echo x > made.txt"})]),
               text("done"))
    await service.prompt(session, "change things")
    assert not (ws / "old.txt").exists() and (ws / "kept.txt").exists() and (ws / "new.txt").exists()
    checkpoints = await service.checkpoint_list(session.session_id)
    assert [c.prompt_index for c in checkpoints] == [0, 1]
    second = checkpoints[1]
    assert {Path(p).name for p in second.changed} == {"old.txt", "keep.txt", "kept.txt", "new.txt", "made.txt"}
    result = await service.rewind(second.id, code=True, conversation=True)
    assert (ws / "old.txt").read_text() == "old\n" and (ws / "keep.txt").read_text() == "keep\n"
    assert not (ws / "kept.txt").exists() and not (ws / "new.txt").exists() and not (ws / "made.txt").exists()
    assert result.messages_removed
    session = await service.open(session.session_id)  # rebuilt from the store
    assert session is not None
    assert [m["content"] for m in session.history if m["role"] == "user"] == ["just talk"]
    await service.redo(session.session_id)
    assert (ws / "kept.txt").exists() and not (ws / "old.txt").exists()
    session = await service.open(session.session_id)
    assert session is not None
    assert [m["content"] for m in session.history if m["role"] == "user"] == ["just talk", "change things"]
    await service.close()


async def _no_host() -> None:
    return None


async def test_session_start_runs_once_before_the_first_turn_and_its_context_survives_a_rebuild(
        setup: Setup, llm: ScriptedLLM) -> None:
    """A conversation opened before its hooks apply (a folder trusted at the first prompt, as ACP
    asks) still runs SessionStart before its first turn; a later rebuild (a settings change)
    neither runs it again nor loses what it added for the model."""
    import json

    from agent_ls.config.hooks import HookSpec

    ws = setup.ws
    service = setup.service()
    session = await service.open()  # no hooks yet
    assert session is not None
    start = _hook_script(ws, "start", 'echo "this repository uses tabs"')
    setup.agent = AgentSettings(model="openai/scripted", api_base=llm.openai_base, max_retries=0,
                                hooks=(HookSpec("SessionStart", start, None, 30.0),))
    service.settings_changed()  # e.g. the folder was trusted
    session = await service.open(session.session_id)
    assert session is not None
    events: list[Any] = []
    llm.script(text("ok"), text("ok again"))
    await service.prompt(session, "hello", events.append)
    assert [(e.event, e.outcome) for e in events if isinstance(e, ev.HookRan)] == [("SessionStart", "ran")]
    assert json.loads((ws / "start.json").read_text())["source"] == "startup"
    assert "this repository uses tabs" in json.dumps(llm.requests[-1].body["messages"])
    (ws / "start.json").unlink()
    service.settings_changed()
    session = await service.open(session.session_id)
    assert session is not None
    events.clear()
    await service.prompt(session, "again", events.append)
    assert not (ws / "start.json").exists() and not any(isinstance(e, ev.HookRan) for e in events)
    assert "this repository uses tabs" in json.dumps(llm.requests[-1].body["messages"])
    await service.close()
