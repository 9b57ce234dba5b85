"""``read_file``: numbered lines of a text file, from the editor's buffer when it is open."""

from __future__ import annotations

import hashlib
import io
import os
import threading
from typing import Any

from agent_ls.agent.builtin_tools.base import (
    BINARY_SNIFF_BYTES,
    BuiltinTool,
    capped_result,
    clip_line,
    in_thread,
    is_binary,
    open_regular,
)
from agent_ls.agent.editor.editor_files import encode_text
from agent_ls.core.tools import Capability, ToolResult

READ_DEFAULT_LIMIT = 2000
"""Lines ``read_file`` returns when no ``limit`` is given."""
MAX_LINE_CHARS = 2000
"""Longer lines are cut (with a marker) by ``read_file``."""

class ReadFileTool(BuiltinTool):
    _name = "read_file"
    _description = (
        "Read a text file in the workspace. Returns numbered lines (`cat -n` style: line "
        "number, tab, text). Relative paths are taken from the first workspace root. By "
        f"default up to {READ_DEFAULT_LIMIT} lines from the start; use `offset` (1-based first "
        "line) and `limit` (number of lines) to read other parts of large files. Lines longer "
        f"than {MAX_LINE_CHARS} characters are cut. Binary files are refused. A file open in the "
        "user's editor is read from the editor (unsaved changes included)."
    )
    _properties = {
        "path": {"type": "string", "description": "File to read, relative to the workspace root or absolute."},
        "offset": {
            "type": "integer",
            "minimum": 1,
            "description": "1-based number of the first line to return (default 1).",
        },
        "limit": {
            "type": "integer",
            "minimum": 1,
            "description": f"Maximum number of lines to return (default {READ_DEFAULT_LIMIT}).",
        },
    }
    _required = ["path"]
    _capability = Capability.READ

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        path = self.workspace.resolve(args["path"])
        offset: int = args.get("offset", 1)
        limit: int = args.get("limit", READ_DEFAULT_LIMIT)
        shown = self.workspace.display(path)
        budget = self.output_cap_chars if self.output_cap_chars > 0 else 1 << 62
        doc = self.files.open_document(path)

        def work(stop: threading.Event) -> ToolResult:
            if doc is None:
                if path.is_dir():
                    return ToolResult.error(f"{shown} is a directory, not a file (use glob to list files)")
                if not path.exists():
                    return ToolResult.error(f"File not found: {shown}")
            digest = hashlib.sha256()
            source = open_regular(self.workspace, path) if doc is None else io.BytesIO(encode_text(doc.text))
            with source as f:
                sample = f.read(BINARY_SNIFF_BYTES)
                if doc is None and is_binary(sample):
                    size = os.fstat(f.fileno()).st_size
                    return ToolResult.error(
                        f"{shown} is a binary file ({size} bytes); read_file only reads text files"
                    )
                f.seek(0)
                out: list[str] = []
                used = 0
                total = 0
                last_shown = 0
                stopped_for_size = False
                for total, raw in enumerate(f, 1):  # noqa: B007 - total is used after the loop
                    if stop.is_set():
                        break
                    digest.update(raw)
                    if total < offset or stopped_for_size or total >= offset + limit:
                        continue
                    text = raw.decode("utf-8", errors="replace").rstrip("\n").rstrip("\r")
                    line = f"{total:>6}\t{clip_line(text, MAX_LINE_CHARS)}\n"
                    if out and used + len(line) > budget:
                        stopped_for_size = True
                        continue
                    out.append(line)
                    used += len(line)
                    last_shown = total
                else:
                    self.files.saw(path, digest.hexdigest(), doc)  # the whole file went through
            if total == 0:
                return ToolResult(content=f"{shown} is empty (0 lines)")
            if offset > total:
                return ToolResult.error(f"offset {offset} is past the end of {shown}, which has {total} lines")
            body = "".join(out)
            if last_shown < total:
                reason = " (output size limit reached)" if stopped_for_size else ""
                body += (
                    f"[... showing lines {offset}-{last_shown} of {total}{reason}; "
                    f"use offset={last_shown + 1} to read more ...]\n"
                )
            return capped_result(body, self.output_cap_chars)

        return await in_thread(work)
