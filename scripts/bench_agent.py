"""Agent benchmarks: figures and ratios against a baseline measured in the same run.

    .venv/bin/python scripts/bench_agent.py [--only tokens,recall,overhead] [--rounds 200]
                                            [--snapshot scripts/data/real_tools.json]

1. tokens: tool-definition tokens per request with deferred MCP tools vs the full listing,
   counted offline with ``litellm.token_counter`` (cl100k) on the exact request the agent
   builds (``Session.build_request``), per real server and for all of them together, and for
   a synthetic server (the knob server with 100 generated tools). MCP cost = request tokens
   minus the same request with no MCP server. Target: >= 95% fewer at >= 50 MCP tools.
2. recall: tool_search recall@5 on the labelled queries in scripts/data/tool_search_queries.json
   over every tool of the real servers (npm: the reference GitHub, GitLab, Slack, Google Maps,
   Brave Search, memory, sequential-thinking, everything and filesystem servers; PyPI:
   mcp-server-time; the knob test server), listed live through the MCP host. Baseline: plain
   BM25 over name + description (no field weights, synonyms or name boost). Target >= 0.95.
3. overhead: from the scripted LLM server's first streamed byte to the first text event at
   the agent's sink (target median <= 10 ms), against a raw httpx streaming client and a bare
   ``litellm.acompletion`` stream reading the same response (and the server's own time from
   its first byte to its first SSE chunk). Rounds alternate between the sides.

The servers need no network: they get placeholder credentials and are only listed.
``--snapshot`` writes the gathered tool definitions (the unit tests rank the labelled
queries over that snapshot, so a ranking regression fails a test without npm servers).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import os
import re
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from bench_agent_servers import KNOB, StaticSource, connect, real_server_entries, server_of  # noqa: E402

from agent_ls.agent.builtin_tools import builtin_tools  # noqa: E402
from agent_ls.agent.events import Event, TextDelta  # noqa: E402
from agent_ls.agent.llm import LLMConfig, get_litellm  # noqa: E402
from agent_ls.agent.prompt import short_name  # noqa: E402
from agent_ls.agent.session import Session  # noqa: E402
from agent_ls.agent.tools.registry import ToolRegistry  # noqa: E402
from agent_ls.agent.tools.tool_search import ToolIndex  # noqa: E402
from agent_ls.agent.workspace import Workspace  # noqa: E402
from agent_ls.core.tools import Tool, ToolSpec  # noqa: E402

QUERIES = REPO / "scripts" / "data" / "tool_search_queries.json"
TOKEN_MODEL = "gpt-4o"
"""Tokenizer used for counting (litellm's bundled tokenizer, offline)."""


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


# --- 1. tokens --------------------------------------------------------------------------------


def request_tokens(ws: Path, tools: Sequence[Tool] | None, *, defer: bool) -> int:
    litellm = get_litellm()
    source = StaticSource(tools) if tools is not None else None
    registry = ToolRegistry(builtin_tools(Workspace([ws])), source, defer=defer)
    session = Session(llm=LLMConfig(model=f"openai/{TOKEN_MODEL}"), registry=registry, roots=[ws])
    messages, defs = session.build_request()
    messages = [*messages, {"role": "user", "content": "hello"}]
    return int(litellm.token_counter(model=TOKEN_MODEL, messages=messages, tools=defs or None))


def wire_tokens(ws: Path, tools: Sequence[Tool] | None, *, defer: bool) -> int:
    """Tokens of the request body's JSON as it goes on the wire (messages and tools arrays,
    compact separators): how tool definitions are rendered for providers that take the JSON
    schema as is, where the count above is OpenAI's compact TypeScript-like rendering."""
    litellm = get_litellm()
    source = StaticSource(tools) if tools is not None else None
    registry = ToolRegistry(builtin_tools(Workspace([ws])), source, defer=defer)
    session = Session(llm=LLMConfig(model=f"openai/{TOKEN_MODEL}"), registry=registry, roots=[ws])
    messages, defs = session.build_request()
    body = {"messages": [*messages, {"role": "user", "content": "hello"}], "tools": defs}
    return int(litellm.token_counter(model=TOKEN_MODEL, text=json.dumps(body, separators=(",", ":"))))


def bench_tokens(ws: Path, groups: list[tuple[str, list[Tool]]]) -> list[tuple[str, int, float, float]]:
    """Both renderings: (a) ``litellm.token_counter`` on messages + tools, which renders tools
    the way OpenAI appears to (a compact TypeScript-like namespace); (b) the JSON request body
    as sent, the rendering of providers that put the JSON schemas in the prompt as they are."""
    base = request_tokens(ws, None, defer=True)
    base_wire = wire_tokens(ws, None, defer=True)
    print(f"\n== 1. tool-definition tokens per request ({TOKEN_MODEL} tokenizer, offline) ==")
    print(f"request with built-in tools only (no MCP server): {base} tokens rendered, {base_wire} as JSON")
    print("MCP tokens = request tokens minus that; 'names floor' = the bare tool names alone (comma-"
          "separated short names, no tool_search, no framing): no listing of names can cost less")
    print("(a) rendered = litellm.token_counter (OpenAI's compact rendering of tools); "
          "(b) JSON = the request body's JSON as sent")
    print(f"{'server set':<36}{'MCP tools':>10}{'(a) full':>10}{'deferred':>10}{'fewer':>8}"
          f"{'names floor':>13}{'floor fewer':>13}{'(b) full':>10}{'deferred':>10}{'fewer':>8}{'floor fewer':>13}")
    litellm = get_litellm()
    rows = []
    for label, tools in groups:
        mcp_full = request_tokens(ws, tools, defer=False) - base
        mcp_deferred = request_tokens(ws, tools, defer=True) - base
        fewer = 1 - mcp_deferred / mcp_full if mcp_full else float("nan")
        wire_full = wire_tokens(ws, tools, defer=False) - base_wire
        wire_deferred = wire_tokens(ws, tools, defer=True) - base_wire
        wire_fewer = 1 - wire_deferred / wire_full if wire_full else float("nan")
        floor = int(litellm.token_counter(model=TOKEN_MODEL, text=", ".join(short_name(t.spec) for t in tools)))
        rows.append((label, len(tools), fewer, wire_fewer))
        print(f"{label:<36}{len(tools):>10}{mcp_full:>10}{mcp_deferred:>10}{fewer:>8.1%}{floor:>13}"
              f"{1 - floor / mcp_full:>12.1%}{wire_full:>10}{wire_deferred:>10}{wire_fewer:>8.1%}"
              f"{1 - floor / wire_full:>12.1%}")
    big = [r for r in rows if r[1] >= 50]
    if big:
        for i, what in ((2, "(a) rendered"), (3, "(b) JSON")):
            worst = min(r[i] for r in big)
            print(f"at >= 50 MCP tools, {what}: at least {worst:.1%} fewer MCP tokens with deferral "
                  f"(target >= 95%) -> {'OK' if worst >= 0.95 else 'MISSED'}")
    return rows


# --- 2. recall --------------------------------------------------------------------------------


def label(spec: ToolSpec) -> str:
    return f"{spec.server}/{spec.display_name or spec.name}"


_WORD = re.compile(r"[A-Za-z0-9]+")


class PlainBM25:
    """Baseline: textbook BM25 over lower-cased words of name + description."""

    def __init__(self, specs: Sequence[ToolSpec]) -> None:
        self.specs = list(specs)
        self.docs = [Counter(w.lower() for w in _WORD.findall(f"{s.display_name or s.name} {s.description}"))
                     for s in self.specs]
        self.lengths = [sum(d.values()) for d in self.docs]
        self.avg = sum(self.lengths) / len(self.lengths)
        df: Counter[str] = Counter()
        for d in self.docs:
            df.update(d.keys())
        n = len(self.specs)
        self.idf = {w: math.log(1 + (n - c + 0.5) / (c + 0.5)) for w, c in df.items()}

    def search(self, query: str, limit: int) -> list[ToolSpec]:
        words = [w.lower() for w in _WORD.findall(query)]
        scored = []
        for spec, doc, length in zip(self.specs, self.docs, self.lengths, strict=True):
            norm = 1.2 * (0.25 + 0.75 * length / self.avg)
            score = sum(self.idf[w] * doc[w] * 2.2 / (doc[w] + norm) for w in words if doc.get(w))
            if score > 0:
                scored.append((-score, spec.name, spec))
        scored.sort(key=lambda t: (t[0], t[1]))
        return [s for _, _, s in scored[:limit]]


def recall_at(found: Sequence[str], relevant: Sequence[str], k: int) -> float:
    hits = len(set(found[:k]) & set(relevant))
    return hits / min(len(relevant), k)


def bench_recall(specs: Sequence[ToolSpec], k: int = 5, verbose: bool = False) -> float:
    data = json.loads(QUERIES.read_text())
    queries = data["queries"]
    known = {label(s) for s in specs}
    unknown = sorted({r for q in queries for r in q["relevant"]} - known)
    if unknown:
        raise SystemExit(f"labelled tools not offered by the servers: {unknown}")
    index = ToolIndex(specs)
    baseline = PlainBM25(specs)
    ours: list[float] = []
    base: list[float] = []
    misses: list[str] = []
    for q in queries:
        found = [label(s) for s in index.search(q["query"], limit=k)]
        plain = [label(s) for s in baseline.search(q["query"], k)]
        r = recall_at(found, q["relevant"], k)
        ours.append(r)
        base.append(recall_at(plain, q["relevant"], k))
        if r < 1 or verbose:
            misses.append(f"  {r:.2f} {q['query']!r}: want {q['relevant']}, got {found}")
    mean, mean_base = statistics.fmean(ours), statistics.fmean(base)
    servers = sorted({s.server or "" for s in specs})
    print(f"\n== 2. tool_search recall@{k} ==")
    print(f"{len(queries)} labelled queries over {len(specs)} tools from {len(servers)} real servers "
          f"({', '.join(servers)})")
    print(f"recall@{k}: tool_search {mean:.3f} | plain BM25 baseline {mean_base:.3f} | "
          f"ratio {mean / mean_base:.2f} (target >= 0.95) -> {'OK' if mean >= 0.95 else 'MISSED'}")
    print(f"queries fully answered in the top {k}: {sum(1 for r in ours if r == 1)}/{len(ours)} "
          f"(baseline {sum(1 for r in base if r == 1)}/{len(base)})")
    if misses:
        print("queries not fully answered:" if not verbose else "rankings:")
        print("\n".join(misses))
    return mean


def write_snapshot(path: Path, specs: Sequence[ToolSpec]) -> None:
    rows = [{"server": s.server, "name": s.display_name, "model_name": s.name, "description": s.description,
             "input_schema": s.input_schema} for s in specs]
    payload = {
        "description": "Tool definitions listed live from real MCP servers by scripts/bench_agent.py --snapshot "
                       "(npm: @modelcontextprotocol reference servers; PyPI: mcp-server-time; the knob test "
                       "server). Used by tests/unit/test_tool_search.py to rank the labelled queries.",
        "tools": rows,
    }
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(payload, indent=1, ensure_ascii=False, sort_keys=False) + "\n")
    print(f"wrote {len(rows)} tool definitions to {path}")


