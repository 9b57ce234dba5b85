"""Language server benchmarks: medians and ratios against baselines measured in the same run.

    .venv/bin/python scripts/bench_lsp.py [--starts 10] [--calls 200] [--prompts 15]

1. Process start to the ``initialize`` result: ``agent-ls`` (``python -m agent_ls.cli``, what
   the ``agent-ls`` command runs), also with three MCP servers configured, vs a bare pygls
   server started the same way (``python bare_server.py``). Target ratio <= 1.2 (issue 30
   item 3). ``python -m agent_ls.server`` (the server package alone) is shown too.
   ``--baseline DIR`` adds another checkout (e.g. /work/main) measured in the same rounds.
2. A direct MCP tool call through LSP (``mcp/callTool`` on the knob server's read-only
   ``echo``) vs a bare pygls custom-request round trip plus a bare MCP SDK ``call_tool`` of
   the same tool on the same kind of server. Target ratio <= 1.3.
3. From sending ``agent/prompt`` to the first ``text`` event vs the scripted LLM's first byte
   (the scripted OpenAI-compatible server runs in this process, so its timestamps share the
   clock). Warm prompts; the first one, sent as soon as the MCP servers are connected (while
   litellm may still be importing in the background), is shown apart.
4. From the ``initialize`` result to a complete tool catalogue in ``mcp/status`` (every one of
   20 knob servers listed with its tools; one of them takes 5 s to start): the first start
   (nothing kept) vs later starts (the catalogue kept in the data folder). Target <= 50 ms
   with the kept catalogue. Timed when the complete answer has been read off the server's
   stdout (what the server delivers); the time this Python client then takes to decode it,
   while 20 server processes start on the same cores, is shown apart.

5. The first prompt of a new server vs a later one, with the background warm-up (litellm and
   the agent imported once the MCP host has started) and without it (``AGENT_LS_WARMUP=0``):
   Send -> first ``text`` event of a prompt sent ``--typing`` seconds (5) after the
   ``initialize`` result, as a user who opens the chat and types does, and of the prompt after
   it. Target: first <= later + 0.3 s with the warm-up. The ``initialize`` time of both is shown
   too (target: unchanged: the warm-up starts after the result is sent).

6. The editor setting of issue 30 item 2: three MCP servers on their first start (nothing kept),
   one slow to start (12 s), the warm-up racing them; Send -> first ``text`` event of a prompt
   sent ``--typing-servers`` seconds (2.5) after the ``initialize`` result and of the prompt
   after it. Target: first <= second + 0.3 s. With ``--baseline DIR`` both checkouts alternate.
   The same in the editor itself (code-server, the extension, the chat): scripts/bench_editor_prompt.py.

Every process reads compiled bytecode as an installed package does (kept in a folder outside the
checkouts, see ``PYCACHE``; ``--source``: compiled from source at every start, which is what a
``PYTHONDONTWRITEBYTECODE=1`` environment without ``__pycache__`` folders does).
Rounds alternate between the sides so that machine noise hits both alike. Every process is a
real subprocess talking LSP over stdio (pygls' client).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from lsprotocol import types as lsp  # noqa: E402
from pygls.lsp.client import LanguageClient  # noqa: E402

from tests.llm.scripted_server import ScriptedLLM, text  # noqa: E402
from tests.servers.launch import KNOB_SERVER  # noqa: E402

BARE_SERVER = '''
from pygls.lsp.server import LanguageServer

server = LanguageServer("bare", "1.0")


@server.feature("bench/echo")
async def echo(ls, params):
    return {"text": params.text}


server.start_io()
'''

# -P: the current folder is not put first on sys.path (with -m it is), so PYTHONPATH alone says
# which checkout runs (--baseline measured this checkout's code when run from it).
AGENT_LS = [sys.executable, "-P", "-m", "agent_ls.cli"]
AGENT_LS_SERVER_PKG = [sys.executable, "-P", "-m", "agent_ls.server"]


PYCACHE: Path | None = Path(tempfile.gettempdir()) / "agent-ls-bench-pycache"
"""Where the benchmarked processes keep their bytecode (``--source`` : none, every start compiles
agent-ls from source, as with ``PYTHONDONTWRITEBYTECODE=1`` and no ``__pycache__``). Outside the
checkouts, so that a ``--baseline`` checkout is not written to; kept between runs."""


def med(xs: list[float]) -> float:
    return statistics.median(xs)


THREE_SERVERS = {  # the editor setting of issue 30: three user servers, one slow to start (12 s)
    "knob": {"command": sys.executable, "args": [str(KNOB_SERVER)]},
    "knob2": {"command": sys.executable, "args": [str(KNOB_SERVER), "--name", "knob2"]},
    "slow": {"command": sys.executable, "args": [str(KNOB_SERVER), "--name", "slow", "--slow-start", "12"]},
}


class Env:
    def __init__(self, tmp: Path, llm: ScriptedLLM, servers: dict[str, Any] | None = None) -> None:
        tmp.mkdir(exist_ok=True)
        self.ws = tmp / "ws"
        self.ws.mkdir()
        self.config = tmp / "config"
        self.config.mkdir()
        (self.config / "settings.json").write_text(json.dumps({
            "model": "openai/scripted", "apiBase": llm.openai_base,
            "agent": {"maxRetries": 0, "deferMcpTools": False},
            "mcpServers": servers or {"knob": {"command": sys.executable, "args": [str(KNOB_SERVER)]}},
        }))
        self.data = tmp / "data"
        self.bare = tmp / "bare_server.py"
        self.bare.write_text(BARE_SERVER)
        self.vars = dict(os.environ)
        self.vars.update({"AGENT_LS_CONFIG_DIR": str(self.config), "AGENT_LS_DATA_DIR": str(self.data),
                          "OPENAI_API_KEY": "x", "PYTHONPATH": str(REPO)})
        if PYCACHE is not None:  # every side reads compiled bytecode, as an installed package does
            self.vars.pop("PYTHONDONTWRITEBYTECODE", None)
            self.vars["PYTHONPYCACHEPREFIX"] = str(PYCACHE)

    def using(self, code: Path | None) -> dict[str, str]:
        """The environment with ``code`` (another checkout of agent-ls, the baseline) imported
        instead of this one."""
        return self.vars if code is None else {**self.vars, "PYTHONPATH": str(code)}


async def start(cmd: list[str], env: Env, code: Path | None = None) -> tuple[LanguageClient, float]:
    client = LanguageClient("bench", "1.0")
    t0 = time.perf_counter()
    await client.start_io(*cmd, env=env.using(code))
    await client.initialize_async(lsp.InitializeParams(
        capabilities=lsp.ClientCapabilities(),
        workspace_folders=[lsp.WorkspaceFolder(uri=env.ws.as_uri(), name="ws")]))
    dt = time.perf_counter() - t0
    client.initialized(lsp.InitializedParams())
    return client, dt


async def stop(client: LanguageClient) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


async def bench_start(env: Env, env3: Env, rounds: int, baseline: Path | None) -> None:
    sides: list[tuple[str, list[str], Env, Path | None]] = [
        ("bare pygls", [sys.executable, str(env.bare)], env, None),
        ("agent-ls (-m agent_ls.cli)", AGENT_LS, env, None),
        ("agent-ls, three servers configured", AGENT_LS, env3, None),
        ("-m agent_ls.server", AGENT_LS_SERVER_PKG, env, None),
    ]
    if baseline is not None:
        sides += [("baseline agent-ls", AGENT_LS, env, baseline),
                  ("baseline agent-ls, three servers configured", AGENT_LS, env3, baseline)]
    times: dict[str, list[float]] = {name: [] for name, *_ in sides}
    for i in range(rounds + 1):
        for name, cmd, e, code in sides:
            client, dt = await start(cmd, e, code)
            await stop(client)
            if i > 0:  # the first round warms the OS file cache
                times[name].append(dt)
    b = med(times["bare pygls"])
    print(f"1. start -> initialize result (target ratio <= 1.2 against bare pygls); rounds={rounds}, load {load()}")
    for name, *_ in sides:
        print(f"   {name}: median {med(times[name]) * 1e3:.0f} ms, ratio {med(times[name]) / b:.2f}")


def load() -> str:
    return " ".join(f"{x:.1f}" for x in os.getloadavg())


async def wait_connected(client: LanguageClient, name: str) -> None:
    for _ in range(600):
        status = await client.protocol.send_request_async("mcp/status", {})
        if any(s.name == name and s.state == "connected" for s in status.servers):
            return
        await asyncio.sleep(0.05)
    raise RuntimeError(f"{name} did not connect")


def model_library_loaded(info: Any) -> bool:
    """``agent/serverInfo`` says the server's model library is loaded: attached to the user's
    model host (issue 46), or litellm imported in its own process (``AGENT_LS_MODEL_HOST=0``, or
    a checkout from before the host, which has no ``modelLibrary``)."""
    return getattr(info, "modelLibrary", "none") != "none" or bool(info.loadedModules.litellm)


async def wait_litellm(client: LanguageClient) -> None:
    """The server loads the model library in the background after the MCP servers settle; wait
    for it so that the load does not compete with the measured calls."""
    for _ in range(1200):
        info = await client.protocol.send_request_async("agent/serverInfo", {})
        if model_library_loaded(info):
            return
        await asyncio.sleep(0.1)
    raise RuntimeError("the model library was not loaded")


async def bench_call(env: Env, calls: int) -> None:
    from mcp import Client, StdioServerParameters

    agent, _ = await start(AGENT_LS, env)
    bare, _ = await start([sys.executable, str(env.bare)], env)
    try:
        await wait_connected(agent, "knob")
        await wait_litellm(agent)
        params = StdioServerParameters(command=sys.executable, args=[str(KNOB_SERVER)])
        async with Client(params, mode="legacy") as sdk:
            lsp_t: list[float] = []
            rt_t: list[float] = []
            sdk_t: list[float] = []
            call = {"server": "knob", "tool": "echo", "arguments": {"text": "x"}}
            for i in range(calls + 30):
                t0 = time.perf_counter()
                await bare.protocol.send_request_async("bench/echo", {"text": "x"})
                t1 = time.perf_counter()
                res = await sdk.call_tool("echo", {"text": "x"})
                t2 = time.perf_counter()
                out = await agent.protocol.send_request_async("mcp/callTool", call)
                t3 = time.perf_counter()
                assert not res.is_error and out.content == "x" and not out.isError
                if i >= 30:  # warm-up
                    rt_t.append(t1 - t0)
                    sdk_t.append(t2 - t1)
                    lsp_t.append(t3 - t2)
        base = med(rt_t) + med(sdk_t)
        print(f"2. direct tool call: bare pygls round trip median {med(rt_t) * 1e3:.3f} ms + bare SDK call_tool "
              f"median {med(sdk_t) * 1e3:.3f} ms = {base * 1e3:.3f} ms | mcp/callTool through agent-ls median "
              f"{med(lsp_t) * 1e3:.3f} ms, ratio {med(lsp_t) / base:.2f} (target <= 1.3); n={calls}")
    finally:
        await stop(agent)
        await stop(bare)


async def bench_prompt(env: Env, llm: ScriptedLLM, prompts: int) -> None:
    agent, _ = await start(AGENT_LS, env)
    first_text: dict[str, float] = {}

    @agent.feature("agent/event")
    def on_event(params: Any) -> None:
        if params.event.type == "text" and "t" not in first_text:
            first_text["t"] = time.perf_counter()

    try:
        await wait_connected(agent, "knob")
        rows: list[tuple[float, float, float, float]] = []
        for i in range(prompts + 1):
            llm.script(text("hello there, general", chunks=3))
            first_text.clear()
            t0 = time.perf_counter()
            result = await agent.protocol.send_request_async("agent/prompt", {"text": f"hi {i}"})
            t_end = time.perf_counter()
            assert result.stopReason == "end", result
            req = llm.requests[-1]
            assert req.first_byte_at is not None
            row = (req.received_at - t0, req.first_byte_at - t0, first_text["t"] - t0, t_end - t0)
            if i == 0:
                print(f"3. first prompt (litellm import may still be running): LLM request after {row[0] * 1e3:.0f} ms, first byte "
                      f"{row[1] * 1e3:.0f} ms, first text event {row[2] * 1e3:.0f} ms")
            else:
                rows.append(row)
        recv, fb, ev, end = (med([r[k] for r in rows]) for k in range(4))
        print(f"3. warm prompt -> first text event: LLM got the request after {recv * 1e3:.1f} ms, sent its first "
              f"byte at {fb * 1e3:.1f} ms; first text event at {ev * 1e3:.1f} ms (+{(ev - fb) * 1e3:.1f} ms after "
              f"the first byte), ratio {ev / fb:.2f}; turn done at {end * 1e3:.1f} ms; n={prompts}")
    finally:
        await stop(agent)


def timestamp_bodies(client: LanguageClient) -> list[tuple[float, bytes]]:
    """Record when each message body the server sends has been read off the pipe, before the
    client decodes it (pygls' reader calls ``readexactly`` for each body): the time the answer
    is there, apart from the time this Python client then takes to build objects from it."""
    server = client._server  # noqa: SLF001
    assert server is not None and server.stdout is not None
    reader = server.stdout
    bodies: list[tuple[float, bytes]] = []
    read = reader.readexactly

    async def readexactly(n: int) -> bytes:
        body = await read(n)
        bodies.append((time.perf_counter(), body))
        return body

    reader.readexactly = readexactly  # type: ignore[method-assign]
    return bodies


async def catalogue_complete(client: LanguageClient, n: int, bodies: list[tuple[float, bytes]]) -> tuple[float, float, int]:
    """Seconds from now until mcp/status lists ``n`` servers, each with tools: when that answer
    was read off the pipe, when the client had decoded it, and the answer's size in bytes."""
    t0 = time.perf_counter()
    while True:
        seen = len(bodies)
        status = await client.protocol.send_request_async("mcp/status", {})
        if len(status.servers) == n and all(s.toolCount > 0 for s in status.servers):
            t_decoded = time.perf_counter()
            answers = [(t, len(body)) for t, body in bodies[seen:] if b'"servers"' in body and b'"result"' in body]
            t_wire, size = answers[-1] if answers else (t_decoded, 0)
            return t_wire - t0, t_decoded - t0, size
        if os.environ.get("BENCH_DEBUG"):
            print(f"   {1e3 * (time.perf_counter() - t0):.0f} ms: {len(status.servers)} servers, "
                  f"{sum(1 for s in status.servers if s.toolCount > 0)} with tools")
        await asyncio.sleep(0.005)


async def bench_catalogue(tmp: Path, llm: ScriptedLLM, rounds: int, n: int = 20) -> None:
    import shutil

    root = tmp / "catalogue-bench"
    root.mkdir()
    env = Env(root, llm)
    servers = {f"k{i:02d}": {"command": sys.executable, "args": [str(KNOB_SERVER), "--name", f"k{i:02d}"]}
               for i in range(n)}
    servers["k00"]["args"] += ["--slow-start", "5"]  # type: ignore[operator]
    settings = json.loads((env.config / "settings.json").read_text())
    settings["mcpServers"] = servers
    (env.config / "settings.json").write_text(json.dumps(settings))
    catalogue = root / "data" / "mcp-catalogue"
    cold: list[tuple[float, float, int]] = []
    warm: list[tuple[float, float, int]] = []
    for _ in range(rounds):
        for kept, out in ((False, cold), (True, warm)):
            if not kept:
                shutil.rmtree(catalogue, ignore_errors=True)
            client, _ = await start(AGENT_LS, env)
            out.append(await catalogue_complete(client, n, timestamp_bodies(client)))
            await wait_connected(client, "k00")  # every server connects (and keeps its catalogue)
            await stop(client)
    c, w = med([r[1] for r in cold]), med([r[1] for r in warm])
    c_wire, w_wire = med([r[0] for r in cold]), med([r[0] for r in warm])
    print(f"4. initialize -> complete tool catalogue, {n} servers (one starts in 5 s), answer read off the pipe: "
          f"nothing kept median {c_wire * 1e3:.0f} ms | catalogue kept median {w_wire * 1e3:.0f} ms "
          f"(target <= 50 ms), ratio {w_wire / c_wire:.3f}; rounds={rounds}")
    print(f"   decoded by this Python client (pygls): nothing kept {c * 1e3:.0f} ms | kept {w * 1e3:.0f} ms; "
          f"kept rounds at the pipe {[round(r[0] * 1e3) for r in warm]} ms, decoded {[round(r[1] * 1e3) for r in warm]} ms; "
          f"answer {warm[-1][2] // 1024} KiB")


async def bench_first_prompt(env: Env, llm: ScriptedLLM, rounds: int, typing: float) -> None:
    rows: dict[bool, list[tuple[float, float, float]]] = {True: [], False: []}
    warmed: list[float] = []
    for _ in range(rounds):
        for warm in (True, False):
            env.vars.pop("AGENT_LS_WARMUP", None)
            if not warm:
                env.vars["AGENT_LS_WARMUP"] = "0"
            agent, init = await start(AGENT_LS, env)
            first_text: dict[str, float] = {}

            @agent.feature("agent/event")
            def on_event(params: Any, first_text: dict[str, float] = first_text) -> None:
                if params.event.type == "text" and "t" not in first_text:
                    first_text["t"] = time.perf_counter()

            try:
                t_init = time.perf_counter()
                loaded_after: list[float] = []

                async def watch_warm_up(client: LanguageClient = agent, out: list[float] = loaded_after,
                                        t_init: float = t_init) -> None:
                    while True:
                        info = await client.protocol.send_request_async("agent/serverInfo", {})
                        if model_library_loaded(info):
                            out.append(time.perf_counter() - t_init)
                            return
                        await asyncio.sleep(0.1)

                watcher = asyncio.ensure_future(watch_warm_up())
                await asyncio.sleep(typing)
                times = []
                for i in range(2):
                    llm.script(text("hello there, general", chunks=3))
                    first_text.clear()
                    t0 = time.perf_counter()
                    result = await agent.protocol.send_request_async("agent/prompt", {"text": f"hi {i}"})
                    assert result.stopReason == "end", result
                    times.append(first_text["t"] - t0)
                watcher.cancel()
                if warm and loaded_after:
                    warmed.append(loaded_after[0])
                rows[warm].append((init, times[0], times[1]))
            finally:
                await stop(agent)
    env.vars.pop("AGENT_LS_WARMUP", None)
    for warm in (True, False):
        init, first, later = (med([r[k] for r in rows[warm]]) for k in range(3))
        label = "with warm-up   " if warm else "without warm-up"
        print(f"5. {label}: initialize median {init * 1e3:.0f} ms; Send -> first text, first prompt "
              f"({typing:.0f} s after start) median {first * 1e3:.0f} ms | later prompt median {later * 1e3:.0f} ms, "
              f"first - later {(first - later) * 1e3:+.0f} ms (target <= +300 ms with the warm-up); rounds={rounds}")
    (iw, fw), (io, fo) = ([med([r[k] for r in rows[w]]) for k in range(2)] for w in (True, False))
    if warmed:
        print(f"5. the warm-up (litellm imported in the background) was done {med(warmed) * 1e3:.0f} ms after the "
              f"initialize result (median): a first prompt sent later than that is as fast as a later one")
    print(f"5. warm-up: initialize ratio {iw / io:.2f} (target ~1.0); first prompt {fw * 1e3:.0f} vs {fo * 1e3:.0f} ms "
          f"without, ratio {fw / fo:.2f}")


async def bench_first_prompt_servers(tmp: Path, llm: ScriptedLLM, rounds: int, typing: float,
                                     baseline: Path | None) -> None:
    """Send -> first text event of the first prompt and of the second, in the editor setting:
    three MCP servers starting (their first start: nothing kept), one of them slow (12 s), and
    the warm-up racing them; the prompt is sent ``typing`` seconds after the initialize result."""
    import shutil

    env = Env(tmp / "first-prompt-3", llm, THREE_SERVERS)
    sides: list[tuple[str, Path | None]] = [("this checkout", None)]
    if baseline is not None:
        sides.append(("baseline", baseline))
    rows: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in sides}
    for _ in range(rounds):
        for name, code in sides:
            shutil.rmtree(env.data, ignore_errors=True)  # a first start: no catalogue kept
            agent, _ = await start(AGENT_LS, env, code)
            first_text: dict[str, float] = {}

            @agent.feature("agent/event")
            def on_event(params: Any, first_text: dict[str, float] = first_text) -> None:
                if params.event.type == "text" and "t" not in first_text:
                    first_text["t"] = time.perf_counter()

            if os.environ.get("BENCH_DEBUG"):  # the server's log lines, timed from its initialize result
                t_init = time.perf_counter()

                @agent.feature("window/logMessage")
                def on_log(params: Any, t_init: float = t_init) -> None:
                    print(f"   {(time.perf_counter() - t_init) * 1e3:7.0f} ms  {params.message[:160]}")

            try:
                await asyncio.sleep(typing)
                times = []
                for i in range(2):
                    llm.script(text("hello there, general", chunks=3))
                    first_text.clear()
                    t0 = time.perf_counter()
                    if os.environ.get("BENCH_DEBUG"):
                        print(f"   {(t0 - t_init) * 1e3:7.0f} ms  SEND prompt {i}")
                    result = await agent.protocol.send_request_async("agent/prompt", {"text": f"hi {i}"})
                    assert result.stopReason == "end", result
                    times.append(first_text["t"] - t0)
                rows[name].append((times[0], times[1]))
            finally:
                await stop(agent)
    for name, _ in sides:
        first, second = (med([r[k] for r in rows[name]]) for k in range(2))
        print(f"6. three servers starting (one 12 s), {name}: Send -> first text, first prompt ({typing:.1f} s after "
              f"initialize) median {first * 1e3:.0f} ms | second prompt median {second * 1e3:.0f} ms, first - second "
              f"{(first - second) * 1e3:+.0f} ms (target <= +300 ms); rounds={rounds}, load {load()}")
        print(f"   first prompts by round: {[round(r[0] * 1e3) for r in rows[name]]} ms")


