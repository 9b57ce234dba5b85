"""The JSONC parser: values, comments, trailing commas, escapes, errors and spans."""

from __future__ import annotations

import inspect
import json
import math
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ls.config import jsonc
from agent_ls.config.jsonc import MAX_DEPTH, Document, JsoncError, Pos, Span, format_path, parse


def value(text: str):
    return parse(text).value


def error(text: str) -> JsoncError:
    with pytest.raises(JsoncError) as exc:
        parse(text)
    return exc.value


def locate(text: str, needle: str, nth: int = 0) -> Pos:
    """The 0-based (line, column) of the ``nth`` occurrence of ``needle`` in ``text``."""
    i = -1
    for _ in range(nth + 1):
        i = text.index(needle, i + 1)
    line = text.count("\n", 0, i)
    return Pos(line, i - (text.rfind("\n", 0, i) + 1))


# values ------------------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        "{}",
        "[]",
        '{"a": 1, "b": [true, false, null], "c": {"d": "e"}}',
        '[1, -2, 3.5, -0.25, 1e3, 2E-2, 1.5e+2]',
        '"plain"',
        "0",
        "-7",
        "true",
        "null",
        '{"nested": [[[{"x": [1, {"y": null}]}]]]}',
        '{"unicode": "héllo wörld ✓ 😀"}',
        '{"empty": "", "zero": 0, "list": []}',
    ],
)
def test_plain_json_matches_the_standard_library(text: str) -> None:
    assert value(text) == json.loads(text)


def test_types_of_numbers() -> None:
    doc = value("[1, 1.0, 1e2, -3]")
    assert [type(x) for x in doc] == [int, float, float, int]
    assert doc == [1, 1.0, 100.0, -3]


def test_large_document_roundtrip() -> None:
    data = {f"k{i}": {"list": list(range(i)), "s": "x" * i, "b": i % 2 == 0} for i in range(50)}
    assert value(json.dumps(data, indent=2)) == data


def test_duplicate_keys_last_one_wins() -> None:
    text = '{"a": 1, "a": 2}'
    doc = parse(text)
    assert doc.value == {"a": 2}
    assert doc.spans[("a",)].start == locate(text, "2")


# comments and trailing commas ---------------------------------------------


def test_line_comments() -> None:
    text = """// leading comment
{
  // a comment
  "a": 1, // trailing comment
  "b": "http://not-a-comment" // url in a string is not a comment
}
// final comment"""
    assert value(text) == {"a": 1, "b": "http://not-a-comment"}


def test_block_comments() -> None:
    text = """/* header
   spanning lines */
{
  "a": /* inline */ 1,
  /* before key */ "b": [1, /* in array */ 2],
  "c": "/* not a comment */"
}"""
    assert value(text) == {"a": 1, "b": [1, 2], "c": "/* not a comment */"}


def test_comment_at_end_of_file_without_newline() -> None:
    assert value('{"a": 1} // done') == {"a": 1}
    assert value('{"a": 1} /* done */') == {"a": 1}


def test_block_comment_is_not_nested() -> None:
    assert value('{"a": /* /* */ 1}') == {"a": 1}


def test_comments_do_not_confuse_positions() -> None:
    text = '/* one\ntwo\nthree */ {\n  // x\n  "a": 42\n}'
    doc = parse(text)
    assert doc.spans[("a",)].start == locate(text, "42")
    assert doc.key_spans[("a",)].start == locate(text, '"a"')


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1,}', {"a": 1}),
        ('{"a": 1 , }', {"a": 1}),
        ('{"a": [1, 2,],}', {"a": [1, 2]}),
        ("[1,]", [1]),
        ('[1, 2, // comment\n]', [1, 2]),
        ('{"a": {"b": 1,},}', {"a": {"b": 1}}),
    ],
)
def test_trailing_commas(text: str, expected) -> None:
    assert value(text) == expected


@pytest.mark.parametrize("text", ["{,}", "[,]", '{"a": 1,,}', "[1,,2]", "[1,,]"])
def test_extra_commas_are_errors(text: str) -> None:
    error(text)


def test_bom_and_crlf() -> None:
    text = '\ufeff{\r\n  "a": 1,\r\n  "b": 2\r\n}\r\n'
    doc = parse(text)
    assert doc.value == {"a": 1, "b": 2}
    assert doc.spans[("b",)].start == Pos(2, 7)


