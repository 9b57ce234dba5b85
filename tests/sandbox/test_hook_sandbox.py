"""Hooks (issue 43) in the OS sandbox (issue 47), with real processes: a hook command runs
confined like ``bash`` (credentials unreadable, no writes outside the workspace), and where no
mechanism can confine it, it does not run at all (a non-blocking error says why)."""

from __future__ import annotations

import pytest

from agent_ls.agent.hooks import hook_ran, hooks_for
from agent_ls.config.hooks import HookSpec
from agent_ls.config.sandbox import SandboxSettings
from agent_ls.core.sandbox import NetworkPolicy
from agent_ls.core.sandbox.runner import FORCE_VARIABLE
from tests.sandbox.conftest import CANARY, Place
from tests.sandbox.test_agent_sandbox import bwrap_only
from tests.sandbox.test_agent_sandbox import home as home  # the fixture


def _spec(place: Place) -> HookSpec:
    return HookSpec("PreToolUse", f"cat ~/.ssh/id_ed25519; touch {place.outside}/x; echo ok > in-ws.txt", None, 30)


@bwrap_only
async def test_a_hook_runs_confined_like_bash(home: Place) -> None:
    hooks = hooks_for([_spec(home)], [home.ws], sandbox=SandboxSettings(network=NetworkPolicy.off()))
    assert hooks is not None and hooks.sandbox is not None
    (run,) = (await hooks.pre_tool_use("bash", {"command": "ls"}, "c1")).runs
    said = run.process.stdout + run.process.stderr
    assert CANARY not in said and "Read-only file system" in said
    assert not (home.outside / "x").exists() and (home.ws / "in-ws.txt").read_text() == "ok\n"
    # the same hook without the sandbox reads the key and writes outside: the test can fail
    plain = hooks_for([_spec(home)], [home.ws])
    assert plain is not None
    (run,) = (await plain.pre_tool_use("bash", {"command": "ls"}, "c1")).runs
    assert CANARY in run.process.stdout and (home.outside / "x").exists()


async def test_without_a_mechanism_a_hook_does_not_run(home: Place, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(FORCE_VARIABLE, "none")
    hooks = hooks_for([_spec(home)], [home.ws], sandbox=SandboxSettings())
    assert hooks is not None
    outcome = await hooks.pre_tool_use("bash", {"command": "ls"}, "c1")
    (run,) = outcome.runs
    assert not outcome.blocked and run.failed and "the OS sandbox cannot run it" in run.notice
    assert not (home.outside / "x").exists() and not (home.ws / "in-ws.txt").exists()
    assert hook_ran(run, "c1", "bash").outcome == "error"
