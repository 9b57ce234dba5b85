"""The built-in tools: read, write and edit files, glob, grep and bash.

All of them are confined to the :class:`~agent_ls.agent.workspace.Workspace`; ``bash``
runs in the first root (a shell can of course reach further: it is a WRITE tool and goes
through the approval gate). Failures are error results with a message for the model, never
exceptions (except cancellation). File work runs in worker threads so the event loop stays
responsive; long walks stop early when the awaiting task is cancelled.

Each tool caps what it keeps of its output (``output_cap_chars``); whatever is cut is replaced
by an explicit marker such as ``[... 12345 characters cut ...]`` and counted in
:attr:`ToolResult.truncated_chars`. In a session the cap is what the session's output store
can hold, and the session shows the model a page at a time
(:mod:`agent_ls.agent.output_store`, the ``read_output`` tool).
"""

from __future__ import annotations

import asyncio
import codecs
import collections
import contextlib
import errno
import hashlib
import io
import os
import re
import signal
import stat
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, BinaryIO, TypeVar

from agent_ls.agent.arguments import validate_arguments
from agent_ls.agent.editor_files import (
    EditorFiles,
    FileAccess,
    NotRegularFile,
    TextChange,
    encode_text,
    kind_of,
    minimal_change,
)
from agent_ls.agent.output_store import OutputStore, ReadOutputTool
from agent_ls.agent.workspace import Workspace, WorkspacePathError
from agent_ls.config.globs import GlobError, PathGlob
from agent_ls.core.tools import Capability, Tool, ToolResult, ToolSpec, cap_text

DEFAULT_OUTPUT_CAP_CHARS = 30_000
"""Default cap on the text of one tool result."""
DEFAULT_BASH_TIMEOUT = 120.0
"""Default ``bash`` timeout in seconds."""
MAX_BASH_TIMEOUT = 600.0
"""Largest timeout the model may ask for (or the configured default, if larger)."""

READ_DEFAULT_LIMIT = 2000
"""Lines ``read_file`` returns when no ``limit`` is given."""
MAX_LINE_CHARS = 2000
"""Longer lines are cut (with a marker) by ``read_file``."""
GREP_LINE_CHARS = 500
"""Longer matching lines are cut (with a marker) by ``grep``."""
GLOB_MAX_RESULTS = 1000
GREP_MAX_MATCHES = 500
GREP_MAX_FILE_BYTES = 10 * 1024 * 1024
"""``grep`` skips files larger than this."""
BINARY_SNIFF_BYTES = 8192

SKIP_DIRS = frozenset(
    {
        ".git",
        ".hg",
        ".svn",
        "node_modules",
        ".venv",
        "__pycache__",
        ".mypy_cache",
        ".pytest_cache",
        ".ruff_cache",
        ".tox",
    }
)
"""Directories ``glob`` and ``grep`` never descend into (unless given as the ``path``)."""

_DRAIN_SECONDS = 0.5
"""After the shell exits, how long to wait for the end of its output."""

_T = TypeVar("_T")


# --- helpers -----------------------------------------------------------------------------


def cut_marker(cut: int) -> str:
    return f"[... {cut} characters cut ...]"


def _result(text: str, cap: int, *, is_error: bool = False) -> ToolResult:
    capped, cut = cap_text(text, cap)
    return ToolResult(content=capped, is_error=is_error, truncated_chars=cut)


def _is_binary(sample: bytes) -> bool:
    return b"\x00" in sample


def _clip_line(line: str, limit: int) -> str:
    if len(line) <= limit:
        return line
    return line[:limit] + f" {cut_marker(len(line) - limit)}"


