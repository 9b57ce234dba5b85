"""Start-up of the terminal chat and the ACP agent: process start to the first model request,
peak memory after a 20-step turn, time per tool step (issue 46).

    .venv/bin/python scripts/bench_startup.py [--runs 5] [--steps 20] [--turns 3] [--baseline DIR]
                                              [--in-process] [--lsp] [--servers] [--files N]

Side by side in one run, against the same scripted OpenAI-compatible LLM (in this process, so its
timestamps share the clock), runs interleaved so that machine noise hits every side alike:

- floor: a bare ``python`` that imports httpx and posts the same request (no agent at all);
- ``agent-ls chat`` one-shot (``-w WS --model openai/scripted hi``) and ``agent-ls acp``
  (``initialize``, ``session/new``, ``session/prompt``, sent as soon as each answer arrives):
  spawn -> the LLM received the first model request;
- the same commands of ``--baseline DIR`` (a checkout of main, run with this venv's Python and
  ``PYTHONPATH=DIR``: ``git worktree add --detach /work/base-startup main``).

Every process reads compiled bytecode, as an installed agent-ls does (pip compiles it), kept in a
folder outside the checkouts (``PYCACHE``, as scripts/bench_lsp.py): ``PYTHONDONTWRITEBYTECODE``
is dropped for them, else every run compiles our sources again and the figures measure the
compiler. The floor and every side compile once, in the cold run.

This tree's chat, ACP and language server attach to the user's model host
(:mod:`agent_ls.agent.model_host`); the bench gives each side a fresh runtime folder of its own, so
its first run starts the host (``cold``, reported apart) and the others find it warm (the medians).
The language server runs with what VS Code's extension host adds to its environment
(:data:`EDITOR_ENV`) and still shares the terminals' host. ``AGENT_LS_MODEL_HOST=0`` sides show the
in-process path of this tree too.

Then ``--turns`` turns of ``--steps`` steps per side, interleaved (half ``bash``, half
``read_file``, allowed by the user settings): peak RSS of the chat process (``ru_maxrss``), of the
ACP process (``VmHWM``) and of the model host, and the median time per tool step over all of them
(the LLM's first chunk to the next LLM request: the agent's own time, the tool included), and apart
the median of each turn's first step (its tool waits for the turn's checkpoint: a workspace's first
snapshot in a new process, with ``--files``, shows there); with
``--lsp`` the language server's too (one ``agent/prompt`` turn per side and round, after its
model library loaded), and the memory of one editor window (the language server and the model
host it uses) and of an editor window, a terminal chat and an ACP agent together: the sum of the
peak RSS of the distinct processes (each side's hosts counted once). Goals: first request <= 0.5 s
and <= 3x the floor; peak RSS <= 200 MB; per-step time <= the baseline's + 10%.

``--servers`` measures only ``agent-ls chat`` one-shot and ``agent-ls acp`` with one stdio MCP server
(the knob test server) in the user settings, spawn -> first model request, beside the floor
(:func:`with_a_server`): the MCP host starts in the background, once the first request has gone
out, so the request should not wait for the MCP SDK nor compete with its import.

``--files N`` puts N files (in 50 folders) in the workspace instead of 5: every process takes the
workspace's first snapshot for its checkpoints (in the background, after the first request has gone
out), so a larger workspace shows whether that snapshot still competes with the first request.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import logging
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from acp import spawn_agent_process, text_block  # noqa: E402
from acp.schema import ClientCapabilities  # noqa: E402

from agent_ls.agent import model_host  # noqa: E402
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls  # noqa: E402

PYCACHE = Path(tempfile.gettempdir()) / "agent-ls-bench-pycache"
"""Bytecode of every process measured (see the module docstring)."""

FLOOR = """
import sys, httpx
httpx.post(sys.argv[1] + "/chat/completions", json={
    "model": "scripted", "stream": True, "stream_options": {"include_usage": True},
    "messages": [{"role": "user", "content": "hi"}]}, headers={"Authorization": "Bearer x"}).read()
"""


class Side:
    """One way to run agent-ls: this tree (model host or in-process) or the baseline."""

    def __init__(self, name: str, pythonpath: Path, extra: dict[str, str]) -> None:
        self.name = name
        self.pythonpath = pythonpath
        self.extra = extra
        self.chat: list[float] = []
        self.acp: list[float] = []
        self.cold: dict[str, float] = {}
        self.turn: dict[str, Any] = {}

    def env(self, base: dict[str, str]) -> dict[str, str]:
        return {**base, "PYTHONPATH": str(self.pythonpath), **self.extra}


class Quiet:
    """The ACP client: takes the updates, asks nothing."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        pass

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("the benchmark's settings allow every tool it uses")


