"""Every built-in tool, called directly on a real temporary workspace.

read_file, write_file, edit_file, glob, grep and bash: normal use, the errors the model must
be able to act on, output caps with their markers, and argument validation. Path confinement
attacks are in test_workspace.py.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.arguments import validate_arguments
from agent_ls.agent.builtin_tools import builtin_tools
from agent_ls.agent.builtin_tools.reading import MAX_LINE_CHARS, READ_DEFAULT_LIMIT
from agent_ls.agent.builtin_tools.search import GLOB_MAX_RESULTS, GREP_MAX_MATCHES, compile_glob
from agent_ls.agent.builtin_tools.shell import BashTool
from agent_ls.agent.workspace import Workspace
from agent_ls.core.tools import Capability, Tool, ToolResult


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "ws"
    r.mkdir()
    return r


def tools_for(root: Path, **kw: Any) -> dict[str, Tool]:
    return {t.spec.name: t for t in builtin_tools(Workspace([root]), **kw)}


async def call(root: Path, name: str, **args: Any) -> ToolResult:
    return await tools_for(root)[name].call(args)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # a zombie is dead for our purposes
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False


async def wait_dead(pid: int, seconds: float = 5.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        await asyncio.sleep(0.05)
    return not pid_alive(pid)


# --- the set ------------------------------------------------------------------------------


def test_tool_set_names_capabilities_and_schemas(root: Path) -> None:
    tools = builtin_tools(Workspace([root]))
    assert [t.spec.name for t in tools] == ["bash", "edit_file", "glob", "grep", "read_file", "read_output",
                                            "write_file"]
    caps = {t.spec.name: t.spec.capability for t in tools}
    assert caps == {"bash": Capability.WRITE, "edit_file": Capability.WRITE, "glob": Capability.READ,
                    "grep": Capability.READ, "read_file": Capability.READ, "read_output": Capability.READ,
                    "write_file": Capability.WRITE}
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


# --- glob ---------------------------------------------------------------------------------


@pytest.fixture
def tree(root: Path) -> Path:
    for rel in ["a.py", "b.txt", "src/c.py", "src/deep/d.py", "src/deep/e.ts", "node_modules/m.py",
                ".git/config.py", "docs/x.md"]:
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text(f"content of {rel}\n")
    return root


async def test_glob_patterns(tree: Path) -> None:
    async def g(pattern: str, **kw: Any) -> list[str]:
        r = await call(tree, "glob", pattern=pattern, **kw)
        assert not r.is_error, r.content
        return r.content.splitlines()

    assert await g("*.py") == ["a.py"]
    assert await g("**/*.py") == ["a.py", "src/c.py", "src/deep/d.py"]  # node_modules, .git skipped
    assert await g("src/**/*.{py,ts}") == ["src/c.py", "src/deep/d.py", "src/deep/e.ts"]
    assert await g("src/*/?.py") == ["src/deep/d.py"]
    assert await g("*.py", path="src/deep") == ["src/deep/d.py"]  # shown relative to the root
    assert await g("[ab].*") == ["a.py", "b.txt"]
    assert await g("**/*.md", path="docs") == ["docs/x.md"]


async def test_glob_no_match_hint_and_errors(tree: Path) -> None:
    r = await call(tree, "glob", pattern="*.ts")
    assert not r.is_error and "No files match" in r.content and "**/*.ts" in r.content
    r = await call(tree, "glob", pattern="../*")
    assert r.is_error and "'..'" in r.content
    r = await call(tree, "glob", pattern="/etc/*")
    assert r.is_error and "relative" in r.content
    r = await call(tree, "glob", pattern="*", path="missing")
    assert r.is_error and "not found" in r.content.lower()
    r = await call(tree, "glob", pattern="*", path="a.py")
    assert r.is_error and "not a directory" in r.content


async def test_glob_caps_results(root: Path) -> None:
    for i in range(GLOB_MAX_RESULTS + 7):
        (root / f"f{i:05d}.txt").write_text("")
    r = await call(root, "glob", pattern="*.txt")
    lines = r.content.splitlines()
    assert len(lines) == GLOB_MAX_RESULTS + 1 and "7 more files not shown" in lines[-1]


def test_compile_glob() -> None:
    assert compile_glob("**/x").match("x") and compile_glob("**/x").match("a/b/x")
    assert not compile_glob("*.py").match("a/b.py")
    assert compile_glob("a/**").match("a/b/c")
    assert compile_glob(r"\*").match("*") and not compile_glob(r"\*").match("a")
    assert compile_glob("[!a]b").match("cb") and not compile_glob("[!a]b").match("ab")
    assert compile_glob("./src//*.py").match("src/x.py")  # empty and '.' components dropped
    assert compile_glob("*").match(".env")  # dotfiles are not special
    assert compile_glob("f{1..3}.txt").match("f2.txt") and not compile_glob("f{1..3}.txt").match("f4.txt")
    assert not compile_glob("A.py").match("a.py")  # case-sensitive on every platform


def test_glob_sets_and_wildcards_never_match_a_slash() -> None:
    """The hand-written matcher let ``[!x]`` match ``/`` (``a[!x]b`` matched ``a/b``)."""
    for pattern in ("a[!x]b", "a[^x]b", "a?b", "a*b", "a[/]b", "a[!]b"):
        assert not compile_glob(pattern).match("a/b"), pattern
    assert compile_glob("a[!x]b").match("ayb") and not compile_glob("a[!x]b").match("axb")


async def test_glob_tool_negated_set_does_not_cross_directories(root: Path) -> None:
    for rel in ("a/b", "ayb", "axb"):
        p = root / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_text("x\n")
    r = await call(root, "glob", pattern="a[!x]b")
    assert not r.is_error and r.content.splitlines() == ["ayb"]
    r = await call(root, "grep", pattern="x", glob="a[!x]b")
    assert r.content.splitlines() == ["ayb:1:x"]


async def test_glob_unusable_patterns_are_errors_not_crashes(root: Path) -> None:
    (root / "f.txt").write_text("x\n")
    huge = "{a,b}" * 12  # 4096 alternatives
    r = await call(root, "glob", pattern=huge)
    assert r.is_error and "more than 1000 alternatives" in r.content
    r = await call(root, "grep", pattern="x", glob=huge)
    assert r.is_error and "Invalid glob" in r.content and "alternatives" in r.content
    r = await call(root, "glob", pattern="a\x00b")
    assert r.is_error and "NUL" in r.content
    r = await call(root, "glob", pattern="[")  # an unclosed set is a literal '['
    assert not r.is_error and "No files match" in r.content


# --- grep ---------------------------------------------------------------------------------


async def test_grep_regex_paths_and_filters(tree: Path) -> None:
    (tree / "src/c.py").write_text("import os\nVALUE = 1\nvalue = 2\n")
    r = await call(tree, "grep", pattern=r"^value")
    assert r.content == "src/c.py:3:value = 2\n"
    r = await call(tree, "grep", pattern=r"^value", case_insensitive=True)
    assert r.content == "src/c.py:2:VALUE = 1\nsrc/c.py:3:value = 2\n"
    r = await call(tree, "grep", pattern="content of", glob="*.ts")
    assert r.content == "src/deep/e.ts:1:content of src/deep/e.ts\n"
    r = await call(tree, "grep", pattern="content of", glob="deep/*.py", path="src")
    assert r.content == "src/deep/d.py:1:content of src/deep/d.py\n"
    r = await call(tree, "grep", pattern="content", path="a.py")
    assert r.content == "a.py:1:content of a.py\n"
    r = await call(tree, "grep", pattern="content of node_modules")  # skipped directory
    assert not r.is_error and "No matches" in r.content


async def test_grep_errors_binary_and_caps(root: Path) -> None:
    r = await call(root, "grep", pattern="(unclosed")
    assert r.is_error and "Invalid regular expression" in r.content
    r = await call(root, "grep", pattern="x", glob="../*")
    assert r.is_error and "Invalid glob" in r.content
    (root / "b.bin").write_bytes(b"match\x00here")
    r = await call(root, "grep", pattern="match")
    assert "No matches" in r.content and "(0 files searched)" in r.content
    r = await call(root, "grep", pattern="match", path="b.bin")
    assert r.is_error and "binary" in r.content
    (root / "many.txt").write_text("hit\n" * (GREP_MAX_MATCHES + 10) + "x" * 900 + " hit\n")
    r = await call(root, "grep", pattern="hit")
    lines = r.content.splitlines()
    assert len(lines) == GREP_MAX_MATCHES + 1 and "capped" in lines[-1]
    (root / "many.txt").write_text("hit " + "x" * 900 + "\n")
    r = await call(root, "grep", pattern="hit")
    assert "characters cut" in r.content and len(r.content) < 700


# --- bash ---------------------------------------------------------------------------------


async def test_bash_runs_in_the_workspace_root_with_empty_stdin(root: Path) -> None:
    r = await call(root, "bash", command="pwd; cat; echo err >&2; echo out")
    assert not r.is_error
    lines = r.content.splitlines()
    assert lines[0] == str(root.resolve())
    assert "err" in lines and "out" in lines and lines[-1] == "[exit code 0]"


async def test_bash_exit_code_is_an_error_result(root: Path) -> None:
    r = await call(root, "bash", command="echo before; exit 3")
    assert r.is_error and "before" in r.content and r.content.endswith("[exit code 3]")
    r = await call(root, "bash", command="true")
    assert not r.is_error and r.content.startswith("(no output)")
    r = await call(root, "bash", command="kill -TERM $$")
    assert r.is_error and "[killed by SIGTERM]" in r.content


async def test_bash_timeout_kills_the_whole_process_group(root: Path) -> None:
    t = BashTool(Workspace([root]), timeout=60)
    r = await t.call({"command": "sleep 300 & echo $! > child.pid; echo started; wait", "timeout": 0.7})
    assert r.is_error
    assert r.content.startswith("Command timed out after 0.7 s and was killed.")
    assert "started" in r.content and "timed out after 0.7 s" in r.content
    child = int((root / "child.pid").read_text())
    assert await wait_dead(child), "the background child survived the timeout"


async def test_bash_default_timeout_comes_from_the_tool(root: Path) -> None:
    t = BashTool(Workspace([root]), timeout=0.5)
    r = await t.call({"command": "sleep 30"})
    assert r.is_error and "timed out after 0.5 s" in r.content
    assert "Default timeout 0.5 s" in t.spec.description
    too_long = await t.call({"command": "true", "timeout": 10_000})
    assert too_long.is_error and "at most" in too_long.content


async def test_bash_background_job_holding_output_does_not_hang(root: Path) -> None:
    r = await asyncio.wait_for(call(root, "bash", command="(sleep 60; echo late) & echo now"), 20)
    assert "now" in r.content and "late" not in r.content
    assert "background processes" in r.content and "[exit code 0]" in r.content


async def test_bash_output_cap_keeps_head_and_tail_with_a_marker(root: Path) -> None:
    t = BashTool(Workspace([root]), output_cap_chars=1000)
    r = await t.call({"command": "seq 1 100000"})
    assert not r.is_error and r.truncated_chars > 500_000
    assert r.content.startswith("1\n2\n3\n")
    assert f"[... {r.truncated_chars} characters cut ...]" in r.content
    assert "99999\n100000\n[exit code 0]" in r.content
    assert len(r.content) < 1200


async def test_bash_cancel_kills_the_process_group(root: Path) -> None:
    t = tools_for(root)["bash"]
    task = asyncio.create_task(t.call({"command": "echo $$ > shell.pid; sleep 300 & echo $! > child.pid; wait"}))
    for _ in range(200):
        if (root / "child.pid").exists() and (root / "child.pid").read_text().strip():
            break
        await asyncio.sleep(0.02)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    for f in ("shell.pid", "child.pid"):
        assert await wait_dead(int((root / f).read_text())), f


async def test_bash_nul_byte_and_pager_env(root: Path) -> None:
    r = await call(root, "bash", command="echo a\x00b")
    assert r.is_error and "NUL" in r.content
    r = await call(root, "bash", command="echo $PAGER $GIT_PAGER $GIT_TERMINAL_PROMPT")
    assert r.content.splitlines()[0] == "cat cat 0"

