"""The processes and files of one editor end-to-end run (tests/extension/test_e2e.py): its paths and
environment (:class:`Run`), the user, workspace, editor and Machine settings it writes, installing
the .vsix, starting code-server, and the summary of the steps. The benchmarks that drive the editor
(scripts/bench_intelligence.py --editor, scripts/bench_editor_prompt.py) use :func:`code_server`
and :func:`run_driver`.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from tests.extension.conftest import E2E_SRC, EXTENSION_ID, LISTENING, E2ETools, kill_tree, sweep, tail
from tests.extension.e2e_scenario import (
    APPS_SERVER,
    CODE,
    CODE_FILE,
    ELICIT_PROMPT,
    INTEL_FILES,
    LATE_SERVER,
    LATE_START_S,
    NUMBER_BEFORE,
    NUMBER_FILE,
    OUTPUT_FILE,
    OUTPUT_LINES,
    PROMPT,
    REVIEW_CODE,
    REVIEW_FILE,
    REWIND_BEFORE,
    REWIND_FILE,
    SERVER,
    TOOL_ACTIONS,
    WORKSPACE_ENV,
    WS_SERVER,
    Model,
)
from tests.llm.scripted_server import ScriptedLLM
from tests.servers import apps_server
from tests.servers.launch import knob_stdio_params

# ------------------------------------------------------------------------------ helpers


class Run:
    """Paths of one run; everything but the artifacts lives under pytest's tmp_path."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.ws = root / "ws"
        self.config = root / "config"  # AGENT_LS_CONFIG_DIR
        self.data = root / "data"  # AGENT_LS_DATA_DIR
        self.user_data = root / "ud"  # short: code-server puts a unix socket in it
        self.extensions = root / "ext"
        self.home = root / "home"
        self.profile = root / "chromium"
        self.fact_log = root / "facts.log"
        self.cs_log = root / "code-server.log"
        self.driver_log = root / "driver.log"
        self.machine_settings = self.user_data / "Machine" / "settings.json"
        self.import_marker = root / "json_py.imported"
        self.workspace_command_marker = root / "workspace_command.ran"
        for d in (self.ws / ".agent-ls", self.config, self.data, self.user_data / "User", self.extensions,
                  self.home, self.profile):
            d.mkdir(parents=True, exist_ok=True)

    def env(self, tools: E2ETools) -> dict[str, str]:
        env = dict(os.environ)
        env.update({
            "PATH": tools.env_path(),
            "HOME": str(self.home),
            "XDG_CONFIG_HOME": str(self.home / ".config"),
            "XDG_DATA_HOME": str(self.home / ".local" / "share"),
            "XDG_CACHE_HOME": str(self.home / ".cache"),
            "XDG_STATE_HOME": str(self.home / ".local" / "state"),
            "AGENT_LS_CONFIG_DIR": str(self.config),
            "AGENT_LS_DATA_DIR": str(self.data),
            "AGENT_LS_EXTENSION_LOG": str(self.fact_log),
            "OPENAI_API_KEY": "x",
            "PYTHONUNBUFFERED": "1",
            # code-server queries open-vsx.org for extensions; keep it on a dead loopback port
            "EXTENSIONS_GALLERY": json.dumps({"serviceUrl": "http://127.0.0.1:9/gallery",
                                              "itemUrl": "http://127.0.0.1:9/items"}),
        })
        for k in ("AGENT_LS_MODEL", "AGENT_LS_API_BASE", "AGENT_LS_USER_SETTINGS", "VSCODE_IPC_HOOK_CLI"):
            env.pop(k, None)
        return env

    def extension_logs(self) -> list[Path]:
        """The extension's output channel files and the extension host log, newest last."""
        logs = sorted(self.user_data.glob("logs/*/**/*.log"), key=lambda p: p.stat().st_mtime)
        return [p for p in logs if "agent" in p.name.lower() or p.name == "exthost.log"]


EDITOR_SETTINGS: dict[str, Any] = {
    "workbench.startupEditor": "none",
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "workbench.tips.enabled": False,
    "telemetry.telemetryLevel": "off",
    "extensions.autoUpdate": False,
    "extensions.autoCheckUpdates": False,
    "extensions.ignoreRecommendations": True,
    "update.mode": "none",
    "security.workspace.trust.enabled": False,
    "chat.disableAIFeatures": True,
}
"""The editor's (code-server's) User settings of a run: no start page, tips, updates or AI features."""


