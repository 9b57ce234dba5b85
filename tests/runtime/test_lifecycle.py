"""The host's lifecycle (agent_ls/runtime/lifecycle.py) on its own: the order of its start."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from pathlib import Path

import pytest

from agent_ls.config.entries import ServerConfig
from agent_ls.config.state import HostState
from agent_ls.core.tasks import BackgroundTasks
from agent_ls.mcp.status import ServerStatus
from agent_ls.runtime import lifecycle as lifecycle_module
from agent_ls.runtime.host import RuntimeHost
from agent_ls.runtime.lifecycle import HostLifecycle, LogListener
from agent_ls.runtime.pending import PendingHost
from agent_ls.runtime.questions import NoQuestions, TrustAnswer


@pytest.fixture
def folder(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"model": "openai/m", "mcpServers": {"u": {"command": "echo", "args": ["u"]}}}))
    monkeypatch.setenv("AGENT_LS_USER_SETTINGS", str(user))
    monkeypatch.setenv("AGENT_LS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("AGENT_LS_DATA_DIR", str(tmp_path / "data"))
    monkeypatch.setenv("AGENT_LS_WARMUP", "0")  # no model library here: the host waits for the limit
    monkeypatch.setenv("AGENT_LS_MODEL_FIRST_LIMIT", "600")
    ws = tmp_path / "ws"
    ws.mkdir()
    return ws


async def test_a_request_between_the_settings_and_the_preview_does_not_start_the_host(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The start reads the settings, then computes the preview of the status (a thread: long on a
    loaded machine). A request that asks whether the host is still starting (the editor's first
    code action or prompt list) waits for that preview rather than finding none and starting
    the host before the model library (the model-first order)."""
    slow = lifecycle_module.preview

    def slow_preview(*args: object) -> list[ServerStatus] | None:
        time.sleep(0.5)
        return slow(*args)  # type: ignore[arg-type]

    monkeypatch.setattr(lifecycle_module, "preview", slow_preview)
    tasks = BackgroundTasks("test", logging.getLogger(__name__))
    runtime = RuntimeHost(lambda: [folder], state=HostState(tmp_path / "host-state.json"))
    lifecycle = HostLifecycle(runtime, LogListener(), tasks, preview_first=False)
    monkeypatch.setattr(lifecycle.models, "prewarm", lambda: asyncio.ensure_future(asyncio.sleep(600)))
    start = asyncio.ensure_future(lifecycle.start())
    try:
        for _ in range(500):
            if runtime.settings is not None:
                break
            await asyncio.sleep(0.01)
        assert runtime.settings is not None and not lifecycle.preview_ready.is_set()  # in between
        await lifecycle.settings_loaded()
        assert lifecycle.host_starting() is not None  # the preview answers
        assert not lifecycle.wanted.is_set() and lifecycle.manager is None
    finally:
        start.cancel()
        tasks.cancel()
        await asyncio.gather(start, return_exceptions=True)


