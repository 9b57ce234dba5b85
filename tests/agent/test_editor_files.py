"""The agent side of issue 16: stale-edit tracking, atomic disk writes, and the file tools
working through an editor (a fake :class:`EditorFiles` here; the real one, over LSP, is
tested in tests/lsp/test_editor_files.py)."""

from __future__ import annotations

import os
import stat
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.builtin_tools import builtin_tools
from agent_ls.agent.editor import file_writes
from agent_ls.agent.editor.editor_files import (
    EditorFiles,
    EditOutcome,
    OpenDocument,
    ReadTracker,
    TextChange,
    digest_text,
    minimal_change,
)
from agent_ls.agent.editor.file_writes import NotRegularFile, atomic_write
from agent_ls.agent.workspace import SymlinkInPath, Workspace
from agent_ls.core.tools import Tool, ToolResult


@pytest.fixture
def root(tmp_path: Path) -> Path:
    r = tmp_path / "ws"
    r.mkdir()
    return r.resolve()


class FakeEditor:
    """Open buffers and an editor that applies (or refuses) edits, recording them."""

    def __init__(self, *, can_apply: bool = True, can_create: bool = True) -> None:
        self.docs: dict[Path, OpenDocument] = {}
        self.edits: list[dict[str, Any]] = []
        self.answer = EditOutcome(True)
        self._apply = can_apply
        self._create = can_create

    def open_text(self, path: Path) -> OpenDocument | None:
        return self.docs.get(path)

    def open_documents(self) -> Mapping[Path, OpenDocument]:
        return dict(self.docs)

    def can_apply(self, *, create: bool) -> bool:
        return self._apply and (self._create or not create)

    async def apply_edit(self, path: Path, *, base: str, changes: Sequence[TextChange], new_text: str,
                         version: int | None, create: bool, label: str) -> EditOutcome:
        self.edits.append({"path": path, "base": base, "changes": list(changes), "version": version,
                           "create": create, "label": label})
        if self.answer.applied:
            result = base
            for c in sorted(changes, key=lambda c: c.start, reverse=True):
                result = result[: c.start] + c.new_text + result[c.end :]
            assert result == new_text
            old = self.docs.get(path)
            self.docs[path] = OpenDocument(new_text, (old.version or 0) + 1 if old else 1)
        return self.answer


def tools_for(root: Path, editor: EditorFiles | None = None) -> dict[str, Tool]:
    return {t.spec.name: t for t in builtin_tools(Workspace([root]), editor=editor)}


async def run(tools: dict[str, Tool], name: str, **args: Any) -> ToolResult:
    return await tools[name].call(args)


# --- the tracker and helpers --------------------------------------------------------------


def test_tracker_messages(tmp_path: Path) -> None:
    t = ReadTracker()
    p = tmp_path / "a.py"
    assert t.stale(p, "a.py", digest_text("x"), None) is None  # never read: no check
    t.record(p, digest_text("x"))
    assert t.stale(p, "a.py", digest_text("x"), None) is None
    msg = t.stale(p, "a.py", digest_text("y"), None)
    assert msg == ("a.py changed since you last read it (it changed on disk); nothing was written. "
                   "Read it again and retry the change on its current content.")
    assert "(the user edited it in the editor)" in (t.stale(p, "a.py", digest_text("y"), OpenDocument("y", 3)) or "")
    t.record(p, digest_text("buffer"), version=2, in_editor=True)
    assert "closed in the editor" in (t.stale(p, "a.py", digest_text("disk"), None) or "")
    t.forget(p)
    assert t.stale(p, "a.py", digest_text("z"), None) is None


@pytest.mark.parametrize(("base", "new"), [
    ("abc", "abc"), ("", "x"), ("x", ""), ("hello world", "hello there world"), ("aaaa", "aa"),
    ("line1\nline2\nline3\n", "line1\nLINE2\nline3\n"), ("abcabc", "abc"), ("ab", "ba"),
])
def test_minimal_change(base: str, new: str) -> None:
    c = minimal_change(base, new)
    assert base[: c.start] + c.new_text + base[c.end :] == new
    assert c.end - c.start <= len(base) and len(c.new_text) <= len(new)
    if base == "line1\nline2\nline3\n":
        assert (c.start, c.end, c.new_text) == (6, 10, "LINE")


# --- atomic disk writes ---------------------------------------------------------------------


