"""The JSONC parser's limits (nesting depth, huge tokens, a megabyte of settings) and property tests:
any text is a document or a JsoncError, never another exception.
"""

from __future__ import annotations

import inspect
import json
import math
import sys
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_ls.config.jsonc import MAX_DEPTH, Document, JsoncError, Pos, parse
from tests.unit.jsonc_helpers import error, value

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
