"""When the checkpoint of a turn is taken (issue 46 on issue 40): after the turn's model request has
gone out, so that its snapshot of the workspace does not compete with that request, and always
before anything of the turn changes a file (its first tool call, a conversation hook). The
workspace's first snapshot (the warm-up at a session's open) yields to a prompt sent right after
the open, and a warm-up under way pauses while a turn's request is being made.

Every check is of order (what the scripted model had received, what the workspace held, when the
snapshot ran), never of time."""

from __future__ import annotations

import asyncio
import threading
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent import llm as llm_adapter
from agent_ls.agent.checkpoints import Checkpoints
from agent_ls.agent.config import AgentSettings
from agent_ls.agent.store import SessionStore
from agent_ls.config.hooks import HookSpec
from agent_ls.runtime.conversations import Conversations
from agent_ls.runtime.questions import NoQuestions
from agent_ls.runtime.sessions import FrontEnd
from agent_ls.runtime.turns import PendingRequests
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


class Allow(NoQuestions):
    async def approve(self, request: Any) -> Any:
        from agent_ls.agent.permissions import ApprovalAnswer

        return ApprovalAnswer.ALLOW_ONCE


def visible(ws: Path) -> list[str]:
    """The workspace's own files (not the sandbox's placeholders, which are dot files)."""
    return sorted(p.name for p in ws.iterdir() if not p.name.startswith("."))


class Snapshots:
    """Notes each snapshot of the engine (warm-up or checkpoint) with what the model had received
    and what the workspace held when it began; each checkpoint's snapshot is held a moment, so a
    tool call that did not wait for it would run first."""

    def __init__(self, llm: ScriptedLLM, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
        self.seen: list[dict[str, Any]] = []
        begin, warm = Checkpoints.begin, Checkpoints.warm

        def noted(kind: str) -> None:
            self.seen.append({"kind": kind, "requests": len(llm.requests),
                              "files": visible(ws)})

        def spy_begin(engine: Checkpoints, *args: Any) -> Any:
            noted("checkpoint")
            threading.Event().wait(0.3)  # widens the window a tool call that did not wait would use
            return begin(engine, *args)

        def spy_warm(engine: Checkpoints, *args: Any) -> Any:
            noted("warm-up")
            return warm(engine, *args)

        monkeypatch.setattr(Checkpoints, "begin", spy_begin)
        monkeypatch.setattr(Checkpoints, "warm", spy_warm)


@pytest.fixture
async def service(tmp_path: Path, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch) -> AsyncIterator[Conversations]:
    monkeypatch.setenv("AGENT_LS_DATA_DIR", str(tmp_path / "data"))
    # litellm in this process: the request has gone out when litellm's response began (the model
    # host's path says so as it hands the request over, a moment before the model has it)
    monkeypatch.setattr(llm_adapter, "_host", None)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "old.txt").write_text("old\n")
    agent = AgentSettings(model="openai/scripted", api_base=llm.openai_base, max_retries=0)
    conversations = Conversations(folders=lambda: [ws], settings=lambda: agent, host=_no_host,
                                  front=lambda: FrontEnd(questions=Allow()), store=SessionStore(tmp_path / "s.db"),
                                  checkpoints=True)
    yield conversations
    await conversations.close()


async def _no_host() -> None:
    return None


