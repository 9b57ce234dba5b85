"""Which servers need trust, and the trust key and fingerprint of a server entry."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_ls.config.entries import ServerConfig
from tests.unit.settings_helpers import agent_ls_file, load, mcp_json, vscode_json, ws

# trust -----------------------------------------------------------------


def test_needs_trust(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    vscode_json(folder, {"v": {"command": "x"}, "vh": {"type": "http", "url": "https://h"}})
    mcp_json(folder, {"m": {"command": "x"}, "ms": {"type": "sse", "url": "https://h/sse"}})
    agent_ls_file(folder, {"w": {"command": "x"}, "wh": {"url": "http://localhost:3000/mcp"}})
    user = {"mcpServers": {"u": {"command": "x"}, "uh": {"url": "https://h"}}}
    loaded = load(tmp_path, [folder], user=user)
    trust = {name: cfg.needs_trust for name, cfg in loaded.servers.items()}
    # a workspace HTTP server receives whatever its URL and headers name: it needs trust too
    assert trust == {"v": True, "m": True, "w": True, "u": False, "vh": True, "ms": True, "wh": True,
                     "uh": False}


def _one(tmp_path: Path, entry: dict[str, Any], environ: dict[str, str] | None = None,
         name: str = "s") -> ServerConfig:
    folder = ws(tmp_path)
    agent_ls_file(folder, {name: entry})
    loaded = load(tmp_path, [folder], environ=environ)
    assert not loaded.failed, loaded.failed
    return loaded.servers[name]


BASE = {"command": "npx", "args": ["-y", "srv"], "env": {"A": "1", "B": "2"}, "cwd": "/srv/sub"}


@pytest.mark.parametrize(
    "change",
    [
        {"command": "node"},
        {"args": ["-y", "srv", "--extra"]},
        {"args": ["srv", "-y"]},
        {"env": {"A": "1", "B": "2", "C": "3"}},
        {"env": {"A": "1"}},
        {"env": {"A": "1", "X": "2"}},
        {"env": {"A": "changed", "B": "also changed"}},
        {"env": {"A": "1", "B": "2", "BASH_ENV": "./x.sh"}},
        {"cwd": "other"},
        {"url": "http://elsewhere"},
        {"headers": {"Authorization": "Bearer ${env:T}"}},
        {"protocol": "auto"},
    ],
)
def test_trust_key_changes_with_everything_that_decides_what_runs(tmp_path: Path, change: dict[str, Any]) -> None:
    before = _one(tmp_path / "1", BASE)
    after = _one(tmp_path / "2", {**BASE, **change})
    assert before.trust_key() != after.trust_key()


@pytest.mark.parametrize(
    "change",
    [
        {"env": {"B": "2", "A": "1"}},  # key order
        {"disabled": True},
        {"callTimeout": 5},
        {"connectTimeout": 9},
        {"description": "something else"},
    ],
)
def test_trust_key_is_stable_for_cosmetic_settings(tmp_path: Path, change: dict[str, Any]) -> None:
    before = _one(tmp_path / "1", BASE)
    after = _one(tmp_path / "2", {**BASE, **change})
    assert before.trust_key() == after.trust_key()


def test_trust_key_is_about_the_text_as_written(tmp_path: Path) -> None:
    # the approval is for the entry as written: a changed secret in the environment does not revoke it
    entry = {"command": "x", "env": {"TOKEN": "${GH_TOKEN}"}}
    a = _one(tmp_path / "1", entry, environ={"GH_TOKEN": "one-one-one"})
    b = _one(tmp_path / "2", entry, environ={"GH_TOKEN": "two-two-two"})
    assert a.trust_key() == b.trust_key()
    assert a.fingerprint() != b.fingerprint()


def test_trust_key_depends_on_the_name(tmp_path: Path) -> None:
    assert _one(tmp_path / "1", BASE, name="a").trust_key() != _one(tmp_path / "2", BASE, name="b").trust_key()


def test_trust_key_and_fingerprint_are_stable_strings(tmp_path: Path) -> None:
    a = _one(tmp_path / "1", BASE)
    b = _one(tmp_path / "1", BASE)
    assert a.trust_key() == b.trust_key()
    assert a.fingerprint() == b.fingerprint()
    assert isinstance(a.trust_key(), str)
    assert len(a.trust_key()) == 24
    assert len(a.fingerprint()) == 16
    int(a.trust_key(), 16)
    int(a.fingerprint(), 16)


@pytest.mark.parametrize(
    "change",
    [
        {"command": "node"},
        {"args": ["-y"]},
        {"env": {"A": "1", "B": "changed"}},
        {"env": {"A": "1"}},
        {"cwd": "elsewhere"},
        {"disabled": True},
        {"connectTimeout": 1},
        {"callTimeout": 1},
        {"protocol": "legacy"},
    ],
)
def test_fingerprint_changes_with_any_effective_change(tmp_path: Path, change: dict[str, Any]) -> None:
    before = _one(tmp_path / "1", BASE)
    after = _one(tmp_path / "2", {**BASE, **change})
    assert before.fingerprint() != after.fingerprint()


@pytest.mark.parametrize(
    "change",
    [
        {"url": "https://other/mcp"},
        {"headers": {"Authorization": "Bearer other"}},
        {"headers": {}},
        {"type": "sse"},
    ],
)
def test_fingerprint_changes_for_http_settings(tmp_path: Path, change: dict[str, Any]) -> None:
    base = {"type": "http", "url": "https://h/mcp", "headers": {"Authorization": "Bearer x"}}
    before = _one(tmp_path / "1", base)
    after = _one(tmp_path / "2", {**base, **change})
    assert before.fingerprint() != after.fingerprint()


def test_fingerprint_ignores_what_does_not_take_effect(tmp_path: Path) -> None:
    before = _one(tmp_path / "1", BASE)
    after = _one(tmp_path / "2", {**BASE, "env": {"B": "2", "A": "1"}, "description": "x"})
    assert before.fingerprint() == after.fingerprint()
