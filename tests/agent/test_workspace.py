"""Path confinement: every way out of the workspace roots is refused, through every file tool.

Attacks: ``..`` traversal, absolute paths outside the roots, file and directory symlinks
that point outside (existing, dangling, chained), symlinks created by ``bash`` and then
read through the file tools, sibling directories whose names share a root's prefix,
several roots at once, and symlinks swapped in after the check (a directory component or
the file itself, between Workspace.resolve and the open): refused, nothing read or written.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.builtin_tools import builtin_tools
from agent_ls.agent.workspace import PathOutsideWorkspace, SymlinkInPath, Workspace, WorkspacePathError
from agent_ls.core.tools import Tool, ToolResult

SECRET = "TOP-SECRET-CONTENT"


@pytest.fixture
def layout(tmp_path: Path) -> dict[str, Path]:
    """<tmp>/ws (the root), <tmp>/outside/secret.txt, <tmp>/ws2 (a sibling sharing the prefix)."""
    ws = tmp_path / "ws"
    outside = tmp_path / "outside"
    sibling = tmp_path / "ws2"
    for d in (ws, outside, sibling):
        d.mkdir()
    (outside / "secret.txt").write_text(SECRET + "\n")
    (sibling / "secret.txt").write_text(SECRET + "\n")
    (ws / "inside.txt").write_text("inside\n")
    (ws / "sub").mkdir()
    return {"ws": ws, "outside": outside, "sibling": sibling, "tmp": tmp_path}


def tools(*roots: Path) -> dict[str, Tool]:
    return {t.spec.name: t for t in builtin_tools(Workspace(list(roots)))}


async def run(ts: dict[str, Tool], name: str, **args: Any) -> ToolResult:
    return await ts[name].call(args)


def assert_refused(r: ToolResult) -> None:
    assert r.is_error, r.content
    assert "outside the workspace" in r.content, r.content
    assert SECRET not in r.content


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


# --- symlinks swapped in after the check (a racing local process) ----------------------------
#
# Workspace.resolve checks the fully resolved path; the tools then open that resolved path
# openat-style with O_NOFOLLOW. The race is made deterministic by swapping the path right
# after resolve returns, before the worker thread opens anything.


def swap_after_resolve(monkeypatch: pytest.MonkeyPatch, swap: Any) -> list[Path]:
    """Make every Workspace.resolve call run ``swap(resolved)`` just before returning."""
    original = Workspace.resolve
    seen: list[Path] = []

    def resolve_then_swap(self: Workspace, path: str | os.PathLike[str]) -> Path:
        resolved = original(self, path)
        seen.append(resolved)
        swap(resolved)
        return resolved

    monkeypatch.setattr(Workspace, "resolve", resolve_then_swap)
    return seen


def replace_with_symlink(path: Path, target: Path) -> None:
    path.rename(path.with_name(path.name + ".orig"))
    path.symlink_to(target, target_is_directory=target.is_dir())


def assert_raced(r: ToolResult) -> None:
    assert r.is_error, r.content
    assert "is a symbolic link now" in r.content and "nothing was read or written" in r.content, r.content
    assert SECRET not in r.content


@pytest.mark.parametrize("rel", ["sub/planted.txt", "sub/new/deeper/planted.txt"])
async def test_directory_swapped_for_a_symlink_after_the_check_is_not_written_through(
    layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch, rel: str
) -> None:
    ws, outside = layout["ws"], layout["outside"]
    swap_after_resolve(monkeypatch, lambda _resolved: replace_with_symlink(ws / "sub", outside))
    r = await run(tools(ws), "write_file", path=rel, content="pwned")
    assert_raced(r)
    assert "'sub'" in r.content
    assert sorted(os.listdir(outside)) == ["secret.txt"]  # neither the file nor its parents


async def test_directory_swapped_during_read_edit_and_grep(
    layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, outside = layout["ws"], layout["outside"]
    (ws / "sub" / "secret.txt").write_text("harmless\n")
    ts = tools(ws)
    swap_after_resolve(monkeypatch, lambda _resolved: replace_with_symlink(ws / "sub", outside))

    def restore() -> None:
        (ws / "sub").unlink()
        (ws / "sub.orig").rename(ws / "sub")

    assert_raced(await run(ts, "read_file", path="sub/secret.txt"))
    restore()
    assert_raced(await run(ts, "edit_file", path="sub/secret.txt", old_string="harmless", new_string="pwned"))
    restore()
    assert_raced(await run(ts, "grep", pattern="SECRET", path="sub/secret.txt"))
    restore()
    assert (outside / "secret.txt").read_text() == SECRET + "\n"
    assert (ws / "sub" / "secret.txt").read_text() == "harmless\n"


@pytest.mark.parametrize("existing", [True, False])
async def test_final_symlink_swapped_in_after_the_check_is_not_followed(
    layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch, existing: bool
) -> None:
    ws, outside = layout["ws"], layout["outside"]
    name = "inside.txt" if existing else "new.txt"

    def swap(resolved: Path) -> None:
        if resolved.exists():
            resolved.rename(resolved.with_name(resolved.name + ".orig"))
        resolved.symlink_to(outside / "secret.txt")

    def restore() -> None:
        (ws / name).unlink()
        if existing:
            (ws / (name + ".orig")).rename(ws / name)

    swap_after_resolve(monkeypatch, swap)
    ts = tools(ws)
    assert_raced(await run(ts, "write_file", path=name, content="pwned"))
    restore()
    if existing:
        assert_raced(await run(ts, "read_file", path=name))
        restore()
        assert_raced(await run(ts, "edit_file", path=name, old_string="inside", new_string="pwned"))
        restore()
        assert (ws / name).read_text() == "inside\n"
    assert (outside / "secret.txt").read_text() == SECRET + "\n"


async def test_dangling_symlink_swapped_in_after_the_check_creates_nothing(
    layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    ws, outside = layout["ws"], layout["outside"]
    swap_after_resolve(monkeypatch, lambda resolved: resolved.symlink_to(outside / "created.txt"))
    assert_raced(await run(tools(ws), "write_file", path="fresh.txt", content="pwned"))
    assert not (outside / "created.txt").exists()


async def test_a_swapped_symlink_is_refused_even_when_it_points_inside(
    layout: dict[str, Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # at open time no symlink is followed at all: the path has changed since it was checked
    ws = layout["ws"]
    (ws / "other").mkdir()
    swap_after_resolve(monkeypatch, lambda _resolved: replace_with_symlink(ws / "sub", ws / "other"))
    assert_raced(await run(tools(ws), "write_file", path="sub/x.txt", content="x"))
    assert os.listdir(ws / "other") == []


def test_open_file_and_open_dir_on_a_resolved_path(layout: dict[str, Path]) -> None:
    ws_dir, outside = layout["ws"], layout["outside"]
    ws = Workspace([ws_dir])
    target = ws.resolve("sub/a/b/f.txt")
    # missing parents: FileNotFoundError naming the full path, or created on request
    with pytest.raises(FileNotFoundError) as info:
        ws.open_file(target, os.O_WRONLY | os.O_CREAT)
    assert info.value.filename == str(ws.root / "sub" / "a")
    fd = ws.open_file(target, os.O_WRONLY | os.O_CREAT, create_parents=True)
    os.write(fd, b"ok")
    os.close(fd)
    assert (ws_dir / "sub/a/b/f.txt").read_bytes() == b"ok"
    # the resolved path turns into a symlink: refused at the directory and at the file
    replace_with_symlink(ws_dir / "sub" / "a", outside)
    with pytest.raises(SymlinkInPath, match="'sub/a' is a symbolic link now"):
        ws.open_file(target, os.O_RDONLY)
    with pytest.raises(SymlinkInPath):
        ws.open_dir(target.parent, create=True)
    (ws_dir / "sub" / "link.txt").symlink_to(ws_dir / "inside.txt")  # inside, but not resolved
    with pytest.raises(SymlinkInPath, match="'sub/link.txt'"):
        ws.open_file(ws.root / "sub" / "link.txt", os.O_RDONLY)
    fd = ws.open_file(ws.resolve("sub/link.txt"), os.O_RDONLY)  # resolved first: fine
    os.close(fd)
    # a file where a directory is expected, the root itself, a path outside
    with pytest.raises(NotADirectoryError):
        ws.open_file(ws.root / "inside.txt" / "x", os.O_RDONLY)
    with pytest.raises(IsADirectoryError):
        ws.open_file(ws.root, os.O_RDONLY)
    with pytest.raises(PathOutsideWorkspace):
        ws.open_file(outside / "secret.txt", os.O_RDONLY)
    assert sorted(os.listdir(outside)) == ["secret.txt"]


def test_open_dir_uses_the_deepest_root(layout: dict[str, Path]) -> None:
    inner = layout["ws"] / "sub"
    ws = Workspace([layout["ws"], inner])
    assert ws.root_of(inner.resolve() / "x") == inner.resolve()
    assert ws.root_of(layout["ws"].resolve() / "x") == layout["ws"].resolve()
    fd = ws.open_dir(inner.resolve())
    os.close(fd)


def test_file_opener_reuses_the_parent_and_still_refuses_swapped_links(layout: dict[str, Path]) -> None:
    ws_dir, outside = layout["ws"], layout["outside"]
    (ws_dir / "sub" / "a.txt").write_text("a")
    (ws_dir / "sub" / "b.txt").write_text("b")
    (ws_dir / "other").mkdir()
    (ws_dir / "other" / "c.txt").write_text("c")
    ws = Workspace([ws_dir])
    with ws.file_opener() as open_one:
        got = []
        for rel in ["sub/a.txt", "sub/b.txt", "inside.txt"]:
            fd = open_one(ws.resolve(rel), os.O_RDONLY, 0)
            got.append(os.read(fd, 10))
            os.close(fd)
        assert got == [b"a", b"b", b"inside\n"]
        target = ws.resolve("other/c.txt")
        replace_with_symlink(ws_dir / "other", outside)
        with pytest.raises(SymlinkInPath, match="'other'"):
            open_one(target, os.O_RDONLY, 0)
