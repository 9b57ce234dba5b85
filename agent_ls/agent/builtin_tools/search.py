"""``glob`` and ``grep``: finding files by name and by content, walking the workspace without
following directory symlinks or leaving it, skipping directories such as ``.git``.

``grep`` matches with RE2 (google-re2), whose time is linear in the text: a pattern such as
``(a+)+$`` that backtracks for ever in Python's ``re`` cannot hold a worker thread (which
Python cannot kill) after the turn is cancelled. The walk also stops on cancel and after
:data:`GREP_TIME_LIMIT` seconds."""

from __future__ import annotations

import os
import re
import stat
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import re2  # type: ignore[import-untyped]

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
from agent_ls.agent.workspace import Workspace, WorkspacePathError
from agent_ls.config.globs import GlobError, PathGlob
from agent_ls.core.tools import Capability, ToolResult

GREP_LINE_CHARS = 500
"""Longer matching lines are cut (with a marker) by ``grep``."""
GLOB_MAX_RESULTS = 1000
GREP_MAX_MATCHES = 500
GREP_MAX_FILE_BYTES = 10 * 1024 * 1024
"""``grep`` skips files larger than this."""
GREP_TIME_LIMIT = 60.0
"""Seconds after which ``grep`` stops walking and returns what it found."""
_CHECK_EVERY_LINES = 4096
"""How often (in lines) a search looks at the clock and at cancellation."""

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


def compile_glob(pattern: str) -> PathGlob:
    """A glob over ``/``-separated relative paths (syntax: :mod:`agent_ls.config.globs`):
    ``**`` spans directories, ``*``, ``?`` and ``[...]`` never match ``/``.
    Raises :class:`GlobError` (a message for the model) for an unusable pattern."""
    return PathGlob(pattern)


_WHOLE_TEXT_UNSAFE = re.compile(r"\\[ACz]|\(\?[a-zA-Z]*-")
"""Patterns that mean something else on a whole text than on one line: text anchors (``\\A``,
``\\z``), any byte (``\\C``, which also matches a newline) and flags turned off (``(?-m)``)."""
_TRAILING_CR = re.compile(r"\r+(?=\n|\Z)")


class GrepPattern:
    """A ``grep`` pattern compiled by RE2, matched against the lines of a text.

    RE2's Python binding costs far more per call than ``re``, so a text is searched whole, once
    per matching line: the pattern runs in multi-line mode with ``never_nl`` (no match contains
    a newline), which finds exactly the lines the pattern matches one by one. Patterns that
    mean something else on a whole text are matched line by line.
    Raises :class:`ValueError` with a message for the model for a pattern RE2 cannot use (RE2
    has no lookarounds, backreferences or ``\\Z``: ``\\z`` is its end of text)."""

    def __init__(self, pattern: str, *, ignore_case: bool = False) -> None:
        options = re2.Options()
        options.log_errors = False  # RE2 would write every bad pattern to stderr
        options.case_sensitive = not ignore_case
        try:
            self._line = re2.compile(pattern, options)
            self._text: Any = None
            if not _WHOLE_TEXT_UNSAFE.search(pattern):
                options.never_nl = True
                self._text = re2.compile("(?m)" + pattern, options)
        except re2.error as exc:
            raw = exc.args[0] if exc.args else exc
            detail = raw.decode("utf-8", "replace") if isinstance(raw, bytes) else str(raw)
            raise ValueError(f"{detail} (grep uses RE2 syntax: no lookarounds or backreferences)") from None

    def matching_lines(self, text: str, should_stop: Callable[[], bool]) -> Iterator[tuple[int, str]]:
        """(line number, line) of each line of ``text`` (split at newlines, trailing carriage
        returns removed) that the pattern matches, in order; ends early once ``should_stop()``
        (asked every :data:`_CHECK_EVERY_LINES` lines or matches)."""
        if self._text is None:
            for lineno, line in enumerate(text.split("\n"), 1):
                if lineno % _CHECK_EVERY_LINES == 0 and should_stop():
                    return
                line = line.rstrip("\r")
                if self._line.search(line):
                    yield lineno, line
            return
        if "\r" in text:
            text = _TRAILING_CR.sub("", text)
        data = text.encode("utf-8")  # searched as bytes: the binding re-encodes a str at every call
        pos = counted = 0
        lineno = 1
        found = 0
        while pos <= len(data):
            m = self._text.search(data, pos)
            if m is None:
                return
            start = m.start()
            lineno += data.count(b"\n", counted, start)
            counted = start
            line_start = data.rfind(b"\n", 0, start) + 1
            line_end = data.find(b"\n", start)
            line_end = len(data) if line_end < 0 else line_end
            yield lineno, data[line_start:line_end].decode("utf-8", "replace")
            found += 1
            if found % _CHECK_EVERY_LINES == 0 and should_stop():
                return
            pos = line_end + 1


