"""Settings expansion: ``${VAR}`` in every string field of a server entry, and ``cwd``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_ls.config.settings import load_settings
from tests.tooling import TRUST_ALL
from tests.unit.settings_helpers import (
    agent_ls_file,
    load,
    locate,
    mcp_json,
    single_server,
    start,
    vscode_json,
    warnings,
    write,
    ws,
)

# variables -------------------------------------------------------------


def test_every_string_field_is_expanded(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    agent_ls_file(folder, {
        "s": {"command": "${userHome}/bin/${CMD:-server}", "args": ["--token=${GH_TOKEN}", "${workspaceFolder}"],
              "env": {"T": "${env:GH_TOKEN}", "D": "${NOPE:-dflt}"}, "cwd": "${workspaceFolder}/sub"},
        "h": {"url": "https://${HOST:-localhost}/mcp", "headers": {"Authorization": "Bearer ${API_KEY}"}},
    })
    loaded = load(tmp_path, [folder])
    assert loaded.diagnostics == []
    s, h = loaded.servers["s"], loaded.servers["h"]
    assert s.command == f"{Path.home()}/bin/server"
    assert s.args == ("--token=ghp_abcdef123456", str(folder))
    assert dict(s.env) == {"T": "ghp_abcdef123456", "D": "dflt"}
    assert s.cwd == f"{folder}/sub"
    assert h.url == "https://localhost/mcp"
    assert dict(h.headers) == {"Authorization": "Bearer key-9876543210"}


def test_missing_variable_fails_that_server_naming_variable_and_field(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    text = json.dumps({"mcpServers": {
        "gh": {"command": "npx", "env": {"TOKEN": "${MISSING_TOKEN}"}},
        "ok": {"command": "npx", "env": {"TOKEN": "${GH_TOKEN}"}},
    }}, indent=2)
    file = write(folder / ".mcp.json", text)
    loaded = load(tmp_path, [folder])
    assert set(loaded.servers) == {"ok"}
    reason = loaded.failed["gh"].reason
    assert "MISSING_TOKEN" in reason
    assert "mcpServers.gh.env.TOKEN" in reason
    (d,) = loaded.diagnostics
    assert d.file == file
    assert d.server == "gh"
    assert d.json_path == ("mcpServers", "gh", "env", "TOKEN")
    assert start(d) == locate(text, '"${MISSING_TOKEN}"')


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"command": "${NOPE}"}, "servers.s.command"),
        ({"command": "x", "args": ["ok", "${NOPE}"]}, "servers.s.args[1]"),
        ({"command": "x", "cwd": "${NOPE}"}, "servers.s.cwd"),
        ({"url": "https://${NOPE}/"}, "servers.s.url"),
        ({"url": "https://h/", "headers": {"X-Api-Key": "${NOPE}"}}, "servers.s.headers.X-Api-Key"),
    ],
)
def test_missing_variable_in_each_field(tmp_path: Path, entry: dict[str, Any], field: str) -> None:
    folder = ws(tmp_path)
    vscode_json(folder, {"s": entry})
    loaded = load(tmp_path, [folder])
    assert "s" in loaded.failed
    assert "NOPE" in loaded.failed["s"].reason
    assert field in loaded.failed["s"].reason


def test_vscode_input_variables_fail_with_a_clear_message(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    write(folder / ".vscode" / "mcp.json", {
        "inputs": [{"type": "promptString", "id": "tok", "password": True}],
        "servers": {"gh": {"command": "x", "env": {"T": "${input:tok}"}}, "ok": {"command": "y"}},
    })
    loaded = load(tmp_path, [folder])
    assert "ok" in loaded.servers
    reason = loaded.failed["gh"].reason
    assert "input:tok" in reason
    assert "not supported" in reason
    assert "servers.gh.env.T" in reason
    # "inputs" is VS Code's own key: no warning for it
    assert warnings(loaded) == []


def test_empty_variable_with_default(tmp_path: Path) -> None:
    loaded = single_server(tmp_path, {"command": "x", "args": ["${EMPTY:-d}", "${EMPTY}"]})
    assert loaded.servers["s"].args == ("d", "")


def test_escaped_dollar_is_kept(tmp_path: Path) -> None:
    loaded = single_server(tmp_path, {"command": "x", "args": ["$${NOT_A_VAR}"]})
    assert loaded.servers["s"].args == ("${NOT_A_VAR}",)


def test_environ_argument_replaces_the_process_environment(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ONLY_IN_PROCESS", "p")
    folder = ws(tmp_path)
    agent_ls_file(folder, {"s": {"command": "${ONLY_IN_PROCESS}"}})
    assert "s" in load(tmp_path, [folder], environ={}).failed
    assert load_settings([folder], user_settings=tmp_path / "none.json", trust=TRUST_ALL).servers["s"].command == "p"


# cwd ---------------------------------------------------------------------


def test_relative_cwd_is_resolved_against_the_workspace_folder(tmp_path: Path) -> None:
    a, b = ws(tmp_path, "a"), ws(tmp_path, "b")
    agent_ls_file(a, {"rel": {"command": "x", "cwd": "tools/server"}, "dot": {"command": "x", "cwd": "."}})
    mcp_json(b, {"relb": {"command": "x", "cwd": "sub"}})
    loaded = load(tmp_path, [a, b])
    assert loaded.servers["rel"].cwd == str(a / "tools" / "server")
    assert loaded.servers["dot"].cwd == str(a / ".")
    assert loaded.servers["relb"].cwd == str(b / "sub")


def test_absolute_cwd_is_kept(tmp_path: Path) -> None:
    loaded = single_server(tmp_path, {"command": "x", "cwd": "/opt/server"})
    assert loaded.servers["s"].cwd == "/opt/server"


def test_no_cwd_is_the_entrys_workspace_folder(tmp_path: Path) -> None:
    # explicit, not inherited from wherever the language server was started
    assert single_server(tmp_path, {"command": "x"}).servers["s"].cwd == str(ws(tmp_path))
