"""Settings files: where they are, loading, scopes and precedence, and the merge of the other
settings across scopes.

The rest of the settings tests, by subject: test_settings_validation.py (transport inference,
diagnostics at exact positions, invalid JSON), test_settings_expansion.py (variables, cwd),
test_settings_trust.py (trust keys, fingerprints), test_settings_secrets.py (secrets and
:mod:`agent_ls.core.redact`), test_settings_oauth.py; helpers in settings_helpers.py.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_ls.config.entries import DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, Scope
from agent_ls.config.paths import user_config_dir, user_data_dir, user_settings_path
from agent_ls.config.settings import load_settings
from tests.unit.settings_helpers import (
    agent_ls_file,
    errors,
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

# paths -----------------------------------------------------------------


def test_user_paths_follow_environment_overrides(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.delenv("AGENT_LS_USER_SETTINGS", raising=False)
    monkeypatch.setenv("AGENT_LS_CONFIG_DIR", str(tmp_path / "cfg"))
    monkeypatch.setenv("AGENT_LS_DATA_DIR", str(tmp_path / "data"))
    assert user_config_dir() == tmp_path / "cfg"
    assert user_settings_path() == tmp_path / "cfg" / "settings.json"
    assert user_data_dir() == tmp_path / "data"
    monkeypatch.setenv("AGENT_LS_USER_SETTINGS", str(tmp_path / "elsewhere.json"))
    assert user_settings_path() == tmp_path / "elsewhere.json"


def test_user_paths_default_to_platform_dirs(monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("AGENT_LS_CONFIG_DIR", "AGENT_LS_USER_SETTINGS", "AGENT_LS_DATA_DIR"):
        monkeypatch.delenv(var, raising=False)
    assert "agent-ls" in str(user_config_dir())
    assert user_settings_path().name == "settings.json"
    assert "agent-ls" in str(user_data_dir())


def test_default_user_settings_file_comes_from_the_environment_override(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    user_file = write(tmp_path / "u.json", {"mcpServers": {"u": {"command": "u"}}})
    monkeypatch.setenv("AGENT_LS_USER_SETTINGS", str(user_file))
    loaded = load_settings([], environ={})
    assert set(loaded.servers) == {"u"}
    assert user_file in loaded.files


# basic loading --------------------------------------------------------


def test_nothing_configured(tmp_path: Path) -> None:
    loaded = load(tmp_path, [ws(tmp_path)])
    assert loaded.servers == {}
    assert loaded.failed == {}
    assert loaded.diagnostics == []


def test_files_lists_every_candidate_file_for_watching(tmp_path: Path) -> None:
    a, b = ws(tmp_path, "a"), ws(tmp_path, "b")
    loaded = load(tmp_path, [a, b])
    expected = {
        a / ".vscode" / "mcp.json", a / ".mcp.json", a / ".agent-ls" / "settings.json", a / ".claude" / "settings.json",
        a / ".claude" / "settings.local.json",
        b / ".vscode" / "mcp.json", b / ".mcp.json", b / ".agent-ls" / "settings.json", b / ".claude" / "settings.json",
        b / ".claude" / "settings.local.json",
        tmp_path / "user-config" / "settings.json",
    }
    assert set(loaded.files) == expected


def test_stdio_entry(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    agent_ls_file(folder, {"fs": {"command": "npx", "args": ["-y", "@mcp/fs", "."], "env": {"A": "1"},
                                  "cwd": "/abs/dir"}})
    loaded = load(tmp_path, [folder])
    assert loaded.diagnostics == []
    cfg = loaded.servers["fs"]
    assert cfg.name == "fs"
    assert cfg.transport == "stdio"
    assert cfg.command == "npx"
    assert cfg.args == ("-y", "@mcp/fs", ".")
    assert dict(cfg.env) == {"A": "1"}
    assert cfg.cwd == "/abs/dir"
    assert cfg.url is None
    assert cfg.disabled is False
    assert cfg.connect_timeout == DEFAULT_CONNECT_TIMEOUT
    assert cfg.call_timeout == DEFAULT_CALL_TIMEOUT
    assert cfg.protocol == "auto"  # the default: the era the server speaks (issue 15)
    assert cfg.source.scope is Scope.WORKSPACE
    assert cfg.source.file == folder / ".agent-ls" / "settings.json"
    assert cfg.source.workspace_folder == folder
    assert cfg.source.json_path == ("mcpServers", "fs")


def test_http_entry(tmp_path: Path) -> None:
    cfg = single_server(tmp_path, {"type": "http", "url": "https://api.example.com/mcp",
                                   "headers": {"Authorization": "Bearer ${GH_TOKEN}"}}).servers["s"]
    assert cfg.transport == "http"
    assert cfg.url == "https://api.example.com/mcp"
    assert dict(cfg.headers) == {"Authorization": "Bearer ghp_abcdef123456"}
    assert cfg.command is None
    assert cfg.args == ()


def test_per_server_options(tmp_path: Path) -> None:
    loaded = single_server(tmp_path, {"command": "x", "disabled": True, "connectTimeout": 5,
                                      "callTimeout": 2.5, "protocol": "auto", "description": "d"})
    assert loaded.diagnostics == []
    cfg = loaded.servers["s"]
    assert cfg.disabled is True
    assert cfg.connect_timeout == 5.0
    assert cfg.call_timeout == 2.5
    assert cfg.protocol == "auto"


def test_disabled_server_is_still_listed(tmp_path: Path) -> None:
    loaded = single_server(tmp_path, {"command": "x", "disabled": True})
    assert "s" in loaded.servers
    assert loaded.servers["s"].disabled


def test_numbers_in_args_and_env_become_strings(tmp_path: Path) -> None:
    loaded = single_server(tmp_path, {"command": "x", "args": ["--port", 8080, 1.5], "env": {"N": 3}})
    assert loaded.diagnostics == []
    assert loaded.servers["s"].args == ("--port", "8080", "1.5")
    assert dict(loaded.servers["s"].env) == {"N": "3"}


def test_servers_are_sorted_by_name(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    agent_ls_file(folder, {"zeta": {"command": "z"}, "alpha": {"command": "a"}, "mid": {"command": "m"}})
    assert list(load(tmp_path, [folder]).servers) == ["alpha", "mid", "zeta"]


def test_jsonc_features_in_settings_files(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    write(folder / ".vscode" / "mcp.json", """{
  // VS Code allows comments
  "servers": {
    /* and block comments */
    "a": {"command": "a", "args": ["x",],},
  },
}""")
    loaded = load(tmp_path, [folder])
    assert loaded.diagnostics == []
    assert loaded.servers["a"].args == ("x",)


def test_empty_file_is_fine(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    write(folder / ".mcp.json", "")
    write(folder / ".agent-ls" / "settings.json", "  \n")
    loaded = load(tmp_path, [folder])
    assert loaded.diagnostics == []


def test_comment_only_file_is_like_an_empty_file(tmp_path: Path) -> None:
    # what a user gets after commenting everything out; VS Code accepts it too
    folder = ws(tmp_path)
    write(folder / ".vscode" / "mcp.json", "// nothing here yet\n/* { \"servers\": {} } */\n")
    loaded = load(tmp_path, [folder])
    assert loaded.diagnostics == []


# scopes and precedence --------------------------------------------------


def test_scope_precedence(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    user = {"mcpServers": {
        "all": {"command": "user"}, "u_v_m": {"command": "user"}, "u_v": {"command": "user"},
        "u_only": {"command": "user"},
    }}
    vscode_json(folder, {"all": {"command": "vscode"}, "u_v_m": {"command": "vscode"},
                         "u_v": {"command": "vscode"}, "v_only": {"command": "vscode"}})
    mcp_json(folder, {"all": {"command": "mcp"}, "u_v_m": {"command": "mcp"}, "m_only": {"command": "mcp"}})
    agent_ls_file(folder, {"all": {"command": "agent-ls"}, "w_only": {"command": "agent-ls"}})
    loaded = load(tmp_path, [folder], user=user)
    got = {name: (cfg.command, cfg.source.scope) for name, cfg in loaded.servers.items()}
    assert got == {
        "all": ("agent-ls", Scope.WORKSPACE),
        "u_v_m": ("mcp", Scope.MCP_JSON),
        "u_v": ("vscode", Scope.VSCODE),
        "u_only": ("user", Scope.USER),
        "v_only": ("vscode", Scope.VSCODE),
        "m_only": ("mcp", Scope.MCP_JSON),
        "w_only": ("agent-ls", Scope.WORKSPACE),
    }
    assert loaded.diagnostics == []


def test_each_file_uses_its_own_key(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    # .vscode/mcp.json uses "servers"; an "mcpServers" key there is not read (and vice versa)
    write(folder / ".vscode" / "mcp.json", {"servers": {"v": {"command": "v"}}, "mcpServers": {"x": {"command": "x"}}})
    write(folder / ".mcp.json", {"mcpServers": {"m": {"command": "m"}}, "servers": {"y": {"command": "y"}}})
    loaded = load(tmp_path, [folder])
    assert set(loaded.servers) == {"v", "m"}
    assert loaded.servers["v"].source.json_path == ("servers", "v")
    assert loaded.servers["m"].source.json_path == ("mcpServers", "m")


def test_higher_scope_replaces_the_entry_as_a_whole(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    user = {"mcpServers": {"s": {"command": "u", "args": ["--user"], "env": {"A": "1"}}}}
    agent_ls_file(folder, {"s": {"command": "w"}})
    cfg = load(tmp_path, [folder], user=user).servers["s"]
    assert cfg.command == "w"
    assert cfg.args == ()
    assert dict(cfg.env) == {}


def test_workspace_can_switch_transport(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    user = {"mcpServers": {"s": {"command": "local"}}}
    mcp_json(folder, {"s": {"url": "http://localhost:1/mcp"}})
    cfg = load(tmp_path, [folder], user=user).servers["s"]
    assert cfg.transport == "http"
    assert cfg.source.scope is Scope.MCP_JSON


def test_first_workspace_folder_wins(tmp_path: Path) -> None:
    a, b, c = ws(tmp_path, "a"), ws(tmp_path, "b"), ws(tmp_path, "c")
    agent_ls_file(a, {"shared": {"command": "from-a"}, "a_only": {"command": "a"}})
    agent_ls_file(b, {"shared": {"command": "from-b"}, "b_c": {"command": "from-b"}})
    agent_ls_file(c, {"shared": {"command": "from-c"}, "b_c": {"command": "from-c"}})
    loaded = load(tmp_path, [a, b, c])
    assert loaded.servers["shared"].command == "from-a"
    assert loaded.servers["shared"].source.workspace_folder == a
    assert loaded.servers["b_c"].command == "from-b"
    assert loaded.servers["a_only"].command == "a"
    # the order of the folders, not their names, decides
    loaded = load(tmp_path, [c, b, a])
    assert loaded.servers["shared"].command == "from-c"
    assert loaded.servers["b_c"].command == "from-c"


def test_first_folder_wins_within_the_same_scope_only(tmp_path: Path) -> None:
    a, b = ws(tmp_path, "a"), ws(tmp_path, "b")
    mcp_json(a, {"s": {"command": "a-mcp-json"}})
    agent_ls_file(b, {"s": {"command": "b-agent-ls"}})
    # the scope ranks first: .agent-ls/settings.json of any folder beats .mcp.json
    assert load(tmp_path, [a, b]).servers["s"].command == "b-agent-ls"


def test_workspace_folder_variable_is_the_entrys_own_folder(tmp_path: Path) -> None:
    a, b = ws(tmp_path, "a"), ws(tmp_path, "b")
    agent_ls_file(a, {"sa": {"command": "x", "args": ["${workspaceFolder}", "${workspaceFolderBasename}"]}})
    agent_ls_file(b, {"sb": {"command": "x", "args": ["${workspaceFolder}", "${workspaceFolderBasename}"]}})
    user = {"mcpServers": {"su": {"command": "x", "args": ["${workspaceFolder}"]}}}
    loaded = load(tmp_path, [a, b], user=user)
    assert loaded.servers["sa"].args == (str(a), "a")
    assert loaded.servers["sb"].args == (str(b), "b")
    # user-scope entries see the first workspace folder
    assert loaded.servers["su"].args == (str(a),)


def test_user_scope_without_workspace(tmp_path: Path) -> None:
    user = {"mcpServers": {"ok": {"command": "x"}, "needs_ws": {"command": "x", "cwd": "${workspaceFolder}"}}}
    loaded = load(tmp_path, [], user=user)
    assert set(loaded.servers) == {"ok"}
    assert "needs_ws" in loaded.failed
    assert "workspace folder" in loaded.failed["needs_ws"].reason
    assert loaded.servers["ok"].source.workspace_folder is None


def test_broken_override_does_not_fall_back_silently(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    user = {"mcpServers": {"s": {"command": "good"}}}
    agent_ls_file(folder, {"s": {"command": 42}})
    loaded = load(tmp_path, [folder], user=user)
    assert "s" not in loaded.servers
    assert loaded.failed["s"].source.scope is Scope.WORKSPACE


def test_good_override_replaces_a_broken_lower_entry(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    user = {"mcpServers": {"s": {"command": 42}}}
    agent_ls_file(folder, {"s": {"command": "good"}})
    loaded = load(tmp_path, [folder], user=user)
    assert loaded.servers["s"].command == "good"
    assert "s" not in loaded.failed
    # the diagnostic for the user file remains (the file is still wrong)
    assert [d.file for d in errors(loaded)] == [tmp_path / "user-config" / "settings.json"]


# unknown keys and other settings ---------------------------------------------


def test_unknown_keys_are_warnings_not_errors(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    text = json.dumps({"mcpServers": {"s": {"command": "x", "comand": "typo", "autoApprove": ["t"],
                                            "envFile": ".env", "timeout": 3}}, "frobnicate": 1}, indent=2)
    write(folder / ".agent-ls" / "settings.json", text)
    loaded = load(tmp_path, [folder])
    assert "s" in loaded.servers
    assert errors(loaded) == []
    by_path = {d.json_path: d for d in warnings(loaded)}
    # keys other hosts write (autoApprove, envFile, timeout) are accepted silently
    assert set(by_path) == {("mcpServers", "s", "comand"), ("frobnicate",)}
    assert "comand" in by_path[("mcpServers", "s", "comand")].message
    assert start(by_path[("mcpServers", "s", "comand")]) == locate(text, '"comand"')
    assert start(by_path[("frobnicate",)]) == locate(text, '"frobnicate"')


def test_unknown_top_level_keys_in_ecosystem_files_are_not_warned_about(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    write(folder / ".mcp.json", {"mcpServers": {}, "somethingElse": 1})
    write(folder / ".vscode" / "mcp.json", {"servers": {}, "inputs": []})
    assert load(tmp_path, [folder]).diagnostics == []


def test_other_settings_merge_workspace_over_user(tmp_path: Path) -> None:
    a, b = ws(tmp_path, "a"), ws(tmp_path, "b")
    agent_ls_file(a, {}, model="ws-model")
    agent_ls_file(b, {}, model="b-model", apiBase="http://b")
    user = {"model": "user-model", "apiBase": "http://user", "permissions": {"allow": ["x"]}}
    loaded = load(tmp_path, [a, b], user=user)
    assert loaded.other["model"] == "ws-model"
    assert loaded.other["apiBase"] == "http://b"
    assert loaded.other["permissions"] == {"allow": ["x"]}
    assert "mcpServers" not in loaded.other
    scopes = [(scope, file) for scope, file, _ in loaded.layers]
    assert scopes == [
        (Scope.WORKSPACE, a / ".agent-ls" / "settings.json"),
        (Scope.WORKSPACE, b / ".agent-ls" / "settings.json"),
        (Scope.USER, tmp_path / "user-config" / "settings.json"),
    ]


def test_ecosystem_files_do_not_provide_other_settings(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    write(folder / ".mcp.json", {"mcpServers": {}, "model": "from-mcp-json"})
    loaded = load(tmp_path, [folder])
    assert "model" not in loaded.other
    assert loaded.layers == []
