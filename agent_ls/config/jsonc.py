"""JSON with comments, parsed with the source location of every value.

Settings files are JSONC (VS Code's ``settings.json`` and ``.vscode/mcp.json`` allow
``//`` and ``/* */`` comments and trailing commas). Diagnostics must point at the exact
place of a bad value, which the standard library parser cannot tell (it reports positions
for syntax errors only), and none of the JSONC packages on PyPI that are well kept expose
value spans, so this is a small recursive-descent parser that records a :class:`Span` for
every value and every object key, keyed by JSON path.

Positions are 0-based lines and UTF-16-agnostic character columns (Python string
indices within the line), which is what LSP ranges want for BMP text.
"""

from __future__ import annotations

from typing import Any

import attrs

JsonPath = tuple[str | int, ...]


@attrs.frozen
class Pos:
    line: int
    """0-based line."""
    column: int
    """0-based column."""


@attrs.frozen
class Span:
    start: Pos
    end: Pos


class JsoncError(ValueError):
    """A syntax error with its position."""

    def __init__(self, message: str, pos: Pos) -> None:
        super().__init__(f"{message} at line {pos.line + 1}, column {pos.column + 1}")
        self.message = message
        self.pos = pos


@attrs.define
class Document:
    """A parsed JSONC document: the value and where each part of it is."""

    value: Any
    spans: dict[JsonPath, Span]
    """Span of the value at each path (the root is ``()``)."""
    key_spans: dict[JsonPath, Span]
    """Span of the key that introduces the value at each path (objects only)."""

    def span(self, path: JsonPath, *, key: bool = False) -> Span | None:
        """The span at ``path``, or the nearest enclosing one that is known."""
        table = self.key_spans if key else self.spans
        p = tuple(path)
        while True:
            if p in table:
                return table[p]
            if key and p in self.spans:
                return self.spans[p]
            if not p:
                return self.spans.get(())
            p = p[:-1]


def format_path(path: JsonPath) -> str:
    """``("mcpServers", "gh", "args", 0)`` -> ``mcpServers.gh.args[0]``."""
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        elif out:
            out += f".{part}"
        else:
            out = str(part)
    return out or "(root)"


EMPTY_DOCUMENT = "the file is empty (expected a JSON object)"
"""The message of the error for a document that has nothing but whitespace and comments."""

_HEX = frozenset("0123456789abcdefABCDEF")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}


