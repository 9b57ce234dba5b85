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

import re
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

MAX_DEPTH = 128
"""Objects and arrays nested deeper than this are a :class:`JsoncError` (not a RecursionError)."""

_HEX = frozenset("0123456789abcdefABCDEF")
_ESCAPES = {'"': '"', "\\": "\\", "/": "/", "b": "\b", "f": "\f", "n": "\n", "r": "\r", "t": "\t"}

# Whitespace (a BOM counts as whitespace anywhere), // line comments and /* block */ comments.
# A "/*" left right after a match is an unterminated block comment.
_SKIP = re.compile(r"(?:[ \t\r\n\ufeff]+|//[^\n]*|/\*.*?\*/)+", re.DOTALL)
_SKIP_START = frozenset(" \t\r\n\ufeff/")
# The characters a string can hold as they are; it stops at a quote, a backslash or a line break.
_STRING_RUN = re.compile(r'[^"\\\n]+')
# What is taken as a number token (so that a bad one is one error, at its start), and what a
# number must be: exactly JSON's grammar (no leading zeros, "1.", ".5", "+1" or non-ASCII digits).
_NUMBER = re.compile(r"-?[0-9.eE+\-]*")
_JSON_NUMBER = re.compile(r"-?(?:0|[1-9][0-9]*)(?:\.[0-9]+)?(?:[eE][+-]?[0-9]+)?")


def _shorten(raw: str, limit: int = 40) -> str:
    return raw if len(raw) <= limit else raw[:limit] + "..."


