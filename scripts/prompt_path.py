"""The path of a prompt through agent-ls, from the LSP handler to the model call, traced.

    .venv/bin/python scripts/prompt_path.py [--baseline CHECKOUT]

Starts the language server (this checkout, and ``--baseline``'s in the same run) with a profiler
on its event-loop thread, sends one ``agent/prompt`` to the scripted model (tests/llm: an
OpenAI-compatible server on 127.0.0.1), and prints what the profiler saw between entering the
handler (``agent_ls.server.handlers.chat.prompt``) and the first call of ``litellm.acompletion``,
in the calls made for the prompt (whose callers lead back to the handler; not other tasks, not
the bodies of modules imported on the way):

- the agent-ls modules entered (each counted once), by layer;
- the climbs back up: calls from a module of a lower layer into one of a higher layer (a callback
  into a front end, say), with the pairs of modules.

Layers, bottom up: core, config, agent | mcp, runtime, server | acp, cli (docs/architecture.md).
Nothing is asserted: this is a figure for issue 39's note.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
LAYERS = {"core": 0, "config": 1, "agent": 2, "mcp": 2, "runtime": 3, "server": 4, "acp": 4, "cli": 5}


def layer(module: str) -> int | None:
    parts = module.split(".")
    if parts[0] != "agent_ls" or len(parts) < 2:
        return None
    return LAYERS.get(parts[1])


def serve(out: Path) -> None:
    """The language server, with the profiler on this thread (the event loop's)."""
    seen: list[str] = []
    climbs: dict[tuple[str, str], int] = {}
    state: dict[str, Any] = {"handler": None, "done": False}

    def on_path(frame: Any) -> bool:
        """``frame`` runs for the prompt (its callers lead back to the handler's frame), not for
        another task of the event loop (the host's start, say)."""
        f = frame
        while f is not None:
            if f is state["handler"]:
                return True
            f = f.f_back
        return False

    def profile(frame: Any, event: str, arg: Any) -> None:
        if event != "call" or state["done"]:
            return
        module = frame.f_globals.get("__name__", "")
        name = frame.f_code.co_name
        if state["handler"] is None:
            if module == "agent_ls.server.handlers.chat" and name == "prompt":
                state["handler"] = frame
            else:
                return
        if name == "<module>" or not on_path(frame):
            return  # an import, or another task
        if module == "litellm.main" and name == "acompletion":
            state["done"] = True
            out.write_text(json.dumps({"modules": seen, "climbs": [[a, b, n] for (a, b), n in climbs.items()]}))
            return
        if layer(module) is None:
            return
        if module not in seen:
            seen.append(module)
        caller = frame.f_back
        if caller is not None:
            up = caller.f_globals.get("__name__", "")
            below, above = layer(up), layer(module)
            if below is not None and above is not None and above > below:
                climbs[(up, module)] = climbs.get((up, module), 0) + 1

    sys.setprofile(profile)
    from agent_ls.server import serve as serve_lsp

    serve_lsp()


async def run(code: Path | None, tmp: Path) -> dict[str, Any]:
    from lsprotocol import types as lsp
    from pygls.lsp.client import LanguageClient

    from tests.llm.scripted_server import ScriptedLLM, text

    llm = ScriptedLLM().start()
    ws = tmp / "ws"
    ws.mkdir(parents=True)
    config = tmp / "config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({"model": "openai/scripted", "apiBase": llm.openai_base,
                                                      "agent": {"maxRetries": 0}}))
    out = tmp / "trace.json"
    env = {**os.environ, "AGENT_LS_CONFIG_DIR": str(config), "AGENT_LS_DATA_DIR": str(tmp / "data"),
           "OPENAI_API_KEY": "x", "AGENT_LS_WARMUP": "0", "PYTHONPATH": f"{code or REPO}{os.pathsep}{REPO}"}
    client = LanguageClient("prompt-path", "1.0")
    await client.start_io(sys.executable, str(Path(__file__).resolve()), "--serve", str(out), env=env)
    try:
        await client.initialize_async(lsp.InitializeParams(
            capabilities=lsp.ClientCapabilities(), workspace_folders=[lsp.WorkspaceFolder(uri=ws.as_uri(), name="ws")]))
        client.initialized(lsp.InitializedParams())
        llm.script(text("hello", chunks=1))
        await client.protocol.send_request_async("agent/prompt", {"text": "hi"})
        await client.shutdown_async(None)
        client.exit(None)
    finally:
        await client.stop()
        llm.stop()
    found: dict[str, Any] = json.loads(out.read_text())
    return found


def report(label: str, found: dict[str, Any]) -> None:
    modules = found["modules"]
    by_layer: dict[str, list[str]] = {}
    for m in modules:
        by_layer.setdefault(m.split(".")[1], []).append(m)
    climbs = found["climbs"]
    print(f"{label}: {len(modules)} agent-ls modules from the LSP handler to the model call; "
          f"{len(climbs)} distinct climbs back up ({sum(n for *_, n in climbs)} calls)")
    for name in sorted(by_layer, key=lambda n: -LAYERS[n]):
        print(f"  {name:8} {len(by_layer[name]):3}  {', '.join(m.removeprefix('agent_ls.') for m in by_layer[name])}")
    for a, b, n in sorted(climbs):
        print(f"  up: {a.removeprefix('agent_ls.')} -> {b.removeprefix('agent_ls.')} ({n}x)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, help="another checkout of agent-ls, traced the same way")
    parser.add_argument("--serve", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.serve is not None:
        serve(args.serve)
        return
    sys.path.insert(0, str(REPO))
    with tempfile.TemporaryDirectory() as tmp:
        report("this checkout", asyncio.run(run(None, Path(tmp) / "this")))
        if args.baseline is not None:
            report(f"baseline {args.baseline}", asyncio.run(run(args.baseline.resolve(), Path(tmp) / "baseline")))


if __name__ == "__main__":
    main()
