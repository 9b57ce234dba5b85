"""Subagents (issue 42): what a child session costs, and whether two children really overlap.

    .venv/bin/python scripts/bench_subagents.py [--runs 50]

Everything runs in this process against the scripted OpenAI-compatible LLM on loopback, through
the runtime's conversation service and litellm's real HTTP path.

1. Overhead of a child: the same prompt (the model answers one short text) run
   - directly: ``Session.prompt`` of a session built the way the service builds one, its history
     emptied before each prompt (built once and not timed: the baseline a child is compared with), and
   - as a child: the parent's ``agent`` tool (``AgentTool.call``): the child's build (tool set,
     gate, prompt), its turn, the transcript kept in the parent's output store.
   The two alternate so that machine noise hits both alike; the first of each (litellm warming
   up) is not counted. Prints the medians and the difference (target: at most 10 ms).
2. Two children of 1 s each (the model streams each answer for 1 s), started by one parent step
   that calls ``agent`` twice: the wall time from the first ``agent`` call's start to the last's
   end, against the 2 s they would take one after the other (target: at most 1.2 s).
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_ls.agent import events as ev  # noqa: E402
from agent_ls.agent.config import AgentSettings  # noqa: E402
from agent_ls.agent.store import SessionStore  # noqa: E402
from agent_ls.runtime.conversations import Conversations  # noqa: E402
from agent_ls.runtime.questions import NoQuestions  # noqa: E402
from agent_ls.runtime.sessions import FrontEnd, build_session  # noqa: E402
from agent_ls.runtime.subagents import AgentTool  # noqa: E402
from tests.llm.scripted_server import ScriptedLLM, slow_text, text, tool_calls  # noqa: E402


async def overhead(conversations: Conversations, agent: AgentSettings, llm: ScriptedLLM, ws: Path,
                   runs: int) -> tuple[float, float]:
    parent = await conversations.open()
    assert parent is not None
    tool = parent.registry.get("agent")
    assert isinstance(tool, AgentTool)
    direct: list[float] = []
    child: list[float] = []
    prompt = "Which file holds the retry logic?"
    session = await build_session(agent, parent.llm, roots=[ws], front=FrontEnd(questions=NoQuestions()))

    async def run_direct() -> float:
        llm.script(text("It is in retry.py.", chunks=2))
        session.history.clear()
        started = time.perf_counter()
        await session.prompt(prompt)
        return time.perf_counter() - started

    async def run_child() -> float:
        llm.script(text("It is in retry.py.", chunks=2))
        started = time.perf_counter()
        result = await tool.call({"agent": "general", "prompt": prompt, "description": "find retry"})
        took = time.perf_counter() - started
        assert result.content.startswith("It is in retry.py."), result.content
        return took

    for i in range(runs + 1):
        # the order alternates: a slow moment of the machine hits both alike
        if i % 2:
            d, c = await run_direct(), await run_child()
        else:
            c, d = await run_child(), await run_direct()
        if i:  # the first of each warms litellm up
            direct.append(d)
            child.append(c)
    return statistics.median(direct), statistics.median(child)


async def parallel(conversations: Conversations, llm: ScriptedLLM) -> float:
    session = await conversations.open()
    assert session is not None
    one_second = [f"w{n} " for n in range(10)]
    llm.script(tool_calls([("agent", {"prompt": "first", "description": "a"}),
                           ("agent", {"prompt": "second", "description": "b"})]),
               slow_text(one_second, delay=0.1), slow_text(one_second, delay=0.1), text("done"))
    marks: dict[str, float] = {}

    def sink(event: Any) -> None:
        if isinstance(event, ev.ToolCallStarted) and event.name == "agent":
            marks.setdefault("start", time.perf_counter())
        elif isinstance(event, ev.ToolCallFinished) and event.name == "agent":
            marks["end"] = time.perf_counter()

    await conversations.prompt(session, "two tasks", sink)
    return marks["end"] - marks["start"]


async def main(runs: int) -> None:
    os.environ.setdefault("OPENAI_API_KEY", "x")
    with tempfile.TemporaryDirectory() as tmp, ScriptedLLM() as llm:
        ws = Path(tmp) / "ws"
        ws.mkdir()
        agent = AgentSettings(model="openai/scripted", api_base=llm.openai_base, max_retries=0)

        async def no_host() -> None:
            return None

        conversations = Conversations(folders=lambda: [ws], settings=lambda: agent, host=no_host,
                                      front=lambda: FrontEnd(questions=NoQuestions()),
                                      store=SessionStore(Path(tmp) / "sessions.sqlite3"))
        try:
            direct, child = await overhead(conversations, agent, llm, ws, runs)
            print(f"one prompt, median of {runs}: directly {direct * 1e3:.1f} ms, as a child "
                  f"{child * 1e3:.1f} ms; overhead of the child {(child - direct) * 1e3:+.1f} ms (target <= 10 ms)")
            wall = await parallel(conversations, llm)
            print(f"two children of 1 s each in one step: {wall:.2f} s wall time (one after the other: >= 2.0 s; "
                  f"target <= 1.2 s)")
        finally:
            await conversations.close()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=50)
    asyncio.run(main(parser.parse_args().runs))
