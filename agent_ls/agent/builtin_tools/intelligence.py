"""``diagnostics``, ``definition``, ``references`` and ``symbols``: the editor's language
intelligence as read-only tools (offered only when the front end gives an
:class:`~agent_ls.agent.editor.intelligence.EditorIntelligence`).

Positions are what ``read_file`` shows: 1-based lines, and 1-based columns counting characters.
Results name files relative to the workspace (absolute outside it, without the line's text: the
tools read nothing outside the workspace), one place per line: ``path:line:column: text``. A
position past the end of its file, a missing file, or an editor that cannot answer is an error
result with the reason.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from agent_ls.agent.builtin_tools.base import (
    BuiltinTool,
    capped_result,
    clip_line,
    in_thread,
    read_regular,
)
from agent_ls.agent.editor.intelligence import (
    MAX_LISTED,
    EditorIntelligence,
    IntelligenceError,
    Place,
    problem_line,
)
from agent_ls.core.tools import Capability, ToolResult

MAX_TEXT_CHARS = 300
"""A line's text is cut after this many characters."""

_PATH = {"type": "string", "description": "File, relative to the workspace root or absolute."}
_LINE = {"type": "integer", "minimum": 1, "description": "1-based line number (as read_file numbers lines)."}
_COLUMN = {"type": "integer", "minimum": 1,
           "description": "1-based column of a character of the symbol's name (characters, not bytes)."}


