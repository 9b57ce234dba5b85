"""The real extension in a real VS Code (code-server), driven by headless Chromium.

This test owns the processes; editor-extension/e2e/driver.ts (playwright-core, Node 24) owns
the browser and acts as a user. The test:

1. starts the scripted OpenAI-compatible LLM server on 127.0.0.1 (tests/llm/scripted_server.py)
   with a script that answers by request content (see ``Model``);
2. writes user settings (AGENT_LS_CONFIG_DIR) with that model and the knob MCP server
   (tests/servers/knob_server.py over stdio, on this venv's python), and a workspace
   .agent-ls/settings.json defining a second knob server, which must be trusted first; the
   workspace also holds a json.py and a numbers.py that must never be imported, and a
   .vscode/settings.json that tries to choose the server command, python and env (ignored:
   machine-scoped);
3. installs the built .vsix into a fresh code-server user-data/extensions dir whose Machine
   settings (where code-server reads machine-scoped settings) point ``agentLs.server.pythonPath``
   at this venv's python (``<python> -P -m agent_ls serve``);
4. starts code-server on 127.0.0.1 (a free port), with AGENT_LS_EXTENSION_LOG naming the fact
   log, and runs the driver. Its steps, as a user: activation; "Agent: Open Chat"; trust the
   workspace server; send a prompt, see streamed text and a tool card, approve the destructive
   tool (Allow once), see the result and the final answer stream in; hide and show the chat
   (state kept); a tool that asks through a form (Allow for session, defaults, submit); Stop a
   slow answer; the MCP Servers view (both servers connected, tools listed); "Explain with
   agent" from the lightbulb menu on a selection, its answer in the chat; insert its code block
   at the cursor; attach the selection to a prompt (the model sees it); "/" lists the MCP
   prompts; new session, resume the first; disable and enable the workspace server from its
   context menu; the contract's commands are in the palette; the chat as an editor panel;
   changing agentLs.server.env in the Remote (Machine) settings restarts the client with it; then
   the daily-use checks of e2e/ux.ts (keyboard only, where the focus goes, a failed server in the
   servers view, axe-core in three themes). One screenshot per step in artifacts/e2e/ (with
   result.json, summary.txt, logs);
5. kills code-server and every process it started, and checks none is left.

A failure names the step that failed, with the tails of the fact log, code-server's log and
the extension's output channel. Steps whose prerequisites failed are reported as blocked;
independent steps still run, so one failure shows the whole picture.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path
from typing import Any

import pytest

from tests.extension.conftest import (
    ARTIFACTS,
    E2E_NODE_MODULES,
    E2E_SRC,
    EXTENSION_ID,
    LISTENING,
    E2ETools,
    kill_tree,
    require_e2e_tools,
    sweep,
    tail,
    vsix_staleness,
)
from tests.llm.scripted_server import ScriptedLLM, Turn, respond, slow_text, text, tool_calls
from tests.servers.launch import knob_stdio_params

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(420)]

PROMPT = "Please delete item 42 on the knob server."
INTRO = "I will look up the delete tool first."
APPROVAL_TOOL = "mcp__knob__delete_item"
SERVER = "knob"
TOOL_RESULT = "deleted item 42"
FINAL = "Done: item 42 was deleted on the knob server and nothing else was changed by me today."
WS_SERVER = "wsknob"  # defined in the workspace's .agent-ls/settings.json: must be trusted first
ELICIT_PROMPT = "Ask me for my details through the knob server."
ELICIT_TOOL = "mcp__knob__ask"
ELICIT_QUESTION = "Who are you?"
ELICIT_FINAL = "Thanks, I got your details from the form."
STOP_PROMPT = "Tell me a very long story."
CODE_FILE = "calc.py"
CODE = "def add(a, b):\n    return a + b\n\n\ndef scale(xs, k):\n    return [x * k for x in xs]\n"
CODE_ACTION = "Explain with agent"
EXPLAIN_QUESTION = "Explain what this code does"  # agent_ls/server/code_actions.py, mode "explain"
CODE_ACTION_ANSWER = "This code adds two numbers and scales a list by a factor."
INSERT_CODE = "print(add(1, 2))"  # in a code block of the code action's answer, inserted at the cursor
ATTACH_PROMPT = "What does the attached code do?"
ATTACH_MARK = "def scale(xs, k):"  # a line of the attached selection
ATTACH_SEEN = "The attached selection reached me."
ATTACH_MISSING = "No attached selection reached me."
ASK_QUESTION = "Which function here scales a list?"  # typed into the "Ask agent" input box
ASK_ANSWER = "The function scale multiplies every item by k."

# review of the agent's file changes (editor-extension/e2e/review.ts), agentLs.edits.review = beforeApply
REVIEW_FILE = "settings_demo.py"
REVIEW_CODE = "VALUE = 1\nNAME = 'demo'\n"
REVIEW_BEFORE = "VALUE = 1"
REVIEW_AFTER = "VALUE = 2"
REVIEW_NOTE = "# unsaved note from the user"
REVIEW_PROMPT = "Set VALUE to 2 in the demo settings file."
REVIEW_DONE = "VALUE is 2 now."
REJECT_PROMPT = "Now make VALUE three in the demo settings file."
REJECT_REASON = "keep VALUE as it is"
REJECT_SEEN = "Understood: you rejected the change, so VALUE stays as it is."
REJECT_MISSING = "The rejection did not reach me."
OUTPUT_PROMPT = "Print the long log file."
OUTPUT_FILE = "long.log"
OUTPUT_LINES = 4000  # "line 0" ... "line 3999": ~40k characters, more than a page (30k)
OUTPUT_DONE = "That was a long log."

STEP_TIMEOUT_MS = 45_000
WORKSPACE_ENV = "AGENT_LS_E2E_FROM_WORKSPACE"  # set by the workspace's .vscode/settings.json: must be ignored
RESTART_ENV = "AGENT_LS_E2E_RESTART"  # the driver adds it to the Machine settings (settings-restart)
DRIVER_TIMEOUT_S = 300


# ----------------------------------------------------------------------------- the model


def _content_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        return " ".join(str(p.get("text", "")) for p in content if isinstance(p, dict))
    return ""


class Model:
    """Chooses each scripted answer from the request, so the order of requests does not matter.

    The current request is the last user message that carries one of the scenario's prompts;
    the answer depends on the last tool result after it (none, tool_search, the tool itself).
    """

    def __init__(self) -> None:
        self.unexpected: list[str] = []
        self.answered: list[str] = []

    def route(self, body: dict[str, Any]) -> Turn:
        msgs = body.get("messages") or []
        markers = (EXPLAIN_QUESTION, ASK_QUESTION, ELICIT_PROMPT, STOP_PROMPT, ATTACH_PROMPT, REVIEW_PROMPT, REJECT_PROMPT,
                   OUTPUT_PROMPT, PROMPT)
        idx, asked = -1, ""
        for i in range(len(msgs) - 1, -1, -1):
            if msgs[i].get("role") == "user" and any(k in _content_text(msgs[i]) for k in markers):
                idx, asked = i, _content_text(msgs[i])
                break
        names = {
            c.get("id"): (c.get("function") or {}).get("name")
            for m in msgs
            if m.get("role") == "assistant"
            for c in (m.get("tool_calls") or [])
        }
        tools_after = [names.get(m.get("tool_call_id")) for m in msgs[idx + 1 :] if m.get("role") == "tool"]
        last_tool = tools_after[-1] if tools_after else None
        results_after = [_content_text(m) for m in msgs[idx + 1 :] if m.get("role") == "tool"]
        last_result = results_after[-1] if results_after else ""
        answer: Turn | None = None
        what = ""
        if idx < 0:
            pass
        elif EXPLAIN_QUESTION in asked and last_tool is None:
            what, answer = "explain", text(f"{CODE_ACTION_ANSWER}\n\n```python\n{INSERT_CODE}\n```\n", chunks=3, delay=0.05)
        elif ASK_QUESTION in asked and last_tool is None:
            seen = ATTACH_MARK in asked  # the selection came with the question
            what, answer = f"ask agent ({'with' if seen else 'WITHOUT'} the selection)", text(
                ASK_ANSWER if seen else ATTACH_MISSING, chunks=2, delay=0.05)
        elif ATTACH_PROMPT in asked and last_tool is None:
            seen = ATTACH_MARK in asked
            what, answer = f"attachment {'seen' if seen else 'missing'}", text(ATTACH_SEEN if seen else ATTACH_MISSING)
        elif ELICIT_PROMPT in asked:
            if last_tool is None:
                what, answer = "elicit: tool_search", tool_calls([("tool_search", {"query": f"select:{ELICIT_TOOL}"})])
            elif last_tool == "tool_search":
                what, answer = "elicit: call ask", tool_calls([(ELICIT_TOOL, {"question": ELICIT_QUESTION})])
            elif last_tool == ELICIT_TOOL:
                what, answer = "elicit: final", text(ELICIT_FINAL, chunks=3, delay=0.05)
        elif STOP_PROMPT in asked and last_tool is None:
            what, answer = "stop: slow story", slow_text(120, delay=0.15)
        elif REVIEW_PROMPT in asked:
            if last_tool is None:
                what, answer = "review: edit", tool_calls(
                    [("edit_file", {"path": REVIEW_FILE, "old_string": REVIEW_BEFORE, "new_string": REVIEW_AFTER})])
            elif last_tool == "edit_file":
                what, answer = f"review: done ({last_result[:40]!r})", text(REVIEW_DONE)
        elif REJECT_PROMPT in asked:
            if last_tool is None:
                what, answer = "reject: read", tool_calls([("read_file", {"path": REVIEW_FILE})])
            elif last_tool == "read_file":
                what, answer = "reject: edit", tool_calls(
                    [("edit_file", {"path": REVIEW_FILE, "old_string": REVIEW_BEFORE, "new_string": "VALUE = 3"})])
            elif last_tool == "edit_file":
                seen = "The user rejected this change" in last_result and REJECT_REASON in last_result
                what, answer = f"reject: {'seen' if seen else 'MISSING'}", text(REJECT_SEEN if seen else REJECT_MISSING)
        elif OUTPUT_PROMPT in asked:
            if last_tool is None:
                what, answer = "output: bash", tool_calls([("bash", {"command": f"cat {OUTPUT_FILE}"})])
            elif last_tool == "bash":
                what, answer = "output: done", text(OUTPUT_DONE)
        elif PROMPT in asked:
            if last_tool is None:
                what, answer = "tool_search", tool_calls([("tool_search", {"query": f"select:{APPROVAL_TOOL}"})], text=INTRO)
            elif last_tool == "tool_search":
                what, answer = "call delete_item", tool_calls([(APPROVAL_TOOL, {"id": "42"})])
            elif last_tool == APPROVAL_TOOL:
                what, answer = "final answer", text(FINAL, chunks=10, delay=0.25)
        if answer is None:
            self.unexpected.append(f"user text {asked[:120]!r}, tools after it {tools_after}")
            return text("(e2e script: unexpected request)")
        self.answered.append(what)
        return answer


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


def write_settings(run: Run, llm: ScriptedLLM) -> None:
    user = {
        "model": "openai/scripted",
        "apiBase": llm.openai_base,
        "agent": {"maxRetries": 0},
        "mcpServers": {SERVER: knob_stdio_params()},
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
    (run.ws / REVIEW_FILE).write_text(REVIEW_CODE)
    (run.ws / OUTPUT_FILE).write_text("".join(f"line {i}\n" for i in range(OUTPUT_LINES)))
    editor = {
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


# --------------------------------------------------------------------------------- tests


def test_driver_typechecks() -> None:
    """The driver is strict TypeScript (it runs by Node's type stripping, which checks nothing)."""
    tools = require_e2e_tools()
    out = subprocess.run([str(tools.tsc), "-p", str(E2E_SRC / "tsconfig.json")], capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PATH": tools.env_path()})
    assert out.returncode == 0, f"tsc -p editor-extension/e2e failed:\n{out.stdout}\n{out.stderr}"


def test_extension_in_code_server(tmp_path: Path) -> None:
    tools = require_e2e_tools()
    stale = vsix_staleness()
    run = Run(tmp_path)
    env = run.env(tools)
    if ARTIFACTS.exists():
        shutil.rmtree(ARTIFACTS)
    ARTIFACTS.mkdir(parents=True)
    timings: dict[str, float] = {}
    swept: list[str] = []
    model = Model()
    t_all = time.monotonic()
    with ScriptedLLM() as llm:
        llm.script(*[respond(model.route) for _ in range(50)])
        write_settings(run, llm)
        t0 = time.monotonic()
        install_vsix(tools, run, env)
        timings["install-vsix"] = time.monotonic() - t0
        t0 = time.monotonic()
        cs, url = start_code_server(tools, run, env)
        timings["code-server-up"] = time.monotonic() - t0
        driver: subprocess.Popen[bytes] | None = None
        leftovers: list[str] = []
        try:
            config = {
                "url": url, "workspace": str(run.ws), "factLog": str(run.fact_log), "artifacts": str(ARTIFACTS),
                "chromium": str(tools.chromium), "browserProfile": str(run.profile),
                "nodeModules": str(E2E_NODE_MODULES), "stepTimeoutMs": STEP_TIMEOUT_MS,
                "machineSettings": str(run.machine_settings), "userSettings": str(run.config / "settings.json"),
                "scenario": {
                    "prompt": PROMPT, "introText": INTRO, "approvalTool": APPROVAL_TOOL, "server": SERVER,
                    "toolResult": TOOL_RESULT, "finalAnswer": FINAL, "expectTools": ["delete_item", "echo"],
                    "codeActionFile": CODE_FILE, "codeActionTitle": CODE_ACTION,
                    "codeActionAnswer": CODE_ACTION_ANSWER, "workspaceServer": WS_SERVER,
                    "elicitPrompt": ELICIT_PROMPT, "elicitTool": ELICIT_TOOL, "elicitQuestion": ELICIT_QUESTION,
                    "elicitFinal": ELICIT_FINAL, "elicitDefaults": {"name": "anon", "count": "3", "color": "blue"},
                    "stopPrompt": STOP_PROMPT, "insertCode": INSERT_CODE, "attachPrompt": ATTACH_PROMPT,
                    "attachSeen": ATTACH_SEEN, "slashPrompt": "review",
                    "askQuestion": ASK_QUESTION, "askAnswer": ASK_ANSWER, "askChipPrefix": f"{CODE_FILE}:1-",
                    "review": {
                        "file": REVIEW_FILE, "valueBefore": REVIEW_BEFORE, "valueAccepted": REVIEW_AFTER,
                        "userNote": REVIEW_NOTE, "acceptPrompt": REVIEW_PROMPT, "acceptDone": REVIEW_DONE,
                        "rejectPrompt": REJECT_PROMPT, "rejectReason": REJECT_REASON, "rejectSeen": REJECT_SEEN,
                        "outputPrompt": OUTPUT_PROMPT, "outputDone": OUTPUT_DONE,
                        "outputLastLine": f"line {OUTPUT_LINES - 1}",
                    },
                },
            }
            config_file = run.root / "driver-config.json"
            config_file.write_text(json.dumps(config, indent=2))
            t0 = time.monotonic()
            with run.driver_log.open("wb") as out:
                driver = subprocess.Popen([str(tools.node), str(E2E_SRC / "driver.ts"), str(config_file)],
                                          env=env, stdout=out, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                          start_new_session=True, cwd=E2E_SRC)
                try:
                    driver.wait(DRIVER_TIMEOUT_S)
                except subprocess.TimeoutExpired:
                    pass
            timings["scenario"] = time.monotonic() - t0
        finally:
            t0 = time.monotonic()
            if driver is not None:
                leftovers += kill_tree(driver)
            leftovers += kill_tree(cs)
            # Chromium's crash handler daemonizes by design; anything else outside the tree escaped it
            swept = sweep(str(run.root))
            escaped = [p for p in swept if "crashpad" not in p]
            leftovers += [f"(escaped the process tree) {p}" for p in escaped]
            timings["teardown"] = time.monotonic() - t0
    timings["total"] = time.monotonic() - t_all

    driver_out = run.driver_log.read_text(errors="replace")
    result_file = ARTIFACTS / "result.json"
    result = json.loads(result_file.read_text()) if result_file.is_file() else None
    summary = report(result, model, leftovers, timings, swept)
    (ARTIFACTS / "summary.txt").write_text(summary + "\n")
    for f in (run.fact_log, run.cs_log, run.driver_log, *run.extension_logs()):
        if f.is_file():
            shutil.copy(f, ARTIFACTS / f.name)
    print(summary)

    failed = [s for s in (result or {}).get("steps", []) if s["status"] != "passed"]
    problems = []
    if result is None or driver is None or driver.returncode not in (0, 1):
        problems.append(f"the driver did not finish normally (exit {None if driver is None else driver.returncode}); "
                        f"its output:\n{driver_out[-3000:]}")
    if failed:
        first = failed[0]
        problems.append(f"step {first['name']} ({first['title']}) {first['status']}: {first.get('error')}")
    if leftovers:
        problems.append(f"processes left behind after killing code-server: {leftovers}")
    if model.unexpected:
        problems.append(f"the scripted model got requests it had no answer for: {model.unexpected}")
    if run.import_marker.exists():
        problems.append("the language server imported the workspace's json.py (it must start outside the folder)")
    if run.workspace_command_marker.exists():
        problems.append("the workspace's .vscode/settings.json chose the server command (agentLs.server.* must be "
                        f"machine-scoped): it ran with {run.workspace_command_marker.read_text().strip()!r}")
    starts = [line for p in run.extension_logs() if p.name.startswith("Agent (agent-ls)")
              for line in p.read_text(errors="replace").splitlines() if "] starting the language server (" in line]
    if starts and not all("agentLs.server.pythonPath" in line and " -P -m agent_ls serve" in line for line in starts):
        problems.append(f"the server was not started as <pythonPath> -P -m agent_ls serve: {starts}")
    if any(WORKSPACE_ENV in line for line in starts):
        problems.append(f"agentLs.server.env from the workspace's .vscode/settings.json reached the server: {starts}")
    restarted = any(s["name"] == "settings-restart" and s["status"] == "passed" for s in (result or {}).get("steps", []))
    if restarted and not any(RESTART_ENV in line for line in starts):
        problems.append(f"the Machine settings' agentLs.server.env did not take effect after the restart: {starts}")
    if problems:
        ext_logs = "\n".join(f"--- {p.name} (last 25 lines) ---\n{tail(p, 25)}" for p in run.extension_logs()[-3:])
        pytest.fail(
            "\n".join(problems)
            + ("\n" + stale if stale else "")
            + f"\n\nsteps:\n{summary}"
            + f"\n\n--- fact log (last 30 lines) ---\n{tail(run.fact_log)}"
            + f"\n\n--- code-server log (last 30 lines) ---\n{tail(run.cs_log)}"
            + (f"\n\n{ext_logs}" if ext_logs else "")
            + f"\n\nscreenshots and logs: {ARTIFACTS}",
            pytrace=False,
        )
