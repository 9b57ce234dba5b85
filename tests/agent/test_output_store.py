"""Oversized tool output is kept, not cut (agent_ls/agent/tools/output_store.py): a real MCP server's
5 MB result and real bash output go through a session driven by the scripted LLM; the model sees
the first page and reads on with ``read_output``."""

from __future__ import annotations

import json
import re
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.builtin_tools import builtin_tools
from agent_ls.agent.session import Session
from agent_ls.agent.store import SessionStore
from agent_ls.agent.tools.output_store import READ_OUTPUT, OutputStore
from agent_ls.agent.tools.registry import ToolRegistry
from agent_ls.agent.workspace import Workspace
from agent_ls.config.settings import load_settings
from agent_ls.core.tools import ToolResult
from agent_ls.mcp.manager import MCPManager
from tests.agent.conftest import Recorder, openai_config
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls
from tests.servers.launch import knob_stdio_params
from tests.tooling import TRUST_ALL

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

HUGE = 5_000_000


def huge_text(chars: int) -> str:
    """What the knob server's ``huge`` tool returns."""
    line = "huge output line: 0123456789 abcdefghijklmnopqrstuvwxyz\n"
    return (line * (chars // len(line) + 1))[:chars]


async def start_manager(tmp: Path, ws: Path) -> MCPManager:
    user = tmp / "user.json"
    user.write_text(json.dumps({"mcpServers": {"knob": knob_stdio_params()}}))
    m = MCPManager(roots=[ws])
    await m.apply(load_settings([ws], user_settings=user, trust=TRUST_ALL))
    await m.wait_ready(30)
    return m


def session(llm: ScriptedLLM, ws: Path, outputs: OutputStore, *, mcp: Any = None,
            store: SessionStore | None = None, session_id: str | None = None) -> Session:
    registry = ToolRegistry(builtin_tools(Workspace([ws]), outputs=outputs), mcp, defer=False)
    return Session(llm=openai_config(llm), registry=registry, roots=[ws], store=store, session_id=session_id)


def tool_results(llm: ScriptedLLM) -> list[str]:
    """The tool results the model received, in order (from the last request)."""
    return [m["content"] for m in llm.requests[-1].body["messages"] if m["role"] == "tool"]


async def test_5mb_mcp_result_first_page_then_page_3_through_the_handle(
        llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    page = 10_000
    outputs = OutputStore(page_chars=page, max_chars=6_000_000)
    m = await start_manager(tmp_path, ws)
    try:
        s = session(llm, ws, outputs, mcp=m)
        llm.script(
            tool_calls([("mcp__knob__huge", {"chars": HUGE})]),
            tool_calls([(READ_OUTPUT, {"handle": "out-1", "offset": 2 * page})]),  # page 3
            tool_calls([(READ_OUTPUT, {"handle": "out-1", "offset": HUGE - 100})]),  # the very end
            text("read it"),
        )
        rec = Recorder()
        result = await s.prompt("show me the huge output", rec)
        assert result.text == "read it"
        full = huge_text(HUGE)
        first, third, last = tool_results(llm)
        # the model saw the first page, then a line naming the handle, the size and how to read on
        assert first.startswith(full[:page]) and len(first) < page + 1000
        note = first[page:]
        assert "out-1" in note and f"{HUGE} characters" in note
        assert f'read_output(handle="out-1", offset={page})' in note
        assert "cut" not in first
        # page 3, exactly, through the handle
        assert third.startswith(full[2 * page:3 * page])
        assert third[page:].strip() == f'[out-1: characters {2 * page}-{3 * page} of {HUGE}; next: ' \
                                       f'read_output(handle="out-1", offset={3 * page})]'
        assert last.startswith(full[-100:]) and "end of the output" in last
        # the UI got the page too, not 5 MB
        finished = rec.of("tool_call_finished")
        assert all(len(f.content) < page + 1000 for f in finished)
        # kept whole, within the bound
        assert outputs.handles() == ["out-1"]
        assert outputs.size == HUGE <= outputs.max_chars
        assert s.history[-1]["content"] == "read it"
    finally:
        await m.close()


def bash_lines(lines: int, marker_at: int | None = None) -> str:
    marker = f" if i != {marker_at} else 'THE Marker LINE here'" if marker_at is not None else ""
    return f"{sys.executable} -c \"for i in range({lines}): print(('filler ' * 9){marker})\""


async def test_search_eviction_and_bounded_store_with_bash(llm: ScriptedLLM, ws: Path) -> None:
    outputs = OutputStore(page_chars=2_000, max_chars=300_000)
    s = session(llm, ws, outputs)
    each = 2_000 * len("filler " * 9 + "\n")  # 128k characters per run: three do not fit
    llm.script(
        tool_calls([("bash", {"command": bash_lines(2_000)})]),
        tool_calls([("bash", {"command": bash_lines(2_000, marker_at=1_234)})]),
        tool_calls([("bash", {"command": bash_lines(2_000)})]),
        tool_calls([(READ_OUTPUT, {"handle": "out-2", "search": "marker line"})]),
        tool_calls([(READ_OUTPUT, {"handle": "out-1"})]),
        tool_calls([(READ_OUTPUT, {"handle": "out-9"})]),
        text("done"),
    )
    await s.prompt("run it three times")
    results = tool_results(llm)
    sizes = []
    for n, r in enumerate(results[:3], 1):
        m = re.search(rf"\[output out-{n}: (\d+) characters", r)
        assert m is not None and len(r) < 3_000
        sizes.append(int(m.group(1)))
    assert sizes[0] == sizes[2] == each + len("[exit code 0]")
    found, evicted, unknown = results[3:]
    # search: the matching line with its line number and character offset
    offset = 1_234 * len("filler " * 9 + "\n")
    assert found.splitlines()[0] == f"1235: (offset {offset}) THE Marker LINE here"
    assert "1 matching line(s) in out-2" in found
    # the oldest was evicted to keep the bound, and reading it says so
    assert evicted.startswith("Error: output out-1 was evicted") and "300000 characters" in evicted
    assert "no stored output out-9" in unknown
    assert outputs.handles() == ["out-2", "out-3"]
    assert outputs.size == sizes[1] + sizes[2] <= outputs.max_chars


def test_store_never_exceeds_its_bound() -> None:
    store = OutputStore(page_chars=1_000, max_chars=10_000)
    for n in range(1, 50):
        store.put("x" * (n * 97 % 4_000 + 1))
        assert store.size <= store.max_chars
        assert store.size == sum(len(i.text) for i in (store._items.values()))
    big = store.put("y" * 25_000)  # larger than the whole store: the start is kept, the rest evicted
    assert store.handles() == [big.handle] and store.size == 10_000 and big.total_chars == 25_000
    r = store.page_result(ToolResult(content="z" * 30_000), "t")
    assert "Only the first 10000 characters could be kept" in r.content
    assert store.size == 10_000


async def test_search_pages_and_huge_lines(llm: ScriptedLLM) -> None:
    store = OutputStore(page_chars=1_000, max_chars=1_000_000)
    rows = "".join(f"row {i} {'hit' if i % 10 == 0 else 'miss'}\n" for i in range(5_000))
    body = rows + "x" * 50_000 + "hit" + "y" * 9
    item = store.put(body)
    r = store.read(item.handle, search="HIT")
    first = r.content.splitlines()
    assert first[0] == "1: (offset 0) row 0 hit" and first[1].startswith("11: (offset ")
    more = re.search(r"offset=(\d+)\)\]$", r.content)
    assert more is not None
    r2 = store.read(item.handle, search="hit", offset=int(more.group(1)))
    assert not r2.content.startswith(first[0])
    tail = store.read(item.handle, search="hit", offset=body.index("row 4990 "))
    lines = tail.content.splitlines()
    assert lines[0].startswith("4991: (offset") and lines[1].startswith("5001: (offset")
    assert lines[1].endswith("xxx" + "hit" + "y" * 9) and "[...]xxx" in lines[1] and len(lines[1]) < 400
    assert store.read(item.handle, offset=len(body) + 1).is_error
    assert store.read(item.handle, limit=50_000).content.startswith(body[:1_000] + "\n\n[out-1: characters 0-1000")


async def test_resumed_session_reads_earlier_handles_and_never_reuses_one(
        llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    db = SessionStore(tmp_path / "s.sqlite3")
    s = session(llm, ws, OutputStore(page_chars=1_000, max_chars=100_000), store=db)
    llm.script(tool_calls([("bash", {"command": bash_lines(200)})]), text("ok"))
    await s.prompt("go")
    assert "[output out-1:" in tool_results(llm)[0]
    # a new process: the outputs are read from the session database (issue 26), and the old
    # handle is not handed out again
    outputs = OutputStore(page_chars=1_000, max_chars=100_000)
    again = session(llm, ws, outputs, store=db, session_id=s.session_id)
    llm.script(tool_calls([(READ_OUTPUT, {"handle": "out-1", "offset": 1_000})]),
               tool_calls([("bash", {"command": bash_lines(200)})]), text("ok"))
    await again.prompt("read it")
    back, fresh = tool_results(llm)[-2:]
    assert "filler" in back and "[out-1: characters 1000-2000 of 12813" in back
    assert "[output out-2:" in fresh


async def test_without_read_output_long_results_are_cut_with_a_marker(llm: ScriptedLLM, ws: Path) -> None:
    outputs = OutputStore(page_chars=1_000, max_chars=100_000)
    s = session(llm, ws, outputs)
    s.registry.set_active(["bash"])  # read_output not offered: nothing to page with
    llm.script(tool_calls([("bash", {"command": bash_lines(200)})]), text("ok"))
    await s.prompt("go")
    (r,) = tool_results(llm)
    assert "characters cut (limit 1000)" in r and "out-1" not in r
    assert outputs.handles() == []


def test_settings(tmp_path: Path) -> None:
    from agent_ls.agent.config import agent_settings

    ws = tmp_path / "ws"
    (ws / ".agent-ls").mkdir(parents=True)
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"agent": {"outputPageChars": 5_000, "outputStoreChars": 50_000}}))
    s = agent_settings(load_settings([ws], user_settings=user, environ={}, trust=TRUST_ALL), environ={})
    assert (s.output_page_chars, s.output_store_chars) == (5_000, 50_000) and not s.problems
    store = s.output_store()
    assert (store.page_chars, store.max_chars) == (5_000, 50_000)
    user.write_text(json.dumps({"agent": {"outputPageChars": 5_000, "outputStoreChars": 2_000}}))
    s = agent_settings(load_settings([ws], user_settings=user, environ={}, trust=TRUST_ALL), environ={})
    assert s.output_store_chars == 5_000 and any("outputStoreChars must be at least" in p for p in s.problems)
    user.write_text(json.dumps({"agent": {"outputPageChars": 10, "outputStoreChars": "big"}}))
    s = agent_settings(load_settings([ws], user_settings=user, environ={}, trust=TRUST_ALL), environ={})
    assert (s.output_page_chars, s.output_store_chars) == (30_000, 10_000_000) and len(s.problems) == 2
