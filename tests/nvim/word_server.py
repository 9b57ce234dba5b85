"""A tiny language server for the Neovim test: the "language intelligence" another language server
would give the editor, from the words of the workspace's ``*.ts`` files.

- ``textDocument/definition``: the line ``function <word>`` of the word under the cursor;
- ``textDocument/references``: every whole-word occurrence;
- ``workspace/symbol``: the ``function`` names containing the query;
- diagnostics: a warning (source ``words``, code ``W1``) on each line containing ``BAD``.

Positions are ASCII-only here, so characters and UTF-16 code units agree.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

server = LanguageServer("words", "1")
FUNCTION = re.compile(r"\bfunction (\w+)")


def files() -> list[Path]:
    root = Path(to_fs_path(next(iter(server.workspace.folders.values())).uri) or ".")
    return sorted(root.rglob("*.ts"))


def word_at(uri: str, pos: lsp.Position) -> str:
    line = server.workspace.get_text_document(uri).lines[pos.line]
    for m in re.finditer(r"\w+", line):
        if m.start() <= pos.character <= m.end():
            return m.group(0)
    return ""


def occurrences(pattern: re.Pattern[str]) -> list[tuple[Path, int, re.Match[str]]]:
    return [(f, n, m) for f in files() for n, line in enumerate(f.read_text().splitlines())
            for m in pattern.finditer(line)]


def loc(f: Path, n: int, start: int, end: int) -> lsp.Location:
    return lsp.Location(uri=f.resolve().as_uri(), range=lsp.Range(start=lsp.Position(n, start), end=lsp.Position(n, end)))


@server.feature(lsp.TEXT_DOCUMENT_DEFINITION)
def definition(ls: LanguageServer, params: lsp.DefinitionParams) -> list[lsp.Location]:
    word = word_at(params.text_document.uri, params.position)
    return [loc(f, n, m.start(1), m.end(1)) for f, n, m in occurrences(FUNCTION) if m.group(1) == word]


@server.feature(lsp.TEXT_DOCUMENT_REFERENCES)
def references(ls: LanguageServer, params: lsp.ReferenceParams) -> list[lsp.Location]:
    word = word_at(params.text_document.uri, params.position)
    return [loc(f, n, m.start(), m.end()) for f, n, m in occurrences(re.compile(rf"\b{re.escape(word)}\b"))] \
        if word else []


@server.feature(lsp.WORKSPACE_SYMBOL)
def symbols(ls: LanguageServer, params: lsp.WorkspaceSymbolParams) -> list[lsp.SymbolInformation]:
    return [lsp.SymbolInformation(name=m.group(1), kind=lsp.SymbolKind.Function, location=loc(f, n, m.start(1), m.end(1)))
            for f, n, m in occurrences(FUNCTION) if params.query in m.group(1)]


def publish(uri: str) -> None:
    doc = server.workspace.get_text_document(uri)
    diagnostics = [lsp.Diagnostic(range=lsp.Range(start=lsp.Position(n, line.index("BAD")), end=lsp.Position(n, line.index("BAD") + 3)),
                                  message="BAD is not allowed here", severity=lsp.DiagnosticSeverity.Warning,
                                  source="words", code="W1")
                   for n, line in enumerate(doc.lines) if "BAD" in line]
    server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))


@server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
    publish(params.text_document.uri)


@server.feature(lsp.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: lsp.DidChangeTextDocumentParams) -> None:
    publish(params.text_document.uri)


if __name__ == "__main__":
    sys.exit(server.start_io())
