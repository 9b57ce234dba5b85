"""The editor's language intelligence, as the agent sees it: problems, definitions, references,
workspace symbols (issue 27, items 1 and 2).

An agent hosted next to an editor can ask what the editor's language servers and linters know,
instead of grepping. The front end gives an :class:`EditorIntelligence` when its editor answers
such questions (the language server does when the client advertises it:
``agent_ls/server/editor/intelligence.py``); the built-in tools ``diagnostics``, ``definition``,
``references`` and ``symbols`` (:mod:`agent_ls.agent.builtin_tools.intelligence`) are offered only
then. Everything here is in the agent's terms: resolved paths, 1-based lines and columns (columns
count characters, as Python does), the text of the line. The front end turns the editor's answers
into these and raises :class:`IntelligenceError` with a reason the model can read when the editor
cannot answer (an error, no answer within the timeout).

After an edit applied in the editor, :func:`introduced` compares the file's problems before and
after (:meth:`EditorIntelligence.problems_after_edit` waits, bounded, for the checkers to report)
and :func:`problems_note` is what the edit tool adds to its result.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Protocol, runtime_checkable

import attrs

SEVERITIES = ("error", "warning", "information", "hint")
PROBLEMS_WAIT_SECONDS = 3.0
"""After an edit, how long the editor's checkers get to report on it (then: "still checking")."""
MAX_LISTED = 1000
"""Places, problems or symbols a tool lists at most (the rest are counted); a front end need not
find the lines' text of places past that many (in the order the tools list them: by path, line,
column)."""
MAX_NOTE_PROBLEMS = 20
"""Problems listed in an edit's result (the rest are counted)."""


class IntelligenceError(Exception):
    """The editor could not answer; ``str()`` says why, for the model."""


@attrs.frozen
class Place:
    """A position in a file: 1-based line and column (characters), the line's text when known."""

    path: Path
    line: int
    column: int
    text: str | None = None


@attrs.frozen
class Problem:
    place: Place
    message: str
    severity: str = "error"
    """One of :data:`SEVERITIES`."""
    source: str | None = None
    code: str | None = None

    def key(self) -> tuple[str, str | None, str | None, str]:
        """What makes two problems the same one, wherever the lines moved to."""
        return (self.severity, self.source, self.code, self.message)


@attrs.frozen
class Symbol:
    name: str
    kind: str
    """``function``, ``class``, ``method``, ... (LSP's symbol kinds, lower case)."""
    place: Place
    container: str | None = None


@attrs.frozen
class ProblemsAfterEdit:
    problems: tuple[Problem, ...]
    settled: bool
    """False when the checkers had not reported on the edited text within the wait."""


@runtime_checkable
class EditorIntelligence(Protocol):
    """What the editor knows about the code (implemented by the language server).

    Every method raises :class:`IntelligenceError` when the editor cannot answer.
    """

    async def diagnostics(self, path: Path | None) -> list[Problem]:
        """The editor's current problems for the file at ``path`` (None: every file)."""
        ...

    async def definition(self, path: Path, line: int, column: int) -> list[Place]:
        """Where the symbol at ``line``:``column`` (1-based) of ``path`` is defined."""
        ...

    async def references(self, path: Path, line: int, column: int) -> list[Place]:
        """Every reference to the symbol at ``line``:``column`` of ``path``, its declaration included."""
        ...

    async def symbols(self, query: str) -> list[Symbol]:
        """Workspace symbols matching ``query``."""
        ...

    async def problems_after_edit(self, path: Path, wait: float, text: str | None = None) -> ProblemsAfterEdit:
        """The file's problems once the editor's checkers reported on its current text, waiting
        at most ``wait`` seconds (``settled`` false after that). ``text``: what the edit made of the
        file; the problems asked for are those of the editor's version of that text."""
        ...


def introduced(before: Sequence[Problem], after: Sequence[Problem]) -> list[Problem]:
    """The problems of ``after`` that ``before`` did not have (compared by severity, source, code
    and message, so a problem whose line moved is still the same one; counted, so a second
    identical problem is new)."""
    left = Counter(p.key() for p in before)
    out: list[Problem] = []
    for p in after:
        if left[p.key()] > 0:
            left[p.key()] -= 1
        else:
            out.append(p)
    return out


def problem_line(p: Problem, show: Callable[[Path], str]) -> str:
    """``src/a.ts:5:7: error ts(2322): Type 'string' is not assignable ...``."""
    checker = p.source or ""
    if p.code:
        checker = f"{checker}({p.code})"
    label = f"{p.severity} {checker}".rstrip()
    return f"{show(p.place.path)}:{p.place.line}:{p.place.column}: {label}: {' '.join(p.message.split())}"


def problems_note(shown: str, result: ProblemsAfterEdit | None, new: Sequence[Problem],
                  show: Callable[[Path], str], *, was_open: bool) -> str:
    """The sentence(s) an edit's result gets about the problems it introduced."""
    if result is None:
        return ""
    serious = [p for p in new if p.severity in ("error", "warning")]
    if not serious:
        if not result.settled:
            return (f" The editor's checkers were still checking {shown} after {PROBLEMS_WAIT_SECONDS:g} s; "
                    "no new problems so far (use the diagnostics tool to look again).")
        return f" The editor reports no new problems in {shown}."
    lines = [problem_line(p, show) for p in serious[:MAX_NOTE_PROBLEMS]]
    more = len(serious) - len(lines)
    if more > 0:
        lines.append(f"... and {more} more (use the diagnostics tool)")
    since = "introduced by this edit" if was_open else "after this edit (the file was not open before, so some may be older)"
    still = " (the checkers were still checking; there may be more)" if not result.settled else ""
    return f"\nProblems in {shown} {since}{still}:\n" + "\n".join(lines)
