"""Settings validation: transport inference, wrong values reported at their exact position,
invalid JSON.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_ls.config import jsonc
from agent_ls.config.settings import LoadedSettings
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
