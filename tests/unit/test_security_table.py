"""docs/security.md's one "attack -> defence -> test" table (issue 25) names tests that exist.

Each test reference in the table's last column is a code span: ``path::test_name`` (``::name``
alone continues the last path of the same cell), or a whole file (``path``, a TypeScript test
file with the quoted title of its test). The file must exist and the function (or title) be in it.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "security.md"
HEADER = "| attack | defence | test |"
CELL_SPLIT = re.compile(r"(?<!\\)\|")
SPAN = re.compile(r"`([^`]+)`")
REFERENCE = re.compile(r"^(?P<path>[\w./-]+\.(?:py|ts))?(?:::(?P<name>\w+))?$")
TS_TITLE = re.compile(r'`(?P<path>[\w./-]+\.ts)` \("(?P<title>[^"]+?)(?:\.\.\.)?"\)')


def _table(text: str) -> list[list[str]]:
    """The rows (cells) of the table under "## Attack -> defence -> test"."""
    section = text.split("\n## Attack -> defence -> test\n", 1)[1]
    lines = section.split("\n")
    start = lines.index(HEADER)
    rows = []
    for line in lines[start + 2:]:
        if not line.startswith("|"):
            break
        rows.append([c.strip() for c in CELL_SPLIT.split(line.strip())[1:-1]])
    return rows


def _functions(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}


def references(cell: str) -> list[tuple[str, str | None]]:
    """``(path, function or None)`` for each test the cell names."""
    out: list[tuple[str, str | None]] = []
    last: str | None = None
    for span in SPAN.findall(cell):
        m = REFERENCE.match(span)
        if m is None or not (m["path"] or m["name"]):
            continue  # other code in the cell (`agent-ls chat`)
        path = m["path"] or last
        if path is None:
            raise AssertionError(f"{span!r} continues no path in: {cell}")
        last = path
        out.append((path, m["name"]))
    return out


def test_there_is_one_attack_table() -> None:
    assert DOC.read_text(encoding="utf-8").count(HEADER) == 1


def test_every_test_the_table_names_exists() -> None:
    text = DOC.read_text(encoding="utf-8")
    rows = _table(text)
    attacks = [r for r in rows if not (r[0].startswith("**") and not any(r[1:]))]  # group rows are bold titles
    assert len(attacks) >= 19 and all(len(r) == 3 for r in attacks), attacks
    checked = 0
    for attack, _defence, tests in attacks:
        refs = references(tests)
        assert refs, f"no test named for: {attack}"
        for path, name in refs:
            file = ROOT / path
            assert file.is_file(), f"{path} (named for: {attack[:60]}) does not exist"
            if name is not None:
                assert name in _functions(file), f"{path}::{name} does not exist"
            checked += 1
    for m in TS_TITLE.finditer(text):
        assert m["title"] in (ROOT / m["path"]).read_text(encoding="utf-8"), f"{m['path']}: {m['title']!r}"
    assert checked >= 40


def test_references_read_continuations_and_skip_other_code() -> None:
    cell = "`tests/a.py::test_x`, `::test_y`; `agent.maxRetries` (`0`) `tests/b.ts` (\"t\")"
    assert references(cell) == [("tests/a.py", "test_x"), ("tests/a.py", "test_y"), ("tests/b.ts", None)]
