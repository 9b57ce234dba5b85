"""What the agent's ``references`` tool adds to the editor's own time (issue 27).

    .venv/bin/python scripts/bench_intelligence.py [--files 2000] [--callers 50] [--runs 50]

A workspace of ``--files`` generated TypeScript files; ``--callers`` of them call ``add`` from
``src/math.ts``, the others ``sub``. Then the same with every file calling ``add`` (the
answer's size is what agent-ls's work grows with), ``--runs`` / 5 times.
The real agent-ls server runs over stdio (pytest-lsp's client as the editor, advertising
``experimental.agentLs.intelligence``); the scripted OpenAI-compatible model calls
``references`` on ``add`` ``--runs`` times (one prompt each). The editor answers
``agent/editorIntelligence`` with every occurrence, found by scanning the files' text (its "own
time": measured in the editor's handler around the search alone).

Printed: medians of the editor's own time, of the tool call as the server reports it
(``durationMs`` of ``tool_call_finished``: from the call's start to its formatted result: the
position check, the request and its answer over JSON-RPC, the answer's ~``--files`` locations
turned into workspace paths with lines, columns and the lines' text, and the listing), the
difference (what the agent adds; target <= 20 ms) and the ratio.

Not measured here: VS Code itself. In the editor the "own time" is
``vscode.executeReferenceProvider`` (TypeScript's reference search) and the extension maps its
answer with a loop over the locations (editor-extension/src/intelligence.ts), which is part of
the JSON-RPC answer this script's editor sends too.
"""

from __future__ import annotations

import argparse
import asyncio
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from agent_ls.server.protocol import methods as P  # noqa: E402
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls  # noqa: E402
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor  # noqa: E402

MATH = ("export function add(a: number, b: number): number {\n  return a + b;\n}\n"
        "export function sub(a: number, b: number): number {\n  return a - b;\n}\n")
WORD = re.compile(r"\badd\b")


def generate(ws: Path, files: int, callers: int) -> list[Path]:
    src = ws / "src"
    src.mkdir(parents=True)
    (src / "math.ts").write_text(MATH)
    paths = [src / "math.ts"]
    for i in range(files - 1):
        p = src / f"m{i:04d}.ts"
        fn = "add" if i < callers else "sub"
        p.write_text(f'import {{ {fn} }} from "./math";\n\nexport const v{i} = {fn}({i}, 1);\n')
        paths.append(p)
    return paths


def references(paths: list[Path]) -> list[dict[str, Any]]:
    """The editor's own search: every whole-word ``add`` in the workspace's files."""
    out = []
    for p in paths:
        uri = p.as_uri()
        for n, line in enumerate(p.read_text().splitlines()):
            for m in WORD.finditer(line):
                out.append({"uri": uri, "range": {"start": {"line": n, "character": m.start()},
                                                  "end": {"line": n, "character": m.end()}}})
    return out


async def bench(files: int, runs: int, callers: int) -> None:
    own: list[float] = []
    with tempfile.TemporaryDirectory() as tmp, ScriptedLLM() as llm:
        setup = Setup(Path(tmp), llm)
        setup.user_settings.pop("mcpServers", None)
        paths = generate(setup.ws, files, callers)

        def configure(ed: Editor) -> None:
            ed.experimental = {"agentLs": {P.INTELLIGENCE_CAPABILITY: True}}

            @ed.client.feature(P.EDITOR_INTELLIGENCE)
            def on_intelligence(params: Any) -> dict[str, Any]:
                t0 = time.perf_counter()
                found = references(paths)
                own.append((time.perf_counter() - t0) * 1000)
                return {"locations": found}

        ed = await open_editor(setup, configure=configure)
        try:
            counts: list[int] = []
            for _ in range(runs + 1):  # the first is a warm-up (imports, the session)
                llm.script(tool_calls([("references", {"path": "src/math.ts", "line": 1, "column": 17})]), text("ok"))
                await ed.request("agent/prompt", {"text": "who calls add?"}, timeout=120)
                result = [m["content"] for m in llm.requests[-1].body["messages"] if m["role"] == "tool"][-1]
                counts.append(int(result.split(" ", 1)[0]) if result[:1].isdigit() else -1)
            finished = [e["durationMs"] for e in ed.session_events() if e["type"] == "tool_call_finished"]
        finally:
            await close_editor(ed)
    tool, own = finished[1:], own[1:]
    added = [t - o for t, o in zip(tool, own, strict=True)]
    print(f"references to add in {files} TypeScript files, {callers} of them call it ({counts[-1]} places), "
          f"median of {runs}:")
    print(f"  the editor's own search        {statistics.median(own):8.1f} ms")
    print(f"  the tool call (durationMs)     {statistics.median(tool):8.1f} ms")
    print(f"  added by agent-ls              {statistics.median(added):8.1f} ms   (target <= 20 ms)")
    print(f"  ratio tool / own               {statistics.median(tool) / statistics.median(own):8.2f}")


if __name__ == "__main__":
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--files", type=int, default=2000)
    ap.add_argument("--runs", type=int, default=50)
    ap.add_argument("--callers", type=int, default=50)
    args = ap.parse_args()
    asyncio.run(bench(args.files, args.runs, args.callers))
    asyncio.run(bench(args.files, max(5, args.runs // 5), args.files))