# strings and escapes ----------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (r'"a\"b"', 'a"b'),
        (r'"back\\slash"', "back\\slash"),
        (r'"sl\/ash"', "sl/ash"),
        (r'"\b\f\n\r\t"', "\b\f\n\r\t"),
        (r'"\u0041\u00e9\u20AC"', "Aé€"),
        (r'"C:\\Users\\me"', "C:\\Users\\me"),
        (r'"\u0000"', "\x00"),
    ],
)
def test_escapes(raw: str, expected: str) -> None:
    assert value(raw) == expected
    assert value(raw) == json.loads(raw)


def test_surrogate_pair_is_combined() -> None:
    assert value(r'"\ud83d\ude00"') == "😀"
    assert value(r'"x\uD83D\uDE00y"') == "x😀y"
    assert value(r'"\ud834\udd1e"') == "\U0001d11e"


def test_lone_surrogates_are_kept_as_is() -> None:
    # the standard library does the same; nothing is lost or merged wrongly
    assert value(r'"\ud800"') == json.loads(r'"\ud800"') == "\ud800"
    assert value(r'"\ud800\u0041"') == "\ud800A"
    assert value(r'"\udc00\ud800"') == "\udc00\ud800"
    assert value(r'"\ud800x"') == "\ud800x"


@pytest.mark.parametrize("raw", [r'"\ud800\uZZZZ"', r'"\ud800\u12"', r'"\ud800\u"'])
def test_high_surrogate_followed_by_a_bad_escape_is_a_syntax_error(raw: str) -> None:
    e = error(raw)
    assert "\\u" in e.message


@pytest.mark.parametrize("raw", [r'"\x41"', r'"\a"', r'"\u12"', r'"\u12G4"', r'"\u"'])
def test_invalid_escapes(raw: str) -> None:
    e = error(raw)
    assert "escape" in e.message
    assert e.pos == Pos(0, 1)


def test_non_ascii_text_is_kept() -> None:
    assert value('{"名前": "値", "emoji": "🎉"}') == {"名前": "値", "emoji": "🎉"}


def test_line_break_inside_string_is_an_error() -> None:
    e = error('{"a": "one\ntwo"}')
    assert "line break" in e.message
    assert e.pos == Pos(0, 10)


# errors with positions -------------------------------------------------


def test_unterminated_string_points_at_its_opening_quote() -> None:
    text = '{\n  "a": "never closed'
    e = error(text)
    assert e.message == "unterminated string"
    assert e.pos == locate(text, '"never')
    assert str(e).endswith("at line 2, column 8")


def test_unterminated_string_ending_in_backslash() -> None:
    e = error('{"a": "abc\\')
    assert "unterminated" in e.message or "escape" in e.message
    assert e.pos.line == 0


def test_unterminated_key() -> None:
    e = error('{"ab')
    assert e.message == "unterminated string"
    assert e.pos == Pos(0, 1)


def test_unterminated_object_points_at_end_of_file() -> None:
    text = '{\n  "a": 1,\n  "b": 2'
    e = error(text)
    assert "end of file" in e.message
    assert e.pos == Pos(2, 8)


def test_unterminated_object_after_trailing_comma() -> None:
    e = error('{"a": 1,')
    assert e.pos == Pos(0, 8)


def test_unterminated_array() -> None:
    e = error("[1, 2")
    assert "end of file" in e.message
    assert "]" in e.message
    assert e.pos == Pos(0, 5)


def test_missing_value_at_end() -> None:
    e = error('{"a": ')
    assert "expected a value" in e.message
    assert e.pos == Pos(0, 6)


def test_unterminated_block_comment() -> None:
    text = '{"a": 1}\n  /* never closed\n'
    e = error(text)
    assert "comment" in e.message
    assert e.pos == Pos(1, 2)


def test_empty_document() -> None:
    assert "empty" in error("").message
    assert "empty" in error("   \n\t").message
    assert "empty" in error("// just a comment\n/* and another */").message


