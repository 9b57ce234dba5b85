"""The editor's language intelligence for the agent, over LSP: ``agent/editorIntelligence``.

:class:`LspIntelligence` implements :class:`agent_ls.agent.editor.intelligence.EditorIntelligence` for a
client that advertises ``capabilities.experimental.agentLs.intelligence: true`` (the VS Code
extension answers through the editor's own providers; any LSP client can, see docs/protocol.md).
Each question is one server -> client request through :func:`agent_ls.server.ask.ask`: bounded by
a timeout (then the tool fails with that reason), withdrawn when the turn is stopped; an error
answer is a failure with the editor's message.

Positions cross here: the agent's 1-based lines and character columns become LSP positions in the
negotiated encoding (and back), using the text of the file (the open document, or the file on the
disk when it lies in a workspace folder; nothing else is read). A place outside the workspace
folders keeps the client's column and has no text.
"""

from __future__ import annotations

import asyncio
import logging
import os
import stat
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING
from urllib.parse import unquote

import attrs
from lsprotocol import types as lsp
from pygls.uris import from_fs_path, to_fs_path

from agent_ls.agent.editor.intelligence import (
    MAX_LISTED,
    SEVERITIES,
    IntelligenceError,
    Place,
    Problem,
    ProblemsAfterEdit,
    Symbol,
)
from agent_ls.server.ask import AskFailed, ask
from agent_ls.server.client import offers
from agent_ls.server.protocol.intelligence import (
    EditorIntelligenceParams,
    EditorIntelligenceResult,
    IntelligenceDiagnostic,
    IntelligenceLocation,
    IntelligencePosition,
)
from agent_ls.server.protocol.methods import EDITOR_INTELLIGENCE, INTELLIGENCE_CAPABILITY

if TYPE_CHECKING:
    from agent_ls.server.client import EditorClient

log = logging.getLogger(__name__)

TIMEOUT_SECONDS = 15.0
"""How long a question may take the editor (a workspace-wide reference search can be slow);
``AGENT_LS_INTELLIGENCE_TIMEOUT`` (seconds) overrides it."""
MAX_FILE_BYTES = 8 * 1024 * 1024
"""Files read for the text of a line (larger ones: no text, the client's column)."""
SYNC_POLL_SECONDS = 0.02
"""After an edit: how often our copy of the document is looked at until the editor's change arrives."""


def supports_intelligence(capabilities: lsp.ClientCapabilities) -> bool:
    """The client answers ``agent/editorIntelligence`` (``experimental.agentLs.intelligence``)."""
    return offers(capabilities, INTELLIGENCE_CAPABILITY)


def lsp_intelligence(client: EditorClient) -> LspIntelligence | None:
    """The editor's intelligence when the client offers it, else None (no such tools)."""
    return LspIntelligence(client) if supports_intelligence(client.capabilities) else None


def units(text: str, encoding: str) -> int:
    """Length of ``text`` in the encoding's code units."""
    if encoding == lsp.PositionEncodingKind.Utf8.value:
        return len(text.encode("utf-8", errors="surrogatepass"))
    if encoding == lsp.PositionEncodingKind.Utf32.value:
        return len(text)
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


def characters(line: str, count: int, encoding: str) -> int:
    """How many characters of ``line`` its first ``count`` code units are (clamped to the line; a
    count that ends inside a character stops before it)."""
    if encoding == lsp.PositionEncodingKind.Utf32.value or line.isascii():
        return min(max(count, 0), len(line))
    if encoding == lsp.PositionEncodingKind.Utf8.value:
        data, width, codec = line.encode("utf-8", errors="surrogatepass"), 1, "utf-8"
    else:
        data, width, codec = line.encode("utf-16-le", errors="surrogatepass"), 2, "utf-16-le"
    return len(data[: max(count, 0) * width].decode(codec, errors="ignore"))


@attrs.frozen
class _Texts:
    open: Mapping[Path, str]
    roots: list[Path]


