"""Oversized tool output: memory stays bounded while every result is kept for the session.

    .venv/bin/python scripts/bench_output.py [--results 12] [--chars 5000000]

A session driven by the scripted OpenAI-compatible LLM (through litellm) calls the knob MCP
server's ``huge`` tool ``--results`` times (5 MB each by default) and reads page 3 of each
through ``read_output``. Printed: the process's resident memory before the first result (the
baseline, same run), after the first and after the last, the characters the output store
keeps against its bound (``agent.outputStoreChars``, 10M by default: the oldest outputs are
evicted first), and how much the model was sent per result (one page, not 5 MB).
"""

from __future__ import annotations

import argparse
import asyncio
import gc
import json
import os
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from agent_ls.agent.builtin_tools import builtin_tools  # noqa: E402
from agent_ls.agent.session import Session  # noqa: E402
from agent_ls.agent.tools.output_store import READ_OUTPUT, OutputStore  # noqa: E402
from agent_ls.agent.tools.registry import ToolRegistry  # noqa: E402
from agent_ls.agent.workspace import Workspace  # noqa: E402
from agent_ls.config.settings import load_settings  # noqa: E402
from agent_ls.mcp.manager import MCPManager  # noqa: E402
from tests.agent.conftest import Recorder, openai_config  # noqa: E402
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls  # noqa: E402
from tests.servers.launch import knob_stdio_params  # noqa: E402
from tests.tooling import TRUST_ALL  # noqa: E402


def rss_mib() -> float:
    with open(f"/proc/{os.getpid()}/statm") as f:
        pages = int(f.read().split()[1])
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--results", type=int, default=12)
    ap.add_argument("--chars", type=int, default=5_000_000)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d, ScriptedLLM() as llm:
        ws = Path(d) / "ws"
        ws.mkdir()
        user = Path(d) / "user.json"
        user.write_text(json.dumps({"mcpServers": {"knob": knob_stdio_params()}}))
        manager = MCPManager(roots=[ws])
        await manager.apply(load_settings([ws], user_settings=user, trust=TRUST_ALL))
        await manager.wait_ready(30)
        try:
            outputs = OutputStore()
            registry = ToolRegistry(builtin_tools(Workspace([ws]), outputs=outputs), manager, defer=False)
            session = Session(llm=openai_config(llm), registry=registry, roots=[ws])
            # warm everything (litellm, the SDK, the first prompt) with a small result
            llm.script(tool_calls([("mcp__knob__huge", {"chars": 1000})]), text("ok"))
            await session.prompt("warm up", Recorder())
            gc.collect()
            base = rss_mib()
            after: list[float] = []
            sent: list[int] = []
            for i in range(args.results):
                handle = f"out-{i + 1}"  # (the warm-up result fits in a page: not stored)
                llm.script(
                    tool_calls([("mcp__knob__huge", {"chars": args.chars})]),
                    tool_calls([(READ_OUTPUT, {"handle": handle, "offset": 2 * outputs.page_chars})]),
                    text("read it"),
                )
                await session.prompt(f"huge {i}", Recorder())
                tool_msgs = [m["content"] for m in llm.requests[-1].body["messages"] if m["role"] == "tool"]
                sent.append(max(len(t) for t in tool_msgs[-2:]))
                gc.collect()
                after.append(rss_mib())
            total = args.results * args.chars
            print(f"output store: {args.results} results of {args.chars / 1e6:.1f}M characters "
                  f"({total / 1e6:.0f}M in all); kept {outputs.size / 1e6:.1f}M characters in "
                  f"{len(outputs.handles())} outputs, bound {outputs.max_chars / 1e6:.0f}M (oldest evicted)")
            print(f"resident memory: baseline {base:.0f} MiB | after the first result {after[0]:.0f} MiB "
                  f"(+{after[0] - base:.0f}) | after {len(after) // 2}: {after[len(after) // 2 - 1]:.0f} MiB "
                  f"(+{after[len(after) // 2 - 1] - base:.0f}) | after the last {after[-1]:.0f} MiB (+{after[-1] - base:.0f}); "
                  f"last/first growth ratio {(after[-1] - base) / max(1e-9, after[0] - base):.2f}")
            print(f"sent to the model per result: at most {max(sent)} characters (page {outputs.page_chars}); "
                  f"page 3 of every result read through its handle: {all(s > outputs.page_chars for s in sent)}")
        finally:
            await manager.close()


if __name__ == "__main__":
    asyncio.run(main())
