"""The user's sandbox grants for a workspace (issue 47): "always allow this host" from the network
question and "allow for this workspace" for a refused write or host. They are user decisions in
``host-state.json`` (outside the workspace), read again for every command, visible and revocable;
and the mark a ``bash`` result carries for the chat's card (sandboxed, network off or through the
proxy, outside after approval) with the places and hosts the sandbox refused."""

from __future__ import annotations

import json
import sys
import tempfile

import pytest

from agent_ls.agent.builtin_tools import builtin_tools
from agent_ls.agent.permissions import (
    NETWORK_ALWAYS,
    ApprovalAnswer,
    ApprovalRequest,
    SessionScope,
    host_asker,
)
from agent_ls.agent.workspace import Workspace
from agent_ls.config import paths as config_paths
from agent_ls.config.sandbox import SandboxSettings, set_workspace_grant, workspace_grants
from agent_ls.core.sandbox import Mechanism, NetworkPolicy, detect
from agent_ls.core.tools import Tool
from tests.sandbox.conftest import Place

bwrap_only = pytest.mark.skipif(detect().mechanism is not Mechanism.BUBBLEWRAP, reason="bubblewrap does not work here")

FETCH = (f"{sys.executable} -c \"import urllib.request as u, sys; "
         "print(u.urlopen(sys.argv[1], timeout=5).read().decode())\"")


@pytest.fixture
def home(place: Place, monkeypatch: pytest.MonkeyPatch) -> Place:
    monkeypatch.setenv("HOME", str(place.home))
    monkeypatch.setenv("AGENT_LS_CONFIG_DIR", str(place.home / "cfg"))
    monkeypatch.setenv("AGENT_LS_DATA_DIR", str(place.home / "data"))
    monkeypatch.setattr(tempfile, "tempdir", str(place.tmp))
    return place


def _tools(place: Place, settings: SandboxSettings, handler: object = None) -> dict[str, Tool]:
    def remember(host: str) -> None:
        set_workspace_grant(place.ws, "hosts", host, True)

    ask = host_asker(handler, remember) if handler is not None else None  # type: ignore[arg-type]
    return {t.spec.name: t for t in builtin_tools(Workspace([place.ws]), output_cap_chars=20_000,
                                                  sandbox=settings, ask_host=ask)}


def test_grants_are_kept_outside_the_workspace_and_can_be_revoked(home: Place) -> None:
    assert set_workspace_grant(home.ws, "hosts", "PyPI.org", True) == "pypi.org"
    kept = set_workspace_grant(home.ws, "writes", str(home.outside), True)
    assert workspace_grants([home.ws]).hosts == ("pypi.org",) and workspace_grants([home.ws]).writes == (kept,)
    state = json.loads(config_paths.host_state_path().read_text())
    assert state["sandbox"][str(home.ws.resolve())] == {"hosts": ["pypi.org"], "writes": [kept]}
    assert not list(home.ws.iterdir())  # nothing written in the workspace
    set_workspace_grant(home.ws, "hosts", "pypi.org", False)
    set_workspace_grant(home.ws, "writes", kept, False)
    assert workspace_grants([home.ws]).hosts == ()
    assert json.loads(config_paths.host_state_path().read_text())["sandbox"] == {}
    assert workspace_grants([home.outside]).hosts == ()  # another folder has its own


def test_a_grant_that_would_open_everything_or_is_not_a_host_is_refused(home: Place) -> None:
    for kind, value in (("writes", "/"), ("writes", str(home.home)), ("writes", "relative/x"),
                        ("hosts", "http://evil.example/"), ("other", "x")):
        with pytest.raises(ValueError):
            set_workspace_grant(home.ws, kind, value, True)


@bwrap_only
async def test_the_mark_says_sandboxed_with_its_network_and_what_was_refused(home: Place) -> None:
    bash = _tools(home, SandboxSettings(network=NetworkPolicy.off()))["bash"]
    ok = await bash.call({"command": "true"})
    assert ok.sandbox is not None and (ok.sandbox.mode, ok.sandbox.mechanism, ok.sandbox.network) == (
        "sandboxed", "bubblewrap", "off")
    target = home.outside / "deeper" / "x"
    refused = await bash.call({"command": f"touch {home.outside}/y; mkdir -p {target}; touch .agent-ls/x"})
    assert refused.sandbox is not None and refused.sandbox.paths == (str(home.outside.resolve()),)
    outside = await bash.call({"command": "true", "outside_sandbox": True})
    assert outside.sandbox is not None and outside.sandbox.mode == "outside"
    proxied = _tools(home, SandboxSettings())["bash"]
    assert (await proxied.call({"command": "true"})).sandbox.network == "proxy"  # type: ignore[union-attr]


