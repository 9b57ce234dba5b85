"""``write_file`` and ``edit_file``: whole-file writes and exact string replacement, through
the editor when the file is open there, refusing stale edits (:mod:`agent_ls.agent.editor.editor_files`)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from agent_ls.agent.builtin_tools.base import (
    BINARY_SNIFF_BYTES,
    BuiltinTool,
    in_thread,
    is_binary,
    read_regular,
)
from agent_ls.agent.editor.editor_files import TextChange, encode_text, minimal_change
from agent_ls.agent.workspace import Workspace
from agent_ls.core.tools import Capability, ToolResult


class WriteFileTool(BuiltinTool):
    _name = "write_file"
    _description = (
        "Create or overwrite a text file in the workspace with the given content (UTF-8, "
        "written exactly as given). Parent directories are created as needed. Prefer "
        "edit_file for changing part of an existing file."
    )
    _properties = {
        "path": {"type": "string", "description": "File to write, relative to the workspace root or absolute."},
        "content": {"type": "string", "description": "The complete new content of the file."},
    }
    _required = ["path", "content"]
    _capability = Capability.WRITE

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        path = self.workspace.resolve(args["path"])
        content: str = args["content"]
        shown = self.workspace.display(path)
        doc = self.files.open_document(path)
        base: str | None = doc.text if doc is not None else None
        if doc is None:
            is_dir = f"{shown} is a directory; give a file path"
            current = await in_thread(lambda stop: _read_existing(self.workspace, path, is_dir))
            if isinstance(current, ToolResult):
                return current
            if current is not None:
                base = current.decode("utf-8", errors="surrogateescape")
        if base is not None and (stale := self.files.stale(path, base, doc)):
            return ToolResult.error(stale)
        change = minimal_change(base, content) if base is not None else TextChange(0, 0, content)
        verb = "Overwrote" if base is not None else "Created"
        written = await self.files.write(path, base=base, new_text=content, changes=[change], doc=doc,
                                         label=f"agent: {verb.lower()} {shown}", create_parents=True)
        if isinstance(written, str):
            return ToolResult.error(written)
        size = len(encode_text(content))
        lines = content.count("\n") + (1 if content and not content.endswith("\n") else 0)
        return ToolResult(content=f"{verb} {shown} ({lines} lines, {size} bytes){written.note}")


def _read_existing(workspace: Workspace, path: Path, is_dir: str) -> bytes | None | ToolResult:
    """The bytes of the file at ``path``, ``None`` if there is none, or the error ``is_dir``."""
    if path.is_dir():
        return ToolResult.error(is_dir)
    if not path.exists() and not path.is_symlink():
        return None
    return read_regular(workspace, path)


class EditFileTool(BuiltinTool):
    _name = "edit_file"
    _description = (
        "Edit a text file by exact string replacement: `old_string` is replaced by "
        "`new_string`. `old_string` must match the file exactly (whitespace and indentation "
        "included) and must occur exactly once, unless `replace_all` is true; include enough "
        "surrounding lines to make it unique. Read the file first. To create a file use "
        "write_file."
    )
    _properties = {
        "path": {"type": "string", "description": "File to edit, relative to the workspace root or absolute."},
        "old_string": {"type": "string", "description": "The exact text to replace (not empty)."},
        "new_string": {"type": "string", "description": "The replacement text (may be empty to delete)."},
        "replace_all": {
            "type": "boolean",
            "description": "Replace every occurrence instead of requiring exactly one (default false).",
        },
    }
    _required = ["path", "old_string", "new_string"]
    _capability = Capability.WRITE

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        path = self.workspace.resolve(args["path"])
        old: str = args["old_string"]
        new: str = args["new_string"]
        replace_all: bool = args.get("replace_all", False)
        shown = self.workspace.display(path)
        if old == "":
            return ToolResult.error("old_string must not be empty (use write_file to create or overwrite a file)")
        if old == new:
            return ToolResult.error("old_string and new_string are identical; nothing to change")

        doc = self.files.open_document(path)
        if doc is not None:
            text = doc.text
        else:
            is_dir = f"{shown} is a directory, not a file"
            data = await in_thread(lambda stop: _read_existing(self.workspace, path, is_dir))
            if isinstance(data, ToolResult):
                return data
            if data is None:
                return ToolResult.error(f"File not found: {shown} (use write_file to create it)")
            if is_binary(data[:BINARY_SNIFF_BYTES]):
                return ToolResult.error(f"{shown} is a binary file; edit_file only edits text files")
            # surrogateescape round-trips bytes that are not valid UTF-8 unchanged.
            text = data.decode("utf-8", errors="surrogateescape")
        if stale := self.files.stale(path, text, doc):
            return ToolResult.error(stale)
        o, n = old, new
        count = text.count(o)
        if count == 0 and "\r\n" in text and "\n" in old:
            # The model writes "\n"; the file uses CRLF line ends.
            o = old.replace("\r\n", "\n").replace("\n", "\r\n")
            n = new.replace("\r\n", "\n").replace("\n", "\r\n")
            count = text.count(o)
        if count == 0:
            return ToolResult.error(
                f"old_string was not found in {shown}; it must match exactly, including "
                "whitespace and indentation (read the file again to see its current content)"
            )
        if count > 1 and not replace_all:
            return ToolResult.error(
                f"old_string is not unique in {shown}: it occurs {count} times; include more "
                "surrounding context to pick one occurrence, or set replace_all to true"
            )
        changes: list[TextChange] = []
        at = text.find(o)
        while at >= 0:  # the occurrences str.replace replaces: left to right, not overlapping
            changes.append(TextChange(at, at + len(o), n))
            if not replace_all:
                break
            at = text.find(o, at + len(o))
        first_line = text.count("\n", 0, changes[0].start) + 1
        updated = text.replace(o, n) if replace_all else text.replace(o, n, 1)
        written = await self.files.write(path, base=text, new_text=updated, changes=changes, doc=doc,
                                         label=f"agent: edit {shown}")
        if isinstance(written, str):
            return ToolResult.error(written)
        replaced = len(changes)
        plural = "s" if replaced != 1 else ""
        where = f"first at line {first_line}" if replaced > 1 else f"at line {first_line}"
        return ToolResult(content=f"Edited {shown}: replaced {replaced} occurrence{plural} ({where}){written.note}")