def first_request(llm: ScriptedLLM, since: int) -> float:
    return next(r.received_at for r in llm.requests[since:] if r.path.endswith("/chat/completions"))


def chat_once(llm: ScriptedLLM, ws: Path, env: dict[str, str], prompt: str) -> tuple[float, int]:
    """(spawn -> first model request, peak RSS in KB) of one ``agent-ls chat`` one-shot."""
    since = len(llm.requests)
    with tempfile.TemporaryFile() as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen([sys.executable, "-m", "agent_ls.cli", "chat", "-w", str(ws), "--model",
                                 "openai/scripted", prompt], env=env, stdin=subprocess.DEVNULL, cwd=ws,
                                stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)  # the child's own peak RSS
        proc.returncode = os.waitstatus_to_exitcode(status)
        if proc.returncode != 0:
            err.seek(0)
            raise RuntimeError(f"chat failed ({proc.returncode}): {err.read().decode()[-2000:]}")
    return first_request(llm, since) - t0, int(usage.ru_maxrss)


async def acp_once(llm: ScriptedLLM, ws: Path, env: dict[str, str], prompt: str) -> tuple[float, int]:
    """(spawn -> first model request of ``agent-ls acp``'s first ``session/prompt``, its peak RSS in KB
    once the prompt ended)."""
    since = len(llm.requests)
    t0 = time.perf_counter()
    async with spawn_agent_process(Quiet(), sys.executable, "-m", "agent_ls.cli", "acp", env=env, cwd=ws,
                                   transport_kwargs={"stderr": subprocess.DEVNULL}) as (conn, proc):
        await conn.initialize(protocol_version=1, client_capabilities=ClientCapabilities())
        sid = (await conn.new_session(cwd=str(ws), mcp_servers=[])).session_id
        result = await conn.prompt(session_id=sid, prompt=[text_block(prompt)])
        assert result.stop_reason == "end_turn", result
        peak = vm_hwm(proc.pid)
    return first_request(llm, since) - t0, peak


EDITOR_ENV = {"VSCODE_PID": "4242", "VSCODE_IPC_HOOK": "/tmp/vscode-ipc-bench.sock", "VSCODE_NLS_CONFIG": "{}",
              "ELECTRON_RUN_AS_NODE": "1", "VSCODE_HANDLES_UNCAUGHT_ERRORS": "true"}
"""What VS Code's extension host adds to the language server's environment (each window its own):
the language server runs with it, as in the editor, and still shares the terminals' model host."""


async def lsp_turn(llm: ScriptedLLM, ws: Path, env: dict[str, str], steps: int) -> tuple[int, int | None]:
    """(peak RSS in KB, the model host's pid or None) of the language server (``python -m
    agent_ls.cli`` with :data:`EDITOR_ENV`: the editor's process) after one turn of ``steps`` steps
    (``agent/prompt``), the model library loaded first (the editor's background warm-up). None:
    litellm in the server's own process (``AGENT_LS_MODEL_HOST=0``, a checkout from before)."""
    # lazy: pygls' client only for this part
    from bench_lsp import model_library_loaded
    from lsprotocol import types as lsp
    from pygls.lsp.client import LanguageClient

    logging.getLogger("pygls").setLevel(logging.ERROR)  # (the server's notifications: nobody listens)
    client = LanguageClient("bench", "1.0")
    await client.start_io(sys.executable, "-m", "agent_ls.cli", env={**env, **EDITOR_ENV}, cwd=str(ws))
    try:
        await client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), workspace_folders=[lsp.WorkspaceFolder(uri=ws.as_uri(), name="ws")]))
        client.initialized(lsp.InitializedParams())
        for _ in range(1200):
            info = await client.protocol.send_request_async("agent/serverInfo", {})
            if model_library_loaded(info):
                break
            await asyncio.sleep(0.1)
        script_turn(llm, steps, ws)
        result = await client.protocol.send_request_async("agent/prompt", {"text": "do the steps"})
        assert result.stopReason == "end", result
        server = client._server  # noqa: SLF001
        assert server is not None
        return vm_hwm(server.pid), getattr(info, "modelHostPid", None)
    finally:
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()


