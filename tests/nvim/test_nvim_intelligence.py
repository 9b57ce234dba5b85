"""The editor's language intelligence in a second editor (issue 27, item 1): Neovim 0.7 answers
agent-ls's ``agent/editorIntelligence`` through ``vim.diagnostic`` and ``vim.lsp`` (another
language server attached to its buffers, tests/nvim/word_server.py), and the model's
``references``, ``definition``, ``symbols`` and ``diagnostics`` calls get its answers."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from tests.llm.scripted_server import ScriptedLLM, text, tool_calls
from tests.nvim.test_nvim import REPO_ROOT, llm, nvim

__all__ = ["llm"]  # the module-scoped scripted LLM fixture

SCRIPT = Path(__file__).with_name("intelligence.lua")
WORDS = Path(__file__).with_name("word_server.py")
MATH = "// math\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n"
MAIN = 'import { add } from "./math";\nconst n = add(1, 2); // BAD\n'


def test_neovim_answers_the_intelligence_tools(tmp_path: Path, llm: ScriptedLLM) -> None:
    ws = tmp_path / "ws"
    (ws / "src").mkdir(parents=True)
    (ws / "src" / "math.ts").write_text(MATH)
    (ws / "src" / "main.ts").write_text(MAIN)
    config = tmp_path / "config"
    config.mkdir()
    (config / "settings.json").write_text(json.dumps({
        "model": "openai/scripted", "apiBase": llm.openai_base, "agent": {"maxRetries": 0}}))
    llm.script(tool_calls([
        ("references", {"path": "src/math.ts", "line": 2, "column": 17}),
        ("definition", {"path": "src/main.ts", "line": 2, "column": 11}),
        ("symbols", {"query": "ad"}),
        ("diagnostics", {"path": "src/main.ts"}),
    ]), text("found them"))
    out = tmp_path / "report.json"
    env = dict(os.environ)
    env.update({
        "AGENT_LS_NVIM_CMD": json.dumps([sys.executable, "-m", "agent_ls.cli"]),
        "AGENT_LS_NVIM_WORDS": json.dumps([sys.executable, str(WORDS)]),
        "AGENT_LS_NVIM_ROOT": str(ws), "AGENT_LS_NVIM_OUT": str(out),
        "AGENT_LS_CONFIG_DIR": str(config), "AGENT_LS_DATA_DIR": str(tmp_path / "data"),
        "OPENAI_API_KEY": "x", "PYTHONPATH": str(REPO_ROOT),
        "XDG_CONFIG_HOME": str(tmp_path / "xdg-config"), "XDG_CACHE_HOME": str(tmp_path / "xdg-cache"),
        "XDG_DATA_HOME": str(tmp_path / "xdg-data"), "XDG_STATE_HOME": str(tmp_path / "xdg-state"),
    })
    proc = subprocess.run([nvim(), "--headless", "--clean", "-c", f"luafile {SCRIPT}"], env=env, cwd=ws,
                          capture_output=True, timeout=180, stdin=subprocess.DEVNULL)
    assert out.exists(), f"nvim wrote no report (exit {proc.returncode}): {proc.stderr.decode()[-2000:]}"
    report = json.loads(out.read_text())
    assert report["errors"] == [], report
    assert report["prompt"] == {"text": "found them", "stopReason": "end"}
    assert sorted(report["asked"]) == ["definition", "diagnostics", "references", "symbols"]
    refs, definition, symbols, diagnostics = [m["content"] for m in llm.requests[-1].body["messages"]
                                              if m["role"] == "tool"]
    assert refs.splitlines() == [
        "3 references to the symbol at src/math.ts:2:17:",
        'src/main.ts:1:10: import { add } from "./math";',
        "src/main.ts:2:11: const n = add(1, 2); // BAD",
        "src/math.ts:2:17: export function add(a: number, b: number): number {",
    ]
    assert definition.splitlines() == [
        "Definition of the symbol at src/main.ts:2:11:",
        "src/math.ts:2:17: export function add(a: number, b: number): number {",
    ]
    assert symbols.splitlines() == ["1 symbol matching 'ad':", "src/math.ts:2:17: function add | export function add(a: number, b: number): number {"]
    assert diagnostics.splitlines() == [
        "1 problem in src/main.ts (1 warning) (src/main.ts is not open in the editor; its language servers may "
        "not have checked it):",
        "src/main.ts:2:25: warning words(W1): BAD is not allowed here",
    ]
