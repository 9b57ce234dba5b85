"""The agent's file tools inside the language server (issue 16, items 1 and 2).

read_file (and grep) see the editor's buffer, unsaved changes included; edit_file and
write_file send ``workspace/applyEdit`` when the client can apply edits, so the change lands
in the buffer and the disk is untouched until the user saves; an edit computed on content
the user has changed since the agent read it is refused; clients without applyEdit get an
atomic disk write.

The test editor keeps real buffers (:class:`Buffers`): it applies the workspace edits it
receives (refusing one for a version it no longer has, like VS Code) and syncs every change
to the server with didOpen / didChange, like a real client.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types as lsp
from pygls.workspace import TextDocument

from tests.llm.scripted_server import Turn, respond, text, tool_calls
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor, plain

pytestmark = pytest.mark.e2e

FULL_EDITS = lsp.WorkspaceEditClientCapabilities(
    document_changes=True,
    resource_operations=[lsp.ResourceOperationKind.Create, lsp.ResourceOperationKind.Rename,
                         lsp.ResourceOperationKind.Delete],
    failure_handling=lsp.FailureHandlingKind.TextOnlyTransactional,
)


class Buffers:
    """The editor's open documents: applies workspace edits, syncs them like a real client."""

    def __init__(self, ed: Editor) -> None:
        self.ed = ed
        self.docs: dict[str, TextDocument] = {}
        self.refuse: str | None = None
        """When set, every edit is answered applied=false with this reason."""

    def open(self, path: Path, content: str) -> str:
        uri = self.ed.open_document(path, content)
        self.docs[uri] = TextDocument(uri, content, version=1)
        return uri

    def type(self, uri: str, content: str, *, sync: bool = True) -> None:
        """The user changes the buffer (``sync=False``: the didChange is not sent yet)."""
        doc = self.docs[uri]
        doc.apply_change(lsp.TextDocumentContentChangeWholeDocument(text=content))
        doc.version = (doc.version or 0) + 1
        if sync:
            self.sync(uri)

    def sync(self, uri: str) -> None:
        doc = self.docs[uri]
        self.ed.client.text_document_did_change(lsp.DidChangeTextDocumentParams(
            text_document=lsp.VersionedTextDocumentIdentifier(uri=uri, version=doc.version or 0),
            content_changes=[lsp.TextDocumentContentChangeWholeDocument(text=doc.source)]))

    def text(self, uri: str) -> str:
        return self.docs[uri].source

    def apply(self, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        if self.refuse is not None:
            return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason=self.refuse)
        edit = params.edit
        ops: list[Any] = list(edit.document_changes or [])
        for uri, edits in (edit.changes or {}).items():
            ops.append(lsp.TextDocumentEdit(
                text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=None), edits=edits))
        # check everything first (transactional), then apply
        created: set[str] = set()
        for op in ops:
            if isinstance(op, lsp.CreateFile):
                if op.uri in self.docs or Path(op.uri.removeprefix("file://")).exists():
                    return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason=f"{op.uri} exists")
                created.add(op.uri)
            elif isinstance(op, lsp.TextDocumentEdit):
                doc = self.docs.get(op.text_document.uri)
                version = op.text_document.version
                if version is not None and (doc is None or doc.version != version):
                    have = doc.version if doc else None
                    return lsp.ApplyWorkspaceEditResult(
                        applied=False, failure_reason=f"version mismatch: edit for {version}, document at {have}")
            else:
                return lsp.ApplyWorkspaceEditResult(applied=False, failure_reason=f"unsupported {op!r}")
        opened: list[str] = []
        for op in ops:
            if isinstance(op, lsp.CreateFile):
                self.docs[op.uri] = TextDocument(op.uri, "", version=0)
                opened.append(op.uri)
                continue
            uri = op.text_document.uri
            if uri not in self.docs:  # the editor loads the file into a (background) buffer
                self.docs[uri] = TextDocument(uri, Path(uri.removeprefix("file://")).read_text(), version=0)
                opened.append(uri)
            doc = self.docs[uri]
            offsets = [(doc.offset_at_position(e.range.start), doc.offset_at_position(e.range.end), e.new_text)
                       for e in op.edits]
            source = doc.source
            for start, end, new in sorted(offsets, reverse=True):
                source = source[:start] + new + source[end:]
            doc.apply_change(lsp.TextDocumentContentChangeWholeDocument(text=source))
            if uri not in opened:
                doc.version = (doc.version or 0) + 1
                self.sync(uri)
        for uri in opened:
            doc = self.docs[uri]
            doc.version = 1
            self.ed.client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=lsp.TextDocumentItem(
                uri=uri, language_id="python", version=1, text=doc.source)))
        return lsp.ApplyWorkspaceEditResult(applied=True)


