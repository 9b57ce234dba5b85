"""Problems in settings files, each at an exact place (file, JSON path, line and column)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from agent_ls.config import jsonc


@attrs.frozen
class ConfigDiagnostic:
    """A problem in a settings file, at an exact place."""

    file: Path
    json_path: jsonc.JsonPath
    message: str
    severity: str = "error"
    """``error``, ``warning`` or ``information``."""
    span: jsonc.Span | None = None
    server: str | None = None
    summary: str | None = None
    """The problem in one sentence that names the setting, for a plain list of problems
    (``agent.maxSteps must be a positive integer, got 0``); ``message`` is said at the place,
    after its JSON path."""

    def sentence(self) -> str:
        """:attr:`summary`, else the JSON path and the message."""
        if self.summary is not None:
            return self.summary
        return f"{jsonc.format_path(self.json_path)}: {self.message}" if self.json_path else self.message

    def __str__(self) -> str:
        where = str(self.file)
        if self.span is not None:
            where += f":{self.span.start.line + 1}:{self.span.start.column + 1}"
        return f"{where}: {self.severity}: {jsonc.format_path(self.json_path)}: {self.message}"


class Problems:
    def __init__(self, file: Path, doc: jsonc.Document | None) -> None:
        self.file = file
        self.doc = doc
        self.items: list[ConfigDiagnostic] = []

    def add(
        self, path: jsonc.JsonPath, message: str, *, severity: str = "error", key: bool = False,
        server: str | None = None, summary: str | None = None,
    ) -> str:
        span = self.doc.span(path, key=key) if self.doc is not None else None
        self.items.append(ConfigDiagnostic(self.file, path, message, severity, span, server, summary))
        return message


def type_name(value: Any) -> str:
    if value is None:
        return "null"
    return {bool: "boolean", int: "number", float: "number", str: "string", list: "array", dict: "object"}.get(
        type(value), type(value).__name__
    )
