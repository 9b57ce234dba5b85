"""Path confinement: every way out of the workspace roots is refused, through every file tool.

Attacks: ``..`` traversal, absolute paths outside the roots, file and directory symlinks
that point outside (existing, dangling, chained), symlinks created by ``bash`` and then
read through the file tools, sibling directories whose names share a root's prefix, and
several roots at once: refused, nothing read or written. Symlinks swapped in after the check
are in test_workspace_races.py.
"""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_ls.agent.workspace import PathOutsideWorkspace, Workspace, WorkspacePathError
from tests.agent.helpers import SECRET, assert_refused, layout, run, tools

__all__ = ["layout"]  # the fixture, from tests/agent/helpers.py


# --- Workspace.resolve --------------------------------------------------------------------


def test_resolve_relative_absolute_and_dotdot(layout: dict[str, Path]) -> None:
    ws = Workspace([layout["ws"]])
    root = layout["ws"].resolve()
    assert ws.resolve("inside.txt") == root / "inside.txt"
    assert ws.resolve("sub/../inside.txt") == root / "inside.txt"
    assert ws.resolve(str(root / "sub" / "new.txt")) == root / "sub" / "new.txt"
    assert ws.resolve(".") == root and ws.resolve("") == root
    for bad in ["..", "../outside/secret.txt", "sub/../../outside/secret.txt", "sub/../../ws2/secret.txt",
                str(layout["outside"] / "secret.txt"), "/etc/passwd", str(root) + "/../ws2"]:
        with pytest.raises(PathOutsideWorkspace) as info:
            ws.resolve(bad)
        assert bad in str(info.value) and str(root) in str(info.value)
    # going out and coming back in is fine: only the resolved place counts
    assert ws.resolve("sub/../../ws/inside.txt") == root / "inside.txt"
    with pytest.raises(WorkspacePathError, match="NUL"):
        ws.resolve("a\x00b")


def test_sibling_with_the_same_prefix_is_outside(layout: dict[str, Path]) -> None:
    ws = Workspace([layout["ws"]])
    assert not ws.contains(layout["sibling"].resolve())
    assert not ws.contains(layout["sibling"].resolve() / "secret.txt")
    assert ws.contains(layout["ws"].resolve())


def test_roots_are_resolved_through_symlinks(layout: dict[str, Path]) -> None:
    alias = layout["tmp"] / "alias"
    alias.symlink_to(layout["ws"], target_is_directory=True)
    ws = Workspace([alias])
    assert ws.root == layout["ws"].resolve()
    assert ws.resolve(str(alias / "inside.txt")) == layout["ws"].resolve() / "inside.txt"
    with pytest.raises(ValueError):
        Workspace([])


def test_display_is_relative_to_the_first_root(layout: dict[str, Path]) -> None:
    ws = Workspace([layout["ws"], layout["sibling"]])
    assert ws.display(ws.resolve("sub/x.py")) == "sub/x.py"
    assert ws.display(ws.root) == "."
    other = ws.resolve(str(layout["sibling"] / "secret.txt"))
    assert ws.display(other) == str(layout["sibling"].resolve() / "secret.txt")


# --- traversal and absolute paths through every tool ----------------------------------------


@pytest.mark.parametrize("path", ["../outside/secret.txt", "sub/../../outside/secret.txt", "../ws2/secret.txt",
                                  "ABS_OUTSIDE", "/etc/passwd"])
async def test_every_file_tool_refuses_paths_outside(layout: dict[str, Path], path: str) -> None:
    if path == "ABS_OUTSIDE":
        path = str(layout["outside"] / "secret.txt")
    ts = tools(layout["ws"])
    assert_refused(await run(ts, "read_file", path=path))
    assert_refused(await run(ts, "write_file", path=path, content="pwned"))
    assert_refused(await run(ts, "edit_file", path=path, old_string=SECRET, new_string="pwned"))
    assert_refused(await run(ts, "grep", pattern="SECRET", path=path))
    parent = str(Path(path).parent)
    assert_refused(await run(ts, "glob", pattern="*", path=parent))
    assert_refused(await run(ts, "grep", pattern="SECRET", path=parent))
    assert (layout["outside"] / "secret.txt").read_text() == SECRET + "\n"
    assert (layout["sibling"] / "secret.txt").read_text() == SECRET + "\n"