# --- 3. overhead ------------------------------------------------------------------------------


async def bench_overhead(rounds: int, ws: Path) -> float:
    import httpx

    from tests.llm.scripted_server import ScriptedLLM, text

    litellm = get_litellm()
    reply = "Hello from the scripted model: streaming five chunks."
    with ScriptedLLM() as llm:
        config = LLMConfig(model="openai/scripted", api_base=llm.openai_base, api_key="x", max_retries=0)

        def new_session() -> Session:
            return Session(llm=config, registry=ToolRegistry(builtin_tools(Workspace([ws]))), roots=[ws])

        body_messages, body_tools = new_session().build_request()
        body_messages = [*body_messages, {"role": "user", "content": "hi"}]

        async def agent_round() -> float:
            session = new_session()
            seen: list[float] = []

            def sink(event: Event) -> None:
                if isinstance(event, TextDelta) and not seen:
                    seen.append(time.perf_counter())

            llm.script(text(reply, chunks=5))
            result = await session.prompt("hi", sink)
            assert result.stop_reason == "end" and result.text == reply, result
            rec = llm.requests[-1]
            assert rec.first_byte_at is not None
            return seen[0] - rec.first_byte_at

        async def litellm_round() -> float:
            llm.script(text(reply, chunks=5))
            stream = await litellm.acompletion(model=config.model, api_base=config.api_base, api_key="x",
                                               messages=body_messages, tools=body_tools, stream=True,
                                               stream_options={"include_usage": True}, max_retries=0)
            first = None
            async for chunk in stream:
                if first is None and chunk.choices and chunk.choices[0].delta.content:
                    first = time.perf_counter()
            rec = llm.requests[-1]
            assert first is not None and rec.first_byte_at is not None
            return first - rec.first_byte_at

        async with httpx.AsyncClient(timeout=30) as http:

            async def raw_round() -> float:
                llm.script(text(reply, chunks=5))
                payload = {"model": "scripted", "messages": body_messages, "tools": body_tools, "stream": True,
                           "stream_options": {"include_usage": True}}
                first = None
                async with http.stream("POST", f"{llm.openai_base}/chat/completions", json=payload,
                                       headers={"authorization": "Bearer x"}) as resp:
                    async for line in resp.aiter_lines():
                        if first is None and line.startswith("data: {"):
                            delta = json.loads(line[6:])["choices"][0]["delta"]
                            if delta.get("content"):
                                first = time.perf_counter()
                rec = llm.requests[-1]
                assert first is not None and rec.first_byte_at is not None
                return first - rec.first_byte_at

            for _ in range(5):  # warm up every path (imports, connection pools)
                await raw_round()
                await litellm_round()
                await agent_round()
            raw_t: list[float] = []
            lite_t: list[float] = []
            agent_t: list[float] = []
            server_t: list[float] = []
            for i in range(rounds):
                order = [(raw_round, raw_t), (litellm_round, lite_t), (agent_round, agent_t)]
                if i % 2:
                    order.reverse()
                for fn, out in order:
                    out.append(await fn())
                    rec = llm.requests[-1]
                    if rec.first_chunk_at is not None and rec.first_byte_at is not None:
                        server_t.append(rec.first_chunk_at - rec.first_byte_at)
                llm.requests.clear()
    m_raw, m_lite, m_agent = median(raw_t), median(lite_t), median(agent_t)
    print(f"\n== 3. agent overhead: scripted server's first streamed byte -> first text event ({rounds} rounds) ==")
    print(f"scripted server, its own first byte -> first SSE chunk written: median {median(server_t) * 1e3:.3f} ms")
    print(f"raw httpx stream (baseline)    : median {m_raw * 1e3:.3f} ms")
    print(f"bare litellm.acompletion stream: median {m_lite * 1e3:.3f} ms   ratio vs raw {m_lite / m_raw:.2f}")
    print(f"agent (Session.prompt -> sink) : median {m_agent * 1e3:.3f} ms   ratio vs raw {m_agent / m_raw:.2f}, "
          f"vs litellm {m_agent / m_lite:.2f}   p90 {statistics.quantiles(agent_t, n=10)[-1] * 1e3:.3f} ms")
    print(f"agent median {m_agent * 1e3:.2f} ms (target <= 10 ms) -> {'OK' if m_agent <= 0.010 else 'MISSED'}")
    return m_agent


