"""The editor's side of the agent's file tools: open documents and ``workspace/applyEdit``.

:class:`LspEditorFiles` implements :class:`agent_ls.agent.editor.editor_files.EditorFiles` on the
language server: documents the client has open (``didOpen`` / ``didChange``, held by pygls)
are what the agent reads, and its changes go back as a ``WorkspaceEdit`` when the client
advertises ``workspace.applyEdit``:

- a change to an existing file is a ``TextDocumentEdit`` (with ``documentChanges``; the
  open document's version, so an edit computed on a buffer the user has typed into since is
  rejected by the client; ``null`` for a file that is not open), else a plain ``changes``
  entry;
- a new file is ``CreateFile`` plus an insert (only when the client supports the ``create``
  resource operation; otherwise the agent layer writes it to disk);
- the request's ``label`` (``agent: edit foo.py``) names the change in the editor's undo.

Positions are computed here, in the position encoding negotiated at ``initialize``, with
LSP's line ends (``\\n``, ``\\r\\n``, ``\\r``).
"""

from __future__ import annotations

import asyncio
import bisect
import logging
import os
import re
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp
from pygls.uris import to_fs_path

from agent_ls.agent.editor.changes import Proposal, ReviewAnswer
from agent_ls.agent.editor.editor_files import EditOutcome, OpenDocument, TextChange
from agent_ls.server.ask import AskFailed, ask
from agent_ls.server.client import offers
from agent_ls.server.protocol.methods import REVIEW_CAPABILITY, REVIEW_DECISIONS, REVIEW_EDIT
from agent_ls.server.protocol.sessions import ReviewEditParams, ReviewEditResult

if TYPE_CHECKING:
    from pygls.workspace import TextDocument

    from agent_ls.server.client import EditorClient

log = logging.getLogger(__name__)

SYNC_WAIT_SECONDS = 2.0
"""After the client applied an edit, how long to wait for its ``didChange`` / ``didOpen``
to bring the document store up to date (so the next read sees the change)."""

_LINE_END = re.compile(r"\r\n|\r|\n")


def _units(text: str, encoding: str) -> int:
    if encoding == lsp.PositionEncodingKind.Utf8.value:
        return len(text.encode("utf-8", errors="surrogatepass"))
    if encoding == lsp.PositionEncodingKind.Utf32.value:
        return len(text)
    return len(text.encode("utf-16-le", errors="surrogatepass")) // 2


class _Positions:
    """Offsets in a text (code points) as LSP positions."""

    def __init__(self, text: str, encoding: str) -> None:
        self.text = text
        self.encoding = encoding
        self.starts = [0] + [m.end() for m in _LINE_END.finditer(text)]

    def at(self, offset: int) -> lsp.Position:
        line = bisect.bisect_right(self.starts, offset) - 1
        return lsp.Position(line=line, character=_units(self.text[self.starts[line] : offset], self.encoding))


def text_edits(base: str, changes: Sequence[TextChange], encoding: str) -> list[lsp.TextEdit]:
    positions = _Positions(base, encoding)
    return [
        lsp.TextEdit(range=lsp.Range(start=positions.at(c.start), end=positions.at(c.end)), new_text=c.new_text)
        for c in changes
    ]


def reviews_edits(capabilities: lsp.ClientCapabilities) -> bool:
    """The client answers ``agent/reviewEdit`` (``experimental.agentLs.reviewEdits``)."""
    return offers(capabilities, REVIEW_CAPABILITY)