async def test_write_outside_creates_nothing(layout: dict[str, Path]) -> None:
    ts = tools(layout["ws"])
    assert_refused(await run(ts, "write_file", path="../outside/new/dir/f.txt", content="x"))
    assert_refused(await run(ts, "write_file", path="../created.txt", content="x"))
    assert not (layout["outside"] / "new").exists() and not (layout["tmp"] / "created.txt").exists()


# --- symlink escapes -------------------------------------------------------------------------


async def test_file_symlink_pointing_outside(layout: dict[str, Path]) -> None:
    ws = layout["ws"]
    (ws / "link.txt").symlink_to(layout["outside"] / "secret.txt")
    ts = tools(ws)
    assert_refused(await run(ts, "read_file", path="link.txt"))
    assert_refused(await run(ts, "write_file", path="link.txt", content="pwned"))
    assert_refused(await run(ts, "edit_file", path="link.txt", old_string=SECRET, new_string="pwned"))
    assert_refused(await run(ts, "grep", pattern="SECRET", path="link.txt"))
    # walks skip it: the secret never shows up and the link is not listed
    r = await run(ts, "grep", pattern="SECRET")
    assert not r.is_error and SECRET not in r.content and "No matches" in r.content
    r = await run(ts, "glob", pattern="**/*")
    assert "link.txt" not in r.content and "inside.txt" in r.content
    assert (layout["outside"] / "secret.txt").read_text() == SECRET + "\n"


async def test_directory_symlink_pointing_outside(layout: dict[str, Path]) -> None:
    ws = layout["ws"]
    (ws / "sub" / "escape").symlink_to(layout["outside"], target_is_directory=True)
    ts = tools(ws)
    assert_refused(await run(ts, "read_file", path="sub/escape/secret.txt"))
    assert_refused(await run(ts, "write_file", path="sub/escape/planted.txt", content="x"))
    assert_refused(await run(ts, "write_file", path="sub/escape/deeper/planted.txt", content="x"))
    assert_refused(await run(ts, "glob", pattern="*", path="sub/escape"))
    assert_refused(await run(ts, "grep", pattern="SECRET", path="sub/escape"))
    r = await run(ts, "glob", pattern="**/*.txt")
    assert r.content.splitlines() == ["inside.txt"]
    r = await run(ts, "grep", pattern="SECRET")
    assert SECRET not in r.content
    assert sorted(os.listdir(layout["outside"])) == ["secret.txt"]


async def test_dangling_and_chained_symlinks(layout: dict[str, Path]) -> None:
    ws = layout["ws"]
    (ws / "dangling").symlink_to(layout["outside"] / "not-yet.txt")
    (ws / "hop1").symlink_to(ws / "hop2")  # inside -> inside -> outside
    (ws / "hop2").symlink_to(layout["outside"] / "secret.txt")
    ts = tools(ws)
    assert_refused(await run(ts, "write_file", path="dangling", content="planted"))
    assert not (layout["outside"] / "not-yet.txt").exists()
    assert_refused(await run(ts, "read_file", path="hop1"))
    assert_refused(await run(ts, "edit_file", path="hop1", old_string=SECRET, new_string="x"))


async def test_symlinks_that_stay_inside_are_allowed(layout: dict[str, Path]) -> None:
    ws = layout["ws"]
    (ws / "alias.txt").symlink_to(ws / "inside.txt")
    (ws / "subalias").symlink_to(ws / "sub", target_is_directory=True)
    ts = tools(ws)
    r = await run(ts, "read_file", path="alias.txt")
    assert not r.is_error and "inside" in r.content
    r = await run(ts, "write_file", path="subalias/new.txt", content="hello")
    assert not r.is_error and (ws / "sub" / "new.txt").read_text() == "hello"
    r = await run(ts, "grep", pattern="^inside$")
    assert "alias.txt:1:inside" in r.content and "inside.txt:1:inside" in r.content