class _Parser:
    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line = 0
        self.line_start = 0
        self.spans: dict[JsonPath, Span] = {}
        self.key_spans: dict[JsonPath, Span] = {}

    # positions -----------------------------------------------------------
    def pos(self) -> Pos:
        return Pos(self.line, self.i - self.line_start)

    def error(self, message: str) -> JsoncError:
        return JsoncError(message, self.pos())

    def advance(self, n: int = 1) -> None:
        for _ in range(n):
            if self.i < len(self.text) and self.text[self.i] == "\n":
                self.line += 1
                self.line_start = self.i + 1
            self.i += 1

    # lexing --------------------------------------------------------------
    def skip_ws(self) -> None:
        text = self.text
        while self.i < len(text):
            c = text[self.i]
            if c in " \t\r\n\ufeff":
                self.advance()
            elif text.startswith("//", self.i):
                while self.i < len(text) and text[self.i] != "\n":
                    self.advance()
            elif text.startswith("/*", self.i):
                start = self.pos()
                end = text.find("*/", self.i + 2)
                if end < 0:
                    raise JsoncError("unterminated /* comment", start)
                self.advance(end + 2 - self.i)
            else:
                return

    def peek(self) -> str:
        return self.text[self.i] if self.i < len(self.text) else ""

    # grammar -------------------------------------------------------------
    def document(self) -> Any:
        self.skip_ws()
        if not self.peek():
            raise self.error(EMPTY_DOCUMENT)
        value = self.value(())
        self.skip_ws()
        if self.peek():
            raise self.error(f"unexpected {self.peek()!r} after the end of the document")
        return value

    def value(self, path: JsonPath) -> Any:
        start = self.pos()
        c = self.peek()
        if c == "{":
            v: Any = self.obj(path)
        elif c == "[":
            v = self.arr(path)
        elif c == '"':
            v = self.string()
        elif c == "-" or c.isdigit():
            v = self.number()
        elif self.text.startswith("true", self.i):
            self.advance(4)
            v = True
        elif self.text.startswith("false", self.i):
            self.advance(5)
            v = False
        elif self.text.startswith("null", self.i):
            self.advance(4)
            v = None
        elif not c:
            raise self.error("unexpected end of file (expected a value)")
        else:
            raise self.error(f"unexpected {c!r} (expected a value)")
        self.spans[path] = Span(start, self.pos())
        return v

    def obj(self, path: JsonPath) -> dict[str, Any]:
        self.advance()  # {
        out: dict[str, Any] = {}
        self.skip_ws()
        if self.peek() == "}":
            self.advance()
            return out
        while True:
            self.skip_ws()
            if self.peek() == "}":  # trailing comma
                self.advance()
                return out
            if self.peek() != '"':
                raise self.error("expected a property name in double quotes")
            kstart = self.pos()
            key = self.string()
            self.key_spans[(*path, key)] = Span(kstart, self.pos())
            self.skip_ws()
            if self.peek() != ":":
                raise self.error(f"expected ':' after property name {key!r}")
            self.advance()
            self.skip_ws()
            out[key] = self.value((*path, key))
            self.skip_ws()
            c = self.peek()
            if c == ",":
                self.advance()
            elif c == "}":
                self.advance()
                return out
            elif not c:
                raise self.error("unexpected end of file (expected ',' or '}')")
            else:
                raise self.error(f"expected ',' or '}}' but found {c!r}")

    def arr(self, path: JsonPath) -> list[Any]:
        self.advance()  # [
        out: list[Any] = []
        self.skip_ws()
        if self.peek() == "]":
            self.advance()
            return out
        while True:
            self.skip_ws()
            if self.peek() == "]":  # trailing comma
                self.advance()
                return out
            out.append(self.value((*path, len(out))))
            self.skip_ws()
            c = self.peek()
            if c == ",":
                self.advance()
            elif c == "]":
                self.advance()
                return out
            elif not c:
                raise self.error("unexpected end of file (expected ',' or ']')")
            else:
                raise self.error(f"expected ',' or ']' but found {c!r}")

    def string(self) -> str:
        start = self.pos()
        self.advance()  # opening quote
        parts: list[str] = []
        text = self.text
        while True:
            if self.i >= len(text):
                raise JsoncError("unterminated string", start)
            c = text[self.i]
            if c == '"':
                self.advance()
                return "".join(parts)
            if c == "\n":
                raise self.error("line break inside a string")
            if c == "\\":
                esc = text[self.i + 1 : self.i + 2]
                if not esc:
                    raise JsoncError("unterminated string", start)
                if esc in _ESCAPES:
                    parts.append(_ESCAPES[esc])
                    self.advance(2)
                elif esc == "u":
                    hexdigits = text[self.i + 2 : self.i + 6]
                    if len(hexdigits) != 4 or any(h not in _HEX for h in hexdigits):
                        raise self.error("invalid \\u escape")
                    code = int(hexdigits, 16)
                    self.advance(6)
                    low_hex = text[self.i + 2 : self.i + 6]
                    if (
                        0xD800 <= code < 0xDC00
                        and text.startswith("\\u", self.i)
                        and len(low_hex) == 4
                        and all(h in _HEX for h in low_hex)
                    ):
                        low = int(low_hex, 16)
                        if 0xDC00 <= low < 0xE000:
                            code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                            self.advance(6)
                    parts.append(chr(code))
                else:
                    raise self.error(f"invalid escape '\\{esc}'")
            else:
                parts.append(c)
                self.advance()

    def number(self) -> int | float:
        start = self.i
        text = self.text
        j = self.i
        if j < len(text) and text[j] == "-":
            j += 1
        while j < len(text) and (text[j].isdigit() or text[j] in ".eE+-"):
            j += 1
        raw = text[start:j]
        try:
            value: int | float = float(raw) if any(ch in raw for ch in ".eE") else int(raw)
        except ValueError:
            raise self.error(f"invalid number {raw!r}") from None
        self.advance(j - start)
        return value


def parse(text: str) -> Document:
    """Parse JSONC text; raises :class:`JsoncError` with a position on bad syntax."""
    p = _Parser(text)
    value = p.document()
    return Document(value=value, spans=p.spans, key_spans=p.key_spans)