def vm_hwm(pid: int) -> int:
    """Peak RSS (KB) of a live process."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmHWM:"):
            return int(line.split()[1])
    return 0


def script_turn(llm: ScriptedLLM, steps: int, ws: Path) -> None:
    for i in range(steps):
        if i < steps // 2:
            llm.script(tool_calls([("bash", {"command": f"echo step {i}"})]))
        else:
            llm.script(tool_calls([("read_file", {"path": f"f{i % 5}.txt"})]))
    llm.script(text("done"))


def step_times(llm: ScriptedLLM, since: int) -> list[float]:
    """(next request received - this request's first chunk written) for each step of the turn: the
    agent's own time per tool step (the tool runs inside it)."""
    reqs = [r for r in llm.requests[since:] if r.path.endswith("/chat/completions")]
    return [b.received_at - a.first_chunk_at for a, b in zip(reqs, reqs[1:], strict=False)
            if a.first_chunk_at is not None]


def host_pids(runtime: Path) -> list[int]:
    pids = []
    for sock in runtime.glob("model-*.sock"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            pids.append(model_host._hello(sock))
    return pids


def floor_once(llm: ScriptedLLM, ws: Path, base: dict[str, str]) -> float:
    """The floor: spawn -> first model request of a bare python posting the request with httpx."""
    since = len(llm.requests)
    llm.script(text("hello"))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, "-c", FLOOR, llm.openai_base], check=True, env=base, cwd=ws)
    return first_request(llm, since) - t0


def with_a_server(llm: ScriptedLLM, ws: Path, config: Path, base: dict[str, str], sides: list[Side],
                  runs: int) -> None:
    """``--servers``: spawn -> first model request of ``agent-ls chat`` one-shot and of ``agent-ls
    acp`` (first ``session/prompt``) with one stdio MCP server in the user settings (``config`` gets
    them), each side and the floor interleaved; the medians of the warm runs (run 0 is cold:
    compiles, starts the model host)."""
    # lazy: the test servers' launcher, for this part only
    from tests.servers.launch import knob_stdio_params

    settings = json.loads((config / "settings.json").read_text())
    settings["mcpServers"] = {"knob": knob_stdio_params()}
    (config / "settings.json").write_text(json.dumps(settings))
    floor: list[float] = []
    times: dict[str, dict[str, list[float]]] = {side.name: {"chat": [], "acp": []} for side in sides}
    for r in range(runs + 1):
        t = floor_once(llm, ws, base)
        if r:
            floor.append(t)
        for side in sides:
            llm.script(text("hello"))
            t, _ = chat_once(llm, ws, side.env(base), f"hi {r}")
            llm.script(text("hello"))
            a, _ = asyncio.run(acp_once(llm, ws, side.env(base), f"hi {r}"))
            if r:
                times[side.name]["chat"].append(t)
                times[side.name]["acp"].append(a)
    f = statistics.median(floor)
    print(f"\none stdio MCP server configured: process start -> first model request, median of {runs} warm runs")
    print(f"  floor: python + httpx posting the request   {f:.3f} s")
    for side in sides:
        print(f"  {side.name}")
        for what, label in (("chat", "chat one-shot"), ("acp", "acp          ")):
            runs_of = times[side.name][what]
            c = statistics.median(runs_of)
            print(f"    {label}  {c:.3f} s ({c / f:.1f}x floor)  runs {' '.join(f'{x:.3f}' for x in runs_of)}")
    ref = times[sides[-1].name]
    for side in sides[:-1]:
        mine = times[side.name]
        print(f"  {side.name} / {sides[-1].name}: chat "
              f"{statistics.median(mine['chat']) / statistics.median(ref['chat']):.2f}, acp "
              f"{statistics.median(mine['acp']) / statistics.median(ref['acp']):.2f}")


def side_runtime(side: Side) -> Path:
    return Path(side.extra["AGENT_LS_RUNTIME_DIR"])


def own_runtime_folders(sides: list[Side], runtime: Path) -> None:
    """A runtime folder per side: each side's model hosts are found (and measured) apart."""
    for i, side in enumerate(sides):
        side.extra.setdefault("AGENT_LS_RUNTIME_DIR", str(runtime / f"side{i}"))


