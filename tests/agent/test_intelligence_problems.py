"""Which problems an edit introduced (issue 27, item 2): the file's problems before and after the
edit, compared by checker, code and message (a problem whose line moved is the same one; a second
identical problem is new), and the note the edit's result gets."""

from __future__ import annotations

from pathlib import Path

from agent_ls.agent.editor.intelligence import Place, Problem, ProblemsAfterEdit, introduced, problems_note

F = Path("/w/app.ts")


def problem(line: int, message: str, *, code: str | None = "2322", severity: str = "error") -> Problem:
    return Problem(Place(F, line, 7), message, severity, "ts", code)


def show(p: Path) -> str:
    return p.name


def test_a_moved_problem_is_not_new_and_a_second_identical_one_is() -> None:
    old = problem(3, "Type 'string' is not assignable to type 'number'.")
    before = [old, problem(9, "unused", code="6133", severity="hint")]
    after = [problem(5, old.message), problem(8, old.message), problem(10, "unused", code="6133", severity="hint")]
    assert introduced(before, after) == [after[1]]
    assert introduced(after, before) == []


def test_the_note_lists_new_errors_and_warnings_only() -> None:
    new = [problem(2, "Type 'string' is not assignable\n   to type 'number'."),
           problem(4, "x is declared but never read", code="6133", severity="hint")]
    note = problems_note("app.ts", ProblemsAfterEdit(tuple(new), True), new, show, was_open=True)
    assert note == ("\nProblems in app.ts introduced by this edit:\n"
                    "app.ts:2:7: error ts(2322): Type 'string' is not assignable to type 'number'.")
    assert problems_note("app.ts", ProblemsAfterEdit((), True), [], show, was_open=True) == \
        " The editor reports no new problems in app.ts."
    assert "still checking" in problems_note("app.ts", ProblemsAfterEdit((), False), [], show, was_open=True)
    assert "may be older" in problems_note("app.ts", ProblemsAfterEdit(tuple(new), True), new, show, was_open=False)
    assert problems_note("app.ts", None, new, show, was_open=True) == ""


def test_a_long_list_is_cut_with_a_count() -> None:
    new = [problem(n, f"problem {n}") for n in range(1, 31)]
    note = problems_note("app.ts", ProblemsAfterEdit(tuple(new), True), new, show, was_open=True)
    assert note.count("error ts(2322)") == 20 and note.endswith("... and 10 more (use the diagnostics tool)")