class LspIntelligence:
    """Asks the client; turns its LSP locations into the agent's places."""

    def __init__(self, client: EditorClient, *, timeout: float | None = None) -> None:
        self.client = client
        self.timeout = timeout if timeout is not None else _timeout_from_env()

    # plumbing ------------------------------------------------------------------------------
    async def _ask(self, params: EditorIntelligenceParams, timeout: float | None = None) -> EditorIntelligenceResult:
        wait = self.timeout if timeout is None else timeout
        try:
            result = await ask(self.client, EDITOR_INTELLIGENCE, params, EditorIntelligenceResult, fallback=None,
                               timeout=wait)
        except AskFailed as e:
            log.warning("%s (%s) failed: %s", EDITOR_INTELLIGENCE, params.kind, e)
            if e.malformed:
                raise IntelligenceError(f"the editor's answer did not fit the protocol ({e})") from e
            raise IntelligenceError(f"the editor answered with an error: {e}") from e
        if result is None:
            raise IntelligenceError(f"the editor did not answer within {wait:g} s")
        return result

    def _encoding(self) -> str:
        try:
            encoding = self.client.workspace.position_encoding
        except RuntimeError:
            encoding = None
        return lsp.PositionEncodingKind.Utf16.value if encoding is None else str(getattr(encoding, "value", encoding))

    def _open_texts(self) -> dict[Path, str]:
        try:
            docs = dict(self.client.workspace.text_documents)
        except RuntimeError:
            return {}
        out: dict[Path, str] = {}
        for uri, doc in docs.items():
            fs = to_fs_path(uri) if uri.startswith("file:") else None
            if fs:
                out[Path(os.path.realpath(fs))] = doc.source
        return out

    def _texts(self) -> _Texts:
        """What the worker threads may read: the open documents, the workspace folders."""
        return _Texts(self._open_texts(), self.client.folders())

    @staticmethod
    def _lines(path: Path, texts: _Texts, cache: dict[Path, list[str] | None],
               inside: bool | None = None) -> list[str] | None:
        """The lines of ``path`` (its open document, else the disk inside the workspace folders;
        ``inside``: whether it is, when the caller knows)."""
        if path in cache:
            return cache[path]
        text = texts.open.get(path)
        if inside is None:
            inside = any(path == root or path.is_relative_to(root) for root in texts.roots)
        if text is None and inside:
            text = _read_small(path)
        lines = text.splitlines() if text is not None else None
        cache[path] = lines
        return lines

    @staticmethod
    def _uri(path: Path) -> str:
        return from_fs_path(str(path)) or path.as_uri()

    def _position(self, texts: _Texts, path: Path, line: int, column: int) -> IntelligencePosition:
        lines = self._lines(path, texts, {}) or []
        text = lines[line - 1] if 0 < line <= len(lines) else ""
        return IntelligencePosition(line=line - 1, character=units(text[: column - 1], self._encoding()))

    def _places(self, texts: _Texts, found: list[tuple[str, dict[str, int]]],
                text_limit: int | None = None) -> list[tuple[Path, Place]]:
        """(uri, LSP start) -> places with 1-based lines, character columns and the lines' text
        (``text_limit``: only for that many, the first in the order the tools list them)."""
        encoding = self._encoding()
        cache: dict[Path, list[str] | None] = {}
        paths = _Paths(texts.roots)
        resolved = [(paths.of(uri), max(0, int(start.get("line", 0))), max(0, int(start.get("character", 0))))
                    for uri, start in found]
        with_text: set[int] | None = None
        if text_limit is not None and len(resolved) > text_limit:
            order = sorted((i for i, r in enumerate(resolved) if r[0] is not None),
                           key=lambda i: (str(resolved[i][0]), resolved[i][1], resolved[i][2]))
            with_text = set(order[:text_limit])
        out: list[tuple[Path, Place]] = []
        for i, (path, line0, char) in enumerate(resolved):
            if path is None:
                continue  # an untitled buffer, a virtual document: nothing the agent can open
            lines = (self._lines(path, texts, cache, path in paths.inside)
                     if with_text is None or i in with_text else None)
            if lines is not None and line0 < len(lines):
                text = lines[line0]
                out.append((path, Place(path, line0 + 1, characters(text, char, encoding) + 1, text)))
            else:
                out.append((path, Place(path, line0 + 1, char + 1)))
        return out

    async def _locations(self, locations: list[IntelligenceLocation]) -> list[Place]:
        places = await asyncio.to_thread(self._places, self._texts(), [(loc.uri, loc.range.start) for loc in locations],
                                         MAX_LISTED)
        seen: set[tuple[Path, int, int]] = set()
        out = []
        for path, place in places:
            if (path, place.line, place.column) not in seen:
                seen.add((path, place.line, place.column))
                out.append(place)
        return out

    async def _problems(self, diagnostics: list[IntelligenceDiagnostic]) -> list[Problem]:
        places = await asyncio.to_thread(self._places, self._texts(), [(d.uri, d.range.start) for d in diagnostics])
        by_uri = iter(places)
        out = []
        for d in diagnostics:
            if _Paths().of(d.uri) is None:
                continue
            _path, place = next(by_uri)
            severity = SEVERITIES[d.severity - 1] if d.severity in (1, 2, 3, 4) else "error"
            out.append(Problem(place, d.message, severity, d.source or None, d.code or None))
        return out

    # EditorIntelligence ------------------------------------------------------------------------
    async def diagnostics(self, path: Path | None) -> list[Problem]:
        uri = self._uri(path) if path is not None else None
        result = await self._ask(EditorIntelligenceParams(kind="diagnostics", uri=uri))
        return await self._problems(result.diagnostics)

    def _open_version(self, uri: str, text: str | None) -> tuple[int | None, bool]:
        """The version of the document the editor synced to us, and whether it holds ``text``."""
        try:
            doc = self.client.workspace.get_text_document(uri)
        except RuntimeError:
            return None, False
        if doc.version is None:
            return None, False
        return doc.version, text is None or doc.source == text

    async def problems_after_edit(self, path: Path, wait: float, text: str | None = None) -> ProblemsAfterEdit:
        """The editor is asked for the problems of the version it gave the edited text (issue 44): the
        answer to ``workspace/applyEdit`` may come before the editor's ``didChange`` for it (VS Code's
        client sends them on different paths, and under load the change came late), and asking with
        the version we had then took the diagnostics of the text before the edit as settled. So, for a
        document the editor syncs to us, wait (within ``wait``) until our copy holds ``text``; if it
        never does, the problems are said to be unsettled."""
        uri = self._uri(path)
        loop = asyncio.get_running_loop()
        deadline = loop.time() + wait
        version, current = self._open_version(uri, text)
        while version is not None and not current and loop.time() < deadline:
            await asyncio.sleep(SYNC_POLL_SECONDS)
            version, current = self._open_version(uri, text)
        left = max(0.0, deadline - loop.time())
        params = EditorIntelligenceParams(kind="diagnostics", uri=uri, version=version, wait_ms=int(left * 1000))
        result = await self._ask(params, timeout=left + min(self.timeout, 5.0))
        settled = bool(result.settled) and (version is None or current)
        return ProblemsAfterEdit(tuple(await self._problems(result.diagnostics)), settled)

    async def definition(self, path: Path, line: int, column: int) -> list[Place]:
        return await self._at("definition", path, line, column)

    async def references(self, path: Path, line: int, column: int) -> list[Place]:
        return await self._at("references", path, line, column)

    async def _at(self, kind: str, path: Path, line: int, column: int) -> list[Place]:
        position = await asyncio.to_thread(self._position, self._texts(), path, line, column)
        result = await self._ask(EditorIntelligenceParams(kind=kind, uri=self._uri(path), position=position))
        return await self._locations(result.locations)

    async def symbols(self, query: str) -> list[Symbol]:
        result = await self._ask(EditorIntelligenceParams(kind="symbols", query=query))
        places = await asyncio.to_thread(
            self._places, self._texts(), [(s.location.uri, s.location.range.start) for s in result.symbols])
        kept = [s for s in result.symbols if _Paths().of(s.location.uri) is not None]
        return [Symbol(s.name, _kind_name(s.kind), place, s.container_name or None)
                for s, (_path, place) in zip(kept, places, strict=True)]