# --- main -------------------------------------------------------------------------------------


async def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--only", default="tokens,recall,overhead", help="comma-separated sections to run")
    ap.add_argument("--rounds", type=int, default=200, help="overhead rounds per side")
    ap.add_argument("--snapshot", type=Path, help="write the real servers' tool definitions to this JSON file")
    ap.add_argument("--verbose", action="store_true", help="print the ranking of every labelled query")
    args = ap.parse_args()
    sections = {s.strip() for s in args.only.split(",") if s.strip()}
    import logging
    import warnings

    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    with tempfile.TemporaryDirectory(prefix="bench-agent-") as tmpdir:
        tmp = Path(tmpdir)
        ws = tmp / "ws"
        ws.mkdir()
        if sections & {"tokens", "recall"} or args.snapshot:
            t0 = time.perf_counter()
            manager = await connect(real_server_entries(), tmp, ws)
            synthetic = await connect({"synthetic": {"command": sys.executable, "args": [str(KNOB), "--tools", "100"]}},
                                      tmp, ws)
            try:
                real = list(manager.tools())
                print(f"connected {len(manager.status())} real MCP servers ({len(real)} tools) and the synthetic "
                      f"server in {time.perf_counter() - t0:.1f} s")
                if "tokens" in sections:
                    by_server: dict[str, list[Tool]] = {}
                    for t in real:
                        by_server.setdefault(server_of(t), []).append(t)
                    groups = [(f"{name}", tools) for name, tools in sorted(by_server.items())]
                    groups.append(("all real servers together", real))
                    synth = list(synthetic.tools())
                    generated = [t for t in synth if (t.spec.display_name or "").startswith("tool_")]
                    groups.append(("synthetic: 100 generated tools", generated))
                    groups.append(("synthetic server (100 + knob's own)", synth))
                    bench_tokens(ws, groups)
                specs = [t.spec for t in real]
                if args.snapshot:
                    write_snapshot(args.snapshot, specs)
                if "recall" in sections:
                    bench_recall(specs, verbose=args.verbose)
            finally:
                await manager.close()
                await synthetic.close()
        if "overhead" in sections:
            await bench_overhead(args.rounds, ws)


if __name__ == "__main__":
    asyncio.run(main())

