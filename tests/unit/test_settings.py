"""Settings: scopes and precedence, validation with exact locations, expansion, trust keys.

Also covers :mod:`agent_ls.core.redact`, which protects the ``secrets`` of a server entry.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_ls.config import jsonc
from agent_ls.config.diagnostics import ConfigDiagnostic
from agent_ls.config.entries import DEFAULT_CALL_TIMEOUT, DEFAULT_CONNECT_TIMEOUT, Scope, ServerConfig
from agent_ls.config.paths import user_config_dir, user_data_dir, user_settings_path
from agent_ls.config.settings import LoadedSettings, load_settings
from agent_ls.core.redact import MASK, redact, redact_mapping
from tests.tooling import TRUST_ALL

ENV = {"GH_TOKEN": "ghp_abcdef123456", "HOME": "/home/alice", "API_KEY": "key-9876543210", "EMPTY": ""}


# helpers ---------------------------------------------------------------


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
        a / ".vscode" / "mcp.json", a / ".mcp.json", a / ".agent-ls" / "settings.json",
        b / ".vscode" / "mcp.json", b / ".mcp.json", b / ".agent-ls" / "settings.json",
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


# transport inference -------------------------------------------------


@pytest.mark.parametrize(
    ("entry", "transport"),
    [
        ({"command": "x"}, "stdio"),
        ({"url": "https://h/mcp"}, "http"),
        ({"type": "stdio", "command": "x"}, "stdio"),
        ({"type": "http", "url": "https://h/mcp"}, "http"),
        ({"type": "streamable-http", "url": "https://h/mcp"}, "http"),
        ({"type": "streamableHttp", "url": "https://h/mcp"}, "http"),
        ({"type": "streamable_http", "url": "https://h/mcp"}, "http"),
        ({"type": "sse", "url": "https://h/sse"}, "sse"),
    ],
)
def test_transport_inference(tmp_path: Path, entry: dict[str, Any], transport: str) -> None:
    loaded = single_server(tmp_path, entry)
    assert errors(loaded) == []
    assert loaded.servers["s"].transport == transport


@pytest.mark.parametrize("bad_type", ["websocket", "HTTP", "", 3, None, ["http"]])
def test_unknown_type(tmp_path: Path, bad_type: Any) -> None:
    folder = ws(tmp_path)
    entry = {"type": bad_type, "command": "x"}
    text = json.dumps({"mcpServers": {"s": entry, "ok": {"command": "y"}}}, indent=2)
    write(folder / ".agent-ls" / "settings.json", text)
    loaded = load(tmp_path, [folder])
    if bad_type is None:
        # "type": null is the same as no type at all
        assert loaded.servers["s"].transport == "stdio"
        return
    assert "s" in loaded.failed
    assert "unknown transport" in loaded.failed["s"].reason
    assert "ok" in loaded.servers
    (d,) = errors(loaded)
    assert d.json_path == ("mcpServers", "s", "type")
    line, col = locate(text, '"type": ')
    assert start(d) == (line, col + len('"type": '))


def test_type_decides_over_the_keys(tmp_path: Path) -> None:
    loaded = single_server(tmp_path, {"type": "http", "command": "x"})
    assert "s" in loaded.failed
    assert '"url" is required' in loaded.failed["s"].reason


def test_entry_without_command_or_url(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    text = '{\n  "mcpServers": {\n    "s": {"args": ["x"]}\n  }\n}'
    write(folder / ".agent-ls" / "settings.json", text)
    loaded = load(tmp_path, [folder])
    assert 'needs "command"' in loaded.failed["s"].reason
    (d,) = errors(loaded)
    assert start(d) == locate(text, '{"args"')
    assert d.server == "s"


def test_command_and_url_without_type_means_stdio(tmp_path: Path) -> None:
    loaded = single_server(tmp_path, {"command": "x", "url": "https://h"})
    assert loaded.servers["s"].transport == "stdio"
    assert loaded.servers["s"].url is None
    assert any("no effect" in d.message for d in warnings(loaded))


def test_keys_of_the_other_transport_are_warned_about(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    text = json.dumps({"mcpServers": {
        "h": {"type": "http", "url": "https://h", "command": "x", "env": {}},
        "s": {"command": "x", "headers": {}},
    }}, indent=2)
    write(folder / ".agent-ls" / "settings.json", text)
    loaded = load(tmp_path, [folder])
    assert set(loaded.servers) == {"h", "s"}
    ws_ = {(d.json_path, d.message) for d in warnings(loaded)}
    assert ws_ == {
        (("mcpServers", "h", "command"), "'command' has no effect on a http server"),
        (("mcpServers", "h", "env"), "'env' has no effect on a http server"),
        (("mcpServers", "s", "headers"), "'headers' has no effect on a stdio server"),
    }
    by_path = {d.json_path: d for d in warnings(loaded)}
    assert start(by_path[("mcpServers", "h", "command")]) == locate(text, '"command"')


# validation with exact locations ------------------------------------------------


BAD = """{
  // a comment so that lines are not trivially counted
  "mcpServers": {
    "cmd": {"command": 42},
    "args": {
      "command": "x",
      "args": "--not-a-list"
    },
    "item": {"command": "x", "args": ["ok", true, "fine"]},
    "env": {"command": "x", "env": ["A=1"]},
    "envval": {"command": "x", "env": {"A": "1", "B": false}},
    "hdr": {"url": "https://h", "headers": {"X-Key": {"nested": 1}}},
    "timeout": {"command": "x", "connectTimeout": -1},
    "calltimeout": {"command": "x", "callTimeout": "10s"},
    "booltimeout": {"command": "x", "callTimeout": true},
    "disabled": {"command": "x", "disabled": "yes"},
    "proto": {"command": "x", "protocol": "2099-01-01"},
    "url": {"url": 7},
    "scheme": {"url": "ftp://h/mcp"},
    "emptycmd": {"command": "  "},
    "cwd": {"command": "x", "cwd": ["a"]},
    "notobj": "npx server",
    "good": {"command": "ok"}
  }
}
"""


@pytest.fixture
def bad(tmp_path: Path) -> tuple[LoadedSettings, Path]:
    folder = ws(tmp_path)
    file = write(folder / ".agent-ls" / "settings.json", BAD)
    return load(tmp_path, [folder]), file


@pytest.mark.parametrize(
    ("server", "json_path", "needle", "nth", "fragment"),
    [
        ("cmd", ("command",), "42", 0, '"command" must be a string, not number'),
        ("args", ("args",), '"--not-a-list"', 0, '"args" must be an array of strings, not string'),
        ("item", ("args", 1), "true", 0, "must be a string, not boolean"),
        ("env", ("env",), '["A=1"]', 0, '"env" must be an object of strings, not array'),
        ("envval", ("env", "B"), "false", 0, "must be a string, not boolean"),
        ("hdr", ("headers", "X-Key"), '{"nested"', 0, "must be a string, not object"),
        ("timeout", ("connectTimeout",), "-1", 0, '"connectTimeout" must be a positive number'),
        ("calltimeout", ("callTimeout",), '"10s"', 0, '"callTimeout" must be a positive number'),
        ("booltimeout", ("callTimeout",), "true", 1, '"callTimeout" must be a positive number'),
        ("disabled", ("disabled",), '"yes"', 0, '"disabled" must be true or false, not string'),
        ("proto", ("protocol",), '"2099-01-01"', 0, '"protocol" must be one of legacy, auto, 2026-07-28'),
        ("url", ("url",), "7}", 0, '"url" must be a string, not number'),
        ("scheme", ("url",), '"ftp://h/mcp"', 0, "url must start with http:// or https://"),
        ("emptycmd", ("command",), '"  "', 0, '"command" must not be empty'),
        ("cwd", ("cwd",), '["a"]', 0, '"cwd" must be a string, not array'),
        ("notobj", (), '"npx server"', 0, "a server entry must be an object, not string"),
    ],
)
def test_wrong_types_are_reported_at_the_bad_value(
    bad: tuple[LoadedSettings, Path], server: str, json_path: tuple, needle: str, nth: int, fragment: str
) -> None:
    loaded, file = bad
    full_path = ("mcpServers", server, *json_path)
    matches = [d for d in loaded.diagnostics if d.server == server and d.severity == "error"]
    assert len(matches) == 1, matches
    d = matches[0]
    assert d.file == file
    assert d.json_path == full_path
    assert fragment in d.message
    assert start(d) == locate(BAD, needle, nth)
    # the failed entry keeps the reason
    assert server in loaded.failed
    assert fragment in loaded.failed[server].reason
    assert loaded.failed[server].source.json_path == ("mcpServers", server)
    assert loaded.failed[server].source.file == file


def test_a_broken_entry_never_stops_the_others(bad: tuple[LoadedSettings, Path]) -> None:
    loaded, _ = bad
    assert set(loaded.servers) == {"good"}
    assert len(loaded.failed) == 16
    assert not set(loaded.servers) & set(loaded.failed)


def test_diagnostic_str_has_one_based_position(bad: tuple[LoadedSettings, Path]) -> None:
    loaded, file = bad
    (d,) = [d for d in loaded.diagnostics if d.server == "cmd"]
    line, col = locate(BAD, "42")
    assert str(d) == f"{file}:{line + 1}:{col + 1}: error: mcpServers.cmd.command: \"command\" must be a string, not number"


def test_diagnostics_for_filters_by_file(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    f1 = agent_ls_file(folder, {"a": {"command": 1}})
    f2 = mcp_json(folder, {"b": {"command": 2}})
    loaded = load(tmp_path, [folder])
    assert [d.server for d in loaded.diagnostics_for(f1)] == ["a"]
    assert [d.server for d in loaded.diagnostics_for(f2)] == ["b"]
    assert loaded.diagnostics_for(folder / "nope.json") == []


def test_all_errors_of_one_entry_are_reported(tmp_path: Path) -> None:
    loaded = single_server(tmp_path, {"command": 1, "args": [1, None, {}], "env": {"A": []}, "callTimeout": 0})
    paths = sorted(jsonc.format_path(d.json_path) for d in errors(loaded))
    assert paths == [
        "mcpServers.s.args[1]", "mcpServers.s.args[2]", "mcpServers.s.callTimeout", "mcpServers.s.command",
        "mcpServers.s.env.A",
    ]
    assert "s" in loaded.failed


def test_servers_must_be_an_object(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    text = '{\n  "mcpServers": ["a", "b"]\n}'
    write(folder / ".mcp.json", text)
    agent_ls_file(folder, {"ok": {"command": "x"}})
    loaded = load(tmp_path, [folder])
    (d,) = errors(loaded)
    assert d.json_path == ("mcpServers",)
    assert start(d) == locate(text, '["a"')
    assert set(loaded.servers) == {"ok"}


def test_root_must_be_an_object(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    write(folder / ".mcp.json", "[1, 2]")
    loaded = load(tmp_path, [folder])
    (d,) = errors(loaded)
    assert "JSON object" in d.message
    assert start(d) == (0, 0)


def test_empty_server_name(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    text = '{"mcpServers": {"": {"command": "x"}, "  ": {"command": "x"}, "ok": {"command": "x"}}}'
    write(folder / ".agent-ls" / "settings.json", text)
    loaded = load(tmp_path, [folder])
    assert set(loaded.servers) == {"ok"}
    msgs = [d for d in errors(loaded) if "non-empty" in d.message]
    assert len(msgs) == 2
    assert start(msgs[0]) == locate(text, '""')


# invalid JSON --------------------------------------------------------------


def test_invalid_json_gives_one_diagnostic_and_other_files_still_load(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    text = '{\n  "mcpServers": {\n    "a": {"command": "x",}\n    "b": {}\n  }\n}'
    broken = write(folder / ".agent-ls" / "settings.json", text)
    mcp_json(folder, {"from_mcp_json": {"command": "y"}})
    vscode_json(folder, {"from_vscode": {"command": "z"}})
    loaded = load(tmp_path, [folder], user={"mcpServers": {"from_user": {"command": "u"}}})
    assert set(loaded.servers) == {"from_mcp_json", "from_vscode", "from_user"}
    (d,) = loaded.diagnostics
    assert d.file == broken
    assert d.severity == "error"
    assert d.message.startswith("invalid JSON: ")
    assert "expected ',' or '}'" in d.message
    assert d.json_path == ()
    assert start(d) == locate(text, '"b"')
    assert d.span is not None
    assert d.span.end.line == d.span.start.line
    assert d.span.end.column == d.span.start.column + 1
    assert str(d).startswith(f"{broken}:4:5: error:")


@pytest.mark.parametrize(
    ("text", "pos"),
    [
        ('{"mcpServers": {"a": {"command": "x"}', (0, 37)),  # end of file
        ('{\n  "mcpServers": {\n    "a": {"command": "unterminated}\n  }\n}', (2, 35)),  # end of line
        ("{ this is garbage }", (0, 2)),
        ("garbage", (0, 0)),
        ('{"mcpServers": {}} trailing', (0, 19)),
        ('{"a": "\\ud800\\uZZZZ"}', (0, 13)),
    ],
)
def test_invalid_json_positions(tmp_path: Path, text: str, pos: tuple[int, int]) -> None:
    folder = ws(tmp_path)
    write(folder / ".mcp.json", text)
    loaded = load(tmp_path, [folder])
    (d,) = loaded.diagnostics
    assert d.message.startswith("invalid JSON")
    assert start(d) == pos


def test_invalid_user_file_does_not_stop_workspace_files(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    agent_ls_file(folder, {"w": {"command": "x"}})
    loaded = load(tmp_path, [folder], user='{"mcpServers": {')
    assert set(loaded.servers) == {"w"}
    (d,) = loaded.diagnostics
    assert d.file == tmp_path / "user-config" / "settings.json"


def test_unreadable_file(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    (folder / ".mcp.json").write_bytes(b'{"mcpServers": {"a": {"command": "\xff\xfe"}}}')
    agent_ls_file(folder, {"ok": {"command": "x"}})
    loaded = load(tmp_path, [folder])
    assert set(loaded.servers) == {"ok"}
    (d,) = loaded.diagnostics
    assert "cannot read" in d.message
    assert d.file == folder / ".mcp.json"


def test_a_directory_in_place_of_a_file(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    (folder / ".mcp.json").mkdir()
    agent_ls_file(folder, {"ok": {"command": "x"}})
    loaded = load(tmp_path, [folder])
    assert set(loaded.servers) == {"ok"}
    assert len(loaded.diagnostics) == 1


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


# secrets and redaction -------------------------------------------------------


def test_secrets_contains_env_and_header_values(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    agent_ls_file(folder, {
        "s": {"command": "x", "env": {"TOKEN": "${GH_TOKEN}", "LITERAL": "plain-secret-value", "N": "1"}},
        "h": {"url": "https://h", "headers": {"Authorization": "Bearer ${API_KEY}", "X-Other": "abcdef"}},
    })
    loaded = load(tmp_path, [folder])
    s, h = loaded.servers["s"], loaded.servers["h"]
    assert "ghp_abcdef123456" in s.secrets
    assert "plain-secret-value" in s.secrets
    assert "1" not in s.secrets  # too short to redact without mangling every message
    assert "Bearer key-9876543210" in h.secrets
    assert "abcdef" in h.secrets
    # longest first, so that a secret containing another is masked as a whole
    assert list(h.secrets) == sorted(h.secrets, key=len, reverse=True)


def test_secrets_include_variables_expanded_into_args_and_url(tmp_path: Path) -> None:
    # a token passed as an argument (common in Claude Code setups) must not show up in status or doctor
    folder = ws(tmp_path)
    agent_ls_file(folder, {
        "s": {"command": "npx", "args": ["--api-key", "${API_KEY}", "--home=${HOME}"]},
        "h": {"url": "https://h/mcp?token=${GH_TOKEN}", "headers": {"Authorization": "Bearer ${API_KEY}"}},
    })
    loaded = load(tmp_path, [folder])
    s, h = loaded.servers["s"], loaded.servers["h"]
    assert "key-9876543210" in s.secrets
    assert "/home/alice" not in s.secrets  # not a secret-looking variable name
    assert "ghp_abcdef123456" in h.secrets
    assert "key-9876543210" in h.secrets  # the token alone, not only "Bearer <token>"
    assert redact(" ".join(s.args), s.secrets) == f"--api-key {MASK} --home=/home/alice"
    assert redact(h.url or "", h.secrets) == f"https://h/mcp?token={MASK}"


def test_secrets_are_not_part_of_identity_or_repr(tmp_path: Path) -> None:
    folder = ws(tmp_path)
    agent_ls_file(folder, {"s": {"command": "x", "args": ["${API_KEY}"]}})
    a = load(tmp_path, [folder]).servers["s"]
    b = load(tmp_path, [folder]).servers["s"]
    assert a == b
    assert a.fingerprint() == b.fingerprint()
    assert "expanded_secrets" not in repr(a)


def test_redact_replaces_every_occurrence() -> None:
    assert redact("token=abcd1234 and again abcd1234", ["abcd1234"]) == f"token={MASK} and again {MASK}"


def test_redact_longest_first() -> None:
    assert redact("Bearer abcd1234", ["abcd", "Bearer abcd1234"]) == MASK
    assert redact("x abcd1234 y", ["abcd", "abcd1234"]) == f"x {MASK} y"


def test_redact_ignores_short_and_empty_secrets() -> None:
    assert redact("a b c 123", ["", "a", "123"]) == "a b c 123"
    assert redact("nothing", []) == "nothing"


def test_redact_is_literal_not_regex() -> None:
    assert redact("p.a+s*s(1)", ["a+s*s("]) == f"p.{MASK}1)"


def test_redact_mapping() -> None:
    values = {"TOKEN": "t0k3n", "PATH": "/usr/bin", "EMPTY": "", "API_KEY": "k", "Authorization": "Bearer x"}
    assert redact_mapping(values) == {"TOKEN": MASK, "PATH": MASK, "EMPTY": "", "API_KEY": MASK,
                                      "Authorization": MASK}
    assert redact_mapping(values, all_values=False) == {
        "TOKEN": MASK, "PATH": "/usr/bin", "EMPTY": "", "API_KEY": MASK, "Authorization": MASK,
    }
    for key in ("x-api-key", "GITHUB_PERSONAL_ACCESS_TOKEN", "DB_PASSWORD", "client_secret", "Cookie",
                "SESSION_ID", "aws_credentials"):
        assert redact_mapping({key: "v"}, all_values=False) == {key: MASK}
    assert redact_mapping({"NODE_ENV": "production"}, all_values=False) == {"NODE_ENV": "production"}


def test_redact_mapping_does_not_modify_its_input() -> None:
    values = {"TOKEN": "abc"}
    redact_mapping(values)
    assert values == {"TOKEN": "abc"}


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


# oauth -----------------------------------------------------------------

URL = "https://mcp.example.com/mcp"


def oauth_entry(tmp_path: Path, oauth: Any, **extra: Any) -> LoadedSettings:
    entry: dict[str, Any] = {"type": "http", "url": URL, **extra}
    if oauth is not ...:
        entry["oauth"] = oauth
    return single_server(tmp_path, entry)


def test_oauth_is_automatic_for_http_servers(tmp_path: Path) -> None:
    cfg = oauth_entry(tmp_path, ...).servers["s"]
    assert cfg.oauth is not None and not cfg.oauth.explicit and cfg.oauth.grant == "authorization_code"
    assert cfg.oauth.sign_in_timeout == 300 and cfg.oauth.max_step_ups == 2


def test_oauth_off_for_false_an_authorization_header_and_stdio(tmp_path: Path) -> None:
    assert oauth_entry(tmp_path, False).servers["s"].oauth is None
    assert oauth_entry(tmp_path / "h", ..., headers={"authorization": "Bearer x"}).servers["s"].oauth is None
    assert single_server(tmp_path / "stdio", {"command": "x"}).servers["s"].oauth is None


def test_oauth_fields_are_parsed_and_expanded(tmp_path: Path) -> None:
    loaded = oauth_entry(tmp_path, {
        "clientId": "my-client", "clientSecret": "${API_KEY}", "tokenEndpointAuthMethod": "client_secret_post",
        "clientMetadataUrl": "https://agent.example.com/client.json", "clientName": "Agent",
        "scopes": ["repo", "read:org"], "redirectPort": 33418, "signInTimeout": 60, "maxStepUps": 0,
    })
    assert not errors(loaded), loaded.diagnostics
    o = loaded.servers["s"].oauth
    assert o is not None and o.explicit
    assert (o.client_id, o.client_secret, o.token_endpoint_auth_method) == (
        "my-client", "key-9876543210", "client_secret_post")
    assert o.client_metadata_url == "https://agent.example.com/client.json" and o.client_name == "Agent"
    assert (o.scopes, o.redirect_port, o.sign_in_timeout, o.max_step_ups) == ("repo read:org", 33418, 60.0, 0)
    # The client secret is a secret whatever its variable is called, and never in repr.
    assert "key-9876543210" in loaded.servers["s"].secrets
    assert "key-9876543210" not in repr(loaded.servers["s"])


def test_oauth_secret_fields_are_secrets_even_without_a_secret_looking_variable(tmp_path: Path) -> None:
    cfg = single_server(tmp_path, {"type": "http", "url": URL, "oauth": {
        "grant": "client_credentials", "clientId": "c", "clientSecret": "${HOME}"}}).servers["s"]
    assert "/home/alice" in cfg.secrets


def test_oauth_change_changes_the_fingerprint(tmp_path: Path) -> None:
    a = oauth_entry(tmp_path / "a", {"clientId": "one"}).servers["s"]
    b = oauth_entry(tmp_path / "b", {"clientId": "two"}).servers["s"]
    assert a.fingerprint() != b.fingerprint()


def test_client_credentials_and_identity_assertion(tmp_path: Path) -> None:
    cc = oauth_entry(tmp_path / "cc", {"grant": "client_credentials", "clientId": "svc",
                                        "tokenEndpointAuthMethod": "private_key_jwt", "privateKeyFile": "~/k.pem",
                                        "signingAlgorithm": "ES256", "issuer": "https://auth.example.com"})
    o = cc.servers["s"].oauth
    assert o is not None and not o.interactive and o.private_key_file == "~/k.pem" and o.signing_algorithm == "ES256"
    ia = oauth_entry(tmp_path / "ia", {"grant": "identity_assertion", "clientId": "c", "clientSecret": "x-secret",
                                        "issuer": "https://auth.example.com",
                                        "idp": {"tokenEndpoint": "https://idp.example.com/token",
                                                "idToken": "${GH_TOKEN}"}})
    o2 = ia.servers["s"].oauth
    assert o2 is not None and o2.idp_token_endpoint == "https://idp.example.com/token"
    assert "ghp_abcdef123456" in ia.servers["s"].secrets


@pytest.mark.parametrize(("oauth", "message"), [
    ("yes", '"oauth" must be true, false or an object'),
    ({"grant": "password"}, '"grant" must be one of'),
    ({"tokenEndpointAuthMethod": "magic"}, '"tokenEndpointAuthMethod" must be one of'),
    ({"clientMetadataUrl": "http://x.example.com/c.json"}, "must be an https URL with a path"),
    ({"clientMetadataUrl": "https://x.example.com/"}, "must be an https URL with a path"),
    ({"redirectPort": 70000}, '"redirectPort" must be a port number'),
    ({"signInTimeout": 0}, '"signInTimeout" must be a positive number'),
    ({"maxStepUps": -1}, '"maxStepUps" must be a whole number'),
    ({"scopes": 5}, '"scopes" must be a string or an array'),
    ({"clientSecret": "${NOT_SET_ANYWHERE}"}, "NOT_SET_ANYWHERE"),
    ({"grant": "client_credentials"}, 'client_credentials needs "clientId"'),
    ({"grant": "client_credentials", "clientId": "c"}, 'needs "clientSecret"'),
    ({"grant": "identity_assertion", "clientId": "c", "clientSecret": "s"}, 'identity_assertion needs "issuer"'),
    ({"issuer": "auth.example.com"}, '"issuer" must be'),
])
def test_oauth_errors_fail_that_server_with_a_located_message(tmp_path: Path, oauth: Any, message: str) -> None:
    loaded = oauth_entry(tmp_path, oauth)
    assert "s" in loaded.failed and "s" not in loaded.servers
    errs = errors(loaded)
    assert any(message in d.message for d in errs), errs
    assert all(d.json_path[:3] == ("mcpServers", "s", "oauth") for d in errs)


def test_oauth_unknown_keys_and_header_conflict_are_warnings(tmp_path: Path) -> None:
    loaded = oauth_entry(tmp_path, {"clientID": "typo"}, headers={"Authorization": "Bearer x"})
    assert "s" in loaded.servers
    texts = [d.message for d in warnings(loaded)]
    assert any("unknown OAuth setting 'clientID'" in t for t in texts)
    assert any("Authorization header is set" in t for t in texts)


def test_live_secrets_are_masked_in_log_records_and_tracebacks() -> None:
    import logging

    from agent_ls.core.redact import RedactingFilter, add_secrets, redact_live

    token = "at-live-token-" + "x" * 12
    add_secrets(token, None, "abc")  # None and too-short values are ignored
    assert redact_live(f"Bearer {token}") == f"Bearer {MASK}"
    assert redact_live("abc") == "abc"
    record = logging.LogRecord("httpx2", logging.INFO, __file__, 1, "sent %s", (token,), None)
    try:
        raise ValueError(f"refused {token}")
    except ValueError:
        import sys

        record.exc_info = sys.exc_info()
    assert RedactingFilter().filter(record)
    assert record.getMessage() == f"sent {MASK}"
    assert token not in (record.exc_text or "") and MASK in (record.exc_text or "")