def write_settings(run: Run, llm: ScriptedLLM) -> None:
    user = {
        "model": "openai/scripted",
        "apiBase": llm.openai_base,
        "agent": {"maxRetries": 0},
        # issue 44 item 1: a server that takes 4 s to start (e2e/firstPrompt.ts)
        "mcpServers": {SERVER: knob_stdio_params(),
                       LATE_SERVER: knob_stdio_params("--name", LATE_SERVER, "--slow-start", LATE_START_S),
                       # issue 45: an MCP server with an app (e2e/mcpApp.ts)
                       APPS_SERVER: {"command": sys.executable, "args": [str(Path(apps_server.__file__))]}},
        "toolActions": TOOL_ACTIONS,
    }
    (run.config / "settings.json").write_text(json.dumps(user, indent=2))
    workspace = {"mcpServers": {WS_SERVER: knob_stdio_params("--name", WS_SERVER)}}
    (run.ws / ".agent-ls" / "settings.json").write_text(json.dumps(workspace, indent=2))
    # a repository that tries to run code when it is opened: the server must never import these
    (run.ws / "json.py").write_text(f"open({str(run.import_marker)!r}, 'w').write('imported')\n")
    (run.ws / "numbers.py").write_text("raise SystemExit('numbers.py from the workspace was imported')\n")
    # ... nor may its .vscode/settings.json choose how the server starts (machine-scoped settings)
    evil = run.ws / "evil-python"
    evil.write_text(f"#!/bin/sh\necho \"$@\" > {shlex.quote(str(run.workspace_command_marker))}\nexit 3\n")
    evil.chmod(0o755)
    (run.ws / ".vscode").mkdir(exist_ok=True)
    (run.ws / ".vscode" / "settings.json").write_text(json.dumps({
        "agentLs.server.command": [str(evil), "command"],
        "agentLs.server.pythonPath": str(evil),
        "agentLs.server.env": {WORKSPACE_ENV: "1"},
    }, indent=2))
    (run.ws / CODE_FILE).write_text(CODE)
    (run.ws / NUMBER_FILE).write_text(NUMBER_BEFORE)
    (run.ws / REVIEW_FILE).write_text(REVIEW_CODE)
    (run.ws / REWIND_FILE).write_text(f"{REWIND_BEFORE}\n")
    (run.ws / OUTPUT_FILE).write_text("".join(f"line {i}\n" for i in range(OUTPUT_LINES)))
    for name, content in INTEL_FILES.items():  # a TypeScript project (e2e/intelligence.ts)
        (run.ws / name).parent.mkdir(parents=True, exist_ok=True)
        (run.ws / name).write_text(content)
    editor = {
        **EDITOR_SETTINGS,
        "editor.lightbulb.enabled": "on",
        "agentLs.edits.review": "beforeApply",  # review.ts: Accept / Reject before the change is applied
        "files.autoSave": "off",  # the web workbench saves after a delay by default: review.ts checks the disk
    }
    (run.user_data / "User" / "settings.json").write_text(json.dumps(editor, indent=2))
    # agentLs.server.* are machine-scoped: code-server ignores them in User/settings.json and reads
    # them from its Machine settings. The README's first option: <python> -P -m agent_ls serve.
    run.machine_settings.parent.mkdir(exist_ok=True)
    run.machine_settings.write_text(json.dumps({"agentLs.server.pythonPath": sys.executable}, indent=2))


def install_vsix(tools: E2ETools, run: Run, env: dict[str, str]) -> None:
    cmd = [str(tools.code_server), "--user-data-dir", str(run.user_data), "--extensions-dir",
           str(run.extensions), "--install-extension", str(tools.vsix)]
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=120)
    installed = list(run.extensions.glob(f"{EXTENSION_ID}-*"))
    if out.returncode != 0 or not installed:
        pytest.fail(
            f"step install-vsix: code-server --install-extension {tools.vsix.name} failed "
            f"(exit {out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}",
            pytrace=False,
        )


def start_code_server(tools: E2ETools, run: Run, env: dict[str, str]) -> tuple[subprocess.Popen[bytes], str]:
    cmd = [str(tools.code_server), "--auth", "none", "--bind-addr", "127.0.0.1:0",
           "--user-data-dir", str(run.user_data), "--extensions-dir", str(run.extensions),
           "--disable-telemetry", "--disable-update-check", "--disable-workspace-trust",
           "--disable-getting-started-override", "--ignore-last-opened", str(run.ws)]
    log = run.cs_log.open("wb")
    proc = subprocess.Popen(cmd, env=env, stdin=subprocess.DEVNULL, stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True, cwd=run.root)
    log.close()
    deadline = time.monotonic() + 30
    url = None
    while url is None:
        m = LISTENING.search(run.cs_log.read_text(errors="replace"))
        if m:
            url = m.group(1)
        elif proc.poll() is not None or time.monotonic() > deadline:
            kill_tree(proc)
            pytest.fail(f"step start-code-server: code-server did not start (exit {proc.returncode}):\n"
                        f"{tail(run.cs_log)}", pytrace=False)
        else:
            time.sleep(0.05)
    while True:
        try:
            with urllib.request.urlopen(f"{url}/healthz", timeout=2) as r:
                if r.status == 200:
                    break
        except OSError:
            pass
        if time.monotonic() > deadline:
            kill_tree(proc)
            pytest.fail(f"step start-code-server: {url}/healthz never answered:\n{tail(run.cs_log)}", pytrace=False)
        time.sleep(0.05)
    return proc, url


