"""Issue 26: sessions that last. Context accounting, compaction that loses nothing, handles that
survive a restart, against the scripted model enforcing a window (HTTP 400
``context_length_exceeded`` above it, as OpenAI answers) through litellm's real path."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import attrs
import pytest

from agent_ls.agent.context import SUMMARY_OPEN
from agent_ls.agent.session import Session
from agent_ls.agent.store import SessionStore
from agent_ls.agent.tools.output_store import OutputStore, ReadOutputTool
from tests.agent.conftest import Recorder, make_session, openai_config
from tests.llm.scripted_server import ScriptedLLM, Turn, Usage, error, respond, text, tool_calls

WINDOW = 32_000
FILE_CHARS = 20_000
_WORDS = ["alpha", "beta", "gamma", "delta", "epsilon", "kernel", "buffer", "socket", "parse", "render", "widget",
          "tensor", "vector", "matrix", "compile", "import", "export", "module", "package", "request", "response"]


def write_files(root: Path, n: int) -> None:
    rng = random.Random(7)
    for i in range(n):
        lines, size = [], 0
        while size < FILE_CHARS:
            line = f"F{i} " + " ".join(rng.choice(_WORDS) + str(rng.randrange(100)) for _ in range(12))
            lines.append(line)
            size += len(line) + 1
        (root / f"f{i}.txt").write_text("\n".join(lines)[:FILE_CHARS])


def is_summary_request(body: dict[str, Any]) -> bool:
    first = body["messages"][0].get("content")
    return isinstance(first, str) and first.startswith("You summarize a coding session")


def agent_model(summary: Turn | None = None) -> Turn:
    """Reads the file a prompt names, reads back a handle on request, summarizes when asked."""

    def answer(body: dict[str, Any]) -> Turn:
        if is_summary_request(body):
            return summary or text("The user had files read one by one; each was read and acknowledged.")
        last = body["messages"][-1]
        if last["role"] == "user":
            if m := re.search(r"read back (out-\d+)", last["content"]):
                return tool_calls([("read_output", {"handle": m.group(1), "limit": 200})])
            if m := re.search(r"read f(\d+)", last["content"]):
                return tool_calls([("read_file", {"path": f"f{m.group(1)}.txt"})])
            return text("ok")
        return text(f"done ({len(body['messages'])} messages)")

    return respond(answer)


def scripted(llm: ScriptedLLM, n: int, summary: Turn | None = None) -> None:
    llm.script(*(agent_model(summary) for _ in range(n)))


def session(llm: ScriptedLLM, root: Path, store: SessionStore | None, session_id: str | None = None,
            **kw: Any) -> Session:
    return make_session(llm, root, store=store, session_id=session_id,
                        context_window=kw.pop("context_window", WINDOW), **kw)


def agent_requests(llm: ScriptedLLM) -> list[Any]:
    return [r for r in llm.requests if isinstance(r.body, dict) and not is_summary_request(r.body)]


@pytest.mark.slow
@pytest.mark.timeout(300)
async def test_200_turns_of_20k_files_in_a_32k_window_complete_and_the_first_result_reads_back(
        llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    turns = 200
    write_files(ws, turns)
    llm.window = WINDOW
    store = SessionStore(tmp_path / "sessions.db")
    s = session(llm, ws, store)
    rec = Recorder()
    scripted(llm, 3 * turns + 50)
    for i in range(turns):
        result = await s.prompt(f"read f{i}", rec)
        assert result.stop_reason == "end", (i, result.error)
    assert not [r for r in llm.requests if r.rejected], "a request passed the window"
    compactions = rec.of("compaction")
    assert compactions and any(c.summarized for c in compactions) and any(c.cleared for c in compactions)
    frozen = s.frozen.text
    assert all(r.body["messages"][0]["content"].startswith(frozen) for r in agent_requests(llm))
    # the first result, cleared long ago, reads back through its handle
    first = s.outputs.handle_for(s.history[1]["tool_calls"][0]["id"]) if s.outputs else None
    assert first == "out-1"
    back = await s.prompt("read back out-1", rec)
    assert back.stop_reason == "end"
    assert s.history[-2]["content"].lstrip().startswith("1\tF0 "), s.history[-2]["content"][:200]
    assert max(r.prompt_tokens or 0 for r in llm.requests) <= WINDOW
    sid = s.session_id
    store.close()
    # a restart: a new store and session, resumed from the database
    store2 = SessionStore(tmp_path / "sessions.db")
    resumed = session(llm, ws, store2, sid)
    assert resumed.compactor.state.summary is not None  # continues compacted
    assert len(resumed.history) == len(s.history)  # the history stays whole
    llm.requests.clear()
    again = await resumed.prompt("read back out-1", rec)
    assert again.stop_reason == "end"
    assert resumed.history[-2]["content"].lstrip().startswith("1\tF0 ")
    assert not [r for r in llm.requests if r.rejected]
    assert max(r.prompt_tokens or 0 for r in llm.requests) <= WINDOW
    store2.close()


async def test_a_context_length_error_compacts_once_and_retries_once(llm: ScriptedLLM, ws: Path) -> None:
    write_files(ws, 6)
    llm.window = 12_000  # the provider's window is smaller than the one configured
    s = session(llm, ws, None, context_window=40_000)
    rec = Recorder()
    scripted(llm, 40)
    for i in range(4):
        r = await s.prompt(f"read f{i}", rec)
        assert r.stop_reason == "end", r.error
    rejected = [r for r in llm.requests if r.rejected]
    assert rejected, "the provider never refused: the test proves nothing"
    assert any(c.reason == "overflow" for c in rec.of("compaction"))


async def test_a_provider_that_keeps_refusing_is_retried_once_not_in_a_loop(llm: ScriptedLLM, ws: Path) -> None:
    llm.window = 10  # refuses everything
    s = session(llm, ws, None)
    rec = Recorder()
    r = await s.prompt("hello", rec)
    assert r.stop_reason == "error" and r.error is not None and r.error.kind == "context_window"
    assert len(llm.requests) == 2  # the request and one retry


async def test_a_message_that_cannot_fit_is_refused_with_its_size_and_nothing_is_sent(
        llm: ScriptedLLM, ws: Path) -> None:
    s = session(llm, ws, None, context_window=4_000)
    rec = Recorder()
    huge = " ".join(f"word{i}" for i in range(20_000))
    r = await s.prompt(huge, rec)
    assert r.stop_reason == "error" and r.error is not None
    assert r.error.kind == "context_window"
    assert "4000 tokens" in r.error.message and "tokens, more than fits" in r.error.message
    assert llm.requests == []
    assert s.history == []  # not kept: the next prompt is not poisoned by it
    scripted(llm, 2)
    assert (await s.prompt("small", rec)).stop_reason == "end"


@pytest.mark.parametrize("summary, said", [
    (text(""), "empty summary"),
    (text("word " * 6000, chunks=4), "too long"),
    (error(500), "summary request failed"),
])
async def test_a_bad_summary_falls_back_to_a_digest_and_the_user_is_told(
        llm: ScriptedLLM, ws: Path, summary: Turn, said: str) -> None:
    write_files(ws, 12)
    llm.window = 16_000
    s = session(llm, ws, None, context_window=16_000)
    rec = Recorder()
    scripted(llm, 80, summary=summary)
    for i in range(12):
        r = await s.prompt(f"read f{i}", rec)
        assert r.stop_reason == "end", r.error
    notes = [c.note for c in rec.of("compaction") if c.summarized]
    assert notes and all(said in n for n in notes), notes
    assert s.compactor.state.summary is not None and "read f0" in s.compactor.state.summary
    assert "out-1" in s.compactor.state.summary  # the handles it covers are listed
    assert not [r for r in llm.requests if r.rejected]


async def test_slash_compact_clears_and_summarizes_and_the_handles_still_read(
        llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    write_files(ws, 2)
    store = SessionStore(tmp_path / "s.db")
    s = session(llm, ws, store, compact_llm=attrs.evolve(openai_config(llm), model="openai/cheap"))  # agent.compactModel
    rec = Recorder()
    scripted(llm, 10)
    for i in range(2):
        await s.prompt(f"read f{i}", rec)
    done = await s.compact(rec)
    summary_requests = [r for r in llm.requests if is_summary_request(r.body)]
    assert [r.body["model"] for r in summary_requests] == ["cheap"]
    assert [r.body["model"] for r in agent_requests(llm)] == ["scripted"] * 4
    assert done is not None and done.reason == "manual" and done.summarized == len(s.history)
    assert set(done.handles) >= {"out-1", "out-2"}
    messages, _ = s.build_request()
    assert messages[1]["content"].startswith(SUMMARY_OPEN) and len(messages) == 2
    usage = rec.of("usage")[-1]
    assert usage.context_window == WINDOW and 0 < usage.context_tokens < 3_000
    found = s.outputs.get("out-1") if s.outputs else None
    assert found is not None and not isinstance(found, str) and found.text.lstrip().startswith("1\tF0 ")
    store.close()


async def test_a_corrupt_persisted_record_is_reported_and_the_session_goes_on(
        llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    write_files(ws, 1)
    store = SessionStore(tmp_path / "s.db")
    s = session(llm, ws, store)
    scripted(llm, 4)
    await s.prompt("read f0", Recorder())
    sid = s.session_id
    store.record_compaction(sid, "{not json")
    with store._write() as conn:
        conn.execute("DELETE FROM output_marks")
        conn.execute("UPDATE outputs SET number = 'x'")  # a row of the wrong type
    resumed = session(llm, ws, store, sid)
    rec = Recorder()
    scripted(llm, 4)
    r = await resumed.prompt("read back out-1", rec)
    assert r.stop_reason == "end"
    notes = " ".join(c.note for c in rec.of("compaction"))
    assert "could not be read" in notes
    store.close()


async def test_the_meter_shows_the_providers_count_once_it_reports_one(llm: ScriptedLLM, ws: Path) -> None:
    """Issue 44: the meter showed litellm's count (19%) where the provider said 15%. Before the
    first answer the meter is our estimate (said so); once a response carries usage, the meter is
    the provider's prompt plus completion tokens, in the events, the turn's total and later turns."""
    s = session(llm, ws, None)
    llm.script(tool_calls([("read_file", {"path": "f0.txt"})], usage=Usage(prompt_tokens=37, completion_tokens=5)),
               text("done", usage=Usage(prompt_tokens=61, completion_tokens=3)),
               text("again", usage=Usage(prompt_tokens=70, completion_tokens=2)))
    write_files(ws, 1)
    rec = Recorder()
    result = await s.prompt("read f0", rec)
    first, *reported = rec.of("usage")
    assert first.context_source == "estimate" and first.context_window == WINDOW
    assert first.context_tokens > 100  # our count of the system prompt and tools: far from the provider's 37
    assert [(u.context_tokens, u.context_source) for u in reported] == [(42, "provider"), (64, "provider")]
    assert s.compactor.last_tokens > 64  # what the meter used to show
    assert (result.usage.context_tokens, result.usage.context_source) == (64, "provider")
    rec = Recorder()
    await s.prompt("once more", rec)  # the provider has reported: no estimate before the request
    assert [(u.context_tokens, u.context_source) for u in rec.of("usage")] == [(72, "provider")]


async def test_slash_compact_reports_an_estimate(llm: ScriptedLLM, ws: Path) -> None:
    """After /compact the provider has not seen the compacted view: the meter is our count, said so."""
    write_files(ws, 1)
    s = session(llm, ws, None)
    scripted(llm, 4)
    await s.prompt("read f0", Recorder())
    rec = Recorder()
    await s.compact(rec)
    meter = rec.of("usage")[-1]
    assert meter.context_source == "estimate" and meter.context_tokens == s.compactor.last_tokens


def test_persisted_outputs_are_bounded_per_session_and_evicted_oldest_first(tmp_path: Path) -> None:
    store = SessionStore(tmp_path / "s.db")
    sid = store.create_session().id
    store.append_message(sid, {"role": "user", "content": "x"})
    outputs = OutputStore(page_chars=1_000, max_chars=3_000)
    outputs.attach(store.outputs_for(sid, 3_000, total_chars=10_000))
    for i in range(5):
        outputs.put(str(i) * 1_000, "t", f"c{i}")
    fresh = OutputStore(page_chars=1_000, max_chars=3_000)
    fresh.attach(store.outputs_for(sid, 3_000))
    assert isinstance(fresh.get("out-1"), str) and "evicted" in str(fresh.get("out-1"))
    last = fresh.get("out-5")
    assert not isinstance(last, str) and last.text == "4" * 1_000
    assert fresh.put("new").handle == "out-6"  # never reused
    mode = (tmp_path / "s.db").stat().st_mode & 0o777
    assert mode == 0o600
    read = ReadOutputTool(fresh)
    assert read.store is fresh
    store.close()


def test_stub_names_the_handle(llm: ScriptedLLM, ws: Path) -> None:
    from agent_ls.agent.context import stub_text

    assert 'read_output(handle="out-7")' in stub_text("out-7", "read_file", 20_000)
    assert json.loads(json.dumps(stub_text("out-7", "", 1)))


def test_the_window_comes_from_the_setting_else_litellm_else_the_documented_default() -> None:
    from agent_ls.agent.context import DEFAULT_WINDOW, ContextLimits

    assert ContextLimits.for_model("anthropic/claude-sonnet-4-5").window == 200_000
    assert ContextLimits.for_model("openai/no-such-model").window == DEFAULT_WINDOW == 32_000
    limits = ContextLimits.for_model("anthropic/claude-sonnet-4-5", 50_000, 0.5, max_tokens=4_000)
    assert (limits.window, limits.threshold, limits.reserve) == (50_000, 25_000, 4_000)
    assert limits.limit == 50_000 - 4_000 - 2_500  # room for the answer and the counters' disagreement


def test_a_model_chosen_later_brings_its_own_window(llm: ScriptedLLM, ws: Path) -> None:
    s = session(llm, ws, None, context_window=None)
    assert s.compactor.limits.window == 32_000  # "openai/scripted": unknown to litellm
    s.llm = attrs.evolve(s.llm, model="anthropic/claude-sonnet-4-5")  # e.g. ACP's model choice
    assert s.compactor.limits.window == 200_000 and s.compactor.counter.model == "anthropic/claude-sonnet-4-5"


async def test_a_prompt_that_surely_fits_is_not_counted_before_it_is_sent_and_one_near_the_window_is(
        llm: ScriptedLLM, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Keeping a prompt needs no count of its own when its bytes (more than any tokenizer's
    tokens) fit the window: the first request's count rides with it. A prompt whose bytes do not
    fit is counted first, and kept when its tokens fit."""
    s = session(llm, ws, None, context_window=16_000)
    counted: list[int] = []
    counts = s.compactor.counter.counts

    def recording(items: Any) -> Any:
        counted.append(len(items))
        return counts(items)

    monkeypatch.setattr(s.compactor.counter, "counts", recording)
    system, tools = s._request_parts()
    s.compactor.check_message({"role": "user", "content": "fix the failing test"}, system, tools)
    assert counted == []
    near = {"role": "user", "content": "word " * 9_000}  # 45,000 bytes, about 9,000 tokens
    s.compactor.check_message(near, system, tools)
    assert len(counted) == 1
    scripted(llm, 1)
    r = await s.prompt("word " * 9_000, Recorder())
    assert r.stop_reason == "end" and len(agent_requests(llm)) == 1