@pytest.mark.parametrize(
    ("text", "pos", "fragment"),
    [
        ('{"a": 1} garbage', Pos(0, 9), "after the end"),
        ('{"a": 1}}', Pos(0, 8), "after the end"),
        ("{a: 1}", Pos(0, 1), "double quotes"),
        ("{'a': 1}", Pos(0, 1), "double quotes"),
        ('{"a" 1}', Pos(0, 5), "':'"),
        ('{"a": 1 "b": 2}', Pos(0, 8), "','"),
        ('[1 2]', Pos(0, 3), "','"),
        ('{"a": undefined}', Pos(0, 6), "expected a value"),
        ('{"a": \'x\'}', Pos(0, 6), "expected a value"),
        ('{"a": .5}', Pos(0, 6), "expected a value"),
        ('{"a": tru}', Pos(0, 6), "expected a value"),
        ('{"a": -}', Pos(0, 6), "invalid number"),
        ('{"a": 1.2.3}', Pos(0, 6), "invalid number"),
        ('{"a": 1e}', Pos(0, 6), "invalid number"),
        ("garbage", Pos(0, 0), "expected a value"),
        ("\n\n   @", Pos(2, 3), "expected a value"),
    ],
)
def test_syntax_errors_have_positions(text: str, pos: Pos, fragment: str) -> None:
    e = error(text)
    assert e.pos == pos
    assert fragment in e.message
    assert f"line {pos.line + 1}, column {pos.column + 1}" in str(e)


def test_error_is_a_value_error() -> None:
    with pytest.raises(ValueError):
        parse("{")


def test_error_positions_after_multibyte_characters_are_string_indices() -> None:
    text = '{"é": "ü", x}'
    e = error(text)
    assert e.pos == Pos(0, 11)


# spans -----------------------------------------------------------------


SAMPLE = """{
  // servers
  "mcpServers": {
    "gh": {
      "command": "npx",
      "args": ["-y", 42, {"deep": [true]}],
      "env": {"TOKEN": null}
    }
  },
  "n": -12.5e1
}
"""


def test_spans_of_nested_values() -> None:
    doc = parse(SAMPLE)
    assert doc.spans[()] == Span(Pos(0, 0), Pos(10, 1))
    assert doc.spans[("mcpServers", "gh", "command")] == Span(Pos(4, 17), Pos(4, 22))
    assert doc.spans[("mcpServers", "gh", "args", 0)] == Span(Pos(5, 15), Pos(5, 19))
    assert doc.spans[("mcpServers", "gh", "args", 1)] == Span(Pos(5, 21), Pos(5, 23))
    assert doc.spans[("mcpServers", "gh", "args", 2, "deep", 0)].start == locate(SAMPLE, "true")
    assert doc.spans[("mcpServers", "gh", "env", "TOKEN")] == Span(Pos(6, 23), Pos(6, 27))
    assert doc.spans[("mcpServers", "gh", "env", "TOKEN")].start == locate(SAMPLE, "null")
    assert doc.spans[("n",)] == Span(Pos(9, 7), Pos(9, 14))


def test_span_of_a_container_covers_it_whole() -> None:
    doc = parse(SAMPLE)
    args = doc.spans[("mcpServers", "gh", "args")]
    assert args.start == locate(SAMPLE, '["-y"')
    end = locate(SAMPLE, "]}],")
    assert args.end == Pos(end.line, end.column + 3)
    gh = doc.spans[("mcpServers", "gh")]
    assert gh.start == Pos(3, 10)
    assert gh.end == Pos(7, 5)


def test_every_value_has_a_span_and_keys_have_key_spans() -> None:
    doc = parse(SAMPLE)

    def walk(v, path):
        yield path
        if isinstance(v, dict):
            for k, x in v.items():
                yield from walk(x, (*path, k))
        elif isinstance(v, list):
            for i, x in enumerate(v):
                yield from walk(x, (*path, i))

    paths = list(walk(doc.value, ()))
    assert set(paths) == set(doc.spans)
    key_paths = {p for p in paths if p and isinstance(p[-1], str)}
    assert key_paths == set(doc.key_spans)


def test_key_spans_include_the_quotes() -> None:
    doc = parse(SAMPLE)
    assert doc.key_spans[("mcpServers", "gh", "command")] == Span(Pos(4, 6), Pos(4, 15))
    assert doc.key_spans[("mcpServers",)] == Span(Pos(2, 2), Pos(2, 14))
    assert doc.key_spans[("mcpServers", "gh", "args", 2, "deep")].start == locate(SAMPLE, '"deep"')


def test_span_of_escaped_string_covers_the_source_text() -> None:
    text = r'{"k\"ey": "a\u0041\n"}'
    doc = parse(text)
    assert doc.value == {'k"ey': "aA\n"}
    assert doc.key_spans[('k"ey',)] == Span(Pos(0, 1), Pos(0, 8))
    assert doc.spans[('k"ey',)] == Span(Pos(0, 10), Pos(0, 21))


