"""``agent.sandbox`` through the agent: the settings (a workspace only narrows), ``bash`` in the
sandbox with real processes, the permission gate (``autoAllow``, retry outside only by asking,
no mechanism: every command asks) and the file tools keeping to ``denyRead``."""

from __future__ import annotations

import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.builtin_tools import builtin_tools
from agent_ls.agent.config import agent_settings
from agent_ls.agent.permissions import Decision, PermissionGate, PermissionRules, SandboxState
from agent_ls.agent.workspace import Workspace
from agent_ls.config.sandbox import SandboxSettings
from agent_ls.config.settings import load_settings
from agent_ls.core.sandbox import Mechanism, NetworkPolicy, detect
from agent_ls.core.sandbox.runner import FORCE_VARIABLE
from agent_ls.core.tools import Capability, Tool, ToolSpec
from tests.sandbox.conftest import CANARY, Place
from tests.tooling import TRUST_ALL

BASH = ToolSpec(name="bash", description="", input_schema={}, capability=Capability.WRITE)
BOX = SandboxState(enabled=True, available=True, auto_allow=True, contains_power_files=True, detail="bubblewrap")
bwrap_only = pytest.mark.skipif(detect().mechanism is not Mechanism.BUBBLEWRAP, reason="bubblewrap does not work here")


def _write(path: Path, content: Any) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(content))


def _tools(place: Place, settings: SandboxSettings | None) -> dict[str, Tool]:
    return {t.spec.name: t for t in builtin_tools(Workspace([place.ws]), output_cap_chars=20_000, sandbox=settings)}


@pytest.fixture
def home(place: Place, monkeypatch: pytest.MonkeyPatch) -> Place:
    """The fake home is the home: the default denyRead (~/.ssh) points at the canary."""
    monkeypatch.setenv("HOME", str(place.home))
    monkeypatch.setenv("AGENT_LS_CONFIG_DIR", str(place.home / "cfg"))
    monkeypatch.setenv("AGENT_LS_DATA_DIR", str(place.home / "data"))
    monkeypatch.setattr(tempfile, "tempdir", str(place.tmp))  # else all of /tmp (the fake home too) is writable
    return place


# -- settings ---------------------------------------------------------------------------------------

def test_a_workspace_cannot_widen_the_sandbox_but_can_narrow_it(tmp_path: Path) -> None:
    user, ws = tmp_path / "user.json", tmp_path / "ws"
    _write(user, {"agent": {"sandbox": {"network": {"allow": ["pypi.org", "*.npmjs.org"]}, "autoAllow": True,
                                        "allowWrite": ["~/.cache/mine"]}}})
    _write(ws / ".agent-ls" / "settings.json", {"agent": {"sandbox": {
        "enabled": False, "allowWrite": ["/"], "autoAllow": True, "denyRead": ["secrets"],
        "network": {"allow": ["pypi.org", "evil.example"]}}}})
    loaded = load_settings([ws], user_settings=user, environ={}, trust=TRUST_ALL)
    warned = {d.json_path[-1] for d in loaded.diagnostics if d.severity == "warning"}
    assert {"enabled", "allowWrite", "autoAllow"} <= warned
    box = agent_settings(loaded, {}).sandbox
    assert box.enabled and box.auto_allow
    assert box.allow_write == ("~/.cache/mine",)
    assert box.deny_read == ("secrets",)
    assert box.network.decide("pypi.org") == "allow"
    assert box.network.decide("evil.example") == "deny" and box.network.decide("registry.npmjs.org") == "deny"


def test_an_untrusted_workspace_still_narrows_and_may_turn_auto_allow_off(tmp_path: Path) -> None:
    user, ws = tmp_path / "user.json", tmp_path / "ws"
    _write(user, {"agent": {"sandbox": {"autoAllow": True}}})
    _write(ws / ".agent-ls" / "settings.json", {"agent": {"sandbox": {"network": "off", "autoAllow": False}}})
    box = agent_settings(load_settings([ws], user_settings=user, environ={}), {}).sandbox
    assert box.network.is_off and not box.auto_allow


def test_a_malformed_network_rule_is_a_diagnostic_at_its_place(tmp_path: Path) -> None:
    user = tmp_path / "user.json"
    _write(user, {"agent": {"sandbox": {"network": {"allow": ["https://pypi.org/simple"]}}}})
    loaded = load_settings([], user_settings=user, environ={})
    errors = [d for d in loaded.diagnostics if d.severity == "error"]
    assert errors and errors[0].json_path == ("agent", "sandbox", "network")
    assert "not a host name pattern" in errors[0].message


