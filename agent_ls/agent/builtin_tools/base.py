"""What every built-in tool shares: the plumbing class (spec, argument validation, file errors
turned into results), reading regular files safely, running file work in a worker thread, and
cutting long output with an explicit marker.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from agent_ls.agent.editor.editor_files import FileAccess
from agent_ls.agent.editor.file_writes import NotRegularFile
from agent_ls.agent.tools.arguments import validate_arguments
from agent_ls.agent.workspace import Workspace, WorkspacePathError
from agent_ls.core.files import ensure_regular
from agent_ls.core.tools import Capability, ToolResult, ToolSpec, cap_text

DEFAULT_OUTPUT_CAP_CHARS = 30_000
"""Default cap on the text of one tool result."""
BINARY_SNIFF_BYTES = 8192

_T = TypeVar("_T")


def cut_marker(cut: int) -> str:
    return f"[... {cut} characters cut ...]"


def capped_result(text: str, cap: int, *, is_error: bool = False) -> ToolResult:
    capped, cut = cap_text(text, cap)
    return ToolResult(content=capped, is_error=is_error, truncated_chars=cut)


def is_binary(sample: bytes) -> bool:
    return b"\x00" in sample


def clip_line(line: str, limit: int) -> str:
    if len(line) <= limit:
        return line
    return line[:limit] + f" {cut_marker(len(line) - limit)}"


def open_regular(
    workspace: Workspace,
    path: Path,
    *,
    opener: Callable[[Path, int, int], int] | None = None,
) -> BinaryIO:
    """Open a regular file at an already resolved path for reading, never through a symlink
    or on a FIFO. (Writes go through :func:`~agent_ls.agent.editor.file_writes.atomic_write`.)

    The open goes through :meth:`Workspace.open_file`: every directory from the root down
    and the file itself are opened relative to their parent with ``O_NOFOLLOW``, so a
    symlink swapped in after :meth:`Workspace.resolve` raises
    :class:`~agent_ls.agent.workspace.SymlinkInPath` instead of leading outside.
    ``opener`` (from :meth:`Workspace.file_opener`, for reading many files) replaces
    ``open_file``.

    The file is opened with ``O_NONBLOCK`` (so a FIFO with no writer does not hang the worker
    thread) and checked with ``fstat`` on the open descriptor; anything but a regular file
    raises :class:`NotRegularFile`.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0)
    fd = opener(path, flags, 0o666) if opener is not None else workspace.open_file(path, flags, 0o666)
    try:
        ensure_regular(fd, path)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(workspace: Workspace, path: Path) -> bytes:
    with open_regular(workspace, path) as f:
        return f.read()


async def in_thread(fn: Callable[[threading.Event], _T]) -> _T:
    """Run ``fn(stop)`` in a worker thread; ``stop`` is set if the awaiting task is cancelled."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(fn, stop)
    except asyncio.CancelledError:
        stop.set()
        raise


def object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


class BuiltinTool:
    """Common plumbing: spec, argument validation, turning file errors into results."""

    _name: str
    _description: str
    _properties: dict[str, Any]
    _required: list[str]
    _capability: Capability

    def __init__(
        self,
        workspace: Workspace,
        *,
        output_cap_chars: int = DEFAULT_OUTPUT_CAP_CHARS,
        files: FileAccess | None = None,
    ) -> None:
        self.workspace = workspace
        self.output_cap_chars = output_cap_chars
        self.files = files if files is not None else FileAccess(workspace)
        """Open buffers, edits through the editor, what the agent has seen (shared by a set)."""
        self._spec = ToolSpec(
            name=self._name,
            description=self._description,
            input_schema=object_schema(self._properties, self._required),
            capability=self._capability,
        )

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self._name}>"

    async def call(self, arguments: dict[str, Any]) -> ToolResult:
        args = validate_arguments(self._spec, arguments)
        if isinstance(args, str):
            return ToolResult.error(args)
        try:
            return await self._run(args)
        except WorkspacePathError as exc:
            return ToolResult.error(str(exc))
        except NotRegularFile as exc:
            return ToolResult.error(
                f"{self._show(exc.filename)} is {exc.strerror}, not a regular file; {self._name} only "
                "works on regular files"
            )
        except FileNotFoundError as exc:
            return ToolResult.error(f"Not found: {self._show(exc.filename)}")
        except IsADirectoryError as exc:
            return ToolResult.error(f"{self._show(exc.filename)} is a directory, not a file")
        except NotADirectoryError as exc:
            return ToolResult.error(f"A component of {self._show(exc.filename)} is not a directory")
        except PermissionError as exc:
            return ToolResult.error(f"Permission denied: {self._show(exc.filename)}")
        except OSError as exc:
            where = f" ({self._show(exc.filename)})" if exc.filename else ""
            return ToolResult.error(f"{self._name} failed{where}: {exc.strerror or exc}")

    def _show(self, filename: Any) -> str:
        if filename is None:
            return "(unknown path)"
        try:
            return self.workspace.display(Path(os.fsdecode(filename)))
        except (TypeError, ValueError):
            return str(filename)

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        raise NotImplementedError

