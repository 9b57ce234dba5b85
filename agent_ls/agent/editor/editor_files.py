"""Files as the user sees them: open editor buffers, edits through the editor, stale edits.

The built-in file tools read and change files through :class:`FileAccess`:

- **Reading.** When the agent runs inside an editor (an :class:`EditorFiles` is given), a
  file the editor has open is read from its buffer, unsaved changes included; any other file
  from the disk. Without an editor (``agent-ls chat``) everything is read from the disk.
- **Writing.** When the editor can apply edits (:meth:`EditorFiles.can_apply`), a change is
  sent to it as a workspace edit: it lands in the buffer, is undoable there, and the disk
  changes only when the user saves (unless the editor saves it at once: an ACP client may,
  :attr:`EditOutcome.saved`; the model is told which). The editor may refuse it
  (:class:`EditOutcome`), and the model is told so. Otherwise the file is written to the disk atomically
  (:func:`agent_ls.agent.editor.file_writes.atomic_write`: a temporary file in the same directory, then a rename).
- **Stale edits.** :class:`ReadTracker` remembers, per file, a digest of the content the
  agent last saw (read, or wrote itself). A write to a file whose content differs from that
  is refused with a message telling the model to read it again; a file the agent has not
  read yet may be written.

This module knows nothing about LSP: the language server implements :class:`EditorFiles`
(``agent_ls/server/editor/editor_files.py``).
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import secrets
import threading
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import attrs

from agent_ls.agent.editor.changes import (
    CallContext,
    EditReviewer,
    Proposal,
    ReviewAnswer,
    current_call,
    line_counts,
)
from agent_ls.agent.editor.file_writes import atomic_write
from agent_ls.agent.editor.intelligence import (
    PROBLEMS_WAIT_SECONDS,
    EditorIntelligence,
    IntelligenceError,
    Problem,
    ProblemsAfterEdit,
    introduced,
    problems_note,
)
from agent_ls.agent.events import FileChange
from agent_ls.agent.workspace import Workspace

log = logging.getLogger(__name__)

SYNC_NOTE = (
    "The change was applied in the editor's buffer and is not saved to disk yet: the user saves "
    "it (until then bash and other programs see the file as it is on disk)."
)
"""Appended to the result of a write that went through the editor."""


@attrs.frozen
class OpenDocument:
    """A document the editor has open: its current text (unsaved changes included)."""

    text: str
    version: int | None = None


@attrs.frozen
class TextChange:
    """Replace ``text[start:end]`` (offsets in the base text, in code points) by ``new_text``."""

    start: int
    end: int
    new_text: str


@attrs.frozen
class EditOutcome:
    applied: bool
    failure_reason: str | None = None
    saved: bool = False
    """The editor also saved the file: the disk holds the new text (bash sees it)."""


@runtime_checkable
class EditorFiles(Protocol):
    """The editor's side of the file tools (implemented by the language server)."""

    def open_text(self, path: Path) -> OpenDocument | None:
        """The buffer of an open document at this resolved path, or ``None``."""
        ...

    def open_documents(self) -> Mapping[Path, OpenDocument]:
        """Every open document, by resolved path."""
        ...

    def can_apply(self, *, create: bool) -> bool:
        """Whether edits go through the editor (``create``: an edit that makes a new file)."""
        ...

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
        """Apply ``changes`` (against ``base``) to ``path`` in the editor.

        ``version`` is the version of the open document the changes were computed on (the
        editor refuses them if it has moved on), ``None`` for a file that is not open.
        ``create`` makes the file first. Returns once the editor answered (and, when it
        applied the edit, once its buffer is known to hold ``new_text``, as far as it can
        tell).
        """
        ...


# --- content digests and stale tracking -----------------------------------------------------


def encode_text(text: str) -> bytes:
    """Text as the bytes it is saved as (UTF-8; undecodable bytes read from disk round-trip)."""
    try:
        return text.encode("utf-8", errors="surrogateescape")
    except UnicodeEncodeError:
        return text.encode("utf-8", errors="surrogatepass")


def digest_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def digest_text(text: str) -> str:
    return digest_bytes(encode_text(text))


def is_plain_text(text: str) -> bool:
    """Text an editor buffer can hold as is: valid Unicode without NUL characters."""
    if "\x00" in text:
        return False
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@attrs.frozen
class Seen:
    """What the agent last saw of one file."""

    digest: str
    version: int | None = None
    in_editor: bool = False


