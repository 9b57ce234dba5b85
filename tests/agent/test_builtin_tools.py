"""The built-in tool set and the file tools, called directly on a real temporary workspace.

The set's names, capabilities and schemas, argument validation, and read_file, write_file and
edit_file: normal use, the errors the model must be able to act on and output caps with their
markers. glob and grep are in test_builtin_search.py, bash in test_builtin_shell.py, path
confinement attacks in test_workspace.py.
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from agent_ls.agent.builtin_tools import builtin_tools
from agent_ls.agent.builtin_tools.reading import MAX_LINE_CHARS, READ_DEFAULT_LIMIT
from agent_ls.agent.tools.arguments import validate_arguments
from agent_ls.agent.workspace import Workspace
from agent_ls.core.tools import Capability
from tests.agent.helpers import call, root, tools_for

__all__ = ["root"]  # the fixture, from tests/agent/helpers.py


# --- the set ------------------------------------------------------------------------------


def test_tool_set_names_capabilities_and_schemas(root: Path) -> None:
    tools = builtin_tools(Workspace([root]))
    assert [t.spec.name for t in tools] == ["bash", "edit_file", "glob", "grep", "read_file", "read_output",
                                            "update_plan", "write_file"]
    caps = {t.spec.name: t.spec.capability for t in tools}
    assert caps == {"bash": Capability.WRITE, "edit_file": Capability.WRITE, "glob": Capability.READ,
                    "grep": Capability.READ, "read_file": Capability.READ, "read_output": Capability.READ,
                    "update_plan": Capability.READ, "write_file": Capability.WRITE}
    for t in tools:
        schema = t.spec.input_schema
        assert schema["type"] == "object" and schema["required"]
        assert set(schema["required"]) <= set(schema["properties"])
        assert t.spec.source == "builtin" and t.spec.description


# --- argument validation ------------------------------------------------------------------


async def test_arguments_are_validated_with_every_problem_named(root: Path) -> None:
    t = tools_for(root)["read_file"]
    r = await t.call({"offset": "3", "limit": 0})
    assert r.is_error
    assert "missing required argument 'path'" in r.content
    assert "'offset' must be an integer, got string" in r.content
    assert "'limit' must be at least 1, got 0" in r.content
    r = await t.call("not an object")  # type: ignore[arg-type]
    assert r.is_error and "expected an object, got string" in r.content
    r = await tools_for(root)["grep"].call({"pattern": "x", "case_insensitive": 1})
    assert r.is_error and "'case_insensitive' must be a boolean, got number" in r.content
    r = await tools_for(root)["bash"].call({"command": "true", "timeout": 0})
    assert r.is_error and "greater than 0" in r.content


def test_validate_arguments_cleans_values(root: Path) -> None:
    spec = tools_for(root)["read_file"].spec
    assert validate_arguments(spec, {"path": "a", "offset": 2.0, "limit": None, "extra": 1}) == {
        "path": "a", "offset": 2}
    assert isinstance(validate_arguments(spec, {"path": "a", "offset": True}), str)  # bool is no integer


# --- read_file ----------------------------------------------------------------------------


async def test_read_numbered_lines_offset_and_limit(root: Path) -> None:
    (root / "f.txt").write_text("".join(f"line {i}\n" for i in range(1, 11)))
    r = await call(root, "read_file", path="f.txt")
    assert not r.is_error
    assert r.content.splitlines()[0] == "     1\tline 1"
    assert r.content.splitlines()[-1] == "    10\tline 10"
    r = await call(root, "read_file", path="f.txt", offset=4, limit=2)
    assert r.content.splitlines()[:2] == ["     4\tline 4", "     5\tline 5"]
    assert "showing lines 4-5 of 10" in r.content and "offset=6" in r.content
    r = await call(root, "read_file", path="f.txt", offset=11)
    assert r.is_error and "past the end" in r.content and "10 lines" in r.content


async def test_read_default_limit_and_long_lines(root: Path) -> None:
    (root / "big.txt").write_text("".join(f"{i}\n" for i in range(READ_DEFAULT_LIMIT + 50)))
    r = await call(root, "read_file", path="big.txt")
    assert f"showing lines 1-{READ_DEFAULT_LIMIT} of {READ_DEFAULT_LIMIT + 50}" in r.content
    (root / "wide.txt").write_text("x" * (MAX_LINE_CHARS + 123) + "\n")
    r = await call(root, "read_file", path="wide.txt")
    assert "[... 123 characters cut ...]" in r.content


async def test_read_output_cap_stops_at_a_line_and_says_where_to_go_on(root: Path) -> None:
    (root / "f.txt").write_text("".join(f"{'y' * 90} {i}\n" for i in range(200)))
    t = tools_for(root, output_cap_chars=2000)["read_file"]
    r = await t.call({"path": "f.txt"})
    assert not r.is_error and "output size limit reached" in r.content
    shown = [ln for ln in r.content.splitlines() if "\t" in ln]
    assert 10 < len(shown) < 30 and shown[-1].endswith(f" {len(shown) - 1}")
    assert f"offset={len(shown) + 1}" in r.content


async def test_read_errors(root: Path) -> None:
    (root / "d").mkdir()
    (root / "bin.dat").write_bytes(b"\x00\x01\x02abc")
    (root / "empty.txt").write_text("")
    r = await call(root, "read_file", path="d")
    assert r.is_error and "is a directory" in r.content
    r = await call(root, "read_file", path="missing.txt")
    assert r.is_error and "not found" in r.content.lower() and "missing.txt" in r.content
    r = await call(root, "read_file", path="bin.dat")
    assert r.is_error and "binary file" in r.content
    r = await call(root, "read_file", path="empty.txt")
    assert not r.is_error and "empty" in r.content


async def test_read_crlf_and_invalid_utf8(root: Path) -> None:
    (root / "w.txt").write_bytes(b"one\r\ntwo\xff\r\n")
    r = await call(root, "read_file", path="w.txt")
    assert r.content.splitlines() == ["     1\tone", "     2\ttwo\ufffd"]


async def test_fifo_is_refused_instead_of_hanging(root: Path) -> None:
    os.mkfifo(root / "pipe")
    (root / "a.txt").write_text("needle\n")
    tools = tools_for(root)
    for name, args in [("read_file", {"path": "pipe"}), ("edit_file", {"path": "pipe", "old_string": "a",
                                                                         "new_string": "b"}),
                       ("write_file", {"path": "pipe", "content": "x"}), ("grep", {"pattern": "x", "path": "pipe"})]:
        r = await asyncio.wait_for(tools[name].call(args), 10)
        assert r.is_error and "named pipe" in r.content, (name, r.content)
    # a walk over a directory with a FIFO skips it
    r = await asyncio.wait_for(tools["grep"].call({"pattern": "needle"}), 10)
    assert r.content == "a.txt:1:needle\n"
    r = await asyncio.wait_for(tools["glob"].call({"pattern": "*"}), 10)
    assert r.content == "a.txt\n"


# --- write_file ---------------------------------------------------------------------------


async def test_write_creates_parents_and_overwrites_exactly(root: Path) -> None:
    r = await call(root, "write_file", path="a/b/c.txt", content="no newline at end")
    assert not r.is_error and r.content.startswith("Created a/b/c.txt")
    assert (root / "a/b/c.txt").read_bytes() == b"no newline at end"
    r = await call(root, "write_file", path="a/b/c.txt", content="ünï\r\nz\n")
    assert r.content.startswith("Overwrote a/b/c.txt") and "(2 lines" in r.content
    assert (root / "a/b/c.txt").read_bytes() == "ünï\r\nz\n".encode()
    (root / "dir").mkdir()
    r = await call(root, "write_file", path="dir", content="x")
    assert r.is_error and "is a directory" in r.content
    (root / "plain").write_text("x")
    r = await call(root, "write_file", path="plain/child.txt", content="x")
    assert r.is_error and (root / "plain").read_text() == "x"


# --- edit_file ----------------------------------------------------------------------------


async def test_edit_unique_replacement(root: Path) -> None:
    (root / "m.py").write_text("def f():\n    return 1\n\ndef g():\n    return 2\n")
    r = await call(root, "edit_file", path="m.py", old_string="    return 2", new_string="    return 3")
    assert not r.is_error and "replaced 1 occurrence (at line 5)" in r.content
    assert (root / "m.py").read_text().endswith("return 3\n")


async def test_edit_missing_old_text_is_a_clear_error(root: Path) -> None:
    (root / "m.py").write_text("def f():\n    return 1\n")
    before = (root / "m.py").read_bytes()
    r = await call(root, "edit_file", path="m.py", old_string="return 1\n  ", new_string="x")
    assert r.is_error and "old_string was not found in m.py" in r.content
    assert "whitespace and indentation" in r.content
    assert (root / "m.py").read_bytes() == before


async def test_edit_non_unique_old_text_is_a_clear_error_unless_replace_all(root: Path) -> None:
    (root / "m.txt").write_text("a = 1\nb = 1\nc = 1\n")
    r = await call(root, "edit_file", path="m.txt", old_string="= 1", new_string="= 2")
    assert r.is_error and "not unique" in r.content and "occurs 3 times" in r.content
    assert "replace_all" in r.content
    assert (root / "m.txt").read_text() == "a = 1\nb = 1\nc = 1\n"
    r = await call(root, "edit_file", path="m.txt", old_string="= 1", new_string="= 2", replace_all=True)
    assert not r.is_error and "replaced 3 occurrences (first at line 1)" in r.content
    assert (root / "m.txt").read_text() == "a = 2\nb = 2\nc = 2\n"


async def test_edit_other_errors_and_crlf(root: Path) -> None:
    (root / "w.txt").write_bytes(b"one\r\ntwo\r\nthree\r\n")
    r = await call(root, "edit_file", path="w.txt", old_string="one\ntwo", new_string="1\n2")
    assert not r.is_error
    assert (root / "w.txt").read_bytes() == b"1\r\n2\r\nthree\r\n"
    r = await call(root, "edit_file", path="w.txt", old_string="", new_string="x")
    assert r.is_error and "must not be empty" in r.content
    r = await call(root, "edit_file", path="w.txt", old_string="three", new_string="three")
    assert r.is_error and "identical" in r.content
    r = await call(root, "edit_file", path="nope.txt", old_string="a", new_string="b")
    assert r.is_error and "not found" in r.content.lower() and "write_file" in r.content
    (root / "b.bin").write_bytes(b"ab\x00cd")
    r = await call(root, "edit_file", path="b.bin", old_string="ab", new_string="xy")
    assert r.is_error and "binary" in r.content and (root / "b.bin").read_bytes() == b"ab\x00cd"


async def test_edit_keeps_bytes_that_are_not_utf8(root: Path) -> None:
    (root / "l1.txt").write_bytes(b"caf\xe9 = 1\nx = 2\n")
    r = await call(root, "edit_file", path="l1.txt", old_string="x = 2", new_string="x = 3")
    assert not r.is_error
    assert (root / "l1.txt").read_bytes() == b"caf\xe9 = 1\nx = 3\n"