def test_the_default_policy_hides_credentials_and_the_agent_ls_folders(home: Place) -> None:
    policy = SandboxSettings().policy([home.ws])
    for rel in (".ssh", ".aws", ".gnupg", ".config/gcloud", ".kube", ".netrc", ".docker/config.json", "cfg", "data"):
        assert str(home.home / rel) in policy.deny_read
    assert str(home.home / ".cache" / "pip") in policy.allow_write
    assert str(home.home / "cfg" / "settings.json") in {p.path for p in policy.power}


# -- the gate -----------------------------------------------------------------------------------------

def _verdict(gate: PermissionGate, command: str, **extra: Any) -> Decision:
    return gate.evaluate(BASH, {"command": command, **extra}).decision


def test_auto_allow_runs_contained_commands_unasked_but_deny_and_protected_paths_hold(tmp_path: Path) -> None:
    rules = PermissionRules(deny=("bash(rm -rf:*)",), ask=("bash(git push:*)",))
    gate = PermissionGate(rules, roots=[tmp_path], sandbox=BOX)
    assert _verdict(gate, "npm test && python -m pytest -q") is Decision.ALLOW
    assert "sandbox" in gate.evaluate(BASH, {"command": "make"}).reason
    assert _verdict(gate, "rm -rf build") is Decision.DENY
    assert _verdict(gate, "git push origin main") is Decision.ASK
    assert _verdict(gate, "echo x > .git/config") is Decision.ASK
    assert _verdict(gate, "cat ~/.ssh/id_ed25519") is Decision.ASK
    without = PermissionGate(rules, roots=[tmp_path], sandbox=SandboxState(True, True, False, True))
    assert _verdict(without, "npm test") is Decision.ASK
    landlock = PermissionGate(rules, roots=[tmp_path], sandbox=SandboxState(True, True, True, False))
    assert _verdict(landlock, "npm test") is Decision.ASK  # Landlock leaves power files writable


async def test_outside_the_sandbox_always_asks_and_says_so(tmp_path: Path) -> None:
    gate = PermissionGate(PermissionRules(allow=("bash",), deny=("bash(curl:*)",)), roots=[tmp_path], sandbox=BOX)
    gate.session_allowed.update({"bash", "bash(make:*)"})
    verdict = gate.evaluate(BASH, {"command": "make install", "outside_sandbox": True})
    assert verdict.decision is Decision.ASK and verdict.scopes == ()
    assert verdict.reason.startswith("run outside the sandbox: `make install`")
    assert _verdict(gate, "curl x", outside_sandbox=True) is Decision.DENY
    allowed, why = await gate.check(BASH, {"command": "make install", "outside_sandbox": True})
    assert not allowed and "no approver" in why


def test_without_a_mechanism_every_command_asks_even_when_allowed(tmp_path: Path) -> None:
    state = SandboxState(enabled=True, available=False, auto_allow=True, detail="no OS sandbox is available: x")
    gate = PermissionGate(PermissionRules(allow=("bash",), deny=("bash(rm:*)",)), roots=[tmp_path], sandbox=state)
    gate.session_allowed.add("bash(ls:*)")
    verdict = gate.evaluate(BASH, {"command": "ls"})
    assert verdict.decision is Decision.ASK and "no OS sandbox is available" in verdict.reason
    assert "full rights" in verdict.reason
    assert _verdict(gate, "rm x") is Decision.DENY


# -- bash and the file tools --------------------------------------------------------------------------

@bwrap_only
async def test_bash_runs_in_the_sandbox_and_the_model_learns_why_a_write_failed(home: Place) -> None:
    tools = _tools(home, SandboxSettings(network=NetworkPolicy.off()))
    bash = tools["bash"]
    assert "OS sandbox" in bash.spec.description and "outside_sandbox" in bash.spec.input_schema["properties"]
    result = await bash.call({"command": f"cat ~/.ssh/id_ed25519; touch {home.outside}/x"})
    assert CANARY not in result.content and result.is_error
    assert "Read-only file system" in result.content and "outside_sandbox: true" in result.content
    assert not (home.outside / "x").exists()
    ok = await bash.call({"command": "echo built > out.txt && cat out.txt"})
    assert not ok.is_error and "built" in ok.content
    outside = await bash.call({"command": f"touch {home.outside}/y", "outside_sandbox": True})
    assert "ran outside the sandbox" in outside.content and (home.outside / "y").exists()


