"""The runtime host every front end runs (agent_ls/runtime/host.py): settings through the trust
policy, answers to trust questions recorded (remembered, or for this process only), the front
end's questions asked about workspace servers, the front end's servers joining the configured
ones, and a reload that keeps the last valid values."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_ls.config.entries import ConfigSource, Scope, ServerConfig
from agent_ls.config.state import HostState
from agent_ls.runtime.host import RuntimeHost
from agent_ls.runtime.questions import NoQuestions, TrustAnswer
from agent_ls.runtime.trust import OnceTrustState

WORKSPACE = {"model": "openai/from-workspace", "mcpServers": {"w": {"command": "echo", "args": ["w"]}}}


@pytest.fixture
def ws(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    user = tmp_path / "user.json"
    user.write_text(json.dumps({"mcpServers": {"u": {"command": "echo", "args": ["u"]}}}))
    monkeypatch.setenv("AGENT_LS_USER_SETTINGS", str(user))
    monkeypatch.setenv("AGENT_LS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("AGENT_LS_DATA_DIR", str(tmp_path / "data"))
    folder = tmp_path / "ws"
    (folder / ".agent-ls").mkdir(parents=True)
    (folder / ".agent-ls" / "settings.json").write_text(json.dumps(WORKSPACE))
    return folder


def host_on(folder: Path, state_path: Path, questions: Any = None) -> RuntimeHost:
    return RuntimeHost(lambda: [folder], questions, state=OnceTrustState(state_path))


async def test_a_folder_trusted_once_applies_now_and_is_not_remembered(ws: Path, tmp_path: Path) -> None:
    path = tmp_path / "host-state.json"
    host = host_on(ws, path)
    settings = await host.load()
    info = settings.workspaces[ws]
    assert info.asks and settings.servers["w"].restricted
    await host.record_workspace(info.request, TrustAnswer.TRUST_ONCE)
    settings = await host.load()
    assert settings.workspaces[ws].trusted and not settings.servers["w"].restricted
    assert host.agent_settings().model == "openai/from-workspace"
    assert host.state.trust(ws, settings.servers["w"].trust_key()) is True  # its servers too, for now
    assert HostState(path).workspace_decision(ws) is None  # nothing written down
    again = await host_on(ws, path).load()  # another process: asked again
    assert again.workspaces[ws].asks and again.servers["w"].restricted


@pytest.mark.parametrize(("answer", "trusted"), [(TrustAnswer.TRUST, True), (TrustAnswer.KEEP_RESTRICTED, False)])
async def test_remembered_answers_hold_for_the_next_process(ws: Path, tmp_path: Path, answer: TrustAnswer,
                                                           trusted: bool) -> None:
    path = tmp_path / "host-state.json"
    host = host_on(ws, path)
    info = (await host.load()).workspaces[ws]
    await host.record_workspace(info.request, answer)
    decision = HostState(path).workspace_decision(ws)
    assert decision is not None and decision["trusted"] is trusted
    later = await host_on(ws, path).load()
    assert later.workspaces[ws].trusted is trusted and not later.workspaces[ws].asks


class Asked:
    """A front end's questions that answer every server question with ``answer``."""

    def __init__(self, answer: TrustAnswer | None) -> None:
        self.answer = answer
        self.servers: list[str] = []

    async def trust_server(self, config: ServerConfig) -> TrustAnswer | None:
        self.servers.append(config.name)
        return self.answer


def workspace_server(folder: Path) -> ServerConfig:
    source = ConfigSource(Scope.WORKSPACE, folder / ".mcp.json", folder, ("mcpServers", "w"))
    return ServerConfig(name="w", transport="stdio", source=source, command="echo", args=("w",),
                        raw={"command": "echo", "args": ["w"]})


@pytest.mark.parametrize(("answer", "result", "for_now"), [
    (TrustAnswer.TRUST_ONCE, True, True),
    (TrustAnswer.TRUST, True, None),  # the manager records it (the same record as `agent-ls mcp trust`)
    (TrustAnswer.KEEP_RESTRICTED, False, None),
    (None, None, None),
])
async def test_the_manager_s_server_question_goes_to_the_front_end(ws: Path, tmp_path: Path, answer: TrustAnswer | None,
                                                                  result: bool | None, for_now: bool | None) -> None:
    path = tmp_path / "host-state.json"
    questions = Asked(answer)
    host = host_on(ws, path, questions)
    cfg = workspace_server(ws)
    assert await host._trust_server(cfg) is result
    assert questions.servers == ["w"]
    assert host.state.trust(ws, cfg.trust_key()) is for_now
    assert HostState(path).trust(ws, cfg.trust_key()) is None  # a "once" answer is never written down


async def test_nobody_to_ask_decides_nothing(ws: Path, tmp_path: Path) -> None:
    host = host_on(ws, tmp_path / "host-state.json")
    assert isinstance(host.questions, NoQuestions)
    assert await host._trust_server(workspace_server(ws)) is None
    assert await host.questions.trust_workspace((await host.load()).workspaces[ws]) is None


async def test_the_front_end_s_servers_join_and_replace_configured_ones(ws: Path, tmp_path: Path) -> None:
    source = ConfigSource(Scope.USER, Path("<editor>"), ws, ("mcpServers", "u"))
    editor = ServerConfig(name="u", transport="stdio", source=source, command="editor-u", raw={"command": "editor-u"})
    host = RuntimeHost(lambda: [ws], state=OnceTrustState(tmp_path / "s.json"), extra_servers={"u": editor})
    settings = await host.load()
    assert settings.servers["u"].command == "editor-u"


async def test_a_reread_keeps_the_last_valid_settings_and_names_the_broken_file(ws: Path, tmp_path: Path) -> None:
    host = host_on(ws, tmp_path / "host-state.json")
    await host.load()
    user = Path(str(tmp_path / "user.json"))
    user.write_text('{"mcpServers": {"u": ')
    settings, broken = await host.reread()
    assert broken == [user]
    assert settings.servers["u"].command == "echo"  # the last valid version stays
    assert host.settings is settings