@bwrap_only
async def test_a_write_grant_makes_the_place_writable_for_the_next_command_and_revoking_ends_it(home: Place) -> None:
    bash = _tools(home, SandboxSettings(network=NetworkPolicy.off()))["bash"]
    first = await bash.call({"command": f"touch {home.outside}/y"})
    assert first.is_error and not (home.outside / "y").exists()
    assert first.sandbox is not None
    set_workspace_grant(home.ws, "writes", first.sandbox.paths[0], True)
    again = await bash.call({"command": f"touch {home.outside}/y"})
    assert not again.is_error and (home.outside / "y").exists()
    set_workspace_grant(home.ws, "writes", first.sandbox.paths[0], False)
    revoked = await bash.call({"command": f"touch {home.outside}/z"})
    assert revoked.is_error and not (home.outside / "z").exists()


@bwrap_only
async def test_always_for_a_host_is_kept_and_later_commands_and_sessions_do_not_ask(home: Place, http_port: int) -> None:
    asked: list[ApprovalRequest] = []

    async def handler(req: ApprovalRequest) -> ApprovalAnswer | SessionScope:
        asked.append(req)
        return next(s for s in req.scopes if s.id == NETWORK_ALWAYS)

    first = await _tools(home, SandboxSettings(), handler)["bash"].call(
        {"command": f"{FETCH} http://localhost:{http_port}/"})
    assert "hello from the host" in first.content, first.content
    assert [s.label for s in asked[0].scopes] == ["Allow localhost for this session",
                                                 "Always allow localhost in this workspace"]
    assert workspace_grants([home.ws]).hosts == ("localhost",)
    # a new session (a new sandbox and proxy) goes through without asking
    second = await _tools(home, SandboxSettings(), handler)["bash"].call(
        {"command": f"{FETCH} http://localhost:{http_port}/"})
    assert "hello from the host" in second.content and len(asked) == 1
    # an allow list without asking lets a granted host through too; "off" still wins
    listed = await _tools(home, SandboxSettings(network=NetworkPolicy(allow=("pypi.org",))))["bash"].call(
        {"command": f"{FETCH} http://localhost:{http_port}/"})
    assert "hello from the host" in listed.content
    off = await _tools(home, SandboxSettings(network=NetworkPolicy.off()))["bash"].call(
        {"command": f"{FETCH} http://localhost:{http_port}/"})
    assert off.is_error and "hello" not in off.content
    set_workspace_grant(home.ws, "hosts", "localhost", False)
    denied: list[str] = []

    async def deny(req: ApprovalRequest) -> ApprovalAnswer:
        denied.append(req.arguments["host"])
        return ApprovalAnswer.DENY

    third = await _tools(home, SandboxSettings(), deny)["bash"].call({"command": f"{FETCH} http://localhost:{http_port}/"})
    assert third.is_error and denied == ["localhost"]
    assert third.sandbox is not None and third.sandbox.hosts == ("localhost",)


@bwrap_only
async def test_a_grant_never_reaches_agent_ls_own_config_and_decisions(home: Place) -> None:
    data, cfg = home.home / "data", home.home / "cfg"
    set_workspace_grant(home.ws, "writes", str(home.outside), True)  # makes host-state.json exist
    cfg.mkdir()
    (cfg / "settings.json").write_text("{}")
    for place in (data, cfg):
        set_workspace_grant(home.ws, "writes", str(place), True)
    before = config_paths.host_state_path().read_text()
    bash = _tools(home, SandboxSettings(network=NetworkPolicy.off()))["bash"]
    result = await bash.call({"command": f"echo '{{}}' > {data}/host-state.json; echo x > {cfg}/settings.json; "
                                         f"cat {data}/host-state.json; touch {home.outside}/ok"})
    assert config_paths.host_state_path().read_text() == before and (cfg / "settings.json").read_text() == "{}"
    assert '"writes"' not in result.content  # host-state.json is unreadable inside, granted or not
    assert (home.outside / "ok").exists()  # the other grant holds
