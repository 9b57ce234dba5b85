"""The last valid configuration stays in force on a reload (agent_ls/config/reload.py), for the
language server and for ``agent-ls acp`` alike: a file that no longer parses keeps its servers
and sections, a server entry that became invalid keeps its last valid version, and what is
fixed or removed takes effect."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_ls.acp.host import SessionHost
from agent_ls.config.reload import keep_last_valid
from agent_ls.config.settings import LoadedSettings, load_settings
from tests.tooling import TRUST_ALL

GOOD = {"model": "openai/good", "mcpServers": {"a": {"command": "echo", "args": ["a"]},
                                                 "b": {"command": "echo", "args": ["b"]}}}


def load(user: Path, folder: Path) -> LoadedSettings:
    return load_settings([folder], user_settings=user, environ={}, trust=TRUST_ALL)


@pytest.fixture
def files(tmp_path: Path) -> tuple[Path, Path]:
    folder = tmp_path / "ws"
    folder.mkdir()
    user = tmp_path / "user.json"
    user.write_text(json.dumps(GOOD))
    return user, folder


def test_a_file_that_does_not_parse_keeps_its_servers_and_sections(files: tuple[Path, Path]) -> None:
    user, folder = files
    old = load(user, folder)
    user.write_text('{"model": "openai/half", "mcpServers": {')
    new = load(user, folder)
    assert "a" not in new.servers
    keep_last_valid(old, new)
    assert set(new.servers) == {"a", "b"}
    assert new.servers["a"].command == "echo"
    assert any(d.severity == "error" and d.file == user for d in new.diagnostics)  # still shown


def test_an_entry_that_became_invalid_keeps_its_last_valid_version(files: tuple[Path, Path]) -> None:
    user, folder = files
    old = load(user, folder)
    user.write_text(json.dumps({"model": "openai/good",
                                "mcpServers": {"a": {"command": 7}, "b": {"command": "echo", "args": ["b2"]}}}))
    new = load(user, folder)
    assert "a" in new.failed
    keep_last_valid(old, new)
    assert "a" not in new.failed and new.servers["a"].args == ("a",)
    assert new.servers["b"].args == ("b2",)  # a valid change takes effect


def test_a_removed_entry_goes(files: tuple[Path, Path]) -> None:
    user, folder = files
    old = load(user, folder)
    user.write_text(json.dumps({"mcpServers": {"b": {"command": "echo", "args": ["b"]}}}))
    new = load(user, folder)
    keep_last_valid(old, new)
    assert set(new.servers) == {"b"}


def test_acp_reload_keeps_the_last_valid_configuration(files: tuple[Path, Path], tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    user, folder = files
    monkeypatch.setenv("AGENT_LS_USER_SETTINGS", str(user))
    monkeypatch.setenv("AGENT_LS_CONFIG_DIR", str(tmp_path / "config"))
    monkeypatch.setenv("AGENT_LS_DATA_DIR", str(tmp_path / "data"))
    host = SessionHost(folder, {})
    host.runtime.settings = host.runtime.read_settings()  # what start() reads, without starting servers
    assert set(host.settings.servers) == {"a", "b"}
    user.write_text('{"mcpServers": {"a": ')
    asyncio.run(host.reload())  # no manager yet: the settings alone
    assert set(host.settings.servers) == {"a", "b"}
    assert any(d.severity == "error" for d in host.settings.diagnostics)
