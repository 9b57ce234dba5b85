"""The editor's language intelligence as the agent's tools (issue 27, items 1 and 2), through the
real server over stdio.

A client that advertises ``experimental.agentLs.intelligence`` is asked ``agent/editorIntelligence``
(here: a scripted editor that answers like an editor's providers would, in UTF-16 positions); the
model gets ``diagnostics``, ``definition``, ``references`` and ``symbols``, with workspace-relative
paths, 1-based lines, character columns and the lines' text. An editor that answers with an
error, or not at all, makes the tool fail with the reason (within the timeout, and the question
is withdrawn); a missing file or a position past the end is refused before the editor is asked.
After ``edit_file`` applied in the editor, the result lists the problems the edit introduced.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from agent_ls.server.protocol import methods as P
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor
from tests.lsp.test_editor_files import FULL_EDITS, Buffers, results

pytestmark = pytest.mark.e2e

INTELLIGENT = {"agentLs": {P.INTELLIGENCE_CAPABILITY: True}}
MATH = "// math\nexport function add(a: number, b: number): number {\n  return a + b;\n}\n"
MAIN = 'import { add } from "./math";\nconst s = "😀😀", n = add(1, 2);\n'
ADD_IN_MAIN = MAIN.splitlines()[1].index("add")  # characters
ADD_IN_MAIN_UTF16 = ADD_IN_MAIN + 2  # each emoji is two UTF-16 code units


class Intelligence:
    """The editor's side: records the questions, answers with ``answer(params)`` (may be async)."""

    def __init__(self) -> None:
        self.asked: list[dict[str, Any]] = []
        self.withdrawn: list[dict[str, Any]] = []
        self.answer: Callable[[dict[str, Any]], Any] = lambda params: {}

    def install(self, ed: Editor) -> None:
        ed.experimental = INTELLIGENT

        @ed.client.feature(P.EDITOR_INTELLIGENCE)
        async def on_intelligence(params: Any) -> Any:
            self.asked.append(params)
            try:
                answer = self.answer(params)
                if asyncio.iscoroutine(answer):
                    answer = await answer
            except asyncio.CancelledError:
                self.withdrawn.append(params)
                raise
            return answer

    def kinds(self) -> list[str]:
        return [a["kind"] for a in self.asked]


def loc(uri: str, line: int, character: int) -> dict[str, Any]:
    pos = {"line": line, "character": character}
    return {"uri": uri, "range": {"start": pos, "end": {"line": line, "character": character + 3}}}


def write_project(ws: Path) -> tuple[str, str]:
    (ws / "src").mkdir()
    (ws / "src" / "math.ts").write_text(MATH)
    (ws / "src" / "main.ts").write_text(MAIN, encoding="utf-8")
    return (ws / "src" / "math.ts").resolve().as_uri(), (ws / "src" / "main.ts").resolve().as_uri()


async def start(setup: Setup, *, intelligent: bool = True, buffers: bool = False) -> tuple[Editor, Intelligence, Buffers | None]:
    intel = Intelligence()
    holder: list[Buffers] = []

    def configure(ed: Editor) -> None:
        if intelligent:
            intel.install(ed)
        if buffers:
            ed.workspace_edit = FULL_EDITS
            b = Buffers(ed)
            ed.apply_answer = b.apply
            holder.append(b)

    ed = await open_editor(setup, configure=configure)
    return ed, intel, holder[0] if holder else None


def tool_names(setup: Setup) -> set[str]:
    return {t["function"]["name"] for t in setup.llm.requests[0].body.get("tools", [])}