def test_span_lookup_falls_back_to_the_nearest_enclosing_value() -> None:
    doc = parse(SAMPLE)
    gh = doc.spans[("mcpServers", "gh")]
    assert doc.span(("mcpServers", "gh", "missing")) == gh
    assert doc.span(("mcpServers", "gh", "missing", 3, "x")) == gh
    assert doc.span(()) == doc.spans[()]
    assert doc.span(("nope",)) == doc.spans[()]
    # keys: the key span when there is one, else the enclosing value
    assert doc.span(("mcpServers", "gh", "command"), key=True) == doc.key_spans[("mcpServers", "gh", "command")]
    assert doc.span(("mcpServers", "gh", "args", 0), key=True) == doc.spans[("mcpServers", "gh", "args", 0)]
    assert doc.span(("mcpServers", "gh", "nope"), key=True) == doc.key_spans[("mcpServers", "gh")]


def test_span_lookup_accepts_lists() -> None:
    doc = parse('{"a": [1]}')
    assert doc.span(["a", 0]) == doc.spans[("a", 0)]  # type: ignore[arg-type]


def test_spans_on_a_single_line_document() -> None:
    text = '{"a":{"b":[10,"x"]}}'
    doc = parse(text)
    assert doc.spans[("a", "b", 0)] == Span(Pos(0, 11), Pos(0, 13))
    assert doc.spans[("a", "b", 1)] == Span(Pos(0, 14), Pos(0, 17))
    assert doc.key_spans[("a", "b")] == Span(Pos(0, 6), Pos(0, 9))


def test_document_is_usable_without_spans() -> None:
    doc = jsonc.Document(value={}, spans={}, key_spans={})
    assert doc.span(("x",)) is None


# format_path -----------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ((), "(root)"),
        (("mcpServers",), "mcpServers"),
        (("mcpServers", "gh", "env", "TOKEN"), "mcpServers.gh.env.TOKEN"),
        (("mcpServers", "gh", "args", 0), "mcpServers.gh.args[0]"),
        (("a", 1, 2, "b"), "a[1][2].b"),
        ((0, "x"), "[0].x"),
    ],
)
def test_format_path(path, expected: str) -> None:
    assert format_path(path) == expected


# limits and robustness ---------------------------------------------------


def test_nesting_up_to_the_limit_parses() -> None:
    text = "[" * MAX_DEPTH + "]" * MAX_DEPTH
    v = value(text)
    for _ in range(MAX_DEPTH - 1):
        v = v[0]
    assert v == []
    assert value('{"a": ' * MAX_DEPTH + "1" + "}" * MAX_DEPTH) is not None


@pytest.mark.parametrize("opener", ["[", '{"k": ', '[{"k": '])
def test_nesting_deeper_than_the_limit_is_a_jsonc_error_where_it_is_crossed(opener: str) -> None:
    assert MAX_DEPTH == 128
    text = "// deep\n" + opener * 300 + "1"
    e = error(text)
    assert "nested deeper than 128 levels" in e.message
    # the position is the opening bracket of level 129
    brackets = [i for i, c in enumerate(text) if c in "[{"]
    crossed = brackets[MAX_DEPTH]
    assert e.pos == Pos(1, crossed - len("// deep\n"))


def test_very_deep_input_is_a_jsonc_error_not_a_recursion_error() -> None:
    for text in ["[" * 100_000, '{"a":' * 100_000, "[" * 50_000 + "]" * 50_000]:
        assert "nested deeper than 128 levels" in error(text).message


def test_deep_input_from_a_deep_caller_is_still_a_jsonc_error() -> None:
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(len(inspect.stack()) + 150)  # room for 128 levels only if shallow
    try:
        with pytest.raises(JsoncError):
            parse("[" * MAX_DEPTH + "]" * MAX_DEPTH)
    finally:
        sys.setrecursionlimit(old)


def test_huge_numbers_and_long_bad_tokens_give_short_messages() -> None:
    e = error("[" + "9" * 100_000 + "]")  # beyond int()'s digit limit
    assert "invalid number" in e.message and len(e.message) < 200
    assert value("[1e999]") == [math.inf]
    e = error('{"' + "k" * 100_000 + '" 1}')
    assert "':'" in e.message and len(e.message) < 200


def test_only_ascii_digits_are_numbers() -> None:
    assert "expected a value" in error("[\u0663]").message  # ARABIC-INDIC DIGIT THREE
    assert "expected a value" in error("[\u00b2]").message  # SUPERSCRIPT TWO


def _parses_or_jsonc_error(text: str) -> None:
    try:
        doc = parse(text)
    except JsoncError as exc:
        assert exc.pos.line >= 0 and exc.pos.column >= 0
        assert exc.pos.line <= text.count("\n")
    else:
        assert isinstance(doc, Document)
        assert () in doc.spans


