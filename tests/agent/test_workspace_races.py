"""Path confinement against a racing local process: symlinks swapped in after the check (a
directory component or the file itself, between Workspace.resolve and the open) are refused,
nothing read or written; and the openat-style openers the file tools use for that.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.workspace import PathOutsideWorkspace, SymlinkInPath, Workspace
from agent_ls.core.tools import ToolResult
from tests.agent.helpers import SECRET, layout, run, tools

__all__ = ["layout"]  # the fixture, from tests/agent/helpers.py


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