def _open_regular(
    workspace: Workspace,
    path: Path,
    *,
    opener: Callable[[Path, int, int], int] | None = None,
) -> BinaryIO:
    """Open a regular file at an already resolved path for reading, never through a symlink
    or on a FIFO. (Writes go through :func:`~agent_ls.agent.editor_files.atomic_write`.)

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
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise NotRegularFile(errno.EINVAL, kind_of(mode), str(path))
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def _read_regular(workspace: Workspace, path: Path) -> bytes:
    with _open_regular(workspace, path) as f:
        return f.read()


async def _in_thread(fn: Callable[[threading.Event], _T]) -> _T:
    """Run ``fn(stop)`` in a worker thread; ``stop`` is set if the awaiting task is cancelled."""
    stop = threading.Event()
    try:
        return await asyncio.to_thread(fn, stop)
    except asyncio.CancelledError:
        stop.set()
        raise


def _object_schema(properties: dict[str, Any], required: list[str]) -> dict[str, Any]:
    return {"type": "object", "properties": properties, "required": required, "additionalProperties": False}


class _BuiltinTool:
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
            input_schema=_object_schema(self._properties, self._required),
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


# --- read_file ---------------------------------------------------------------------------


class ReadFileTool(_BuiltinTool):
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
            source = _open_regular(self.workspace, path) if doc is None else io.BytesIO(encode_text(doc.text))
            with source as f:
                sample = f.read(BINARY_SNIFF_BYTES)
                if doc is None and _is_binary(sample):
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
                    line = f"{total:>6}\t{_clip_line(text, MAX_LINE_CHARS)}\n"
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
            return _result(body, self.output_cap_chars)

        return await _in_thread(work)


# --- write_file --------------------------------------------------------------------------


class WriteFileTool(_BuiltinTool):
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
            current = await _in_thread(lambda stop: _read_existing(self.workspace, path, is_dir))
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
    return _read_regular(workspace, path)


# --- edit_file ---------------------------------------------------------------------------


class EditFileTool(_BuiltinTool):
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
            data = await _in_thread(lambda stop: _read_existing(self.workspace, path, is_dir))
            if isinstance(data, ToolResult):
                return data
            if data is None:
                return ToolResult.error(f"File not found: {shown} (use write_file to create it)")
            if _is_binary(data[:BINARY_SNIFF_BYTES]):
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


# --- glob patterns and walking ----------------------------------------------------------


def compile_glob(pattern: str) -> PathGlob:
    """A glob over ``/``-separated relative paths (syntax: :mod:`agent_ls.config.globs`):
    ``**`` spans directories, ``*``, ``?`` and ``[...]`` never match ``/``.
    Raises :class:`GlobError` (a message for the model) for an unusable pattern."""
    return PathGlob(pattern)


def _walk_files(workspace: Workspace, base: Path, stop: threading.Event) -> Iterator[tuple[Path, str, Path]]:
    """Files under ``base`` as (path, posix path relative to base, resolved path), in sorted
    walk order (``base`` itself is already resolved).

    Skips :data:`SKIP_DIRS`, does not follow directory symlinks, drops file symlinks that
    point outside the workspace, and yields regular files only (never FIFOs, sockets or
    devices). The resolved path is the one to open (for a symlink, its target).
    """
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        if stop.is_set():
            return
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS)
        current = Path(dirpath)
        rel_dir = current.relative_to(base).as_posix()
        prefix = "" if rel_dir == "." else rel_dir + "/"
        for name in sorted(filenames):
            file = current / name
            target = file
            try:
                mode = os.lstat(file).st_mode
                if stat.S_ISLNK(mode):
                    target = Path(os.path.realpath(file))
                    if not workspace.contains(target):
                        continue
                    mode = os.stat(target).st_mode
            except OSError:
                continue
            if not stat.S_ISREG(mode):  # FIFOs, sockets and devices could block a reader forever
                continue
            yield file, prefix + name, target


class GlobTool(_BuiltinTool):
    _name = "glob"
    _description = (
        "Find files by name pattern in the workspace. `**` matches any number of directories, "
        "`*` and `?` match within one path component, `[abc]`, `[!abc]` and `{a,b}` work as in "
        "shells (none of them matches `/`). "
        "Patterns are relative to `path` (default: the workspace root): `*.py` matches only "
        "the top directory, `**/*.py` every directory. Returns matching file paths relative "
        f"to the workspace root, sorted, at most {GLOB_MAX_RESULTS}. Directories such as "
        ".git, node_modules and .venv are skipped."
    )
    _properties = {
        "pattern": {"type": "string", "description": "Glob pattern, e.g. `**/*.ts` or `src/*/test_*.py`."},
        "path": {
            "type": "string",
            "description": "Directory to search in, relative to the workspace root or absolute (default: the root).",
        },
    }
    _required = ["pattern"]
    _capability = Capability.READ

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        pattern: str = args["pattern"]
        try:
            matcher = compile_glob(pattern)
        except GlobError as e:
            return ToolResult.error(f"Invalid glob pattern {pattern!r}: {e}")
        base = self.workspace.resolve(args.get("path", "."))
        shown_base = self.workspace.display(base)

        def work(stop: threading.Event) -> ToolResult:
            if not base.exists():
                return ToolResult.error(f"Directory not found: {shown_base}")
            if not base.is_dir():
                return ToolResult.error(f"{shown_base} is not a directory")
            matches = [
                self.workspace.display(file)
                for file, rel, _real in _walk_files(self.workspace, base, stop)
                if matcher.match(rel)
            ]
            if not matches:
                hint = ""
                if "/" not in pattern and "**" not in pattern:
                    hint = f" (a pattern without '/' matches only the top directory; try '**/{pattern}')"
                return ToolResult(content=f"No files match {pattern!r} under {shown_base}{hint}")
            matches.sort()
            body = "\n".join(matches[:GLOB_MAX_RESULTS]) + "\n"
            if len(matches) > GLOB_MAX_RESULTS:
                body += (
                    f"[... {len(matches) - GLOB_MAX_RESULTS} more files not shown "
                    f"({len(matches)} matches); narrow the pattern or path ...]\n"
                )
            return _result(body, self.output_cap_chars)

        return await _in_thread(work)


# --- grep --------------------------------------------------------------------------------


class GrepTool(_BuiltinTool):
    _name = "grep"
    _description = (
        "Search file contents in the workspace with a regular expression (Python `re` "
        "syntax). Returns `file:line:text` for each matching line, paths relative to the "
        f"workspace root, at most {GREP_MAX_MATCHES} matches. `path` may be a directory "
        "(searched recursively) or a file; `glob` filters file names (e.g. `*.py`, or "
        "`src/**/*.ts` relative to `path`). Binary files and directories such as .git, "
        "node_modules and .venv are skipped."
    )
    _properties = {
        "pattern": {"type": "string", "description": "Regular expression to search for."},
        "path": {
            "type": "string",
            "description": "File or directory to search, relative to the workspace root or absolute (default: the root).",
        },
        "glob": {
            "type": "string",
            "description": "Only search files matching this glob; without '/' it matches the file name at any depth.",
        },
        "case_insensitive": {"type": "boolean", "description": "Ignore case (default false)."},
    }
    _required = ["pattern"]
    _capability = Capability.READ

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        pattern: str = args["pattern"]
        flags = re.IGNORECASE if args.get("case_insensitive", False) else 0
        try:
            regex = re.compile(pattern, flags)
        except re.error as exc:
            return ToolResult.error(f"Invalid regular expression {pattern!r}: {exc}")
        name_filter: Callable[[str], bool] | None = None
        file_glob: str | None = args.get("glob")
        if file_glob is not None:
            try:
                file_matcher = compile_glob(file_glob)
            except GlobError as e:
                return ToolResult.error(f"Invalid glob {file_glob!r}: {e}")
            if file_matcher.has_slash:

                def name_filter(rel: str) -> bool:
                    return file_matcher.match(rel)
            else:

                def name_filter(rel: str) -> bool:
                    return file_matcher.match(rel.rsplit("/", 1)[-1])

        base = self.workspace.resolve(args.get("path", "."))
        shown_base = self.workspace.display(base)
        buffers = self.files.open_documents()  # files open in the editor are searched as shown there

        def search(stop: threading.Event, opener: Callable[[Path, int, int], int]) -> ToolResult:
            if not base.exists():
                return ToolResult.error(f"Not found: {shown_base}")
            if not base.is_dir():
                files: Iterator[tuple[Path, str, Path]] = iter([(base, base.name, base)])
                single = True
            else:
                files = (
                    (f, rel, real)
                    for f, rel, real in _walk_files(self.workspace, base, stop)
                    if name_filter is None or name_filter(rel)
                )
                single = False
            out: list[str] = []
            capped = False
            searched = 0
            for file, _rel, real in files:
                if stop.is_set() or capped:
                    break
                try:
                    if real in buffers:
                        data = encode_text(buffers[real].text)
                    else:
                        with _open_regular(self.workspace, real, opener=opener) as f:
                            if os.fstat(f.fileno()).st_size > GREP_MAX_FILE_BYTES:
                                continue
                            data = f.read()
                except (OSError, WorkspacePathError):
                    if single:
                        raise
                    continue
                if _is_binary(data[:BINARY_SNIFF_BYTES]):
                    if single:
                        return ToolResult.error(f"{shown_base} is a binary file; grep searches text files only")
                    continue
                searched += 1
                shown = self.workspace.display(file)
                for lineno, line in enumerate(data.decode("utf-8", errors="replace").split("\n"), 1):
                    line = line.rstrip("\r")
                    if regex.search(line):
                        if len(out) >= GREP_MAX_MATCHES:
                            capped = True
                            break
                        out.append(f"{shown}:{lineno}:{_clip_line(line, GREP_LINE_CHARS)}")
            if not out:
                what = f" in files matching {file_glob!r}" if file_glob else ""
                return ToolResult(
                    content=f"No matches for {pattern!r} under {shown_base}{what} ({searched} files searched)"
                )
            body = "\n".join(out) + "\n"
            if capped:
                body += (
                    f"[... results capped at {GREP_MAX_MATCHES} matches; there are more. "
                    "Narrow the pattern, path or glob ...]\n"
                )
            return _result(body, self.output_cap_chars)

        def work(stop: threading.Event) -> ToolResult:
            with self.workspace.file_opener() as opener:
                return search(stop, opener)

        return await _in_thread(work)


# --- bash --------------------------------------------------------------------------------


class _OutputCollector:
    """Keeps the head and the tail of a stream of text within a character budget."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        unlimited = max_chars <= 0
        self._head_limit = (1 << 62) if unlimited else max_chars * 3 // 4
        self._tail_limit = 0 if unlimited else max_chars - self._head_limit
        self._head: list[str] = []
        self._head_len = 0
        self._tail: collections.deque[str] = collections.deque()
        self._tail_len = 0
        self.total = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed_bytes(self, data: bytes, *, final: bool = False) -> None:
        self.feed(self._decoder.decode(data, final))

    def feed(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        room = self._head_limit - self._head_len
        if room > 0:
            take = text[:room]
            self._head.append(take)
            self._head_len += len(take)
            text = text[room:]
        if text and self._tail_limit > 0:
            self._tail.append(text)
            self._tail_len += len(text)
            while self._tail and self._tail_len - len(self._tail[0]) >= self._tail_limit:
                self._tail_len -= len(self._tail.popleft())

    def result(self) -> tuple[str, int]:
        head = "".join(self._head)
        kept_tail = "".join(self._tail)[-self._tail_limit :] if self._tail_limit else ""
        cut = self.total - len(head) - len(kept_tail)
        if cut <= 0:
            return head + kept_tail, 0
        return f"{head}\n{cut_marker(cut)}\n{kept_tail}", cut


def _kill_group(proc: asyncio.subprocess.Process) -> None:
    """SIGKILL the process group of ``proc`` (it was started in its own session)."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(proc.pid, signal.SIGKILL)
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.kill()


async def _wait_exit(proc: asyncio.subprocess.Process) -> int:
    # Process.wait() on 3.11 also waits for the pipes to close, which a background child
    # holding stdout can delay forever; poll the leader's own exit status instead.
    delay = 0.005
    while proc.returncode is None:
        await asyncio.sleep(delay)
        delay = min(delay * 2, 0.05)
    return proc.returncode


async def _pump(stream: asyncio.StreamReader, collector: _OutputCollector) -> None:
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            collector.feed_bytes(b"", final=True)
            return
        collector.feed_bytes(chunk)


def _format_seconds(seconds: float) -> str:
    return f"{seconds:g} s"


class BashTool(_BuiltinTool):
    _name = "bash"
    _capability = Capability.WRITE
    _required = ["command"]

    def __init__(
        self,
        workspace: Workspace,
        *,
        output_cap_chars: int = DEFAULT_OUTPUT_CAP_CHARS,
        timeout: float = DEFAULT_BASH_TIMEOUT,
    ) -> None:
        self.timeout = timeout
        self.max_timeout = max(MAX_BASH_TIMEOUT, timeout)
        self._description = (
            "Run a shell command with `bash -c` in the workspace root and return its output "
            "(stdout and stderr interleaved) and exit code. There is no terminal and no "
            f"input (stdin is empty). Default timeout {_format_seconds(timeout)}, at most "
            f"{_format_seconds(self.max_timeout)}; on timeout the command and everything it "
            "started are killed. Very long output is cut in the middle with a marker. Prefer "
            "read_file, grep, glob and edit_file for reading, searching and editing files."
        )
        self._properties = {
            "command": {"type": "string", "description": "The command line to run with `bash -c`."},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": self.max_timeout,
                "description": f"Timeout in seconds (default {timeout:g}).",
            },
        }
        super().__init__(workspace, output_cap_chars=output_cap_chars)

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        command: str = args["command"]
        timeout = float(args.get("timeout", self.timeout))
        if "\x00" in command:
            return ToolResult.error("The command contains a NUL byte")
        env = dict(os.environ)
        env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                "bash",
                "-c",
                command,
                cwd=self.workspace.root,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                env=env,
            )
        )
        try:
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            # Cancelled while the process was being set up: it may already be running (and
            # have started children). Unshielded, asyncio would kill only bash itself and
            # orphan the rest; wait for the spawn to finish and kill the whole group.
            with contextlib.suppress(BaseException):
                _kill_group(await spawn)
            raise
        except OSError as exc:
            return ToolResult.error(f"Could not start bash: {exc}")
        assert proc.stdout is not None
        collector = _OutputCollector(self.output_cap_chars)
        reader = asyncio.create_task(_pump(proc.stdout, collector))
        timed_out = False
        leftovers = False
        try:
            try:
                await asyncio.wait_for(_wait_exit(proc), timeout)
            except TimeoutError:
                timed_out = True
                _kill_group(proc)
            done, _ = await asyncio.wait({reader}, timeout=_DRAIN_SECONDS)
            if not done:
                # Something the command started still holds the output open.
                leftovers = True
                _kill_group(proc)
                done, _ = await asyncio.wait({reader}, timeout=_DRAIN_SECONDS)
                if not done:
                    reader.cancel()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(_wait_exit(proc), 5)
        except BaseException:
            _kill_group(proc)
            reader.cancel()
            raise
        if reader.done() and not reader.cancelled() and reader.exception() is not None:
            collector.feed(f"\n[error reading output: {reader.exception()}]")

        output, cut = collector.result()
        code = proc.returncode
        notes: list[str] = []
        if timed_out:
            notes.append(
                f"[command timed out after {_format_seconds(timeout)}; it was killed with its process group]"
            )
        elif leftovers:
            notes.append("[background processes still holding the output open were killed]")
        if code is None:
            notes.append("[exit code unknown]")
        elif code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            notes.append(f"[killed by {name}]" if not timed_out else f"[exit: killed by {name}]")
        else:
            notes.append(f"[exit code {code}]")
        if not output:
            output = "(no output)\n"
        elif not output.endswith("\n"):
            output += "\n"
        text = output + "\n".join(notes)
        if timed_out:
            text = f"Command timed out after {_format_seconds(timeout)} and was killed.\n" + text
        return ToolResult(content=text, is_error=timed_out or code != 0, truncated_chars=cut)


# --- the set -----------------------------------------------------------------------------


def builtin_tools(
    workspace: Workspace,
    *,
    output_cap_chars: int | None = None,
    bash_timeout: float = DEFAULT_BASH_TIMEOUT,
    editor: EditorFiles | None = None,
    outputs: OutputStore | None = None,
) -> list[Tool]:
    """Every built-in tool, sorted by name, ``read_output`` included.

    ``editor`` (the language server's open documents and ``workspace/applyEdit``): the file
    tools read open buffers and change files through it (:mod:`agent_ls.agent.editor_files`).
    ``outputs``: the session's store of oversized output (a default one when None); the
    session that runs these tools finds it through ``read_output`` and pages long results into
    it. The tools themselves then keep up to what the store can hold (``read_file`` keeps to a
    page: it pages by lines itself); an explicit ``output_cap_chars`` caps every tool instead.
    """
    files = FileAccess(workspace, editor)
    outputs = outputs if outputs is not None else OutputStore()
    keep = outputs.max_chars if output_cap_chars is None else output_cap_chars
    page = outputs.page_chars if output_cap_chars is None else output_cap_chars
    tools: list[Tool] = [
        ReadFileTool(workspace, output_cap_chars=page, files=files),
        WriteFileTool(workspace, output_cap_chars=keep, files=files),
        EditFileTool(workspace, output_cap_chars=keep, files=files),
        GlobTool(workspace, output_cap_chars=keep),
        GrepTool(workspace, output_cap_chars=keep, files=files),
        BashTool(workspace, output_cap_chars=keep, timeout=bash_timeout),
        ReadOutputTool(outputs),
    ]
    return sorted(tools, key=lambda t: t.spec.name)