@given(st.text(max_size=400))
@settings(max_examples=500, deadline=None)
def test_any_text_is_a_document_or_a_jsonc_error(text: str) -> None:
    _parses_or_jsonc_error(text)


jsonish = st.text(alphabet=list('{}[]",:0123456789-+.eEtrufalsn /*\\\n\r\t\ufeffu'), max_size=300)


@given(jsonish)
@settings(max_examples=1500, deadline=None)
def test_json_like_text_is_a_document_or_a_jsonc_error(text: str) -> None:
    _parses_or_jsonc_error(text)


@given(st.lists(st.sampled_from(["[", "{", '{"a":', "]", "}", ",", "1", '"x"', " ", "//c\n", "/*c*/"]),
                max_size=400))
@settings(max_examples=500, deadline=None)
def test_bracket_soup_is_a_document_or_a_jsonc_error(tokens: list[str]) -> None:
    _parses_or_jsonc_error("".join(tokens))


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | st.text(),
    lambda children: st.lists(children, max_size=5) | st.dictionaries(st.text(max_size=8), children, max_size=5),
    max_leaves=40,
)


@given(json_values, st.sampled_from([None, 2]), st.booleans())
@settings(max_examples=400, deadline=None)
def test_json_from_the_standard_library_parses_to_the_same_value(v: Any, indent: int | None, ascii_: bool) -> None:
    text = json.dumps(v, indent=indent, ensure_ascii=ascii_)
    assert parse(text).value == json.loads(text)


def test_a_megabyte_of_settings_parses() -> None:
    entry = {
        "command": "/usr/local/bin/server",
        "args": ["--port", "8000", 'say \\"hi\\"', "path\\with\\backslashes", "unicode \u2713 \u00e9"],
        "env": {"TOKEN": "${env:TOKEN}", "LEVEL": "debug"},
        "timeout": 30.5, "enabled": True, "retries": None, "weights": [1, -2, 3e5, 0.25],
    }
    body = json.dumps(entry, indent=4, ensure_ascii=False)
    chunks = [f'  /* server {i} */\n  "server-{i}": {body}, // trailing\n' for i in range(3000)]
    text = '{\n  "mcpServers": {\n' + "".join(chunks) + "  },\n}\n"
    assert len(text) > 1_000_000
    doc = parse(text)  # (its speed is not asserted here: timings belong in benchmarks, not tests)
    assert len(doc.value["mcpServers"]) == 3000


# number grammar: exactly JSON's ----------------------------------------------------------------


@pytest.mark.parametrize("raw", ["007", "00", "-01", "01.5", "1.", "1.e3", "-", "1e", "1e+", "1.5e", "--1", "1-2",
                                 "1e5e5", "0.5.5"])
def test_numbers_outside_the_json_grammar_are_invalid_numbers_at_their_start(raw: str) -> None:
    e = error(f'{{"a": {raw}}}')
    assert "invalid number" in e.message and e.pos == Pos(0, 6)


@pytest.mark.parametrize("raw", [".5", "+1", "\u0663", "-\u0663", "\uff11", "Infinity", "-Infinity", "NaN", "0x1F",
                                 "1_000"])
def test_other_number_like_tokens_are_rejected(raw: str) -> None:
    error(f"[{raw}]")


@pytest.mark.parametrize("raw", ["0", "-0", "10", "0.5", "-0.0", "1e5", "1E+2", "2e-3", "-1.5e-3", "123456789012345678901"])
def test_json_numbers_are_accepted_with_json_values(raw: str) -> None:
    assert value(f"[{raw}]") == json.loads(f"[{raw}]")
    assert type(value(f"[{raw}]")[0]) is type(json.loads(f"[{raw}]")[0])


@given(st.text(alphabet="0123456789-+.eE", min_size=1, max_size=8))
@settings(max_examples=300, deadline=None)
def test_a_number_token_parses_exactly_when_json_accepts_it(raw: str) -> None:
    try:
        expected = json.loads(f"[{raw}]")
    except ValueError:
        with pytest.raises(JsoncError):
            parse(f"[{raw}]")
    else:
        assert value(f"[{raw}]") == expected


def test_numbers_with_comments_and_trailing_commas() -> None:
    assert value('{"a": 0, /* c */ "b": [-0.5e1, 10,], // d\n}') == {"a": 0, "b": [-5.0, 10]}
    assert "invalid number" in error('{"a": 007, // leading zeros\n}').message