class ReadTracker:
    """The content (digest and, for open documents, version) the agent last saw of each file.

    Thread-safe: the tools record from worker threads.
    """

    def __init__(self) -> None:
        self._seen: dict[Path, Seen] = {}
        self._lock = threading.Lock()

    def record(self, path: Path, digest: str, *, version: int | None = None, in_editor: bool = False) -> None:
        with self._lock:
            self._seen[path] = Seen(digest, version, in_editor)

    def seen(self, path: Path) -> Seen | None:
        with self._lock:
            return self._seen.get(path)

    def forget(self, path: Path) -> None:
        with self._lock:
            self._seen.pop(path, None)

    def stale(self, path: Path, shown: str, digest: str, doc: OpenDocument | None) -> str | None:
        """A message for the model if the content now (``digest``; ``doc`` when it is open in
        the editor) differs from what it last saw, else ``None`` (also for a file never read)."""
        seen = self.seen(path)
        if seen is None or seen.digest == digest:
            return None
        if doc is not None:
            why = "the user edited it in the editor"
        elif seen.in_editor:
            why = "it was closed in the editor and the file on disk differs from the buffer you read"
        else:
            why = "it changed on disk"
        return stale_message(shown, why)


def stale_message(shown: str, why: str) -> str:
    return (
        f"{shown} changed since you last read it ({why}); nothing was written. Read it again and "
        "retry the change on its current content."
    )


# --- the tools' access to files --------------------------------------------------------------