async def test_on_demand_no_server_means_no_manager_until_a_reload_brings_one(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``mcp_on_demand`` (ACP): with no server configured the start ends with the settings, no
    manager (sessions get no MCP host); a reload that brings a server creates the manager and
    starts it; asking for the manager of an idle host creates it too."""
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"model": "openai/m"}))
    tasks = BackgroundTasks("test", logging.getLogger(__name__))
    runtime = RuntimeHost(lambda: [folder], state=HostState(tmp_path / "host-state.json"))
    lifecycle = HostLifecycle(runtime, LogListener(), tasks, model_first=False, preview_first=False,
                              mcp_on_demand=True)
    try:
        await lifecycle.start()
        assert lifecycle.idle and lifecycle.manager is None and not lifecycle.starting
        assert await lifecycle.session_host() is None

        user.write_text(json.dumps({"model": "openai/m", "mcpServers": {"u": {"command": "echo", "args": ["u"]}}}))
        await lifecycle.reload()
        manager = lifecycle.manager
        assert manager is not None and not lifecycle.idle
        assert manager.server_names() == ["u"] and await lifecycle.session_host() is manager
    finally:
        tasks.cancel()
        await lifecycle.shutdown(5)

    idle = HostLifecycle(RuntimeHost(lambda: [folder], state=HostState(tmp_path / "other-state.json")), LogListener(),
                         BackgroundTasks("test", logging.getLogger(__name__)), model_first=False, preview_first=False,
                         mcp_on_demand=True)
    user.write_text(json.dumps({"model": "openai/m"}))
    try:
        await idle.start()
        assert idle.idle
        manager = await idle.ensure_manager()
        assert manager.server_names() == [] and not idle.idle
    finally:
        await idle.shutdown(5)


async def test_request_first_holds_the_start_until_the_front_end_is_quiet(
        folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``request_first`` (the terminal): the host's start waits, after the model library, until
    the front end is quiet (its first request has gone out, or it waits for its user); a session
    built meanwhile gets a pending host that lists the server as starting and does not wait for
    kept tools; once quiet, the host starts."""
    tasks = BackgroundTasks("test", logging.getLogger(__name__))
    runtime = RuntimeHost(lambda: [folder], state=HostState(tmp_path / "host-state.json"))
    lifecycle = HostLifecycle(runtime, LogListener(), tasks, preview_first=False, mcp_on_demand=True,
                              ask_workspaces=False, request_first=True)
    began: list[bool] = []
    start_manager = lifecycle._start_manager

    async def noted() -> None:
        began.append(True)
        await start_manager()

    monkeypatch.setattr(lifecycle, "_start_manager", noted)
    try:
        pending = await lifecycle.session_host()
        assert isinstance(pending, PendingHost) and pending.starting() == ["u"]
        await asyncio.sleep(0.2)
        assert not began and lifecycle.starting  # held: nothing says the request went
        lifecycle.quiet.set()
        await asyncio.wait_for(lifecycle.started.wait(), 60)
        assert lifecycle.manager is not None and lifecycle.manager.server_names() == ["u"]
    finally:
        tasks.cancel()
        await lifecycle.shutdown(5)


class Answers(NoQuestions):
    """Trust questions answered with ``answer``, counted."""

    def __init__(self, answer: TrustAnswer | None) -> None:
        self.answer = answer
        self.asked: list[str] = []

    async def trust_server(self, config: ServerConfig) -> TrustAnswer | None:
        self.asked.append(config.name)
        return self.answer


@pytest.mark.parametrize("answer", [TrustAnswer.TRUST, TrustAnswer.KEEP_RESTRICTED, None])
async def test_server_questions_asked_before_the_host_are_not_asked_again(
        folder: Path, tmp_path: Path, answer: TrustAnswer | None) -> None:
    """A trusted folder whose settings gained a stdio server: it will ask to be trusted
    (``servers_asking_trust``, no MCP SDK needed); asked before the host starts
    (``ask_servers_first``), the answer is remembered as the manager's own, so the host starts it
    (or keeps it stopped) without asking again; no answer leaves it undecided, waiting."""
    settings = folder / ".agent-ls" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"mcpServers": {}}))
    questions = Answers(answer)
    runtime = RuntimeHost(lambda: [folder], questions, state=HostState(tmp_path / "host-state.json"))
    loaded = await runtime.load()
    await runtime.record_workspace(loaded.workspaces[folder].request, TrustAnswer.TRUST)
    settings.write_text(json.dumps({"mcpServers": {"w": {"command": "true"}}}))
    await runtime.load()
    tasks = BackgroundTasks("test", logging.getLogger(__name__))
    lifecycle = HostLifecycle(runtime, LogListener(), tasks, model_first=False, preview_first=False,
                              ask_workspaces=False, mcp_on_demand=True)
    try:
        assert [c.name for c in lifecycle.servers_asking_trust()] == ["w"]
        undecided = await lifecycle.ask_servers_first()
        assert [c.name for c in undecided] == ([] if answer else ["w"]) and questions.asked == ["w"]
        assert lifecycle.servers_asking_trust() == undecided
        manager = await lifecycle.ensure_manager()
        await asyncio.sleep(0.1)
        state = {s.name: s.state for s in manager.status()}["w"]
        if answer is None:
            assert state == "awaiting-trust" and questions.asked == ["w", "w"]  # the host asks (no one answers)
        else:
            assert questions.asked == ["w"]
            assert state != "awaiting-trust" and (state == "untrusted") == (answer is TrustAnswer.KEEP_RESTRICTED)
    finally:
        tasks.cancel()
        await lifecycle.shutdown(5)


async def test_a_trust_decision_made_in_another_window_counts_while_no_host_runs(
        folder: Path, tmp_path: Path) -> None:
    """``decisions_changed`` with the settings read and no MCP host yet (the language server's host
    starts after the model library; here an on-demand host with no server, to hold that state):
    the folder trusted in another window is trusted here too (the settings are read again), not
    left restricted until some later reload."""
    from agent_ls.config.settings import load_settings
    from agent_ls.config.trust import TrustPolicy

    user = tmp_path / "user.json"
    user.write_text(json.dumps({"model": "openai/m"}))
    (folder / ".agent-ls").mkdir()
    (folder / ".agent-ls" / "settings.json").write_text(json.dumps({"apiBase": "http://127.0.0.1:9/v1"}))
    state_file = tmp_path / "host-state.json"
    tasks = BackgroundTasks("test", logging.getLogger(__name__))
    runtime = RuntimeHost(lambda: [folder], state=HostState(state_file))
    lifecycle = HostLifecycle(runtime, LogListener(), tasks, model_first=False, preview_first=False,
                              mcp_on_demand=True, ask_workspaces=False)
    try:
        await lifecycle.start()
        assert lifecycle.manager is None and runtime.settings is not None
        assert not runtime.settings.workspaces[folder].trusted
        other = HostState(state_file)  # another window's reader of the same file
        request = load_settings([folder], user_settings=user, environ={},
                                trust=TrustPolicy(other)).workspaces[folder].request
        other.set_workspace_decision(folder, request.digest, True, request.settings_snapshot())
        await lifecycle.decisions_changed()
        assert runtime.settings.workspaces[folder].trusted
        assert lifecycle.manager is None  # no server: still no MCP host
    finally:
        tasks.cancel()
        await lifecycle.shutdown(5)
