"""The ACP flavour of the file tools' editor side (:class:`agent_ls.agent.editor.editor_files.EditorFiles`).

When the client advertises ``fs.readTextFile``, the file tools read through the editor
(``fs/read_text_file``: its buffers, unsaved changes included); when it advertises
``fs.writeTextFile``, their changes go to the editor (``fs/write_text_file``) instead of the
disk. Without those capabilities everything stays on the disk, as in ``agent-ls chat``.

``EditorFiles.open_text`` is synchronous (the language server holds the buffers), while ACP
asks the client for a file. So the file tools are wrapped (:class:`EditorReadTool`): before a
call, the file it names is fetched from the editor and held for the duration of the call, and
the tool sees it as an open document. A file the editor cannot read (it does not exist) is
read from the disk as usual; so is one it answers with ``""`` for while there is no such file
on the disk (some clients answer a missing file with empty text: it is not an empty file).

Whether a write reached the disk is not the protocol's to say (toad, for one, saves at once;
another client may keep it in a buffer): after ``fs/write_text_file`` the disk is checked, and
the model is told the file is not saved yet only when it is not.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from agent_ls.agent.editor.editor_files import EditOutcome, OpenDocument, TextChange, encode_text
from agent_ls.agent.workspace import Workspace
from agent_ls.core.tools import Tool, ToolResult, ToolSpec

log = logging.getLogger("agent_ls.acp")

FILE_TOOLS = ("read_file", "edit_file", "write_file")
PREVIEW_BYTES = 2 * 1024 * 1024
"""Larger files get no whole-file diff in the tool call (the edited text only)."""


def _disk_text(path: Path) -> str | None:
    """The file's text on the disk (None: missing, not a regular file, too large or binary)."""
    try:
        if not path.is_file() or path.stat().st_size > PREVIEW_BYTES:
            return None
        data = path.read_bytes()
    except OSError:
        return None
    if b"\x00" in data[:8192]:
        return None
    return data.decode("utf-8", errors="surrogateescape")


def _saved(path: Path, text: str) -> bool:
    try:
        return path.read_bytes() == encode_text(text)
    except OSError:
        return False


class AcpEditorFiles:
    """Files through the ACP client's ``fs/*`` methods, as far as it advertises them."""

    def __init__(self, conn: Any, session_id: str, *, can_read: bool, can_write: bool) -> None:
        self.conn = conn
        self.session_id = session_id
        self.can_read = can_read
        self.can_write = can_write
        self._held: dict[Path, OpenDocument] = {}
        self._holds: dict[Path, int] = {}

    # reading -----------------------------------------------------------------------------
    async def hold(self, path: Path) -> None:
        """Fetch ``path`` from the editor and hold it until :meth:`release`."""
        self._holds[path] = self._holds.get(path, 0) + 1
        if not self.can_read or self._holds[path] > 1:
            return
        content = await self._client_text(path)
        if content is not None and path in self._holds:
            self._held[path] = OpenDocument(content, None)

    async def _client_text(self, path: Path) -> str | None:
        """The editor's text of ``path``; None when it cannot give it (the disk decides)."""
        try:
            response = await self.conn.read_text_file(session_id=self.session_id, path=str(path))
        except asyncio.CancelledError:
            raise
        except Exception as e:  # e.g. the file does not exist: the tool reads the disk
            log.debug("fs/read_text_file %s: %s", path, e)
            return None
        content: str = response.content
        if content == "" and not await asyncio.to_thread(path.exists):
            log.debug("fs/read_text_file %s: empty text for a file that does not exist: missing", path)
            return None
        return content

    async def current_text(self, path: Path) -> str | None:
        """The text the file tools would start from (the editor's, else the disk's; None: no
        such file, or not one to show), for a tool call's whole-file diff."""
        if path in self._held:
            return self._held[path].text
        if self.can_read:
            content = await self._client_text(path)
            if content is not None:
                return content if len(content) <= PREVIEW_BYTES else None
        return await asyncio.to_thread(_disk_text, path)

    def release(self, path: Path) -> None:
        n = self._holds.get(path, 0) - 1
        if n > 0:
            self._holds[path] = n
            return
        self._holds.pop(path, None)
        self._held.pop(path, None)

    def open_text(self, path: Path) -> OpenDocument | None:
        return self._held.get(path)

    def open_documents(self) -> Mapping[Path, OpenDocument]:
        return dict(self._held)

    # writing -----------------------------------------------------------------------------
    def can_apply(self, *, create: bool) -> bool:
        return self.can_write

    async def apply_edit(self, path: Path, *, base: str, changes: Sequence[TextChange], new_text: str,
                         version: int | None, create: bool, label: str) -> EditOutcome:
        try:
            await self.conn.write_text_file(session_id=self.session_id, path=str(path), content=new_text)
        except asyncio.CancelledError:
            raise
        except Exception as e:
            log.warning("fs/write_text_file %s failed: %s", path, e)
            return EditOutcome(False, f"the editor answered with an error: {e}")
        if path in self._held:
            self._held[path] = OpenDocument(new_text, None)
        return EditOutcome(True, saved=await asyncio.to_thread(_saved, path, new_text))


class EditorReadTool:
    """A file tool whose file is fetched from the editor for the duration of each call."""

    def __init__(self, tool: Tool, files: AcpEditorFiles, workspace: Workspace) -> None:
        self._tool = tool
        self._files = files
        self._workspace = workspace

    @property
    def spec(self) -> ToolSpec:
        return self._tool.spec

    async def call(self, arguments: dict[str, Any]) -> ToolResult:
        raw = arguments.get("path")
        path: Path | None = None
        if isinstance(raw, str) and raw:
            try:
                path = self._workspace.resolve(raw)
            except Exception:  # the tool reports the bad path itself
                path = None
        if path is None:
            return await self._tool.call(arguments)
        await self._files.hold(path)
        try:
            return await self._tool.call(arguments)
        finally:
            self._files.release(path)


def with_editor_files(tools: Sequence[Tool], files: AcpEditorFiles, workspace: Workspace) -> list[Tool]:
    if not files.can_read:
        return list(tools)
    return [EditorReadTool(t, files, workspace) if t.spec.name in FILE_TOOLS else t for t in tools]
