"""Tool action templates: ``${selection}`` as a whole value takes the type the tool's input
schema asks for there (issue 30, item 6), and a selection that does not fit says so."""

from __future__ import annotations

import pytest

from agent_ls.agent.tools.arguments import SelectionDoesNotFit, schema_types, typed_text
from agent_ls.server.handlers.code_actions import expand_template

SCHEMA = {"type": "object", "properties": {
    "a": {"type": "integer"}, "b": {"type": "number"}, "flag": {"type": "boolean"},
    "opts": {"type": "object"}, "ids": {"type": "array", "items": {"type": "integer"}},
    "maybe": {"anyOf": [{"type": "integer"}, {"type": "null"}]}, "text": {"type": "string"},
    "either": {"type": ["integer", "string"]}, "nested": {"type": "object", "properties": {"n": {"type": "number"}}},
}}


@pytest.mark.parametrize(("text", "schema", "value"), [
    ("21", {"type": "integer"}, 21),
    (" 21\n", {"type": "integer"}, 21),
    ("21.0", {"type": "integer"}, 21),
    ("2.5", {"type": "number"}, 2.5),
    ("-3", {"type": "number"}, -3),
    ("true", {"type": "boolean"}, True),
    ("False", {"type": "boolean"}, False),
    ('{"k": [1, 2]}', {"type": "object"}, {"k": [1, 2]}),
    ("[1, 2]", {"type": "array"}, [1, 2]),
    ("21", {"anyOf": [{"type": "integer"}, {"type": "null"}]}, 21),
    ("21", {"type": "string"}, "21"),
    ("21", {"type": ["integer", "string"]}, "21"),  # a string is allowed: the text stays as it is
    ("21", {}, "21"),
    ("21", {"type": "null"}, "21"),
])
def test_the_selection_takes_the_schema_type(text: str, schema: dict[str, object], value: object) -> None:
    got = typed_text(text, schema)
    assert got == value and type(got) is type(value)


@pytest.mark.parametrize(("text", "schema", "wanted"), [
    ("21x", {"type": "integer"}, "an integer"),
    ("2.5", {"type": "integer"}, "an integer"),
    ("true", {"type": "integer"}, "an integer"),
    ("NaN", {"type": "number"}, "a number"),
    ("yes", {"type": "boolean"}, "a boolean"),
    ("[1]", {"type": "object"}, "a JSON object"),
    ("{}", {"type": "array"}, "a JSON array"),
    ("", {"type": ["integer", "boolean"]}, "an integer or a boolean"),
])
def test_a_selection_that_does_not_fit_says_what_was_wanted(text: str, schema: dict[str, object], wanted: str) -> None:
    with pytest.raises(SelectionDoesNotFit, match=wanted) as err:
        typed_text(text, schema)
    assert repr(text.strip()) in str(err.value)


def test_a_long_selection_is_shortened_in_the_message() -> None:
    with pytest.raises(SelectionDoesNotFit) as err:
        typed_text("x" * 500, {"type": "integer"})
    assert len(str(err.value)) < 120


def test_schema_types_reads_type_lists_and_branches() -> None:
    assert schema_types({"type": ["integer", "null"]}) == ["integer", "null"]
    assert schema_types({"oneOf": [{"type": "number"}, {"anyOf": [{"type": "boolean"}]}]}) == ["number", "boolean"]
    assert schema_types("nonsense") == []


def test_expand_template_types_whole_selections_by_the_schema() -> None:
    template = {"a": "${selection}", "b": 100, "text": "${selection}", "label": "n=${selection}",
                "ids": ["${selection}", "${line}"], "nested": {"n": "${selection}"}, "unknown": "${selection}"}
    ctx = {"selection": "21", "line": 4}
    assert expand_template(template, ctx, SCHEMA) == {
        "a": 21, "b": 100, "text": "21", "label": "n=21", "ids": [21, 4], "nested": {"n": 21}, "unknown": "21"}
    # Without a schema (as before): the selection stays text.
    assert expand_template(template, ctx)["a"] == "21"


def test_expand_template_names_the_argument_that_does_not_fit() -> None:
    with pytest.raises(SelectionDoesNotFit, match=r"argument 'ids\[0\]' needs an integer, and the selection 'abc'"):
        expand_template({"ids": ["${selection}"]}, {"selection": "abc"}, SCHEMA)
    with pytest.raises(SelectionDoesNotFit, match="argument 'flag' needs a boolean"):
        expand_template({"flag": "${selection}"}, {"selection": "1"}, SCHEMA)
