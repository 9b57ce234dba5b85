"""The glob and grep built-in tools, called directly on a real temporary workspace: patterns,
filters, the errors the model must be able to act on, and result caps."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.builtin_tools.search import GLOB_MAX_RESULTS, GREP_MAX_MATCHES, compile_glob
from tests.agent.helpers import call, root

__all__ = ["root"]  # the fixture, from tests/agent/helpers.py


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


# --- grep is bounded (issue 25, item 8) -------------------------------------------------------

CATASTROPHIC = "(a+)+$"
"""Exponential backtracking in Python's ``re`` on a line of a's that does not end the match."""


def test_a_catastrophic_pattern_does_not_hold_the_process(root: Path) -> None:
    """A fresh process greps a file of long lines of a's with ``(a+)+$``: with a backtracking
    engine its worker thread would never finish (nor could it be killed); the child is killed
    when it is not done in time, so the test fails instead of hanging."""
    import subprocess
    import sys

    from tests.tooling import REPO_ROOT

    (root / "aaa.txt").write_text(("a" * 5000 + "!\n") * 20)
    code = ("import asyncio, sys\nfrom pathlib import Path\nfrom tests.agent.helpers import call\n"
            f"r = asyncio.run(call(Path({str(root)!r}), 'grep', pattern={CATASTROPHIC!r}))\nprint(r.content)\n")
    try:
        done = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT, capture_output=True, text=True,
                              timeout=90)
    except subprocess.TimeoutExpired:
        pytest.fail(f"grep {CATASTROPHIC!r} was still running after 90 s")
    assert done.returncode == 0, done.stderr
    assert "No matches for '(a+)+$'" in done.stdout and "(1 files searched)" in done.stdout


async def test_grep_uses_re2_syntax_with_clear_errors(root: Path) -> None:
    (root / "f.txt").write_text("Alpha beta\nfoo123\n")
    r = await call(root, "grep", pattern="(?<=x)y")
    assert r.is_error and "Invalid regular expression" in r.content and "RE2 syntax" in r.content
    r = await call(root, "grep", pattern=r"(a)\1")
    assert r.is_error and "no lookarounds or backreferences" in r.content
    r = await call(root, "grep", pattern="ALPHA", case_insensitive=True)
    assert r.content.startswith("f.txt:1:Alpha beta")
    r = await call(root, "grep", pattern=r"^foo\d+$")
    assert r.content.startswith("f.txt:2:foo123")
    r = await call(root, "grep", pattern="é|beta")
    assert "f.txt:1:" in r.content


async def test_grep_stops_at_its_time_limit(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_ls.agent.builtin_tools import search

    (root / "f.txt").write_text("hit\n")
    monkeypatch.setattr(search, "GREP_TIME_LIMIT", 0.0)
    r = await call(root, "grep", pattern="hit")
    assert "grep stopped after 0 s; not every file was searched" in r.content and not r.is_error


GREP_PATTERNS = ["", "^", "$", "^$", "a", "^a", "a$", r"\bfoo\b", r"\Bo", r"[^x]+", r"^[^x]*$", r"\s", r"a\sb",
                 r"(?s)a.b", r"a[\s\S]b", r"^\s*$", "é", "(?i)ÉCOLE", r"\w+$", r"^.{3}$", "x*", r"\Aab", r"a\z",
                 r"(?-m)^b", "b|^c", "[[:space:]]$", r"a\nb", r"\C", "(?i)b$"]
GREP_TEXTS = ["", "\n", "a\nb\n", "ab\r\nb\r\r\n\r\nc\r", "foo bar\nxfoo\n  \n", "école\nÉCOLE x\n",
              "a b\na\tb\na\nb", "xxx\nabc\nx\n", "\r\n\r\n", "ab"]


@pytest.mark.parametrize("pattern", GREP_PATTERNS)
def test_grep_whole_text_search_finds_exactly_the_matching_lines(pattern: str) -> None:
    """grep searches a text whole (RE2 costs per call); the lines it finds are the ones the
    pattern matches line by line."""
    from agent_ls.agent.builtin_tools.search import GrepPattern

    fast = GrepPattern(pattern)
    reference = GrepPattern(pattern)
    reference._text = None  # line by line
    for text in GREP_TEXTS:
        expected = list(reference.matching_lines(text, lambda: False))
        assert list(fast.matching_lines(text, lambda: False)) == expected, (pattern, text)
        lines = [line.rstrip("\r") for line in text.split("\n")]
        assert all(lines[n - 1] == line for n, line in expected)
