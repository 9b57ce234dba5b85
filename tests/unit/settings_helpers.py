"""Shared by the settings tests (tests/unit/test_settings.py and its test_settings_*.py siblings, not
test_settings_sections.py): writing settings files into a temporary workspace, loading them with an
isolated user file and environment, and locating diagnostics."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_ls.config.diagnostics import ConfigDiagnostic
from agent_ls.config.settings import LoadedSettings, load_settings
from tests.tooling import TRUST_ALL

ENV = {"GH_TOKEN": "ghp_abcdef123456", "HOME": "/home/alice", "API_KEY": "key-9876543210", "EMPTY": ""}


def write(path: Path, content: Any) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(content if isinstance(content, str) else json.dumps(content, indent=2), encoding="utf-8")
    return path


def ws(tmp_path: Path, name: str = "ws") -> Path:
    folder = tmp_path / name
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def agent_ls_file(folder: Path, servers: Any, **top: Any) -> Path:
    return write(folder / ".agent-ls" / "settings.json", {"mcpServers": servers, **top})


def mcp_json(folder: Path, servers: Any) -> Path:
    return write(folder / ".mcp.json", {"mcpServers": servers})


def vscode_json(folder: Path, servers: Any, **top: Any) -> Path:
    return write(folder / ".vscode" / "mcp.json", {"servers": servers, **top})


def load(
    tmp_path: Path,
    folders: list[Path] | None = None,
    user: Any = None,
    environ: dict[str, str] | None = None,
) -> LoadedSettings:
    """Load with an isolated user settings file (``user`` is its content, or None for absent)."""
    user_file = tmp_path / "user-config" / "settings.json"
    if user is not None:
        write(user_file, user)
    return load_settings(folders or [], user_settings=user_file, environ=ENV if environ is None else environ,
                         trust=TRUST_ALL)


def errors(loaded: LoadedSettings) -> list[ConfigDiagnostic]:
    return [d for d in loaded.diagnostics if d.severity == "error"]


def warnings(loaded: LoadedSettings) -> list[ConfigDiagnostic]:
    return [d for d in loaded.diagnostics if d.severity == "warning"]


def locate(text: str, needle: str, nth: int = 0) -> tuple[int, int]:
    """0-based (line, column) of the ``nth`` occurrence of ``needle``."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    return text.count("\n", 0, i), i - (text.rfind("\n", 0, i) + 1)


def start(d: ConfigDiagnostic) -> tuple[int, int]:
    assert d.span is not None, d
    return d.span.start.line, d.span.start.column


def single_server(tmp_path: Path, entry: Any, environ: dict[str, str] | None = None) -> LoadedSettings:
    folder = ws(tmp_path)
    agent_ls_file(folder, {"s": entry})
    return load(tmp_path, [folder], environ=environ)
