"""MCP Apps in the editor (issue 45): from the tool result to the app's first paint, recorded, never asserted.

    .venv/bin/python scripts/bench_apps.py [--rounds 10]

The setting: code-server at 1400x900 with the real extension (the .vsix of
scripts/build_extension.sh; the pieces of the e2e test: tests/extension/e2e_run.py, and
editor-extension/e2e/bench_app.ts driving headless Chromium), the scripted model (tests/llm) and the
SDK app server tests/servers/apps_server.py. In one chat session the model calls ``show_board``
``--rounds`` times (one prompt each). Per round, from the extension host's receipt of the
``tool_call_finished`` event (its fact-log line, ``AGENT_LS_EXTENSION_LOG_TIMES=1``): the tool
card's result shown in the chat (the text result: the baseline, measured in the same run), the app
frame's element in the chat, the app document's first contentful paint, and the tool result shown
by the app (``ui/initialize``, ``initialized``, then ``tool-result``). All clocks are the same
machine's (Date.now() in the chat and the app, the fact log's ISO times). Medians printed with the
machine's load.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench_lsp import load  # noqa: E402

from tests.extension.conftest import E2E_NODE_MODULES, require_e2e_tools, tail  # noqa: E402
from tests.extension.e2e_run import EDITOR_SETTINGS, Run, code_server, run_driver  # noqa: E402
from tests.llm.scripted_server import ScriptedLLM, Turn, respond, text, tool_calls  # noqa: E402
from tests.servers import apps_server  # noqa: E402

TOOL = "mcp__apps__show_board"


def prompt(i: int) -> str:
    return f"Show board number {i} please."


def done(i: int) -> str:
    return f"Board {i} is shown."


class Model:
    """Each prompt: show_board, then its answer."""

    def route(self, body: dict[str, Any]) -> Turn:
        msgs = body.get("messages") or []
        last_user = next((i for i in range(len(msgs) - 1, -1, -1) if msgs[i].get("role") == "user"), -1)
        asked = str(msgs[last_user].get("content")) if last_user >= 0 else ""
        n = next((i for i in range(1000) if prompt(i) in asked), None)
        if n is None:
            return text("(bench: unexpected request)")
        if any(m.get("role") == "tool" for m in msgs[last_user + 1:]):
            return text(done(n))
        return tool_calls([(TOOL, {"title": f"round {n}"})])


FACT_LINE = "%Y-%m-%dT%H:%M:%S.%fZ"


def receipts(fact_log: Path) -> list[float]:
    """Epoch ms of each ``event tool_call_finished`` fact (the extension host got the result)."""
    out = []
    for line in fact_log.read_text(errors="replace").splitlines():
        at, _, what = line.partition(" ")
        if what.startswith("event tool_call_finished"):
            out.append(datetime.strptime(at, FACT_LINE).replace(tzinfo=UTC).timestamp() * 1000)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rounds", type=int, default=10)
    args = ap.parse_args()
    tools = require_e2e_tools()
    print(f"editor setting: code-server 1400x900, the extension ({tools.vsix.name}), the SDK app server; "
          f"{args.rounds} calls of show_board in one session; load {load()}")
    with tempfile.TemporaryDirectory(prefix="bench-apps-") as tmp, ScriptedLLM() as llm:
        run = Run(Path(tmp))
        env = run.env(tools)
        env["AGENT_LS_EXTENSION_LOG_TIMES"] = "1"
        (run.config / "settings.json").write_text(json.dumps({
            "model": "openai/scripted", "apiBase": llm.openai_base, "agent": {"maxRetries": 0},
            "mcpServers": {"apps": {"command": sys.executable, "args": [str(Path(apps_server.__file__))]}}}, indent=2))
        (run.ws / "README.md").write_text("# a project\n")
        (run.user_data / "User" / "settings.json").write_text(json.dumps(EDITOR_SETTINGS, indent=2))
        run.machine_settings.parent.mkdir(exist_ok=True)
        run.machine_settings.write_text(json.dumps({"agentLs.server.pythonPath": sys.executable}))
        model = Model()
        llm.script(*[respond(model.route) for _ in range(4 * args.rounds + 10)])
        result_file = run.root / "bench-result.json"
        with code_server(tools, run, env) as url:
            config = {"url": url, "workspace": str(run.ws), "factLog": str(run.fact_log), "chromium": str(tools.chromium),
                      "browserProfile": str(run.profile), "nodeModules": str(E2E_NODE_MODULES), "result": str(result_file),
                      "rounds": [{"prompt": prompt(i), "done": done(i)} for i in range(args.rounds)], "timeoutMs": 60_000}
            exit_code = run_driver(tools, run, env, "bench_app.ts", config, 60 + 30 * args.rounds)
        result = json.loads(result_file.read_text()) if result_file.is_file() else {}
        rounds = result.get("rounds", [])
        got = receipts(run.fact_log)
        if exit_code != 0 or len(rounds) != args.rounds or len(got) < args.rounds:
            sys.exit(f"the run did not finish: driver exit {exit_code}, {len(rounds)} rounds, {len(got)} results\n"
                     f"--- driver ---\n{tail(run.driver_log)}\n--- facts ---\n{tail(run.fact_log)}")
    rows = []
    for i, (r, t0) in enumerate(zip(rounds, got[-args.rounds:], strict=True)):
        row = {k: r[k] - t0 for k in ("cardAt", "frameAt", "paintAt", "resultAt")}
        rows.append(row)
        print(f"  round {i + 1}: from the tool result at the extension host: card shown {row['cardAt']:5.0f} ms | "
              f"app frame in the chat {row['frameAt']:5.0f} ms | app first paint {row['paintAt']:5.0f} ms | "
              f"app shows the result {row['resultAt']:5.0f} ms")
    m = {k: statistics.median(x[k] for x in rows) for k in rows[0]}
    print(f"median of {len(rows)}: tool result -> text card shown (baseline) {m['cardAt']:.0f} ms; -> app frame "
          f"{m['frameAt']:.0f} ms; -> app first paint {m['paintAt']:.0f} ms (card + {m['paintAt'] - m['cardAt']:.0f} ms); "
          f"-> app shows the result {m['resultAt']:.0f} ms (card + {m['resultAt'] - m['cardAt']:.0f} ms)")
    print(f"load at the end {load()}")


if __name__ == "__main__":
    main()