async def test_the_first_checkpoint_comes_after_the_request_and_before_the_first_change(
        service: Conversations, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    """A prompt sent as soon as its session opened (ACP's ``session/prompt`` right after
    ``session/new``, a one-shot chat): the workspace's first snapshot begins once the model has the
    request (before, the warm-up at the open and the checkpoint at the turn's start both ran while
    the request was being made), and still before the model's tool call changes anything: the
    checkpoint holds the change and a rewind takes it back."""
    ws = service.roots()[0]
    snapshots = Snapshots(llm, ws, monkeypatch)
    session = await service.open()
    assert session is not None
    llm.script(tool_calls([("bash", {"command": "rm old.txt && echo new > made.txt"})]), text("done"))
    result = await service.prompt(session, "change things")
    assert result.stop_reason == "end" and (ws / "made.txt").exists()
    assert snapshots.seen, "no snapshot was taken"
    first = snapshots.seen[0]
    assert first["requests"] >= 1, f"the workspace was walked before the model had the request: {snapshots.seen}"
    assert first["files"] == ["old.txt"], f"a tool call ran before the checkpoint: {snapshots.seen}"
    assert [s["kind"] for s in snapshots.seen] == ["checkpoint"]  # the turn's own made the warm-up needless
    (checkpoint,) = await service.checkpoint_list(session.session_id)
    assert {Path(p).name for p in checkpoint.changed} == {"old.txt", "made.txt"}
    await service.rewind(checkpoint.id, code=True, conversation=False)
    assert visible(ws) == ["old.txt"]


async def test_a_turn_that_ends_before_the_model_answers_still_has_its_checkpoint(
        service: Conversations, llm: ScriptedLLM, monkeypatch: pytest.MonkeyPatch) -> None:
    """The checkpoint is taken at the turn's end when nothing told that its request went out (the
    model failing at once is an output: its error; here the turn itself fails): every prompt keeps
    its checkpoint, as the chat's "Rewind to here" expects."""
    session = await service.open()
    assert session is not None

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the turn broke before its request")

    monkeypatch.setattr(session, "prompt", broken)
    with pytest.raises(RuntimeError):
        await service.prompt(session, "fails")
    assert [c.prompt_index for c in await service.checkpoint_list(session.session_id)] == [0]


async def test_a_prompt_hook_runs_after_the_checkpoint(service: Conversations, llm: ScriptedLLM,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    """A ``UserPromptSubmit`` hook runs before the model has the request and may change files: with
    hooks configured, the checkpoint is taken before the turn (the hook's change is the turn's, and
    a rewind takes it back)."""
    ws = service.roots()[0]
    hook = ws.parent / "hook.sh"
    hook.write_text(f"#!/bin/sh\ncat > /dev/null\necho hooked > {ws / 'hooked.txt'}\n")
    hook.chmod(0o755)
    agent = AgentSettings(model="openai/scripted", api_base=llm.openai_base, max_retries=0,
                          hooks=(HookSpec("UserPromptSubmit", str(hook), None, 30.0),))
    monkeypatch.setattr(service, "_settings", lambda: agent)
    session = await service.open()
    assert session is not None
    llm.script(text("ok"))
    await service.prompt(session, "hello")
    assert (ws / "hooked.txt").exists()
    (checkpoint,) = await service.checkpoint_list(session.session_id)
    assert [Path(p).name for p in checkpoint.changed] == ["hooked.txt"]
    await service.rewind(checkpoint.id, code=True, conversation=False)
    assert not (ws / "hooked.txt").exists()


async def test_the_warm_up_waits_for_a_prompt_sent_meanwhile(service: Conversations, llm: ScriptedLLM,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    """The warm-up asked for at the open (``warm_checkpoints``) starts after a moment, and only once
    no turn waits for its request; with no prompt meanwhile, it runs."""
    ws = service.roots()[0]
    snapshots = Snapshots(llm, ws, monkeypatch)
    assert service.checkpoints is not None
    requests = service.requests
    with requests.turn("s1"):  # a prompt is being made when the warm-up's moment has passed
        warm = asyncio.ensure_future(service.checkpoints.warm(after=0))
        for _ in range(20):
            await asyncio.sleep(0.01)
        assert snapshots.seen == [] and not warm.done()
        requests.sent("s1")  # its request has gone out
        await asyncio.wait_for(warm, 30)
    assert [s["kind"] for s in snapshots.seen] == ["warm-up"]


def test_a_walk_pauses_before_each_folder_while_a_request_is_being_made(tmp_path: Path) -> None:
    """The warm-up's walk calls its pause before each folder it reads; :meth:`PendingRequests.pause`
    holds a worker thread while a turn waits for its request, and lets it go once the request has
    gone out."""
    ws = tmp_path / "ws"
    for d in ("a", "b", "a/c"):
        (ws / d).mkdir(parents=True)
        (ws / d / "f.txt").write_text(d)
    paused: list[str] = []
    with Checkpoints.for_workspace(tmp_path / "data", [ws]) as cps:
        cps.warm(lambda: paused.append("folder"))
    assert len(paused) == 4  # the root, a, a/c, b

    async def main() -> list[str]:
        requests = PendingRequests()
        order: list[str] = []
        with requests.turn("s1"):
            thread = threading.Thread(target=lambda: (requests.pause(), order.append("walk goes on")))
            thread.start()
            await asyncio.sleep(0.2)
            order.append("request out")
            requests.sent("s1")
            await asyncio.to_thread(thread.join, 10)
        return order

    assert asyncio.run(main()) == ["request out", "walk goes on"]