async def test_references_definition_symbols_and_diagnostics_through_the_editor(setup: Setup) -> None:
    math_uri, main_uri = write_project(setup.ws)
    ed, intel, _ = await start(setup)
    try:
        def answer(params: dict[str, Any]) -> dict[str, Any]:
            if params["kind"] == "references":
                return {"locations": [loc(main_uri, 1, ADD_IN_MAIN_UTF16), loc(math_uri, 1, 16), loc(main_uri, 0, 9)]}
            if params["kind"] == "definition":
                return {"locations": [loc(math_uri, 1, 16)]}
            if params["kind"] == "symbols":
                return {"symbols": [{"name": "add", "kind": 12, "location": loc(math_uri, 1, 16)},
                                    {"name": "add", "kind": 6, "containerName": "Calc",
                                     "location": loc("file:///usr/lib/node_modules/calc.d.ts", 9, 2)}]}
            return {"diagnostics": [{"uri": main_uri, "range": loc(main_uri, 1, ADD_IN_MAIN_UTF16)["range"],
                                     "message": "'n' is declared but its value is never read.", "severity": 4,
                                     "source": "ts", "code": "6133"},
                                    {"uri": main_uri, "range": loc(main_uri, 0, 0)["range"], "message": "bad\nimport",
                                     "severity": 1, "source": "eslint", "code": "import/no-x"}]}

        intel.answer = answer
        setup.llm.script(tool_calls([
            ("references", {"path": "src/math.ts", "line": 2, "column": 17}),
            ("definition", {"path": "src/main.ts", "line": 2, "column": ADD_IN_MAIN + 1}),
            ("symbols", {"query": "add"}),
            ("diagnostics", {"path": "src/main.ts"}),
        ]), text("done"))
        result = await ed.request("agent/prompt", {"text": "who calls add?"})
        assert result["stopReason"] == "end"
        assert ed.approvals == []  # read-only: no approval
        assert {"diagnostics", "definition", "references", "symbols"} <= tool_names(setup)

        by_kind = {a["kind"]: a for a in intel.asked}
        assert by_kind["references"]["uri"] == math_uri
        assert by_kind["references"]["position"] == {"line": 1, "character": 16}
        # the agent's character column became UTF-16 code units (two emoji before it)
        assert by_kind["definition"]["position"] == {"line": 1, "character": ADD_IN_MAIN_UTF16}
        assert by_kind["symbols"]["query"] == "add"
        assert by_kind["diagnostics"]["uri"] == main_uri

        refs, definition, symbols, diagnostics = results(setup)
        assert refs.splitlines() == [
            "3 references to the symbol at src/math.ts:2:17:",
            'src/main.ts:1:10: import { add } from "./math";',
            f'src/main.ts:2:{ADD_IN_MAIN + 1}: const s = "😀😀", n = add(1, 2);',
            "src/math.ts:2:17: export function add(a: number, b: number): number {",
        ]
        assert definition.splitlines() == [
            f"Definition of the symbol at src/main.ts:2:{ADD_IN_MAIN + 1}:",
            "src/math.ts:2:17: export function add(a: number, b: number): number {",
        ]
        assert symbols.splitlines() == [
            "2 symbols matching 'add':",
            "src/math.ts:2:17: function add | export function add(a: number, b: number): number {",
            "/usr/lib/node_modules/calc.d.ts:10:3: method add (in Calc) (outside the workspace)",
        ]
        assert diagnostics.splitlines() == [
            "2 problems in src/main.ts (1 error, 1 hint) (src/main.ts is not open in the editor; its language "
            "servers may not have checked it):",
            "src/main.ts:1:1: error eslint(import/no-x): bad import",
            f"src/main.ts:2:{ADD_IN_MAIN + 1}: hint ts(6133): 'n' is declared but its value is never read.",
        ]
    finally:
        await close_editor(ed)


async def test_an_editor_that_fails_or_never_answers_and_bad_positions(setup: Setup) -> None:
    write_project(setup.ws)
    setup.extra_env["AGENT_LS_INTELLIGENCE_TIMEOUT"] = "1.5"
    ed, intel, _ = await start(setup)
    try:
        async def answer(params: dict[str, Any]) -> dict[str, Any]:
            if params["kind"] == "definition":
                raise RuntimeError("no definition provider for typescript")
            if params["kind"] == "references":
                await asyncio.Event().wait()  # never answers
            if params["kind"] == "symbols":
                return {"symbols": "not a list"}
            return {}

        intel.answer = answer
        setup.llm.script(tool_calls([
            ("definition", {"path": "src/main.ts", "line": 1, "column": 10}),
            ("references", {"path": "src/main.ts", "line": 1, "column": 10}),
            ("symbols", {"query": "add"}),
            ("references", {"path": "src/gone.ts", "line": 1, "column": 1}),
            ("definition", {"path": "src/main.ts", "line": 9, "column": 1}),
            ("definition", {"path": "src/main.ts", "line": 1, "column": 40}),
            ("diagnostics", {"path": "../outside.ts"}),
        ]), text("done"))
        started = asyncio.get_running_loop().time()
        await ed.request("agent/prompt", {"text": "look"})
        took = asyncio.get_running_loop().time() - started
        errors = [r.removeprefix("Error: ") for r in results(setup)]
        failed, hung, malformed, missing, past_lines, past_column, outside = errors
        assert failed.startswith("definition failed: the editor answered with an error: ")
        assert "no definition provider for typescript" in failed
        assert hung == "references failed: the editor did not answer within 1.5 s"
        assert malformed.startswith("symbols failed: the editor's answer did not fit the protocol")
        assert missing == "Not found: src/gone.ts"
        assert past_lines == "line 9 is past the end of src/main.ts, which has 2 lines"
        assert past_column == ("column 40 is past the end of line 1 of src/main.ts, which has 29 characters: "
                               'import { add } from "./math";')
        assert "outside" in outside.lower()
        assert took < 30
        # only the three valid questions reached the editor; the one it never answered was withdrawn
        assert sorted(intel.kinds()) == ["definition", "references", "symbols"]
        await asyncio.sleep(0.2)
        assert [w["kind"] for w in intel.withdrawn] == ["references"]
    finally:
        await close_editor(ed)