def _common_prefix(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:  # binary search over slice comparisons: C speed on large files
        mid = (lo + hi + 1) // 2
        if a[lo:mid] == b[lo:mid]:
            lo = mid
        else:
            hi = mid - 1
    return lo


def minimal_change(base: str, new: str) -> TextChange:
    """One change turning ``base`` into ``new``: the differing middle (common ends kept), so
    the editor keeps its cursor, folds and marks outside it."""
    start = _common_prefix(base, new)
    end = _common_prefix(base[start:][::-1], new[start:][::-1])
    return TextChange(start, len(base) - end, new[start : len(new) - end])


@attrs.frozen
class Written:
    """Where a write went: ``"editor"`` (a buffer) or ``"disk"``; ``saved``: the editor saved
    it too."""

    where: str
    saved: bool = False
    problems: str = ""
    """What the editor's checkers said about the change (:func:`~agent_ls.agent.editor.intelligence.problems_note`)."""

    @property
    def note(self) -> str:
        """What the model is told besides the change: that it is not on the disk yet, when it is
        not, and the problems the edit introduced, when the editor reports problems."""
        unsaved = f". {SYNC_NOTE}" if self.where == "editor" and not self.saved else ""
        return unsaved + self.problems if unsaved or not self.problems.startswith(" ") else "." + self.problems


class FileAccess:
    """The built-in file tools' view of files: buffers, the disk, and what the agent has seen.

    One per set of tools (a session): the tracker is shared by ``read_file``, ``edit_file``
    and ``write_file``. Methods without ``async`` that touch the editor run on the event
    loop; the disk work is done by the tools in worker threads.
    """

    def __init__(self, workspace: Workspace, editor: EditorFiles | None = None,
                 intelligence: EditorIntelligence | None = None) -> None:
        self.workspace = workspace
        self.editor = editor
        self.intelligence = intelligence
        """The editor's checkers: an edit applied in the editor reports the problems it introduced."""
        self.tracker = ReadTracker()

    def open_document(self, path: Path) -> OpenDocument | None:
        return None if self.editor is None else self.editor.open_text(path)

    def open_documents(self) -> Mapping[Path, OpenDocument]:
        return {} if self.editor is None else self.editor.open_documents()

    def saw(self, path: Path, digest: str, doc: OpenDocument | None) -> None:
        """The agent has read the file (content ``digest``; ``doc`` when it came from a buffer)."""
        self.tracker.record(path, digest, version=doc.version if doc else None, in_editor=doc is not None)

    def stale(self, path: Path, text: str, doc: OpenDocument | None) -> str | None:
        return self.tracker.stale(path, self.workspace.display(path), digest_text(text), doc)

    async def write(
        self,
        path: Path,
        *,
        base: str | None,
        new_text: str,
        changes: Sequence[TextChange],
        doc: OpenDocument | None,
        label: str,
        create_parents: bool = False,
    ) -> Written | str:
        """Change ``path`` from ``base`` (``None``: it does not exist) to ``new_text``.

        Through the editor when it can (``changes`` against ``base``), else on the disk.
        Returns where it went, or a message for the model when the editor did not apply it.
        """
        create = base is None and doc is None
        editor = self.editor
        through_editor = (
            editor is not None
            and editor.can_apply(create=create)
            and is_plain_text(new_text)
            and (base is None or doc is not None or is_plain_text(base))
        )
        shown = self.workspace.display(path)
        running = current_call.get()
        call = running.changes if running is not None else None  # a subagent's: its parent's turn
        change = _change(call, path, shown, base or "", new_text, create=base is None)
        answer: ReviewAnswer | None = None
        if isinstance(editor, EditReviewer) and editor.reviews_edits():
            # every change is reviewed, also one that goes to the disk (text an editor buffer
            # cannot hold): the editor may have let the call run without approval for that
            await self._report(call, change, base or "", new_text, "proposed", notify=False)
            proposal = Proposal(
                change_id=change.change_id, session_id=call.session_id if call else None,
                call_id=change.call_id, turn=change.turn, path=path, shown=shown, uri=change.uri or path.as_uri(),
                before=base or "", after=new_text, added=change.added, removed=change.removed,
                created=base is None)
            answer = await editor.review_edit(proposal)
            if answer.decision == "reject":
                await self._report(call, change, None, None, "rejected", reason=answer.reason)
                return rejected_message(shown, answer.reason)
        accepted = answer is not None and answer.decision == "accept"
        if through_editor:
            assert editor is not None
            before = await self._problems_before(path)
            outcome = await editor.apply_edit(
                path,
                base=base or "",
                changes=changes,
                new_text=new_text,
                version=doc.version if doc else None,
                create=create,
                label=label,
            )
            if not outcome.applied:
                reason = outcome.failure_reason or "no reason given"
                await self._report(call, change, base or "", new_text, "failed", reason=reason)
                return (
                    f"The editor did not apply the change to {shown} (applied=false; failureReason: {reason}). "
                    "The file is unchanged. If it was being edited at the same time, read it again and retry."
                )
            after = editor.open_text(path)
            self.tracker.record(
                path,
                digest_text(new_text),
                version=after.version if after is not None and after.text == new_text else None,
                in_editor=True,
            )
            await self._report(call, change, base or "", new_text, "accepted" if accepted else "applied")
            problems = await self._problems_after(path, shown, before, new_text, was_open=doc is not None)
            return Written("editor", saved=outcome.saved, problems=problems)
        data = encode_text(new_text)
        await asyncio.to_thread(atomic_write, self.workspace, path, data, create_parents=create_parents)
        self.tracker.record(path, digest_bytes(data))
        await self._report(call, change, base or "", new_text, "accepted" if accepted else "written")
        return Written("disk")

    async def _problems_before(self, path: Path) -> list[Problem] | None:
        """The file's problems before an edit (None: the editor cannot tell)."""
        if self.intelligence is None:
            return None
        try:
            return await self.intelligence.diagnostics(path)
        except IntelligenceError as e:
            log.info("no problems before the edit of %s: %s", path, e)
            return None

    async def _problems_after(self, path: Path, shown: str, before: list[Problem] | None, text: str, *,
                              was_open: bool) -> str:
        """The note on the problems the edit introduced ("" when the editor cannot tell)."""
        if self.intelligence is None or before is None:
            return ""
        try:
            after: ProblemsAfterEdit = await self.intelligence.problems_after_edit(path, PROBLEMS_WAIT_SECONDS, text)
        except IntelligenceError as e:
            log.info("no problems after the edit of %s: %s", path, e)
            return ""
        new = introduced(before, after.problems)
        return problems_note(shown, after, new, self.workspace.display, was_open=was_open)

    @staticmethod
    async def _report(call: CallContext | None, change: FileChange, before: str | None, after: str | None,
                      status: str, *, reason: str | None = None, notify: bool = True) -> None:
        if call is None or call.report is None:
            return
        try:
            await call.report(attrs.evolve(change, status=status, reason=reason), before, after, notify)
        except asyncio.CancelledError:
            raise
        except Exception:  # the change itself went through (or not): the card is a side note
            log.exception("could not report a change to %s", change.shown)


def _change(call: CallContext | None, path: Path, shown: str, before: str, after: str, *, create: bool) -> FileChange:
    added, removed = line_counts(before, after)
    return FileChange(
        change_id=secrets.token_hex(8), call_id=call.call_id if call else None, path=str(path), shown=shown,
        added=added, removed=removed, status="proposed", created=create, turn=call.turn if call else 0,
        uri=path.as_uri())


def rejected_message(shown: str, reason: str | None) -> str:
    """The tool result when the user rejected a change in the editor's review."""
    why = f" Their reason: {reason.strip()}" if reason and reason.strip() else " They gave no reason."
    return (
        f"The user rejected this change to {shown} in the editor's review; the file is unchanged.{why} "
        "Do not make the same change again; ask the user or take another approach."
    )
