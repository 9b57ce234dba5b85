"""Payloads of the editor's language intelligence for the agent: ``agent/editorIntelligence``
(server -> client), asked only of clients with
``capabilities.experimental.agentLs.intelligence: true``.

The server asks one ``kind`` at a time (:data:`~.methods.INTELLIGENCE_KINDS`): the editor's
current problems (``diagnostics``, for one document or the whole workspace), ``definition`` and
``references`` at a position, workspace ``symbols`` for a query. Positions and ranges are plain
LSP ones (zero-based lines, characters in the negotiated position encoding); the server turns them
into workspace-relative paths, 1-based lines and the lines' text for the model.

Mirrored in ``editor-extension/src/protocol/intelligence.ts``.
"""

from __future__ import annotations

import attrs

from agent_ls.server.protocol.codec import _register
from agent_ls.server.protocol.prompt import Range


@_register
@attrs.define
class IntelligencePosition:
    """An LSP position: zero-based line, character in the negotiated encoding (UTF-16 by default)."""

    line: int
    character: int


@_register
@attrs.define
class EditorIntelligenceParams:
    """``agent/editorIntelligence`` (server -> client)."""

    kind: str
    """``diagnostics``, ``definition``, ``references`` or ``symbols``."""
    uri: str | None = None
    """The document (``definition``, ``references``; ``diagnostics`` for one document, null: all)."""
    position: IntelligencePosition | None = None
    """``definition`` and ``references``: where the symbol is."""
    query: str | None = None
    """``symbols``: the workspace-symbol query."""
    version: int | None = None
    """``diagnostics`` after an edit: the document's version once the edit was applied. The client
    answers once its checkers reported for that version (or a later one) and went quiet, or after
    ``waitMs``, with ``settled`` saying which."""
    wait_ms: int | None = None
    """``diagnostics`` with ``version``: how long the client may wait for its checkers."""


@_register
@attrs.define
class IntelligenceLocation:
    """Where a definition, reference or symbol is."""

    uri: str
    range: Range


@_register
@attrs.define
class IntelligenceDiagnostic:
    """One problem, as the editor's language servers and linters report it."""

    uri: str
    range: Range
    message: str
    severity: int | None = None
    """LSP's ``DiagnosticSeverity``: 1 error, 2 warning, 3 information, 4 hint."""
    source: str | None = None
    """``ts``, ``eslint``, ``pyright`` ..."""
    code: str | None = None
    """The checker's code for the problem (``2322``), as a string."""


@_register
@attrs.define
class IntelligenceSymbol:
    """A workspace symbol."""

    name: str
    kind: int
    """LSP's ``SymbolKind`` (12 function, 5 class, ...)."""
    location: IntelligenceLocation
    container_name: str | None = None


@_register
@attrs.define
class EditorIntelligenceResult:
    """The answer: the list the ``kind`` asks for (the others empty)."""

    locations: list[IntelligenceLocation] = attrs.field(factory=list)
    """``definition``, ``references``."""
    diagnostics: list[IntelligenceDiagnostic] = attrs.field(factory=list)
    symbols: list[IntelligenceSymbol] = attrs.field(factory=list)
    settled: bool = True
    """``diagnostics`` with ``version``: false when the checkers had not reported within ``waitMs``."""