async def test_a_client_without_the_capability_gets_no_intelligence_tools(setup: Setup) -> None:
    ed, intel, _ = await start(setup, intelligent=False)
    try:
        setup.llm.script(text("hi"))
        await ed.request("agent/prompt", {"text": "hello"})
        names = tool_names(setup)
        assert "read_file" in names
        assert names.isdisjoint({"diagnostics", "definition", "references", "symbols"})
    finally:
        await close_editor(ed)


async def test_edit_file_reports_the_problems_it_introduced(setup: Setup) -> None:
    path = setup.ws / "app.ts"
    original = "const old: number = 1;\nconst x: number = 1;\n"
    path.write_text(original)
    ed, intel, buffers = await start(setup, buffers=True)
    assert buffers is not None
    try:
        uri = buffers.open(path, original)
        existing = {"uri": uri, "range": loc(uri, 0, 6)["range"], "message": "'old' is declared but never used.",
                    "severity": 2, "source": "ts", "code": "6133"}
        settled = [True]

        def answer(params: dict[str, Any]) -> dict[str, Any]:
            if params.get("version") is None:  # before the edit
                return {"diagnostics": [existing]}
            if not settled[0]:
                return {"diagnostics": [existing], "settled": False}
            return {"diagnostics": [
                {"uri": uri, "range": loc(uri, 1, 6)["range"], "severity": 1, "source": "ts", "code": "2322",
                 "message": "Type 'string' is not assignable to type 'number'."},
                {**existing, "range": loc(uri, 0, 6)["range"]},
            ]}

        intel.answer = answer
        setup.llm.script(
            tool_calls([("edit_file", {"path": "app.ts", "old_string": "x: number = 1", "new_string": "x: number = 'one'"})]),
            text("oops"))
        await ed.request("agent/prompt", {"text": "break it"})
        [result] = results(setup)
        assert result.startswith("Edited app.ts: replaced 1 occurrence (at line 2). The change was applied")
        assert result.endswith(
            "\nProblems in app.ts introduced by this edit:\n"
            "app.ts:2:7: error ts(2322): Type 'string' is not assignable to type 'number'.")
        assert "6133" not in result  # there before the edit
        before, after = intel.asked
        assert before["kind"] == after["kind"] == "diagnostics" and before["uri"] == after["uri"] == uri
        assert after["version"] == buffers.docs[uri].version and 2900 <= after["waitMs"] <= 3000  # the wait left

        settled[0] = False
        setup.llm.script(
            tool_calls([("edit_file", {"path": "app.ts", "old_string": "const old", "new_string": "const older"})]),
            text("ok"))
        await ed.request("agent/prompt", {"text": "rename"})
        assert results(setup)[-1].endswith(
            "The editor's checkers were still checking app.ts after 3 s; no new problems so far "
            "(use the diagnostics tool to look again).")

        settled[0] = True
        setup.llm.script(tool_calls([("write_file", {"path": "app.ts", "content": "const x: number = 'one';\n"})]),
                         text("rewritten"))
        await ed.request("agent/prompt", {"text": "rewrite"})
        written = results(setup)[-1]
        assert written.startswith("Overwrote app.ts") and written.endswith(
            "\nProblems in app.ts introduced by this edit:\n"
            "app.ts:2:7: error ts(2322): Type 'string' is not assignable to type 'number'.")
    finally:
        await close_editor(ed)