def walk_files(workspace: Workspace, base: Path, stop: threading.Event) -> Iterator[tuple[Path, str, Path]]:
    """Files under ``base`` as (path, posix path relative to base, resolved path), in sorted
    walk order (``base`` itself is already resolved).

    Skips :data:`SKIP_DIRS`, does not follow directory symlinks, drops file symlinks that
    point outside the workspace, and yields regular files only (never FIFOs, sockets or
    devices). The resolved path is the one to open (for a symlink, its target).
    """
    for dirpath, dirnames, filenames in os.walk(base, followlinks=False):
        if stop.is_set():
            return
        current = Path(dirpath)
        dirnames[:] = sorted(d for d in dirnames if d not in SKIP_DIRS
                             and not (workspace.deny_read and workspace.denied(current / d)))
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
            if workspace.deny_read and workspace.denied(target) is not None:
                continue
            if not stat.S_ISREG(mode):  # FIFOs, sockets and devices could block a reader forever
                continue
            yield file, prefix + name, target


class GlobTool(BuiltinTool):
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
                for file, rel, _real in walk_files(self.workspace, base, stop)
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
            return capped_result(body, self.output_cap_chars)

        return await in_thread(work)


class GrepTool(BuiltinTool):
    _name = "grep"
    _description = (
        "Search file contents in the workspace with a regular expression (RE2 syntax: Python "
        "`re` without lookarounds or backreferences). Returns `file:line:text` for each "
        "matching line, paths relative to the workspace root, "
        f"at most {GREP_MAX_MATCHES} matches. `path` may be a directory "
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
        try:
            regex = GrepPattern(pattern, ignore_case=bool(args.get("case_insensitive", False)))
        except ValueError as exc:
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
                    for f, rel, real in walk_files(self.workspace, base, stop)
                    if name_filter is None or name_filter(rel)
                )
                single = False
            out: list[str] = []
            capped = False
            searched = 0
            deadline = time.monotonic() + GREP_TIME_LIMIT
            timed_out = False

            def should_stop() -> bool:
                return stop.is_set() or time.monotonic() > deadline

            for file, _rel, real in files:
                if stop.is_set() or capped or timed_out:
                    break
                if time.monotonic() > deadline:
                    timed_out = True
                    break
                try:
                    if real in buffers:
                        data = encode_text(buffers[real].text)
                    else:
                        with open_regular(self.workspace, real, opener=opener) as f:
                            if os.fstat(f.fileno()).st_size > GREP_MAX_FILE_BYTES:
                                continue
                            data = f.read()
                except (OSError, WorkspacePathError):
                    if single:
                        raise
                    continue
                if is_binary(data[:BINARY_SNIFF_BYTES]):
                    if single:
                        return ToolResult.error(f"{shown_base} is a binary file; grep searches text files only")
                    continue
                searched += 1
                shown = self.workspace.display(file)
                for lineno, line in regex.matching_lines(data.decode("utf-8", errors="replace"), should_stop):
                    if len(out) >= GREP_MAX_MATCHES:
                        capped = True
                        break
                    out.append(f"{shown}:{lineno}:{clip_line(line, GREP_LINE_CHARS)}")
                if should_stop():
                    timed_out = not stop.is_set()
                    break
            late = (f"[... grep stopped after {GREP_TIME_LIMIT:g} s; not every file was searched. "
                    "Narrow the path or glob ...]\n") if timed_out else ""
            if not out:
                what = f" in files matching {file_glob!r}" if file_glob else ""
                return ToolResult(
                    content=f"No matches for {pattern!r} under {shown_base}{what} ({searched} files searched)" + (f"\n{late}" if late else "")
                )
            body = "\n".join(out) + "\n"
            if capped:
                body += (
                    f"[... results capped at {GREP_MAX_MATCHES} matches; there are more. "
                    "Narrow the pattern, path or glob ...]\n"
                )
            return capped_result(body + late, self.output_cap_chars)

        def work(stop: threading.Event) -> ToolResult:
            with self.workspace.file_opener() as opener:
                return search(stop, opener)

        return await in_thread(work)
