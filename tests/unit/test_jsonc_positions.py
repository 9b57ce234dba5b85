"""The JSONC parser's positions: syntax errors at their place, the spans of values and keys, and
:func:`~agent_ls.config.jsonc.format_path`.
"""

from __future__ import annotations

import pytest

from agent_ls.config import jsonc
from agent_ls.config.jsonc import Pos, Span, format_path, parse
from tests.unit.jsonc_helpers import error, locate

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