async def start(setup: Setup, *, apply_edit: bool = True,
                workspace_edit: lsp.WorkspaceEditClientCapabilities | None = FULL_EDITS) -> tuple[Editor, Buffers]:
    holder: list[Buffers] = []

    def configure(ed: Editor) -> None:
        ed.apply_edit_capable = apply_edit
        ed.workspace_edit = workspace_edit
        buffers = Buffers(ed)
        ed.apply_answer = buffers.apply
        holder.append(buffers)

    ed = await open_editor(setup, configure=configure)
    return ed, holder[0]


@pytest.fixture
async def coder(setup: Setup) -> AsyncIterator[tuple[Editor, Buffers]]:
    ed, buffers = await start(setup)
    yield ed, buffers
    await close_editor(ed)


def results(setup: Setup) -> list[str]:
    """Every tool result the model was sent, in order (from its last request)."""
    return [m["content"] for m in setup.llm.requests[-1].body["messages"] if m["role"] == "tool"]


def edits_sent(ed: Editor) -> list[dict[str, Any]]:
    return [plain(p) for p in ed.applied_edits]


async def test_read_file_and_grep_see_the_unsaved_buffer(coder: tuple[Editor, Buffers], setup: Setup) -> None:
    ed, buffers = coder
    path = setup.ws / "app.py"
    path.write_text("x = 1\n")
    uri = buffers.open(path, "x = 1\n")
    buffers.type(uri, "x = 2  # typed, not saved\n")
    setup.llm.script(
        tool_calls([("read_file", {"path": "app.py"}), ("grep", {"pattern": "not saved|x = 1"})]),
        text("seen"),
    )
    result = await ed.request("agent/prompt", {"text": "look"})
    assert result["stopReason"] == "end"
    read, grep = results(setup)
    assert "x = 2  # typed, not saved" in read and "x = 1" not in read
    assert grep.strip() == "app.py:1:x = 2  # typed, not saved"
    assert path.read_text() == "x = 1\n"


async def test_edit_file_goes_to_the_editor_and_not_to_disk(coder: tuple[Editor, Buffers], setup: Setup) -> None:
    ed, buffers = coder
    path = setup.ws / "calc.py"
    on_disk = "def f():\n    return 1\n"
    path.write_text(on_disk)
    uri = buffers.open(path, on_disk)
    buffers.type(uri, on_disk + "# the user's unsaved note\n")  # version 2
    setup.llm.script(
        tool_calls([("read_file", {"path": "calc.py"})]),
        tool_calls([("edit_file", {"path": "calc.py", "old_string": "return 1", "new_string": "return 2"})]),
        # a second edit right after the first, without reading again: the agent's own change is
        # not "a change since it last read"
        tool_calls([("edit_file", {"path": "calc.py", "old_string": "return 2", "new_string": "return 3"})]),
        text("done"),
    )
    result = await ed.request("agent/prompt", {"text": "bump it"})
    assert result["stopReason"] == "end"
    first, second = edits_sent(ed)
    assert first["label"] == "agent: edit calc.py"
    assert first["edit"]["documentChanges"] == [{
        "textDocument": {"uri": uri, "version": 2},
        "edits": [{"range": {"start": {"line": 1, "character": 4}, "end": {"line": 1, "character": 12}},
                   "newText": "return 2"}],
    }]
    assert second["edit"]["documentChanges"][0]["textDocument"] == {"uri": uri, "version": 3}
    # the user's unsaved note is kept, the disk is untouched
    assert buffers.text(uri) == "def f():\n    return 3\n# the user's unsaved note\n"
    assert path.read_text() == on_disk
    tool_results = results(setup)
    assert tool_results[1].startswith("Edited calc.py: replaced 1 occurrence (at line 2)")
    assert "not saved to disk yet" in tool_results[1]
    assert tool_results[2].startswith("Edited calc.py") and "changed since" not in tool_results[2]