async def test_problems_after_an_edit_are_those_of_the_edited_version_when_the_change_syncs_late(
        setup: Setup) -> None:
    """Issue 44: the editor answers ``workspace/applyEdit`` before its ``didChange`` for the edit arrives
    (VS Code's client under load). The server asks for the problems of the version the editor gave the
    edited text, not of the version it had when the answer came (whose problems the checkers had long
    reported: the edit's own problems went missing). An editor that never syncs the change in time
    gets a result that says the checkers were still checking."""
    path = setup.ws / "late.ts"
    original = "const x: number = 1;\n"
    path.write_text(original)
    ed, intel, buffers = await start(setup, buffers=True)
    assert buffers is not None
    try:
        uri = buffers.open(path, original)
        loop = asyncio.get_running_loop()
        delay = [0.4]
        apply = buffers.apply

        def apply_then_sync_late(params: Any) -> Any:
            sync, buffers.sync = buffers.sync, lambda u: None  # the didChange is sent after the answer
            try:
                answer = apply(params)
            finally:
                buffers.sync = sync
            if delay[0] is not None:
                loop.call_later(delay[0], sync, uri)
            return answer

        ed.apply_answer = apply_then_sync_late
        error = {"uri": uri, "range": loc(uri, 0, 6)["range"], "severity": 1, "source": "ts", "code": "2322",
                 "message": "Type 'string' is not assignable to type 'number'."}

        def answer(params: dict[str, Any]) -> dict[str, Any]:
            # the editor's checkers: version 1 had no error, the edit's version 2 has one (so has the buffer now)
            version = params.get("version")
            has = version >= 2 if version is not None else "'one'" in buffers.text(uri)
            return {"diagnostics": [error] if has else [], "settled": True}

        intel.answer = answer
        setup.llm.script(
            tool_calls([("edit_file", {"path": "late.ts", "old_string": "= 1", "new_string": "= 'one'"})]), text("oops"))
        await ed.request("agent/prompt", {"text": "break it"})
        [result] = results(setup)
        assert result.endswith(
            "\nProblems in late.ts introduced by this edit:\nlate.ts:1:7: error ts(2322): "
            "Type 'string' is not assignable to type 'number'."), result
        assert intel.asked[-1]["version"] == 2 and 2000 <= intel.asked[-1]["waitMs"] <= 3000

        delay[0] = None  # the change never reaches the server: bounded, and said
        setup.llm.script(
            tool_calls([("edit_file", {"path": "late.ts", "old_string": "const x", "new_string": "const y"})]), text("ok"))
        await ed.request("agent/prompt", {"text": "rename"})
        assert results(setup)[-1].endswith(
            "The editor's checkers were still checking late.ts after 3 s; no new problems so far "
            "(use the diagnostics tool to look again).")
    finally:
        await close_editor(ed)


async def test_a_long_answer_is_listed_up_to_its_cap_and_paged(setup: Setup) -> None:
    """1,500 references: 1,000 listed (the rest counted), the listing paged through the output store."""
    math_uri, _ = write_project(setup.ws)
    ed, intel, _ = await start(setup)
    try:
        callers = setup.ws / "src" / "callers"
        callers.mkdir()
        locations = []
        for i in range(1500):
            f = callers / f"c{i:04d}.ts"
            f.write_text(f'import {{ add }} from "../math";\nexport const v{i} = add({i}, 1);\n')
            locations.append(loc(f.resolve().as_uri(), 1, 17 + len(str(i))))
        intel.answer = lambda params: {"locations": locations}
        setup.llm.script(tool_calls([("references", {"path": "src/math.ts", "line": 2, "column": 17})]), text("many"))
        await ed.request("agent/prompt", {"text": "who calls add?"})
        [result] = results(setup)
        assert result.startswith("1500 references to the symbol at src/math.ts:2:17:\nsrc/callers/c0000.ts:2:19: "
                                 "export const v0 = add(0, 1);\n")
        assert "read_output" in result and "out-" in result  # the rest of the listing is in the output store
        ended = [e for e in ed.session_events() if e["type"] == "tool_call_finished"][-1]
        handle = ended["outputHandle"]
        full = await ed.request(P.TOOL_OUTPUT, {"sessionId": ed.events[-1]["sessionId"], "handle": handle})
        listed = full["text"].splitlines()
        assert len(listed) == 1 + 1000 + 1 and listed[-1] == "[... 500 more not listed; narrow the query ...]"
        assert listed[1000] == "src/callers/c0999.ts:2:21: export const v999 = add(999, 1);"
    finally:
        await close_editor(ed)
