"""Tool input schemas are JSON Schema 2020-12 (MCP 2026-07-28, issue 15): they reach the model
unchanged (no ``$ref`` dereferencing, no rewriting), and the host checks the arguments the model
sends with 2020-12 semantics before the call goes to the server.

The ``shaped`` tool of tests/servers/misbehaving_modern.py serves SCHEMA_2020_12 (``$schema``,
``$defs``, ``$ref``, ``prefixItems``, ``unevaluatedProperties``) over a real stdio subprocess;
the model is the scripted LLM on 127.0.0.1, reached through litellm.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_ls.mcp.adapter import make_spec
from tests.agent.conftest import make_session
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls
from tests.mcp.conftest import HostEnv
from tests.servers import misbehaving_modern
from tests.servers.misbehaving_modern import SCHEMA_2020_12, SHAPED_DESCRIPTION

GOOD = {"origin": [1, 2.5], "name": "p", "style": {"color": "red", "width": 3}}

BAD_CALLS = [
    # prefixItems + items: false: a third coordinate (a draft-7 validator ignores prefixItems)
    ({"origin": [1, 2, 3], "name": "p"}, "origin: Expected at most 2 items but found 1 extra: 3"),
    # prefixItems: each position has its own schema
    ({"origin": ["x", 2], "name": "p"}, "origin/0: 'x' is not of type 'number'"),
    # unevaluatedProperties: false at the root (additionalProperties would not exist here)
    ({"origin": [1, 2], "name": "p", "extra": 1}, "Unevaluated properties are not allowed ('extra' was unexpected)"),
    # unevaluatedProperties sees through allOf: width is allowed, border is not
    ({"origin": [1, 2], "name": "p", "style": {"width": 1, "border": 2}},
     "style: Unevaluated properties are not allowed ('border' was unexpected)"),
    # $ref into $defs is followed
    ({"origin": [1, 2], "name": ""}, "name: '' should be non-empty"),
]


def entry(record: Path) -> dict[str, Any]:
    return {"command": sys.executable, "args": [misbehaving_modern.__file__, "--record", str(record)],
            "protocol": "auto", "connectTimeout": 10, "callTimeout": 10}


def shaped_calls(record: Path) -> list[Any]:
    lines = [json.loads(line) for line in record.read_text().splitlines()] if record.exists() else []
    return [r["arguments"] for r in lines if r["method"] == "tools/call"]


async def test_the_schema_reaches_the_tool_spec_byte_for_byte(host: HostEnv, tmp_path: Path) -> None:
    m = await host.manager({"s": entry(tmp_path / "r.jsonl")})
    tool = m.find_tool("s", "shaped")
    assert tool is not None
    assert json.dumps(tool.spec.input_schema) == json.dumps(SCHEMA_2020_12)
    assert json.dumps(tool.spec.to_openai()["function"]["parameters"]) == json.dumps(SCHEMA_2020_12)
    # make_spec itself, from the listing the connection holds
    conn = m.connection("s")
    assert conn is not None
    listed = next(t for t in conn.listing.tools if t.name == "shaped")
    spec = make_spec("s", listed, "mcp__s__shaped")
    assert json.dumps(spec.input_schema) == json.dumps(SCHEMA_2020_12) and spec.description == SHAPED_DESCRIPTION


@pytest.mark.parametrize(("arguments", "problem"), BAD_CALLS)
async def test_arguments_are_checked_with_2020_12_semantics_before_the_call(
        host: HostEnv, tmp_path: Path, arguments: dict[str, Any], problem: str) -> None:
    record = tmp_path / "r.jsonl"
    m = await host.manager({"s": entry(record)})
    result = await m.call_tool("s", "shaped", arguments)
    assert result.is_error
    assert result.content == ("[MCP server 's', tool 'shaped'] was not called: the arguments do not match its "
                              f"input schema: {problem}")
    assert shaped_calls(record) == []  # it never reached the server
    ok = await m.call_tool("s", "shaped", GOOD)
    assert not ok.is_error and json.loads(ok.content) == GOOD
    assert shaped_calls(record) == [GOOD]


async def test_the_model_gets_the_schema_unchanged_and_a_bad_call_back_as_an_error(host: HostEnv,
                                                                                   tmp_path: Path) -> None:
    record = tmp_path / "r.jsonl"
    m = await host.manager({"s": entry(record)})
    with ScriptedLLM() as llm:
        session = make_session(llm, host.workspace, mcp=m, defer=False)
        bad = {"origin": [1, 2, 3], "name": "p", "extra": True}
        llm.script(tool_calls([("mcp__s__shaped", bad)]), tool_calls([("mcp__s__shaped", GOOD)]), text("done"))
        answer = await session.prompt("place the point")
        assert answer.text == "done"
        first = llm.requests[0].body
        sent = next(t for t in first["tools"] if t["function"]["name"] == "mcp__s__shaped")
        # what litellm put on the wire is the server's schema, byte for byte
        assert json.dumps(sent["function"]["parameters"]) == json.dumps(SCHEMA_2020_12)
        assert sent["function"]["description"] == SHAPED_DESCRIPTION
        tool_messages = [msg for msg in llm.requests[1].body["messages"] if msg["role"] == "tool"]
        assert tool_messages[-1]["content"] == (
            "Error: [MCP server 's', tool 'shaped'] was not called: the arguments do not match its input schema: "
            "Unevaluated properties are not allowed ('extra' was unexpected); "
            "origin: Expected at most 2 items but found 1 extra: 3")
        tool_messages = [msg for msg in llm.requests[2].body["messages"] if msg["role"] == "tool"]
        assert json.loads(tool_messages[-1]["content"]) == GOOD
    assert shaped_calls(record) == [GOOD]  # only the valid call reached the server


async def test_a_schema_in_another_dialect_or_broken_is_left_to_the_server() -> None:
    """``$schema`` picks the dialect (draft-07 has no unevaluatedProperties); a schema the
    validator cannot use never blocks a call."""
    from agent_ls.mcp.adapter import argument_problems, schema_validator

    draft7 = {"$schema": "http://json-schema.org/draft-07/schema#", "type": "object",
              "properties": {"a": {"type": "integer"}}, "unevaluatedProperties": False}
    v = schema_validator(draft7)
    assert v is not None and argument_problems(v, {"a": 1, "b": 2}) == []
    assert argument_problems(v, {"a": "x"}) == ["a: 'x' is not of type 'integer'"]
    assert schema_validator({"type": "object", "properties": {"a": {"type": 5}}}) is None
    remote = schema_validator({"type": "object", "properties": {"a": {"$ref": "https://example.invalid/s.json"}}})
    assert remote is not None and argument_problems(remote, {"a": 1}) == []


def test_null_for_an_optional_parameter_counts_as_leaving_it_out() -> None:
    """Models write optional parameters as null, and an MCP header parameter whose value is null
    is omitted (conformance http-custom-headers): not a reason to refuse the call; a null for a
    required parameter still is."""
    from agent_ls.mcp.adapter import argument_problems, schema_validator

    v = schema_validator({"type": "object", "required": ["q"],
                          "properties": {"q": {"type": "string"}, "verbose": {"type": "boolean"}}})
    assert v is not None
    assert argument_problems(v, {"q": "x", "verbose": None}) == []
    assert argument_problems(v, {"q": None}) == ["q: None is not of type 'string'"]
    assert argument_problems(v, {"q": "x", "verbose": "yes"}) == ["verbose: 'yes' is not of type 'boolean'"]