class _Parser:
    # Regular expressions do the scanning (whitespace and comments, runs of string characters,
    # numbers), so that a large file is not walked one character at a time in Python; the
    # line count is kept up to date by counting the line breaks in what was skipped.

    def __init__(self, text: str) -> None:
        self.text = text
        self.i = 0
        self.line = 0
        self.line_start = 0
        self.depth = 0
        self.spans: dict[JsonPath, Span] = {}
        self.key_spans: dict[JsonPath, Span] = {}

    # positions -----------------------------------------------------------
    def pos(self) -> Pos:
        return Pos(self.line, self.i - self.line_start)

    def error(self, message: str) -> JsoncError:
        return JsoncError(message, self.pos())

    def advance_to(self, j: int) -> None:
        text = self.text
        breaks = text.count("\n", self.i, j)
        if breaks:
            self.line += breaks
            self.line_start = text.rindex("\n", self.i, j) + 1
        self.i = j

    # lexing --------------------------------------------------------------
    def skip_ws(self) -> None:
        if self.text[self.i : self.i + 1] not in _SKIP_START:
            return  # the common case between tokens: nothing to skip
        m = _SKIP.match(self.text, self.i)
        if m:
            self.advance_to(m.end())
        if self.text.startswith("/*", self.i):
            raise self.error("unterminated /* comment")

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
        elif c == "-" or "0" <= c <= "9":
            v = self.number()
        elif self.text.startswith("true", self.i):
            self.i += 4
            v = True
        elif self.text.startswith("false", self.i):
            self.i += 5
            v = False
        elif self.text.startswith("null", self.i):
            self.i += 4
            v = None
        elif not c:
            raise self.error("unexpected end of file (expected a value)")
        else:
            raise self.error(f"unexpected {c!r} (expected a value)")
        self.spans[path] = Span(start, self.pos())
        return v

    def enter(self) -> None:
        """Step into an object or array (at its opening bracket), within :data:`MAX_DEPTH`."""
        if self.depth >= MAX_DEPTH:
            raise self.error(f"objects and arrays nested deeper than {MAX_DEPTH} levels")
        self.depth += 1
        self.i += 1

    def obj(self, path: JsonPath) -> dict[str, Any]:
        self.enter()  # {
        out: dict[str, Any] = {}
        self.skip_ws()
        if self.peek() == "}":
            self.i += 1
            self.depth -= 1
            return out
        while True:
            self.skip_ws()
            if self.peek() == "}":  # trailing comma
                self.i += 1
                self.depth -= 1
                return out
            if self.peek() != '"':
                raise self.error("expected a property name in double quotes")
            kstart = self.pos()
            key = self.string()
            self.key_spans[(*path, key)] = Span(kstart, self.pos())
            self.skip_ws()
            if self.peek() != ":":
                raise self.error(f"expected ':' after property name {_shorten(key)!r}")
            self.i += 1
            self.skip_ws()
            out[key] = self.value((*path, key))
            self.skip_ws()
            c = self.peek()
            if c == ",":
                self.i += 1
            elif c == "}":
                self.i += 1
                self.depth -= 1
                return out
            elif not c:
                raise self.error("unexpected end of file (expected ',' or '}')")
            else:
                raise self.error(f"expected ',' or '}}' but found {c!r}")

    def arr(self, path: JsonPath) -> list[Any]:
        self.enter()  # [
        out: list[Any] = []
        self.skip_ws()
        if self.peek() == "]":
            self.i += 1
            self.depth -= 1
            return out
        while True:
            self.skip_ws()
            if self.peek() == "]":  # trailing comma
                self.i += 1
                self.depth -= 1
                return out
            out.append(self.value((*path, len(out))))
            self.skip_ws()
            c = self.peek()
            if c == ",":
                self.i += 1
            elif c == "]":
                self.i += 1
                self.depth -= 1
                return out
            elif not c:
                raise self.error("unexpected end of file (expected ',' or ']')")
            else:
                raise self.error(f"expected ',' or ']' but found {c!r}")

    def string(self) -> str:
        # Nothing inside a string moves to another line (a line break is an error), so the
        # position only moves along the line: self.i is set directly.
        start = self.pos()
        text = self.text
        i = self.i + 1  # after the opening quote
        end = text.find('"', i)
        if end >= 0:
            run = text[i:end]
            if "\\" not in run and "\n" not in run:  # the common case: no escapes
                self.i = end + 1
                return run
        parts: list[str] = []
        while True:
            m = _STRING_RUN.match(text, i)
            if m:
                parts.append(m.group())
                i = m.end()
            if i >= len(text):
                raise JsoncError("unterminated string", start)
            c = text[i]
            if c == '"':
                self.i = i + 1
                return "".join(parts)
            self.i = i  # errors below point here
            if c == "\n":
                raise self.error("line break inside a string")
            # a backslash
            esc = text[i + 1 : i + 2]
            if not esc:
                raise JsoncError("unterminated string", start)
            if esc in _ESCAPES:
                parts.append(_ESCAPES[esc])
                i += 2
            elif esc == "u":
                hexdigits = text[i + 2 : i + 6]
                if len(hexdigits) != 4 or any(h not in _HEX for h in hexdigits):
                    raise self.error("invalid \\u escape")
                code = int(hexdigits, 16)
                i += 6
                low_hex = text[i + 2 : i + 6]
                if (
                    0xD800 <= code < 0xDC00
                    and text.startswith("\\u", i)
                    and len(low_hex) == 4
                    and all(h in _HEX for h in low_hex)
                ):
                    low = int(low_hex, 16)
                    if 0xDC00 <= low < 0xE000:
                        code = 0x10000 + ((code - 0xD800) << 10) + (low - 0xDC00)
                        i += 6
                parts.append(chr(code))
            else:
                raise self.error(f"invalid escape '\\{esc}'")

    def number(self) -> int | float:
        m = _NUMBER.match(self.text, self.i)
        raw = m.group() if m else ""
        if not _JSON_NUMBER.fullmatch(raw):
            raise self.error(f"invalid number {_shorten(raw)!r}")
        try:
            value: int | float = float(raw) if any(ch in raw for ch in ".eE") else int(raw)
        except ValueError:  # also a number too long for int() (sys.set_int_max_str_digits)
            raise self.error(f"invalid number {_shorten(raw)!r}") from None
        self.i += len(raw)
        return value


def parse(text: str) -> Document:
    """Parse JSONC text; raises :class:`JsoncError` with a position on bad syntax.

    Nothing else is raised for any text (objects and arrays nested deeper than
    :data:`MAX_DEPTH` are an error too), short of running out of memory.
    """
    p = _Parser(text)
    try:
        value = p.document()
    except RecursionError:  # only if the caller is already deep in the stack: MAX_DEPTH is low
        raise p.error("nested too deeply to parse") from None
    return Document(value=value, spans=p.spans, key_spans=p.key_spans)