class _IntelligenceTool(BuiltinTool):
    _capability = Capability.READ

    def __init__(self, *args: Any, intelligence: EditorIntelligence, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.intelligence = intelligence

    def _where(self, place: Place, seen: dict[Path, tuple[bool, str]] | None = None) -> str:
        """``path:line:column: text`` (``seen``: the paths shown so far, many places share one)."""
        known = seen.get(place.path) if seen is not None else None
        if known is None:
            known = (self.workspace.contains(place.path), self.workspace.display(place.path))
            if seen is not None:
                seen[place.path] = known
        inside, path = known
        shown = f"{path}:{place.line}:{place.column}"
        if inside and place.text is not None:
            return f"{shown}: {clip_line(place.text.strip(), MAX_TEXT_CHARS)}"
        return shown if inside else f"{shown} (outside the workspace)"

    def _listing(self, header: str, lines: list[str], total: int) -> ToolResult:
        if total > len(lines):
            lines.append(f"[... {total - len(lines)} more not listed; narrow the query ...]")
        return capped_result(header + "\n" + "\n".join(lines) + "\n", self.output_cap_chars)

    async def _text(self, path: Path) -> str:
        """The file's text (the editor's buffer when it is open); missing files raise."""
        doc = self.files.open_document(path)
        if doc is not None:
            return doc.text
        shown = self.workspace.display(path)

        def read(stop: threading.Event) -> str:
            if path.is_dir():
                raise IsADirectoryError(21, "Is a directory", str(path))
            if not path.exists():
                raise FileNotFoundError(2, f"File not found: {shown}", str(path))
            return read_regular(self.workspace, path).decode("utf-8", errors="replace")

        return await in_thread(read)

    async def _position(self, args: dict[str, Any]) -> tuple[Path, int, int] | ToolResult:
        path = self.workspace.resolve(args["path"])
        line: int = args["line"]
        column: int = args["column"]
        shown = self.workspace.display(path)
        lines = (await self._text(path)).splitlines() or [""]
        if line > len(lines):
            return ToolResult.error(f"line {line} is past the end of {shown}, which has {len(lines)} lines")
        if column > len(lines[line - 1]) + 1:
            return ToolResult.error(
                f"column {column} is past the end of line {line} of {shown}, which has {len(lines[line - 1])} "
                f"characters: {clip_line(lines[line - 1], MAX_TEXT_CHARS)}")
        return path, line, column


class DiagnosticsTool(_IntelligenceTool):
    _name = "diagnostics"
    _description = (
        "The problems the user's editor currently shows (errors, warnings, hints from all its language "
        "servers and linters), for one file or, without `path`, for the whole workspace: "
        "`path:line:column: severity source(code): message`. Language servers usually check only the "
        "files open in the editor. Cheaper and more complete than running a build to find errors."
    )
    _properties = {"path": {**_PATH, "description": "Only this file (optional; default: every file)."}}
    _required: list[str] = []

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        path = self.workspace.resolve(args["path"]) if args.get("path") else None
        if path is not None:
            await self._text(path)  # a clear error for a missing file
        try:
            problems = await self.intelligence.diagnostics(path)
        except IntelligenceError as e:
            return ToolResult.error(f"diagnostics failed: {e}")
        order = {s: i for i, s in enumerate(("error", "warning", "information", "hint"))}
        problems.sort(key=lambda p: (str(p.place.path), p.place.line, p.place.column, order.get(p.severity, 9)))
        where = self.workspace.display(path) if path is not None else "the workspace"
        closed = path is not None and self.files.open_document(path) is None
        note = (f" ({where} is not open in the editor; its language servers may not have checked it)"
                if closed else "")
        if not problems:
            return ToolResult(content=f"No problems reported for {where}{note}.")
        counts = {s: sum(p.severity == s for p in problems) for s in order}
        summary = ", ".join(f"{n} {s}{'s' if n != 1 and s != 'information' else ''}" for s, n in counts.items() if n)
        lines = [problem_line(p, self.workspace.display) for p in problems[:MAX_LISTED]]
        plural = "s" if len(problems) != 1 else ""
        return self._listing(f"{len(problems)} problem{plural} in {where} ({summary}){note}:", lines, len(problems))


class _PositionTool(_IntelligenceTool):
    """A question about the symbol at ``line``:``column`` of ``path``, answered with places."""

    _properties = {"path": _PATH, "line": _LINE, "column": _COLUMN}
    _required = ["path", "line", "column"]

    async def _places(self, path: Path, line: int, column: int) -> list[Place]:
        raise NotImplementedError

    def _title(self, count: int, what: str) -> str:
        raise NotImplementedError

    _none: str = ""
    """What the result says when the editor found nothing (``{what}``: the position)."""

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        at = await self._position(args)
        if isinstance(at, ToolResult):
            return at
        try:
            places = await self._places(*at)
        except IntelligenceError as e:
            return ToolResult.error(f"{self._name} failed: {e}")
        what = f"{self.workspace.display(at[0])}:{at[1]}:{at[2]}"
        if not places:
            return ToolResult(content=self._none.format(what=what))
        places.sort(key=lambda p: (str(p.path), p.line, p.column))
        seen: dict[Path, tuple[bool, str]] = {}
        lines = [self._where(p, seen) for p in places[:MAX_LISTED]]
        return self._listing(self._title(len(places), what), lines, len(places))


class DefinitionTool(_PositionTool):
    _name = "definition"
    _description = (
        "Go to definition, as the user's editor does it (its language servers): where the symbol at "
        "`line`:`column` of `path` is defined. Returns `path:line:column: the line's text`."
    )
    _none = "The editor found no definition for the symbol at {what}."

    async def _places(self, path: Path, line: int, column: int) -> list[Place]:
        return list(await self.intelligence.definition(path, line, column))

    def _title(self, count: int, what: str) -> str:
        return f"Definition of the symbol at {what}:"


class ReferencesTool(_PositionTool):
    _name = "references"
    _description = (
        "Find all references, as the user's editor does it (its language servers, which understand "
        "the code, unlike grep): every use of the symbol at `line`:`column` of `path`, its "
        "declaration included. Returns `path:line:column: the line's text`, one per line."
    )
    _none = "The editor found no references to the symbol at {what}."

    async def _places(self, path: Path, line: int, column: int) -> list[Place]:
        return list(await self.intelligence.references(path, line, column))

    def _title(self, count: int, what: str) -> str:
        return f"{count} reference{'s' if count != 1 else ''} to the symbol at {what}:"


class SymbolsTool(_IntelligenceTool):
    _name = "symbols"
    _description = (
        "Search the workspace's symbols (functions, classes, methods, variables ...) by name, as the "
        "user's editor does it (Go to Symbol in Workspace). Returns `path:line:column: kind name "
        "(in container) | the line's text`."
    )
    _properties = {"query": {"type": "string", "minLength": 1,
                             "description": "Part of the symbol's name (editors match fuzzily)."}}
    _required = ["query"]

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        query: str = args["query"]
        if not query.strip():
            return ToolResult.error("query must not be empty")
        try:
            symbols = await self.intelligence.symbols(query)
        except IntelligenceError as e:
            return ToolResult.error(f"symbols failed: {e}")
        if not symbols:
            return ToolResult(content=f"The editor found no symbols matching {query!r}.")
        lines = []
        for s in symbols[:MAX_LISTED]:
            inside = self.workspace.contains(s.place.path)
            where = f"{self.workspace.display(s.place.path)}:{s.place.line}:{s.place.column}"
            container = f" (in {s.container})" if s.container else ""
            outside = "" if inside else " (outside the workspace)"
            line = f" | {clip_line(s.place.text.strip(), MAX_TEXT_CHARS)}" if inside and s.place.text else ""
            lines.append(f"{where}: {s.kind} {s.name}{container}{outside}{line}")
        plural = "s" if len(symbols) != 1 else ""
        return self._listing(f"{len(symbols)} symbol{plural} matching {query!r}:", lines, len(symbols))


def intelligence_tools(intelligence: EditorIntelligence, *args: Any, **kwargs: Any) -> list[BuiltinTool]:
    """The four tools on one provider (``args``/``kwargs``: :class:`BuiltinTool`'s)."""
    return [cls(*args, intelligence=intelligence, **kwargs)
            for cls in (DiagnosticsTool, DefinitionTool, ReferencesTool, SymbolsTool)]
