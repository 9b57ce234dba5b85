"""The JSONC grammar: values, comments, trailing commas, strings and escapes, and numbers exactly as
JSON has them.

Error positions and spans are in test_jsonc_positions.py, limits and property tests in
test_jsonc_robustness.py; helpers in jsonc_helpers.py.
"""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ls.config.jsonc import JsoncError, Pos, parse
from tests.unit.jsonc_helpers import error, locate, value

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