async def main() -> None:
    global PYCACHE
    import logging

    logging.getLogger("pygls").setLevel(logging.ERROR)  # the client ignores our notifications
    ap = argparse.ArgumentParser()
    ap.add_argument("--starts", type=int, default=10)
    ap.add_argument("--calls", type=int, default=200)
    ap.add_argument("--prompts", type=int, default=15)
    ap.add_argument("--catalogue-rounds", type=int, default=3)
    ap.add_argument("--first-prompt-rounds", type=int, default=3)
    ap.add_argument("--typing", type=float, default=5.0, help="seconds from start to the first prompt")
    ap.add_argument("--typing-servers", type=float, default=2.5,
                    help="seconds from start to the first prompt with three servers starting")
    ap.add_argument("--baseline", type=Path, default=None,
                    help="another checkout of agent-ls (e.g. the main branch) measured in the same run, interleaved "
                         "(start and first-prompt-servers)")
    ap.add_argument("--source", action="store_true",
                    help="no bytecode cache: every process compiles agent-ls from source (PYTHONDONTWRITEBYTECODE "
                         "as inherited); the default keeps bytecode in " + str(PYCACHE))
    ap.add_argument("--only", choices=["start", "initialize", "call", "prompt", "catalogue", "first-prompt", "first-prompt-servers"],
                    default=None)
    args = ap.parse_args()
    if args.source:
        PYCACHE = None
    print(f"bytecode: {'none (compiled from source)' if PYCACHE is None else PYCACHE}; load {load()}")
    with tempfile.TemporaryDirectory() as d, ScriptedLLM() as llm:
        env = Env(Path(d), llm)
        if args.only in (None, "start", "initialize"):
            await bench_start(env, Env(Path(d) / "three", llm, THREE_SERVERS), args.starts, args.baseline)
        if args.only in (None, "call"):
            await bench_call(env, args.calls)
        if args.only in (None, "prompt"):
            await bench_prompt(env, llm, args.prompts)
        if args.only in (None, "catalogue"):
            await bench_catalogue(Path(d), llm, args.catalogue_rounds)
        if args.only in (None, "first-prompt"):
            await bench_first_prompt(env, llm, args.first_prompt_rounds, args.typing)
        if args.only in (None, "first-prompt-servers"):
            await bench_first_prompt_servers(Path(d), llm, args.first_prompt_rounds, args.typing_servers,
                                             args.baseline)


if __name__ == "__main__":
    asyncio.run(main())