class _Paths:
    """File URIs as resolved paths, each directory resolved once (an answer may name thousands of
    files in a few directories), and whether each lies in a workspace folder. A file that is
    itself a symlink keeps its name here; it is never read through (:func:`_read_small`)."""

    def __init__(self, roots: list[Path] | None = None) -> None:
        self._roots = [str(r) for r in roots or []]
        self._dirs: dict[str, tuple[Path, bool]] = {}
        self._uris: dict[str, Path | None] = {}
        self.inside: set[Path] = set()
        """The paths seen that lie in a workspace folder (only with ``roots``)."""

    def _dir(self, head: str) -> tuple[Path, bool]:
        known = self._dirs.get(head)
        if known is None:
            real = os.path.realpath(head)
            inside = any(real == r or real.startswith(r.rstrip(os.sep) + os.sep) for r in self._roots)
            known = self._dirs[head] = (Path(real), inside)
        return known

    def of(self, uri: str) -> Path | None:
        if uri in self._uris:
            return self._uris[uri]
        fs = _fs_path(uri)
        path = None
        if fs:
            head, name = os.path.split(fs)
            real, inside = self._dir(head)
            path = real / name if name else real
            if inside:
                self.inside.add(path)
        self._uris[uri] = path
        return path


def _fs_path(uri: str) -> str | None:
    """The file system path of a ``file:`` URI (None for other schemes)."""
    if not uri.startswith("file:"):
        return None
    if os.name == "posix" and uri.startswith("file:///") and "?" not in uri and "#" not in uri:
        return unquote(uri[7:])  # the common case, without urlparse
    return to_fs_path(uri)


def _read_small(path: Path) -> str | None:
    """The text of a regular file of at most :data:`MAX_FILE_BYTES`, never through a symlink."""
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > MAX_FILE_BYTES:
            return None
        with os.fdopen(fd, "rb", closefd=False) as f:
            return f.read().decode("utf-8", errors="replace")
    except OSError:
        return None
    finally:
        os.close(fd)


def _kind_name(kind: int) -> str:
    try:
        return lsp.SymbolKind(kind).name.lower()
    except ValueError:
        return "symbol"


def _timeout_from_env() -> float:
    raw = os.environ.get("AGENT_LS_INTELLIGENCE_TIMEOUT", "")
    try:
        value = float(raw) if raw else TIMEOUT_SECONDS
    except ValueError:
        log.warning("AGENT_LS_INTELLIGENCE_TIMEOUT=%r is not a number of seconds: %ss", raw, TIMEOUT_SECONDS)
        return TIMEOUT_SECONDS
    return value if value > 0 else TIMEOUT_SECONDS