class LspEditorFiles:
    """Open documents from pygls's store; edits as ``workspace/applyEdit`` requests."""

    def __init__(self, client: EditorClient) -> None:
        self.client = client

    # review (agent/reviewEdit) -----------------------------------------------------------
    def reviews_edits(self) -> bool:
        """The client answers ``agent/reviewEdit`` (:func:`reviews_edits`)."""
        return reviews_edits(self.client.capabilities)

    async def review_edit(self, proposal: Proposal) -> ReviewAnswer:
        """Ask the editor through :func:`agent_ls.server.ask.ask` (no timeout: the user decides
        when; stopping the turn withdraws the question); it answers when the user decided (or at
        once: ``deferred``). An error or a broken answer is a rejection with the reason, and so
        is a client without ``reviewEdits`` (it is not asked): nothing is changed unasked."""

        params = ReviewEditParams(
            change_id=proposal.change_id, uri=proposal.uri, path=proposal.shown, before=proposal.before,
            after=proposal.after, added=proposal.added, removed=proposal.removed, created=proposal.created,
            session_id=proposal.session_id, call_id=proposal.call_id, turn=proposal.turn)
        try:
            result = await ask(self.client, REVIEW_EDIT, params, ReviewEditResult, supported=self.reviews_edits(),
                               fallback=ReviewEditResult("reject", "the editor does not review edits"))
        except AskFailed as e:
            log.warning("agent/reviewEdit for %s failed: %s", proposal.shown, e)
            return ReviewAnswer("reject", f"the editor could not show the review ({e})")
        if result.decision not in REVIEW_DECISIONS:
            log.warning("unknown review decision %r for %s: rejected", result.decision, proposal.shown)
            return ReviewAnswer("reject", f"the editor answered {result.decision!r}")
        return ReviewAnswer(result.decision, result.reason)

    # reading -----------------------------------------------------------------------------
    def _documents(self) -> Iterator[tuple[Path, str, TextDocument]]:
        try:
            docs = dict(self.client.workspace.text_documents)
        except RuntimeError:  # not initialized
            return
        for uri, doc in docs.items():
            fs_path = to_fs_path(uri) if uri.startswith("file:") else None
            if fs_path:
                yield Path(os.path.realpath(fs_path)), uri, doc

    def _find(self, path: Path) -> tuple[str, TextDocument] | None:
        for p, uri, doc in self._documents():
            if p == path:
                return uri, doc
        return None

    def open_text(self, path: Path) -> OpenDocument | None:
        found = self._find(path)
        if found is None:
            return None
        return OpenDocument(found[1].source, found[1].version)

    def open_documents(self) -> Mapping[Path, OpenDocument]:
        return {p: OpenDocument(doc.source, doc.version) for p, _uri, doc in self._documents()}

    # writing -----------------------------------------------------------------------------
    def _edit_caps(self) -> lsp.WorkspaceEditClientCapabilities | None:
        ws = self.client.capabilities.workspace
        return ws.workspace_edit if ws is not None else None

    def can_apply(self, *, create: bool) -> bool:
        ws = self.client.capabilities.workspace
        if ws is None or not ws.apply_edit:
            return False
        if not create:
            return True
        caps = ws.workspace_edit
        return bool(
            caps is not None
            and caps.document_changes
            and lsp.ResourceOperationKind.Create in (caps.resource_operations or [])
        )

    def _encoding(self) -> str:
        try:
            encoding = self.client.workspace.position_encoding
        except RuntimeError:
            encoding = None
        if encoding is None:
            return lsp.PositionEncodingKind.Utf16.value
        return str(getattr(encoding, "value", encoding))

    async def apply_edit(
        self,
        path: Path,
        *,
        base: str,
        changes: Sequence[TextChange],
        new_text: str,
        version: int | None,
        create: bool,
        label: str,
    ) -> EditOutcome:
        found = self._find(path)
        uri = found[0] if found is not None else path.as_uri()
        edits = text_edits(base, changes, self._encoding())
        caps = self._edit_caps()
        if caps is not None and caps.document_changes:
            document_edit = lsp.TextDocumentEdit(
                text_document=lsp.OptionalVersionedTextDocumentIdentifier(uri=uri, version=version),
                edits=list(edits),
            )
            operations: list[lsp.TextDocumentEdit | lsp.CreateFile | lsp.RenameFile | lsp.DeleteFile] = []
            if create:
                operations.append(
                    lsp.CreateFile(uri=uri, options=lsp.CreateFileOptions(overwrite=False, ignore_if_exists=False))
                )
            operations.append(document_edit)
            edit = lsp.WorkspaceEdit(document_changes=operations)
        else:
            edit = lsp.WorkspaceEdit(changes={uri: edits})
        try:
            result = await self.client.apply_edit(lsp.ApplyWorkspaceEditParams(edit=edit, label=label))
        except asyncio.CancelledError:
            raise
        except Exception as e:  # an error response, a broken answer, the connection gone
            log.warning("workspace/applyEdit for %s failed: %s", uri, e)
            return EditOutcome(False, f"the editor answered with an error: {e}")
        if result is None or not result.applied:
            reason = result.failure_reason if result is not None else None
            log.info("the editor did not apply %r: %s", label, reason)
            return EditOutcome(False, reason)
        await self._wait_synced(path, new_text, version)
        return EditOutcome(True)

    async def _wait_synced(self, path: Path, new_text: str, version: int | None) -> None:
        """Until the store shows the edit (or the user's later typing), at most a moment."""
        loop = asyncio.get_running_loop()
        end = loop.time() + SYNC_WAIT_SECONDS
        while True:
            found = self._find(path)
            if found is not None:
                doc = found[1]
                if doc.source == new_text:
                    return
                if version is not None and doc.version is not None and doc.version > version:
                    return  # changed again since: the next read or edit sees what is there
            if loop.time() >= end:
                log.info("the editor applied an edit to %s but its document did not show it within %ss",
                         path, SYNC_WAIT_SECONDS)
                return
            await asyncio.sleep(0.01)