async def test_a_buffer_changed_after_the_read_refuses_the_edit(coder: tuple[Editor, Buffers], setup: Setup) -> None:
    ed, buffers = coder
    path = setup.ws / "notes.py"
    path.write_text("a = 1\nb = 2\n")
    uri = buffers.open(path, "a = 1\nb = 2\n")
    loop = asyncio.get_running_loop()

    def user_types_then(turn: Turn) -> Callable[[dict[str, Any]], Turn]:
        def fn(_body: dict[str, Any]) -> Turn:
            # Runs in the LLM server's thread after the agent read the file: the user types in
            # the buffer before the model's edit arrives.
            async def typing() -> None:
                buffers.type(uri, "a = 1\nb = 20  # the user's change\n")

            asyncio.run_coroutine_threadsafe(typing(), loop).result(10)
            return turn
        return fn

    edit = ("edit_file", {"path": "notes.py", "old_string": "a = 1", "new_string": "a = 100"})
    setup.llm.script(
        tool_calls([("read_file", {"path": "notes.py"})]),
        respond(user_types_then(tool_calls([edit]))),
        tool_calls([("read_file", {"path": "notes.py"})]),
        tool_calls([edit]),
        text("done"),
    )
    result = await ed.request("agent/prompt", {"text": "change a"})
    assert result["stopReason"] == "end"
    _read, refused, reread, edited = results(setup)
    assert refused.startswith("Error") and (
        "notes.py changed since you last read it (the user edited it in the editor); nothing was written. "
        "Read it again" in refused)
    assert "b = 20  # the user's change" in reread
    assert edited.startswith("Edited notes.py")
    assert len(ed.applied_edits) == 1  # the refused edit never reached the editor
    assert buffers.text(uri) == "a = 100\nb = 20  # the user's change\n"
    assert path.read_text() == "a = 1\nb = 2\n"


async def test_edits_the_editor_does_not_apply_are_reported(coder: tuple[Editor, Buffers], setup: Setup) -> None:
    ed, buffers = coder
    path = setup.ws / "m.py"
    path.write_text("value = 1\n")
    uri = buffers.open(path, "value = 1\n")
    setup.llm.script(
        tool_calls([("edit_file", {"path": "m.py", "old_string": "value = 1", "new_string": "value = 2"})]),
        text("hm"),
    )
    buffers.refuse = "The user rejected the change"
    await ed.request("agent/prompt", {"text": "edit"})
    [refused] = results(setup)
    assert refused.startswith("Error") and "did not apply the change to m.py (applied=false; failureReason: " \
        "The user rejected the change). The file is unchanged." in refused
    finished = [e for e in ed.session_events() if e["type"] == "tool_call_finished"][-1]
    assert finished["isError"] is True

    # The user types and the editor has not told the server yet: the edit names version 1, the
    # editor is at 2 and refuses it (a versioned TextDocumentEdit).
    buffers.refuse = None
    buffers.type(uri, "value = 1  # typing\n", sync=False)
    setup.llm.script(
        tool_calls([("edit_file", {"path": "m.py", "old_string": "value = 1", "new_string": "value = 2"})]),
        text("hm"),
    )
    await ed.request("agent/prompt", {"text": "edit again"})
    [refused] = results(setup)[-1:]
    assert "applied=false; failureReason: version mismatch: edit for 1, document at 2" in refused
    assert buffers.text(uri) == "value = 1  # typing\n" and path.read_text() == "value = 1\n"