def print_memory(sides: list[Side], side_hosts: dict[str, dict[int, int]], lsp: bool) -> None:
    """Each side's model hosts, and the memory of what a user runs, as the sum of the peak RSS of
    its distinct processes: one editor window (the language server, and the host it attached to),
    and an editor window, a terminal chat and an ACP agent at once (their hosts counted once)."""
    print("\nmemory: peak RSS of each process, summed over the distinct processes a user runs")
    for side in sides:
        t, hosts = side.turn, side_hosts.get(side.name, {})
        print(f"  {side.name}")
        for pid, kb in hosts.items():
            print(f"    model host (pid {pid})  {kb / 1024:6.0f} MB")
        if not lsp:
            continue
        window = t["lsp_rss"] + hosts.get(t.get("lsp_host") or -1, 0)
        everything = t["lsp_rss"] + t["chat_rss"] + t["acp_rss"] + sum(hosts.values())
        print(f"    one editor window (language server + its model host)  {window / 1024:6.0f} MB")
        print(f"    editor window + terminal chat + ACP agent ({3 + len(hosts)} processes)  "
              f"{everything / 1024:6.0f} MB")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--steps", type=int, default=20)
    parser.add_argument("--turns", type=int, default=3, help="turns of --steps steps per side (interleaved)")
    parser.add_argument("--baseline", type=Path, help="a checkout of main to compare with (PYTHONPATH)")
    parser.add_argument("--in-process", action="store_true", help="also this tree with AGENT_LS_MODEL_HOST=0")
    parser.add_argument("--lsp", action="store_true", help="also the language server's peak RSS and time per step "
                        "after a turn of --steps steps")
    parser.add_argument("--servers", action="store_true", help="only `agent-ls chat` one-shot and `agent-ls acp` "
                        "with one stdio MCP server configured: start -> first model request")
    parser.add_argument("--files", type=int, default=5, help="files in the workspace (a larger one shows what "
                        "the first checkpoint's snapshot costs: 5,000 in 50 folders is a middling repository)")
    args = parser.parse_args()

    with ScriptedLLM() as llm, tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        ws = tmp / "ws"
        ws.mkdir()
        for i in range(5):
            (ws / f"f{i}.txt").write_text(f"file {i}\n" * 20)
        for i in range(5, args.files):  # (the steps read f0..f4)
            folder = ws / f"d{i % 50:02d}"
            folder.mkdir(exist_ok=True)
            (folder / f"f{i}.py").write_text(f"# file {i}\n" + "x = 1\n" * 40)
        config = tmp / "config"
        config.mkdir()
        (config / "settings.json").write_text(json.dumps({
            "model": "openai/scripted", "apiBase": llm.openai_base,
            "agent": {"maxRetries": 0}, "permissions": {"allow": ["bash", "read_file"]}}))
        runtime = tmp / "run"
        base = dict(os.environ)
        # PYTHONDONTWRITEBYTECODE: every run would compile agent-ls' sources again (0.3 s and more),
        # which an installed agent-ls never does (pip compiles them): bytecode in PYCACHE instead.
        for k in ("AGENT_LS_MODEL", "AGENT_LS_API_BASE", "AGENT_LS_USER_SETTINGS", "AGENT_LS_MODEL_HOST",
                  "PYTHONDONTWRITEBYTECODE"):
            base.pop(k, None)
        base["PYTHONPYCACHEPREFIX"] = str(PYCACHE)
        base.update({"AGENT_LS_CONFIG_DIR": str(config), "AGENT_LS_DATA_DIR": str(tmp / "data"),
                     "OPENAI_API_KEY": "x", "AGENT_LS_RUNTIME_DIR": str(runtime),
                     "AGENT_LS_MODEL_HOST_IDLE": "300"})
        sides = [Side("this tree (model host)", REPO, {})]
        if args.in_process:
            sides.append(Side("this tree, AGENT_LS_MODEL_HOST=0", REPO, {"AGENT_LS_MODEL_HOST": "0"}))
        if args.baseline is not None:
            sides.append(Side(f"baseline {args.baseline}", args.baseline.resolve(), {}))
        own_runtime_folders(sides, runtime)
        for side in sides:
            where = subprocess.run([sys.executable, "-c", "import agent_ls; print(agent_ls.__file__)"],
                                   env=side.env(base), capture_output=True, text=True, check=True, cwd=ws).stdout.strip()
            print(f"{side.name}: agent_ls from {where}")

        floor: list[float] = []
        try:
            if args.servers:
                with_a_server(llm, ws, config, base, sides, args.runs)
                return
            for r in range(args.runs + 1):  # run 0: cold (this tree starts its model host)
                f = floor_once(llm, ws, base)
                if r:
                    floor.append(f)
                for side in sides:
                    llm.script(text("hello"))
                    t, _ = chat_once(llm, ws, side.env(base), f"hi {r}")
                    llm.script(text("hello"))
                    a, _ = asyncio.run(acp_once(llm, ws, side.env(base), f"hi {r}"))
                    if r:
                        side.chat.append(t)
                        side.acp.append(a)
                    else:
                        side.cold = {"chat": t, "acp": a}
            for _ in range(max(1, args.turns)):  # the turns interleaved too: one turn's steps are noisy
                for side in sides:
                    script_turn(llm, args.steps, ws)
                    since = len(llm.requests)
                    _, peak = chat_once(llm, ws, side.env(base), "do the steps")
                    side.turn["chat_rss"] = max(side.turn.get("chat_rss", 0), peak)
                    steps = step_times(llm, since)
                    side.turn.setdefault("chat_steps", []).extend(steps)
                    side.turn.setdefault("chat_first", []).extend(steps[:1])
                    script_turn(llm, args.steps, ws)
                    since = len(llm.requests)
                    _, peak = asyncio.run(acp_once(llm, ws, side.env(base), "do the steps"))
                    side.turn["acp_rss"] = max(side.turn.get("acp_rss", 0), peak)
                    steps = step_times(llm, since)
                    side.turn.setdefault("acp_steps", []).extend(steps)
                    side.turn.setdefault("acp_first", []).extend(steps[:1])
                    if args.lsp:
                        since = len(llm.requests)
                        peak, side.turn["lsp_host"] = asyncio.run(lsp_turn(llm, ws, side.env(base), args.steps))
                        side.turn["lsp_rss"] = max(side.turn.get("lsp_rss", 0), peak)
                        side.turn.setdefault("lsp_steps", []).extend(step_times(llm, since))
            for side in sides:
                side.turn["chat_step"] = statistics.median(side.turn["chat_steps"])
                side.turn["acp_step"] = statistics.median(side.turn["acp_steps"])
            side_hosts = {side.name: {pid: vm_hwm(pid) for pid in host_pids(side_runtime(side))} for side in sides}
        finally:
            for folder in [runtime, *(side_runtime(side) for side in sides)]:
                for pid in host_pids(folder):
                    with contextlib.suppress(OSError):
                        os.kill(pid, signal.SIGTERM)

    f = statistics.median(floor)
    print(f"\nprocess start -> first model request, median of {args.runs} warm runs (cold: the first run)")
    print(f"  floor: python + httpx posting the request   {f:.3f} s")
    for side in sides:
        c, a = statistics.median(side.chat), statistics.median(side.acp)
        print(f"  {side.name}")
        print(f"    chat one-shot  {c:.3f} s  ({c / f:.1f}x floor)  cold {side.cold['chat']:.3f} s")
        print(f"    acp            {a:.3f} s  ({a / f:.1f}x floor)  cold {side.cold['acp']:.3f} s")
    print(f"\nafter {args.turns} turns of {args.steps} steps (half bash, half read_file): peak RSS, median time per "
          "tool step")
    for side in sides:
        t = side.turn
        print(f"  {side.name}")
        print(f"    chat  {t['chat_rss'] / 1024:6.0f} MB  {t['chat_step'] * 1e3:6.1f} ms/step  "
              f"first step {statistics.median(t['chat_first']) * 1e3:6.1f} ms")
        print(f"    acp   {t['acp_rss'] / 1024:6.0f} MB  {t['acp_step'] * 1e3:6.1f} ms/step  "
              f"first step {statistics.median(t['acp_first']) * 1e3:6.1f} ms")
        if args.lsp:
            where = "litellm in its process" if t.get("lsp_host") is None else "on the model host"
            print(f"    language server ({where}) {t['lsp_rss'] / 1024:6.0f} MB  "
                  f"{statistics.median(t['lsp_steps']) * 1e3:6.1f} ms/step")
    print_memory(sides, side_hosts, args.lsp)
    if len(sides) > 1:
        ref = sides[-1]
        for side in sides[:-1]:
            print(f"\n{side.name} / {ref.name}: first request chat "
                  f"{statistics.median(side.chat) / statistics.median(ref.chat):.2f}, acp "
                  f"{statistics.median(side.acp) / statistics.median(ref.acp):.2f}; per step chat "
                  f"{side.turn['chat_step'] / ref.turn['chat_step']:.2f}, acp "
                  f"{side.turn['acp_step'] / ref.turn['acp_step']:.2f}")


if __name__ == "__main__":
    main()
