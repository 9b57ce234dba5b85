"""Issue 31 in a real VS Code (code-server): the extension provisions its own server.

No agentLs.server.command/pythonPath anywhere and no agent-ls on PATH (the workspace's
.vscode/settings.json tries to set them: machine-scoped, ignored). The Machine settings name only
``agentLs.server.wheelhouse`` (the wheelhouse scripts/setup.sh prepares in .tools/wheelhouse), so
the install needs no index. The driver (editor-extension/e2e/provision.ts) then:

1. phase "install": the offer appears, the user clicks "Install the agent-ls server", the server
   is installed into the extension's global storage and starts, a prompt is answered by the
   scripted LLM, the MCP Servers view shows the user's server connected;
2. code-server is stopped and started again on the same user data; phase "reuse": the
   provisioned server starts again with no offer and no install step, a prompt is answered, the
   servers view works.

Figures (printed): seconds from the click on "Install" to the first answered prompt (target
< 60 s with a warm wheelhouse).
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import zipfile
from pathlib import Path

import pytest

from tests.extension.conftest import (
    ARTIFACTS,
    E2E_NODE_MODULES,
    E2E_SRC,
    EXTENSION_ID,
    E2ETools,
    kill_tree,
    require_e2e_tools,
    sweep,
    tail,
)
from tests.extension.e2e_run import Run, install_vsix, start_code_server
from tests.harness import REPO_ROOT
from tests.llm.scripted_server import ScriptedLLM, respond, text
from tests.servers.launch import knob_stdio_params

pytestmark = [pytest.mark.e2e, pytest.mark.timeout(900)]

WHEELHOUSE = REPO_ROOT / ".tools" / "wheelhouse"
OUT = ARTIFACTS.parent / "e2e-provision"
SERVER = "knob"
PROMPTS = {"install": "Are you there after the install?", "reuse": "Are you there after the restart?"}
ANSWERS = {"install": "Yes: the provisioned agent-ls server answers.", "reuse": "Yes: the same server again."}
INSTALL_ACTION = "Install the agent-ls server"  # editor-extension/src/provisionUi.ts
INSTALL_TIMEOUT_MS = 300_000


def answer(body: dict) -> object:
    sent = json.dumps(body.get("messages", []))
    for phase, prompt in PROMPTS.items():
        if prompt in sent and ANSWERS[phase] not in sent:
            return text(ANSWERS[phase])
    return text("(no scripted answer)")


def path_without_agent_ls() -> str:
    dirs = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not (Path(d) / "agent-ls").exists() and Path(d).resolve() != (REPO_ROOT / ".venv" / "bin").resolve()]
    return os.pathsep.join(dirs)


def write_settings(run: Run, llm: ScriptedLLM) -> None:
    user = {"model": "openai/scripted", "apiBase": llm.openai_base, "agent": {"maxRetries": 0},
            "mcpServers": {SERVER: knob_stdio_params()}}
    (run.config / "settings.json").write_text(json.dumps(user, indent=2))
    (run.ws / "json.py").write_text(f"open({str(run.import_marker)!r}, 'w').write('imported')\n")
    evil = run.ws / "evil-python"
    evil.write_text(f"#!/bin/sh\necho \"$@\" > {shlex.quote(str(run.workspace_command_marker))}\nexit 3\n")
    evil.chmod(0o755)
    (run.ws / ".vscode").mkdir(exist_ok=True)
    (run.ws / ".vscode" / "settings.json").write_text(json.dumps({
        "agentLs.server.command": [str(evil)], "agentLs.server.pythonPath": str(evil),
        "agentLs.server.wheelhouse": str(run.ws)}, indent=2))
    editor = {"workbench.startupEditor": "none", "workbench.secondarySideBar.defaultVisibility": "hidden",
              "workbench.tips.enabled": False, "telemetry.telemetryLevel": "off", "extensions.autoUpdate": False,
              "extensions.autoCheckUpdates": False, "extensions.ignoreRecommendations": True, "update.mode": "none",
              "security.workspace.trust.enabled": False, "chat.disableAIFeatures": True}
    (run.user_data / "User" / "settings.json").write_text(json.dumps(editor, indent=2))
    run.machine_settings.parent.mkdir(exist_ok=True)
    run.machine_settings.write_text(json.dumps({"agentLs.server.wheelhouse": str(WHEELHOUSE)}, indent=2))


def run_phase(phase: str, tools: E2ETools, run: Run, env: dict[str, str]) -> tuple[dict, list[str]]:
    facts = run.root / f"facts-{phase}.log"
    env = {**env, "AGENT_LS_EXTENSION_LOG": str(facts)}
    out = OUT / phase
    out.mkdir(parents=True)
    profile = run.root / f"chromium-{phase}"
    profile.mkdir()
    cs, url = start_code_server(tools, run, env)
    driver = None
    leftovers: list[str] = []
    try:
        config = {"phase": phase, "url": url, "workspace": str(run.ws), "factLog": str(facts), "artifacts": str(out),
                  "chromium": str(tools.chromium), "browserProfile": str(profile), "nodeModules": str(E2E_NODE_MODULES),
                  "stepTimeoutMs": 60_000, "installTimeoutMs": INSTALL_TIMEOUT_MS, "installAction": INSTALL_ACTION,
                  "prompt": PROMPTS[phase], "answer": ANSWERS[phase], "server": SERVER}
        config_file = run.root / f"driver-{phase}.json"
        config_file.write_text(json.dumps(config, indent=2))
        log = run.root / f"driver-{phase}.log"
        with log.open("wb") as f:
            driver = subprocess.Popen([str(tools.node), str(E2E_SRC / "provision.ts"), str(config_file)], env=env,
                                      stdout=f, stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL,
                                      start_new_session=True, cwd=E2E_SRC)
            try:
                driver.wait(INSTALL_TIMEOUT_MS / 1000 + 240)
            except subprocess.TimeoutExpired:
                pass
    finally:
        if driver is not None:
            leftovers += kill_tree(driver)
        leftovers += kill_tree(cs)
        leftovers += [p for p in sweep(str(run.root)) if "crashpad" not in p]
    for f in (facts, run.root / f"driver-{phase}.log", run.cs_log, *run.extension_logs()):
        if f.is_file():
            shutil.copy(f, out / f.name)
    result_file = out / "result.json"
    result = json.loads(result_file.read_text()) if result_file.is_file() else {}
    problems = [f"{phase}: step {s['name']} ({s['title']}) {s['status']}: {s.get('error')}"
                for s in result.get("steps", []) if s["status"] != "passed"]
    if not result:
        problems.append(f"{phase}: the driver did not finish: {tail(run.root / f'driver-{phase}.log')}")
    if leftovers:
        problems.append(f"{phase}: processes left behind: {leftovers}")
    if problems:
        problems.append(f"--- facts ---\n{tail(facts)}")
        problems += [f"--- {p.name} ---\n{tail(p, 25)}" for p in run.extension_logs()[-2:]]
    return result, problems


def test_extension_provisions_its_server(tmp_path: Path) -> None:
    tools = require_e2e_tools()
    if not any(WHEELHOUSE.glob("litellm-*.whl")):
        pytest.fail(f"no wheelhouse at {WHEELHOUSE}: run scripts/setup.sh (its 'wheelhouse' step)")
    with zipfile.ZipFile(tools.vsix) as z:
        if not any(n.startswith("extension/server/agent_ls-") for n in z.namelist()):
            pytest.fail(f"{tools.vsix} carries no agent-ls wheel: rebuild it (bash scripts/build_extension.sh)")
    run = Run(tmp_path)
    env = run.env(tools)
    env["PATH"] = tools.env_path(path_without_agent_ls())
    assert shutil.which("agent-ls", path=env["PATH"]) is None
    if OUT.exists():
        shutil.rmtree(OUT)
    OUT.mkdir(parents=True)
    problems: list[str] = []
    figures: dict[str, object] = {}
    with ScriptedLLM() as llm:
        llm.script(*[respond(answer) for _ in range(20)])
        write_settings(run, llm)
        install_vsix(tools, run, env)
        first, p1 = run_phase("install", tools, run, env)
        problems += p1
        figures["install_to_answer_s"] = (first.get("installToAnswerMs") or 0) / 1000
        if not p1:
            _, p2 = run_phase("reuse", tools, run, env)
            problems += p2

    storage = run.user_data / "User" / "globalStorage" / EXTENSION_ID / "server"
    current = json.loads((storage / "current.json").read_text()) if (storage / "current.json").is_file() else None
    if not p1 and (current is None or not Path(current["env"]).is_relative_to(storage)):
        problems.append(f"the provisioned environment is not in the extension's global storage: {current}")
    if any(run.ws.rglob("pyvenv.cfg")):
        problems.append("a virtual environment was created in the workspace folder")
    starts = [line for p in run.extension_logs() if p.name.startswith("Agent (agent-ls)")
              for line in p.read_text(errors="replace").splitlines() if "] starting the language server (" in line]
    if starts and not all("(provisioned)" in line and " -P -m agent_ls serve" in line for line in starts):
        problems.append(f"the server was not started from the provisioned environment: {starts}")
    if run.import_marker.exists():
        problems.append("the workspace's json.py was imported")
    if run.workspace_command_marker.exists():
        problems.append(f"the workspace's evil-python ran: {run.workspace_command_marker.read_text()!r}")
    summary = f"figures: {figures}; env: {current}"
    (OUT / "summary.txt").write_text(summary + "\n")
    print(summary)
    if problems:
        pytest.fail("\n".join(problems) + f"\n\nartifacts: {OUT}", pytrace=False)