async def test_write_file_creates_a_new_file_in_the_editor(coder: tuple[Editor, Buffers], setup: Setup) -> None:
    ed, buffers = coder
    content = "print('hello')\n"
    setup.llm.script(
        tool_calls([("write_file", {"path": "pkg/new_mod.py", "content": content})]),
        tool_calls([("read_file", {"path": "pkg/new_mod.py"})]),
        text("created"),
    )
    result = await ed.request("agent/prompt", {"text": "make it"})
    assert result["stopReason"] == "end"
    uri = (setup.ws / "pkg" / "new_mod.py").resolve().as_uri()
    [sent] = edits_sent(ed)
    assert sent["label"] == "agent: created pkg/new_mod.py"
    assert sent["edit"]["documentChanges"] == [
        {"kind": "create", "uri": uri, "options": {"overwrite": False, "ignoreIfExists": False}},
        {"textDocument": {"uri": uri, "version": None},
         "edits": [{"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}},
                    "newText": content}]},
    ]
    wrote, read = results(setup)
    assert wrote.startswith("Created pkg/new_mod.py (1 lines") and "not saved to disk yet" in wrote
    assert "print('hello')" in read  # from the editor's new buffer
    assert buffers.text(uri) == content
    assert not (setup.ws / "pkg" / "new_mod.py").exists()


async def test_a_client_without_apply_edit_gets_an_atomic_disk_write(setup: Setup) -> None:
    ed, buffers = await start(setup, apply_edit=False, workspace_edit=None)
    try:
        path = setup.ws / "d.py"
        path.write_text("n = 1\n")
        inode = path.stat().st_ino
        buffers.open(path, "n = 1\n")
        setup.llm.script(
            tool_calls([("read_file", {"path": "d.py"})]),
            tool_calls([("edit_file", {"path": "d.py", "old_string": "n = 1", "new_string": "n = 2"})]),
            tool_calls([("write_file", {"path": "sub/e.py", "content": "e = 1\n"})]),
            text("done"),
        )
        result = await ed.request("agent/prompt", {"text": "edit on disk"})
        assert result["stopReason"] == "end"
        _read, edited, wrote = results(setup)
        assert edited == "Edited d.py: replaced 1 occurrence (at line 1)"
        assert wrote == "Created sub/e.py (1 lines, 6 bytes)"
        assert ed.applied_edits == []
        assert path.read_text() == "n = 2\n"
        assert path.stat().st_ino != inode  # replaced by a new file (written aside, then renamed)
        assert (setup.ws / "sub" / "e.py").read_text() == "e = 1\n"
        assert [p.name for p in setup.ws.iterdir() if ".tmp" in p.name] == []
    finally:
        await close_editor(ed)


async def test_a_client_with_plain_changes_only(setup: Setup) -> None:
    """applyEdit without documentChanges: edits as ``changes``; new files on disk."""
    ed, buffers = await start(setup, workspace_edit=None)
    try:
        path = setup.ws / "p.py"
        path.write_text("p = 1\n")
        setup.llm.script(
            tool_calls([("edit_file", {"path": "p.py", "old_string": "p = 1", "new_string": "p = 2"})]),
            tool_calls([("write_file", {"path": "q.py", "content": "q = 1\n"})]),
            text("done"),
        )
        await ed.request("agent/prompt", {"text": "go"})
        uri = path.resolve().as_uri()
        [sent] = edits_sent(ed)
        assert json.dumps(sent["edit"]) == json.dumps({"changes": {uri: [
            {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 5}},
             "newText": "p = 2"}]}})
        assert buffers.text(uri) == "p = 2\n" and path.read_text() == "p = 1\n"
        assert (setup.ws / "q.py").read_text() == "q = 1\n"
    finally:
        await close_editor(ed)


def test_positions_use_lsp_line_ends_and_the_negotiated_encoding() -> None:
    from agent_ls.agent.editor.editor_files import TextChange
    from agent_ls.server.editor.editor_files import text_edits

    base = "a\r\nb\rc\n\U0001f600x = 1\n"
    at = base.index("x")
    change = [TextChange(at, at + 1, "y")]

    def start(encoding: str) -> tuple[int, int]:
        pos = text_edits(base, change, encoding)[0].range.start
        return pos.line, pos.character

    assert start("utf-16") == (3, 2)  # the emoji is two UTF-16 code units
    assert start("utf-8") == (3, 4)
    assert start("utf-32") == (3, 1)
    end = text_edits(base, [TextChange(len(base), len(base), "z")], "utf-16")[0].range.end
    assert (end.line, end.character) == (4, 0)