async def test_without_a_mechanism_bash_says_it_ran_unconfined(home: Place, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FORCE_VARIABLE, "none")
    bash = _tools(home, SandboxSettings())["bash"]
    assert "no OS sandbox here" in bash.spec.description
    result = await bash.call({"command": "echo hi"})
    assert "ran without a sandbox" in result.content


async def test_bash_without_the_setting_is_unchanged(home: Place) -> None:
    bash = _tools(home, SandboxSettings(enabled=False))["bash"]
    assert "outside_sandbox" not in bash.spec.input_schema["properties"]
    result = await bash.call({"command": "cat ~/.ssh/id_ed25519"})
    assert CANARY in result.content


async def test_the_file_tools_keep_to_deny_read(home: Place) -> None:
    secret = home.ws / "secrets" / "key.txt"
    secret.parent.mkdir()
    secret.write_text(CANARY)
    (home.ws / "ok.txt").write_text("CANARY-free but findable")
    (home.ws / "link").symlink_to(secret)
    tools = _tools(home, SandboxSettings(deny_read=("secrets",)))
    for path in ("secrets/key.txt", "link", str(secret)):
        result = await tools["read_file"].call({"path": path})
        assert result.is_error and "unreadable" in result.content and CANARY not in result.content
    found = await tools["grep"].call({"pattern": "CANARY"})
    assert "ok.txt" in found.content and "key.txt" not in found.content and "link" not in found.content
    listed = await tools["glob"].call({"pattern": "**/*.txt"})
    assert "key.txt" not in listed.content
    wrote = await tools["write_file"].call({"path": "secrets/new.txt", "content": "x"})
    assert wrote.is_error and not (home.ws / "secrets" / "new.txt").exists()


@bwrap_only
async def test_network_ask_goes_through_the_approval_handler_and_the_answer_holds(home: Place, http_port: int) -> None:
    from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, SessionScope, host_asker

    asked: list[ApprovalRequest] = []

    async def handler(req: ApprovalRequest) -> ApprovalAnswer | SessionScope:
        asked.append(req)
        return req.scopes[0] if req.arguments["host"] == "localhost" else ApprovalAnswer.DENY

    tools = {t.spec.name: t for t in builtin_tools(Workspace([home.ws]), output_cap_chars=20_000,
                                                   sandbox=SandboxSettings(), ask_host=host_asker(handler))}
    fetch = (f"{sys.executable} -c \"import urllib.request as u, sys; "
             "print(u.urlopen(sys.argv[1], timeout=5).read().decode())\"")
    first = await tools["bash"].call({"command": f"{fetch} http://localhost:{http_port}/ && "
                                                 f"{fetch} http://localhost:{http_port}/again"})
    assert first.content.count("hello from the host") == 2, first.content
    refused = await tools["bash"].call({"command": f"{fetch} http://127.0.0.1:{http_port}/"})
    assert refused.is_error and "proxy refused 127.0.0.1" in refused.content
    assert [r.arguments["host"] for r in asked] == ["localhost", "127.0.0.1"]
    assert "wants to reach localhost" in asked[0].reason and asked[0].scopes[0].label == "Allow localhost for this session"


@bwrap_only
async def test_the_session_builder_gives_bash_and_the_gate_the_sandbox(home: Place) -> None:
    from agent_ls.runtime.questions import NoQuestions
    from agent_ls.runtime.sessions import FrontEnd, build_session

    user = home.home / "user.json"
    _write(user, {"model": "openai/x", "agent": {"sandbox": {"autoAllow": True, "network": "off"}}})
    agent = agent_settings(load_settings([home.ws], user_settings=user, environ={}, trust=TRUST_ALL), {})
    llm = agent.llm_config()
    assert llm is not None
    session = await build_session(agent, llm, roots=[home.ws], front=FrontEnd(questions=NoQuestions()))
    bash: Any = session.registry.get("bash")
    assert bash.sandbox is not None and bash.sandbox.policy.network.is_off
    gate: Any = session.gate
    assert gate.evaluate(bash.spec, {"command": "npm test"}).decision is Decision.ALLOW
    assert gate.evaluate(bash.spec, {"command": "npm test", "outside_sandbox": True}).decision is Decision.ASK
    result = await bash.call({"command": "cat ~/.ssh/id_ed25519"})
    assert CANARY not in result.content