@contextmanager
def code_server(tools: E2ETools, run: Run, env: dict[str, str]) -> Iterator[str]:
    """The .vsix installed and code-server started on ``run``'s folders; yields its URL. Kills
    code-server and everything it started (the extension host, the language server and its MCP
    servers), and whatever else mentions the run's folder, at the end."""
    install_vsix(tools, run, env)
    cs, url = start_code_server(tools, run, env)
    try:
        yield url
    finally:
        kill_tree(cs)
        sweep(str(run.root))


def run_driver(tools: E2ETools, run: Run, env: dict[str, str], script: str, config: dict[str, Any],
               timeout: float) -> int | None:
    """Run the browser driver ``editor-extension/e2e/<script>`` (Node 24) with ``config`` (written
    to a JSON file, its one argument), its output in ``run.driver_log``; its exit code, or None
    when it was still running after ``timeout`` seconds (then it is killed)."""
    config_file = run.root / f"{Path(script).stem}-config.json"
    config_file.write_text(json.dumps(config, indent=2))
    with run.driver_log.open("wb") as out:
        driver = subprocess.Popen([str(tools.node), str(E2E_SRC / script), str(config_file)], env=env, stdout=out,
                                  stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, start_new_session=True,
                                  cwd=E2E_SRC)
        try:
            driver.wait(timeout)
        except subprocess.TimeoutExpired:
            pass
        finally:
            kill_tree(driver)
    return driver.returncode if driver.returncode is not None and driver.returncode >= 0 else None


def prompt_latency(times: dict[str, Any], model: Model) -> str:
    """Issue 30 item 2, recorded (never asserted): for the session's first and second prompts (and
    the first prompt after the server's restart), Send -> the request reached the scripted model
    and Send -> the first words shown in the chat, from the driver's prompt-times.json (the
    webview's clock) and the model's receipts (the same machine's clock)."""
    rows: dict[str, tuple[float | None, float | None]] = {}
    for key, marker in (("first", PROMPT), ("second", ELICIT_PROMPT), ("afterRestart", PROMPT)):
        t = times.get(key) or {}
        sent, shown = t.get("sentAt"), t.get("shownAt")
        if sent is None:
            continue
        at_model = next((at for m, at in model.turns if m == marker and at * 1000 >= sent), None)
        rows[key] = (at_model * 1000 - sent if at_model is not None else None, shown - sent if shown else None)

    def ms(v: float | None) -> str:
        return "?" if v is None else f"{v:.0f} ms"

    lines = [f"  {key:12}  Send -> model {ms(m)}, Send -> first words shown {ms(w)}" for key, (m, w) in rows.items()]
    if "first" in rows and "second" in rows:
        diffs = [None if a is None or b is None else a - b for a, b in zip(rows["first"], rows["second"], strict=True)]
        lines.append("  first - second: " + ", ".join(f"{what} {'?' if d is None else f'{d:+.0f} ms'}"
                                                   for what, d in zip(("to the model", "shown"), diffs, strict=True))
                     + " (target <= +300 ms; issue 30 item 2)")
    return "prompt latency (issue 30 item 2; recorded, not asserted):\n" + "\n".join(lines)


def report(result: dict[str, Any] | None, model: Model, leftovers: list[str], timings: dict[str, float],
           swept: list[str]) -> str:
    lines = []
    if result:
        for s in result.get("steps", []):
            lines.append(f"  {s['status'].upper():7} {s['name']:22} {s['ms'] / 1000:6.1f}s  "
                         + (s.get("error") or "; ".join(s.get("notes", []))))
    lines.append("timings: " + ", ".join(f"{k} {v:.1f}s" for k, v in timings.items()))
    if model.unexpected:
        lines.append(f"unexpected LLM requests: {model.unexpected}")
    lines.append(f"LLM answers given: {model.answered}")
    if leftovers:
        lines.append(f"processes left after the kill: {leftovers}")
    if swept:
        lines.append(f"killed outside the process tree (daemonized): {[p.split(' --')[0] for p in swept]}")
    return "\n".join(lines)