def test_atomic_write_replaces_the_file_and_keeps_its_mode(root: Path) -> None:
    ws = Workspace([root])
    f = root / "a.txt"
    f.write_text("old\n")
    os.chmod(f, 0o640)
    other = root / "hardlink.txt"
    os.link(f, other)
    inode = f.stat().st_ino
    atomic_write(ws, ws.resolve("a.txt"), b"new\n")
    assert f.read_bytes() == b"new\n"
    assert f.stat().st_ino != inode
    assert stat.S_IMODE(f.stat().st_mode) == 0o640
    assert other.read_text() == "old\n"  # the other name of the old file is not written through
    atomic_write(ws, ws.resolve("deep/er/b.txt"), b"b", create_parents=True)
    assert (root / "deep/er/b.txt").read_bytes() == b"b"
    assert sorted(p.name for p in root.iterdir()) == ["a.txt", "deep", "hardlink.txt"]  # no temporary left


def test_atomic_write_failure_leaves_the_old_file(root: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = Workspace([root])
    (root / "a.txt").write_text("old\n")

    def broken_replace(*args: Any, **kwargs: Any) -> None:
        raise OSError(5, "Input/output error")

    monkeypatch.setattr(file_writes.os, "replace", broken_replace)
    with pytest.raises(OSError, match="Input/output"):
        atomic_write(ws, ws.resolve("a.txt"), b"new\n")
    assert (root / "a.txt").read_text() == "old\n"
    assert [p.name for p in root.iterdir()] == ["a.txt"]


def test_atomic_write_refuses_symlinks_fifos_and_directories(root: Path, tmp_path: Path) -> None:
    ws = Workspace([root])
    outside = tmp_path / "outside.txt"
    outside.write_text("secret\n")
    target = ws.resolve("link.txt")  # resolved while it did not exist
    (root / "link.txt").symlink_to(outside)  # then a symlink appears there
    with pytest.raises(SymlinkInPath):
        atomic_write(ws, target, b"pwned")
    assert outside.read_text() == "secret\n" and (root / "link.txt").is_symlink()
    os.mkfifo(root / "pipe")
    with pytest.raises(NotRegularFile):
        atomic_write(ws, ws.resolve("pipe"), b"x")
    (root / "dir").mkdir()
    with pytest.raises(IsADirectoryError):
        atomic_write(ws, ws.resolve("dir"), b"x")


def test_atomic_write_without_room_for_a_temporary_rewrites_in_place(
    root: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A directory we may not create files in (the file itself writable): written in place."""
    ws = Workspace([root])
    (root / "a.txt").write_text("old\n")
    inode = (root / "a.txt").stat().st_ino
    real_open = os.open

    def no_new_files(path: Any, flags: int, *args: Any, **kwargs: Any) -> int:
        if str(path).endswith(".tmp"):
            raise PermissionError(13, "Permission denied")
        return real_open(path, flags, *args, **kwargs)

    monkeypatch.setattr(file_writes.os, "open", no_new_files)
    atomic_write(ws, ws.resolve("a.txt"), b"new\n")
    assert (root / "a.txt").read_text() == "new\n" and (root / "a.txt").stat().st_ino == inode
    with pytest.raises(PermissionError):
        atomic_write(ws, ws.resolve("b.txt"), b"x")
    assert not (root / "b.txt").exists()


# --- the tools without an editor (the CLI): the disk ----------------------------------------


async def test_disk_change_after_the_read_refuses_edit_and_write(root: Path) -> None:
    f = root / "a.py"
    f.write_text("x = 1\n")
    tools = tools_for(root)
    assert "x = 1" in (await run(tools, "read_file", path="a.py")).content
    f.write_text("x = 1\ny = 2\n")  # someone else changes it
    r = await run(tools, "edit_file", path="a.py", old_string="x = 1", new_string="x = 9")
    assert r.is_error and r.content.startswith("a.py changed since you last read it (it changed on disk)")
    r = await run(tools, "write_file", path="a.py", content="replaced\n")
    assert r.is_error and "changed since you last read it" in r.content
    assert f.read_text() == "x = 1\ny = 2\n"
    await run(tools, "read_file", path="a.py", offset=2, limit=1)  # a partial read counts as reading it
    r = await run(tools, "edit_file", path="a.py", old_string="x = 1", new_string="x = 9")
    assert not r.is_error, r.content
    # its own change is not a change "since it last read": edit again, then overwrite
    assert not (await run(tools, "edit_file", path="a.py", old_string="y = 2", new_string="y = 3")).is_error
    assert not (await run(tools, "write_file", path="a.py", content="z\n")).is_error
    assert f.read_text() == "z\n"


async def test_files_never_read_can_be_written(root: Path) -> None:
    (root / "a.py").write_text("old\n")
    tools = tools_for(root)
    assert (await run(tools, "write_file", path="a.py", content="new\n")).content == "Overwrote a.py (1 lines, 4 bytes)"
    assert (root / "a.py").read_text() == "new\n"


# --- the tools with an editor -----------------------------------------------------------------


async def test_reads_come_from_open_buffers(root: Path) -> None:
    (root / "a.py").write_text("on disk\n")
    editor = FakeEditor()
    editor.docs[root / "a.py"] = OpenDocument("in the buffer\nunsaved\n", 4)
    tools = tools_for(root, editor)
    r = await run(tools, "read_file", path="a.py")
    assert r.content == "     1\tin the buffer\n     2\tunsaved\n"
    r = await run(tools, "grep", pattern="buffer|disk")
    assert r.content == "a.py:1:in the buffer\n"


async def test_edits_go_to_the_editor_with_the_buffer_version(root: Path) -> None:
    f = root / "a.py"
    f.write_text("a = 1\nb = 1\n")
    editor = FakeEditor()
    editor.docs[f] = OpenDocument("a = 1\nb = 1\nc = 1\n", 7)
    tools = tools_for(root, editor)
    await run(tools, "read_file", path="a.py")
    r = await run(tools, "edit_file", path="a.py", old_string="= 1", new_string="= 2", replace_all=True)
    assert r.content.startswith("Edited a.py: replaced 3 occurrences (first at line 1). The change was applied "
                                "in the editor's buffer and is not saved to disk yet")
    [edit] = editor.edits
    assert edit["version"] == 7 and edit["label"] == "agent: edit a.py" and not edit["create"]
    assert edit["changes"] == [TextChange(2, 5, "= 2"), TextChange(8, 11, "= 2"), TextChange(14, 17, "= 2")]
    assert f.read_text() == "a = 1\nb = 1\n"
    # the user types: the next edit is refused before it reaches the editor
    editor.docs[f] = OpenDocument("a = 2\nb = 2\nc = 2\nd = 1\n", 9)
    r = await run(tools, "edit_file", path="a.py", old_string="a = 2", new_string="a = 3")
    assert r.is_error and "(the user edited it in the editor)" in r.content and len(editor.edits) == 1
    # write_file of a new file: created through the editor
    r = await run(tools, "write_file", path="new.py", content="n\n")
    assert r.content.startswith("Created new.py (1 lines, 2 bytes). The change was applied in the editor")
    assert editor.edits[-1]["create"] and editor.edits[-1]["changes"] == [TextChange(0, 0, "n\n")]
    assert not (root / "new.py").exists()


async def test_refused_edits_and_editors_that_cannot_apply(root: Path) -> None:
    f = root / "a.py"
    f.write_text("a = 1\n")
    editor = FakeEditor()
    editor.answer = EditOutcome(False, "rejected by the user")
    tools = tools_for(root, editor)
    r = await run(tools, "edit_file", path="a.py", old_string="a = 1", new_string="a = 2")
    assert r.is_error and "did not apply the change to a.py (applied=false; failureReason: rejected by the user)" \
        in r.content
    assert f.read_text() == "a = 1\n"
    # an editor that cannot create files: new files go to disk, edits still to the editor
    editor = FakeEditor(can_create=False)
    tools = tools_for(root, editor)
    assert (await run(tools, "write_file", path="b.py", content="b\n")).content == "Created b.py (1 lines, 2 bytes)"
    assert (root / "b.py").read_text() == "b\n" and editor.edits == []
    # an editor without applyEdit: the open buffer is what is edited, the result goes to disk
    editor = FakeEditor(can_apply=False)
    editor.docs[f] = OpenDocument("a = 1\n# unsaved\n", 2)
    tools = tools_for(root, editor)
    r = await run(tools, "edit_file", path="a.py", old_string="a = 1", new_string="a = 2")
    assert r.content == "Edited a.py: replaced 1 occurrence (at line 1)"
    assert f.read_text() == "a = 2\n# unsaved\n"


async def test_files_that_are_not_plain_text_stay_on_disk(root: Path) -> None:
    (root / "latin1.txt").write_bytes(b"caf\xe9 = 1\n")
    editor = FakeEditor()
    tools = tools_for(root, editor)
    r = await run(tools, "edit_file", path="latin1.txt", old_string="= 1", new_string="= 2")
    assert not r.is_error and editor.edits == []
    assert (root / "latin1.txt").read_bytes() == b"caf\xe9 = 2\n"
