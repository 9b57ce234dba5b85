"""The first prompt of a session in the editor vs the second (issue 30 item 2), recorded, never asserted.

    .venv/bin/python scripts/bench_editor_prompt.py [--rounds 3] [--typing 2.7] [--timeline]
                                                    [--baseline CHECKOUT] [--restricted]

The issue's setting: code-server at 1400x900 with the real extension (the .vsix of
scripts/build_extension.sh; the pieces of the e2e test: tests/extension/e2e_run.py, and
editor-extension/e2e/bench_prompt.ts driving headless Chromium), a workspace whose ``.mcp.json``
defines a server (trusted beforehand with ``agent-ls trust``, as a user who trusted it once;
``--restricted``: left restricted, its server waits), user settings with the scripted model
(tests/llm: an OpenAI-compatible server on 127.0.0.1, reached through litellm) and the three user
MCP servers of scripts/bench_lsp.py (``THREE_SERVERS``: one takes 12 s to start). Every round is a
first start: a fresh code-server profile, Chromium profile, agent-ls data folder, and a runtime
folder of its own (no model host runs yet: the language server's warm-up starts one, issue 46).

The first prompt is sent from the chat ``--typing`` seconds (2.7) after Send became enabled, the
second right after the first answer. Printed per round and as medians: Send -> the request reached
the scripted model, and Send -> the answer's first words shown in the chat, for both prompts, and
first - second (target: <= +300 ms), with the machine's load. The clocks agree: the driver and the
chat's webview use Date.now(), the model's receipts time.time(), the extension's facts and the
server's log lines the wall clock of the same machine.

``--timeline``: the language server logs at DEBUG (``AGENT_LS_LOG_LEVEL=DEBUG``: litellm's load,
the warm-up, the prompt's session, the call to the model, each line with the server's clock), and
for each round this prints, timed from the first prompt's Send: the driver's marks, the extension's
facts (``AGENT_LS_EXTENSION_LOG_TIMES=1``), the extension's output channel (the server's log lines),
and the model's receipts: what the first prompt waited for.

``--baseline CHECKOUT``: another checkout of agent-ls (e.g. /work/main) runs the language server
under the same extension (its folder on PYTHONPATH), interleaved with this one round by round.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_lsp import THREE_SERVERS, load  # noqa: E402

from tests.extension.conftest import E2E_NODE_MODULES, E2ETools, require_e2e_tools, tail  # noqa: E402
from tests.extension.e2e_run import EDITOR_SETTINGS, Run, code_server, run_driver  # noqa: E402
from tests.llm.scripted_server import ScriptedLLM, Turn, respond, text  # noqa: E402
from tests.servers.launch import knob_stdio_params  # noqa: E402

PROMPTS = [("What is the first thing to know?", "Alpha answer: the first thing is to keep the chat usable."),
           ("And the second thing?", "Bravo answer: the second thing is to keep it fast.")]
FIRST_WORDS = 10
"""The answer streams in 3 pieces; its first ``FIRST_WORDS`` characters are in the first."""
WS_SERVER = "wsknob"


class Model:
    """Answers each prompt with its text; records when the first request of each prompt came."""

    def __init__(self) -> None:
        self.received: dict[int, float] = {}

    def route(self, body: dict[str, Any]) -> Turn:
        now = time.time()
        users = [str(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "user"]
        last = users[-1] if users else ""
        for i, (prompt, answer) in enumerate(PROMPTS):
            if prompt in last:
                self.received.setdefault(i, now)
                return text(answer, chunks=3)
        return text("(bench: unexpected request)")


def prepare(run: Run, llm: ScriptedLLM, env: dict[str, str], restricted: bool) -> None:
    (run.config / "settings.json").write_text(json.dumps({
        "model": "openai/scripted", "apiBase": llm.openai_base, "agent": {"maxRetries": 0},
        "mcpServers": THREE_SERVERS}, indent=2))
    (run.ws / ".mcp.json").write_text(json.dumps({"mcpServers": {WS_SERVER: knob_stdio_params("--name", WS_SERVER)}}))
    (run.ws / "README.md").write_text("# a cloned project\n")
    (run.user_data / "User" / "settings.json").write_text(json.dumps(EDITOR_SETTINGS, indent=2))
    run.machine_settings.parent.mkdir(exist_ok=True)
    run.machine_settings.write_text(json.dumps({"agentLs.server.pythonPath": sys.executable}))
    if not restricted:  # the user trusted the workspace (and the server its .mcp.json defines) before
        out = subprocess.run([sys.executable, "-P", "-m", "agent_ls.cli", "trust", "-w", str(run.ws)], env=env,
                             capture_output=True, text=True, timeout=60)
        if out.returncode != 0 or "Trusted" not in out.stdout:
            sys.exit(f"agent-ls trust failed (exit {out.returncode}): {out.stdout[-500:]} {out.stderr[-1500:]}")


# ------------------------------------------------------------------------------ the timeline

OUTPUT_LINE = re.compile(r"^(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}) \[(\w+)\] (.*)$")
SERVER_TIME = re.compile(r"^@(\d+\.\d+) (.*)$")
FACT_LINE = re.compile(r"^(\d{4}-\d\d-\d\dT[\d:.]+Z) (.*)$")


def timeline(run: Run, result: dict[str, Any], model: Model) -> list[tuple[float, str, str]]:
    """(epoch seconds, source, what) of one round, sorted."""
    rows: list[tuple[float, str, str]] = []
    for name, ms in result.get("marks", {}).items():
        rows.append((ms / 1000, "driver", name))
    for i, p in enumerate(result.get("prompts", [])):
        if p.get("sentAt"):
            rows.append((p["sentAt"] / 1000, "chat", f"prompt {i + 1}: Send"))
        if p.get("shownAt"):
            rows.append((p["shownAt"] / 1000, "chat", f"prompt {i + 1}: first words shown"))
    for i, t in model.received.items():
        rows.append((t, "model", f"prompt {i + 1}: the request reached the scripted model"))
    for line in run.fact_log.read_text(errors="replace").splitlines() if run.fact_log.is_file() else []:
        if m := FACT_LINE.match(line):
            rows.append((datetime.fromisoformat(m.group(1).replace("Z", "+00:00")).timestamp(), "fact", m.group(2)))
    for log in run.extension_logs():
        if not log.name.startswith("Agent (agent-ls)") or "Trace" in log.name:
            continue
        for line in log.read_text(errors="replace").splitlines():
            if not (m := OUTPUT_LINE.match(line)):
                continue
            at, what = datetime.strptime(m.group(1), "%Y-%m-%d %H:%M:%S.%f").timestamp(), m.group(3)
            if s := SERVER_TIME.match(what):  # a server line at DEBUG: the server's own clock
                rows.append((float(s.group(1)), "server", s.group(2)))
            else:
                rows.append((at, "ext", what))
    return sorted(rows, key=lambda r: r[0])  # stable: lines of one source keep their order


MILESTONES = {"the server runs": ("fact", "client-running"), "MCP SDK imported": ("server", "MCP host: the SDK imported"),
              "litellm load started": ("server", "litellm: loading"), "litellm loaded": ("server", "litellm: loaded"),
              "warm-up done": ("server", "warm-up: done")}
"""The steps the first prompt may wait for, summed up per round (``--timeline``)."""


def print_timeline(rows: list[tuple[float, str, str]], result: dict[str, Any]) -> None:
    prompts = result.get("prompts") or [{}]
    send = (prompts[0].get("sentAt") or 0) / 1000
    seen = {name: next((at for at, source, what in rows if source == src and key in what), None)
            for name, (src, key) in MILESTONES.items()}
    print("    from the first Send: " + ", ".join(f"{name} {'?' if at is None else f'{(at - send) * 1000:+.0f} ms'}"
                                                for name, at in seen.items()))
    end = max((p.get("shownAt") or 0) / 1000 for p in prompts) + 0.5
    last: tuple[str, str] | None = None
    for at, source, what in rows:
        if at > end:
            break
        if (source, what) == last and what.startswith(("event text", "status ")):
            continue  # a run of the same streaming fact: the first one says when
        last = (source, what)
        print(f"    {(at - send) * 1000:+8.0f} ms  {source:6} {what[:150]}")


# ---------------------------------------------------------------------------------- rounds


def one_round(tools: E2ETools, root: Path, llm: ScriptedLLM, code: Path, args: argparse.Namespace) -> dict[str, Any]:
    run = Run(root)
    env = run.env(tools)
    env["PYTHONPATH"] = str(code)
    env["AGENT_LS_EXTENSION_LOG_TIMES"] = "1"
    env["AGENT_LS_RUNTIME_DIR"] = str(run.root / "run")  # a first start: no model host runs yet (issue 46)
    if args.timeline:
        env["AGENT_LS_LOG_LEVEL"] = "DEBUG"
    prepare(run, llm, env, args.restricted)
    model = Model()
    llm.clear()
    llm.script(*[respond(model.route) for _ in range(20)])
    result_file = run.root / "bench-result.json"
    with code_server(tools, run, env) as url:
        config = {"url": url, "workspace": str(run.ws), "factLog": str(run.fact_log), "chromium": str(tools.chromium),
                  "browserProfile": str(run.profile), "nodeModules": str(E2E_NODE_MODULES), "result": str(result_file),
                  "prompts": [{"text": p, "firstWords": a[:FIRST_WORDS]} for p, a in PROMPTS],
                  "typingMs": round(args.typing * 1000), "timeoutMs": 120_000}
        try:
            exit_code = run_driver(tools, run, env, "bench_prompt.ts", config, 300)
        finally:
            end_model_hosts(Path(env["AGENT_LS_RUNTIME_DIR"]))
    result = json.loads(result_file.read_text()) if result_file.is_file() else {}
    prompts = result.get("prompts", [])
    if exit_code != 0 or len(prompts) != len(PROMPTS) or len(model.received) != len(PROMPTS):
        sys.exit(f"the round did not finish: driver exit {exit_code}, {len(prompts)} prompts timed, "
                 f"{len(model.received)} reached the model\n--- driver ---\n{tail(run.driver_log)}\n"
                 f"--- facts ---\n{tail(run.fact_log)}")
    row = {"load": load()}
    for i, p in enumerate(prompts):
        row[f"llm{i}"] = model.received[i] * 1000 - p["sentAt"]
        row[f"shown{i}"] = p["shownAt"] - p["sentAt"]
    if args.timeline:
        row["timeline"] = timeline(run, result, model)
        row["result"] = result
    return row


def end_model_hosts(folder: Path) -> None:
    """The model hosts a round's language server started (they would wait idle for minutes)."""
    from agent_ls.agent import model_host

    for sock in folder.glob("model-*.sock"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            os.kill(model_host._hello(sock), signal.SIGTERM)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--typing", type=float, default=2.7, help="seconds from Send enabled to the first Send")
    ap.add_argument("--timeline", action="store_true", help="print where each round's first prompt waited")
    ap.add_argument("--baseline", type=Path, default=None, help="another agent-ls checkout, interleaved")
    ap.add_argument("--restricted", action="store_true", help="leave the workspace restricted (not trusted)")
    args = ap.parse_args()
    tools = require_e2e_tools()
    sides = [("this checkout", ROOT)] + ([("baseline", args.baseline.resolve())] if args.baseline else [])
    rows: dict[str, list[dict[str, Any]]] = {name: [] for name, _ in sides}
    print(f"editor setting: code-server 1400x900, the extension ({tools.vsix.name}), three user MCP servers (one "
          f"starts in 12 s), a workspace .mcp.json server ({'restricted' if args.restricted else 'trusted'}); the "
          f"first prompt {args.typing:.1f} s after Send is enabled; load {load()}")
    with tempfile.TemporaryDirectory(prefix="bench-editor-prompt-") as tmp, ScriptedLLM() as llm:
        for r in range(args.rounds):
            for name, code in sides:
                row = one_round(tools, Path(tmp) / f"r{r}-{len(rows[name])}-{name.split()[0]}", llm, code, args)
                rows[name].append(row)
                print(f"  round {r + 1}, {name}: Send -> model: first {row['llm0']:.0f} ms, second {row['llm1']:.0f} "
                      f"ms | Send -> first words shown: first {row['shown0']:.0f} ms, second {row['shown1']:.0f} ms"
                      f" | load {row['load']}", flush=True)
                if args.timeline:
                    print(f"  timeline of round {r + 1} ({name}), ms from the first prompt's Send:")
                    print_timeline(row["timeline"], row["result"])
    for name, _ in sides:
        m = {k: statistics.median(x[k] for x in rows[name]) for k in ("llm0", "llm1", "shown0", "shown1")}
        print(f"{name} ({code_of(name, sides)}), median of {len(rows[name])} rounds:")
        print(f"  Send -> request at the model:   first {m['llm0']:7.0f} ms | second {m['llm1']:6.0f} ms | "
              f"first - second {m['llm0'] - m['llm1']:+7.0f} ms (target <= +300 ms)")
        print(f"  Send -> first words shown:      first {m['shown0']:7.0f} ms | second {m['shown1']:6.0f} ms | "
              f"first - second {m['shown0'] - m['shown1']:+7.0f} ms (target <= +300 ms)")
        print(f"  first prompts by round: to the model {[round(x['llm0']) for x in rows[name]]} ms, shown "
              f"{[round(x['shown0']) for x in rows[name]]} ms")
    print(f"load at the end {load()}")


def code_of(name: str, sides: list[tuple[str, Path]]) -> str:
    return str(dict(sides)[name])


if __name__ == "__main__":
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)  # the servers read compiled bytecode, as installed
    main()
