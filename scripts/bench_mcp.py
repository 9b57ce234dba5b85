"""MCP host benchmarks: figures and ratios against a baseline measured in the same run.

    .venv/bin/python scripts/bench_mcp.py [--calls 400] [--servers 1,5,20]

1. tools/call through the manager (MCPTool -> connection -> SDK) vs the bare SDK
   ``Client.call_tool`` on the same kind of server (target ratio <= 1.1).
2. Connecting N stdio servers in parallel through the manager vs one after another
   (target ratio <= 0.6 at 20 servers on 2 cores).
3. Resident memory of this host process with 20 servers connected.
4. Connect time of a legacy-only server (the knob server with ``--era legacy``, and the npm
   reference server-memory when installed) with ``"protocol": "auto"``: the first start (it
   probes ``server/discover``, then falls back) and later starts (the remembered era, no probe)
   vs ``"protocol": "legacy"`` (target <= 1.1x after the first start).
5. From ``apply`` (the host starting its servers) to a complete tool catalogue (every one of 20
   knob servers' tools in ``manager.tools()``; one server takes 5 s to start): nothing kept vs
   the catalogue kept from the previous start (target <= 50 ms with it). scripts/bench_lsp.py
   measures the same from the language server's ``initialize`` result.

Servers are the demo workspace's notes server (a small mcp SDK server), run as real
subprocesses. Medians are printed; rounds alternate between the two sides so that machine
noise hits both alike.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from mcp import Client, StdioServerParameters  # noqa: E402

from agent_ls.config.settings import LoadedSettings, load_settings  # noqa: E402
from agent_ls.mcp.manager import MCPManager  # noqa: E402

NOTES = REPO / "demo" / "servers" / "notes_server.py"


def rss_mib() -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def settings_for(n: int, tmp: Path) -> LoadedSettings:
    import json

    user = tmp / f"user-{n}.json"
    servers = {f"notes{i:02d}": {"command": sys.executable, "args": [str(NOTES)]} for i in range(n)}
    user.write_text(json.dumps({"mcpServers": servers}))
    return load_settings([], user_settings=user)


async def bench_call(calls: int, tmp: Path) -> None:
    settings = settings_for(1, tmp)
    manager = MCPManager(roots=[tmp])
    await manager.apply(settings)
    await manager.wait_ready(60)
    tool = manager.find_tool("notes00", "search_notes")
    assert tool is not None, manager.status()
    params = StdioServerParameters(command=sys.executable, args=[str(NOTES)])
    async with Client(params, mode="legacy") as bare:
        for _ in range(30):  # warm up both
            await bare.call_tool("search_notes", {"query": "x"})
            await tool.call({"query": "x"})
        host_t: list[float] = []
        bare_t: list[float] = []
        for _ in range(calls):
            t0 = time.perf_counter()
            await bare.call_tool("search_notes", {"query": "x"})
            t1 = time.perf_counter()
            res = await tool.call({"query": "x"})
            t2 = time.perf_counter()
            assert not res.is_error
            bare_t.append(t1 - t0)
            host_t.append(t2 - t1)
    await manager.close()
    mb, mh = statistics.median(bare_t), statistics.median(host_t)
    print(f"tools/call  bare SDK median {mb * 1e3:.3f} ms | via manager median {mh * 1e3:.3f} ms | "
          f"ratio {mh / mb:.3f} (target <= 1.1), n={calls}")


async def connect_parallel(n: int, tmp: Path) -> float:
    settings = settings_for(n, tmp)
    manager = MCPManager(roots=[tmp])
    t0 = time.perf_counter()
    await manager.apply(settings)
    await manager.wait_ready(120)
    dt = time.perf_counter() - t0
    bad = [s for s in manager.status() if s.state != "connected"]
    await manager.close()
    assert not bad, bad
    return dt


async def connect_serial(n: int, tmp: Path) -> float:
    settings = settings_for(n, tmp)
    managers = []
    t0 = time.perf_counter()
    for name in sorted(settings.servers):
        one = LoadedSettings(servers={name: settings.servers[name]})
        m = MCPManager(roots=[tmp])
        await m.apply(one)
        await m.wait_ready(60)
        managers.append(m)
    dt = time.perf_counter() - t0
    await asyncio.gather(*(m.close() for m in managers))
    return dt


async def bench_connect(sizes: list[int], tmp: Path, rounds: int) -> None:
    for n in sizes:
        par, ser = [], []
        for _ in range(rounds):
            ser.append(await connect_serial(n, tmp))
            par.append(await connect_parallel(n, tmp))
        mp, ms = statistics.median(par), statistics.median(ser)
        print(f"connect {n:>2} stdio servers: serial median {ms:.2f} s | parallel median {mp:.2f} s | "
              f"ratio {mp / ms:.2f}" + (" (target <= 0.6)" if n >= 20 else "") + f", rounds={rounds}")


async def bench_memory(n: int, tmp: Path) -> None:
    before = rss_mib()
    settings = settings_for(n, tmp)
    manager = MCPManager(roots=[tmp])
    await manager.apply(settings)
    await manager.wait_ready(120)
    connected = sum(1 for s in manager.status() if s.state == "connected")
    tools = len(manager.tools())
    after = rss_mib()
    await manager.close()
    print(f"memory: host RSS {before:.1f} MiB before, {after:.1f} MiB with {connected} servers connected "
          f"({tools} tools): +{after - before:.1f} MiB, {(after - before) / max(1, connected) * 1024:.0f} KiB/server")


async def connect_once(entry: dict[str, object], tmp: Path, state: object) -> tuple[float, str | None]:
    import json

    user = tmp / "era-user.json"
    user.write_text(json.dumps({"mcpServers": {"s": entry}}))
    manager = MCPManager(roots=[tmp], state=state)  # type: ignore[arg-type]
    started = time.perf_counter()
    await manager.apply(load_settings([], user_settings=user))
    await manager.wait_ready(60)
    took = time.perf_counter() - started
    version = next(s.protocol_version for s in manager.status() if s.name == "s")
    await manager.close()
    return took, version


async def bench_eras(tmp: Path, rounds: int) -> None:
    from agent_ls.config.state import HostState

    knob = REPO / "tests" / "servers" / "knob_server.py"
    memory = REPO / ".tools" / "npm" / "node_modules" / "@modelcontextprotocol" / "server-memory" / "dist" / "index.js"
    servers = {"knob --era legacy": {"command": sys.executable, "args": [str(knob), "--era", "legacy"]}}
    if memory.exists():
        servers["npm server-memory"] = {"command": "node", "args": [str(memory)], "env": {
            "MEMORY_FILE_PATH": str(tmp / "memory.json")}}
    for label, base in servers.items():
        firsts, remembered, legacy = [], [], []
        for r in range(rounds):
            state = HostState(tmp / f"eras-{label.replace(' ', '_')}-{r}.json")
            first, v1 = await connect_once({**base, "protocol": "auto"}, tmp, state)
            firsts.append(first)
            for _ in range(2):  # alternate: remembered auto, then legacy
                took, v2 = await connect_once({**base, "protocol": "auto"}, tmp, state)
                remembered.append(took)
                took, v3 = await connect_once({**base, "protocol": "legacy"}, tmp, state)
                legacy.append(took)
        mf, mr, ml = (statistics.median(x) for x in (firsts, remembered, legacy))
        print(f"connect {label} ({v1}): auto first start median {mf * 1e3:.0f} ms | auto remembered median "
              f"{mr * 1e3:.0f} ms | protocol legacy median {ml * 1e3:.0f} ms | ratio remembered/legacy "
              f"{mr / ml:.2f} (target <= 1.1), first/legacy {mf / ml:.2f}")


async def catalogue_once(user: Path, tmp: Path, store: object, n: int) -> float:
    from agent_ls.config.state import HostState

    manager = MCPManager(roots=[tmp], state=HostState(tmp / "catalogue-state.json"),
                         catalogue=store)  # type: ignore[arg-type]
    settings = load_settings([], user_settings=user)
    started = time.perf_counter()
    await manager.apply(settings)
    while len({t.server for t in manager.tools()}) < n:  # noqa: ASYNC110 - polled like a client would
        await asyncio.sleep(0.001)
    took = time.perf_counter() - started
    await manager.wait_ready(60)  # every server connects (and keeps its catalogue)
    await manager.close()
    return took


async def bench_catalogue(tmp: Path, rounds: int, n: int = 20) -> None:
    import json
    import shutil

    from agent_ls.mcp.catalogue import CatalogueStore

    knob = REPO / "tests" / "servers" / "knob_server.py"
    servers = {f"k{i:02d}": {"command": sys.executable, "args": [str(knob), "--name", f"k{i:02d}"]}
               for i in range(n)}
    servers["k00"]["args"] += ["--slow-start", "5"]  # type: ignore[operator]
    user = tmp / "catalogue-user.json"
    user.write_text(json.dumps({"mcpServers": servers}))
    store = CatalogueStore(tmp / "catalogue")
    cold: list[float] = []
    warm: list[float] = []
    for _ in range(rounds):
        shutil.rmtree(store.directory, ignore_errors=True)
        cold.append(await catalogue_once(user, tmp, store, n))
        warm.append(await catalogue_once(user, tmp, store, n))
    c, w = statistics.median(cold), statistics.median(warm)
    print(f"catalogue: apply -> complete tool catalogue, {n} servers (one starts in 5 s): nothing kept median "
          f"{c * 1e3:.0f} ms | catalogue kept median {w * 1e3:.1f} ms (target <= 50 ms), ratio {w / c:.4f}; "
          f"rounds={rounds}")


async def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--calls", type=int, default=400)
    ap.add_argument("--servers", default="1,5,20")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--only", choices=["memory", "call", "connect", "eras", "catalogue"], default=None)
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        if args.only in (None, "memory"):
            await bench_memory(20, tmp)
        if args.only in (None, "call"):
            await bench_call(args.calls, tmp)
        if args.only in (None, "connect"):
            await bench_connect([int(x) for x in args.servers.split(",")], tmp, args.rounds)
        if args.only in (None, "eras"):
            await bench_eras(tmp, max(args.rounds, 5))
        if args.only in (None, "catalogue"):
            await bench_catalogue(tmp, args.rounds)


if __name__ == "__main__":
    asyncio.run(main())