async def test_symlink_loop_is_an_error_not_a_hang(layout: dict[str, Path]) -> None:
    ws = layout["ws"]
    (ws / "loop").symlink_to(ws / "loop")
    ts = tools(ws)
    r = await run(ts, "read_file", path="loop")
    assert r.is_error
    r = await run(ts, "grep", pattern="x")
    assert not r.is_error


async def test_symlinks_created_by_bash_are_refused_when_read(layout: dict[str, Path]) -> None:
    ws = layout["ws"]
    ts = tools(ws)
    outside = layout["outside"]
    r = await run(ts, "bash", command=f"ln -s {outside}/secret.txt leak.txt && ln -s {outside} leakdir "
                                       "&& ln -s ../../outside sub/up")
    assert not r.is_error, r.content
    assert_refused(await run(ts, "read_file", path="leak.txt"))
    assert_refused(await run(ts, "read_file", path="leakdir/secret.txt"))
    assert_refused(await run(ts, "read_file", path="sub/up/secret.txt"))
    assert_refused(await run(ts, "edit_file", path="leak.txt", old_string=SECRET, new_string="x"))
    assert_refused(await run(ts, "write_file", path="leakdir/planted.txt", content="x"))
    r = await run(ts, "grep", pattern="SECRET")
    assert SECRET not in r.content
    r = await run(ts, "glob", pattern="**/*")
    assert "leak" not in r.content and "secret" not in r.content
    assert sorted(os.listdir(outside)) == ["secret.txt"]
    # a bash swap after a check: the link is re-checked at every call
    r = await run(ts, "bash", command=f"rm leak.txt && ln -s {ws}/inside.txt leak.txt")
    r = await run(ts, "read_file", path="leak.txt")
    assert not r.is_error and "inside" in r.content
    r = await run(ts, "bash", command=f"rm leak.txt && ln -s {outside}/secret.txt leak.txt")
    assert_refused(await run(ts, "read_file", path="leak.txt"))


# --- several roots ---------------------------------------------------------------------------


async def test_multiple_roots(layout: dict[str, Path]) -> None:
    a, b = layout["ws"], layout["sibling"]
    (b / "notes.md").write_text("second root\n")
    ts = tools(a, b)
    # relative paths are taken from the first root
    r = await run(ts, "read_file", path="inside.txt")
    assert not r.is_error
    r = await run(ts, "read_file", path="notes.md")
    assert r.is_error and "not found" in r.content.lower()
    # absolute paths into the second root work, and so does ../ws2 (it resolves into a root)
    r = await run(ts, "read_file", path=str(b / "notes.md"))
    assert not r.is_error and "second root" in r.content
    r = await run(ts, "read_file", path="../ws2/notes.md")
    assert not r.is_error and "second root" in r.content
    r = await run(ts, "write_file", path=str(b / "made.txt"), content="ok")
    assert not r.is_error and (b / "made.txt").read_text() == "ok"
    r = await run(ts, "grep", pattern="second", path=str(b))
    assert str(b.resolve() / "notes.md") + ":1:second root" in r.content
    # the third directory is still outside, and the refusal names both roots
    r = await run(ts, "read_file", path=str(layout["outside"] / "secret.txt"))
    assert_refused(r)
    assert "workspace roots" in r.content and str(a.resolve()) in r.content and str(b.resolve()) in r.content
    # a symlink in root a into root b is inside; into the outside is not
    (a / "to_b").symlink_to(b / "notes.md")
    (a / "to_out").symlink_to(layout["outside"] / "secret.txt")
    assert not (await run(ts, "read_file", path="to_b")).is_error
    assert_refused(await run(ts, "read_file", path="to_out"))
    # bash runs in the first root
    r = await run(ts, "bash", command="pwd")
    assert r.content.splitlines()[0] == str(a.resolve())
