"""Prove every knob of the knob fixture server with the bare mcp SDK client: launch helpers, tools and
result shapes, env knobs, server-to-client requests, list-changed notifications, and the
2026-07-28 (auto) mode over stdio. Failures are in test_knob_server_failures.py, Streamable HTTP in
test_knob_server_http.py."""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

import anyio
import mcp_types as types
import pytest
from mcp.shared.exceptions import MCPError

from .knob_client import (
    BASE_TOOLS,
    ROOTS,
    Recorder,
    errlog,
    list_all_tools,
    read_log,
    stdio_knob,
    text_of,
    wait_until,
)
from .knob_server import LONG_TOOL_NAMES
from .launch import KNOB_SERVER, knob_stdio_params

__all__ = ["errlog"]  # the fixture, from knob_client.py


# --------------------------------------------------------------------------- launch helpers


def test_stdio_params_shape() -> None:
    entry = knob_stdio_params("--tools", 3)
    assert entry == {"command": sys.executable, "args": [str(KNOB_SERVER), "--tools", "3"]}
    assert KNOB_SERVER.is_file()


def test_help_lists_env_vars() -> None:
    out = subprocess.run(
        [sys.executable, str(KNOB_SERVER), "--help"], capture_output=True, text=True, timeout=30, check=True
    ).stdout
    for env in ("KNOB_SLOW_HANDSHAKE", "KNOB_EXIT_DURING_HANDSHAKE", "KNOB_GARBAGE_STDOUT", "KNOB_TOOLS"):
        assert env in out


# --------------------------------------------------------------------------- stdio, legacy


async def test_basic_tools_and_result_shapes(errlog: Any) -> None:
    async with stdio_knob("--instructions", "use the knobs", errlog=errlog) as client:
        assert client.protocol_version == "2025-11-25"
        assert client.server_info is not None and client.server_info.name == "knob"
        assert client.instructions == "use the knobs"
        caps = client.server_capabilities
        assert caps.tools is not None and caps.tools.list_changed
        assert caps.prompts is not None and caps.prompts.list_changed
        assert caps.resources is not None and caps.resources.list_changed

        tools = {t.name: t for t in await list_all_tools(client)}
        assert set(tools) >= BASE_TOOLS
        assert tools["echo"].annotations is not None and tools["echo"].annotations.read_only_hint is True
        assert tools["add"].annotations is not None and tools["add"].annotations.read_only_hint is True
        assert (
            tools["delete_item"].annotations is not None and tools["delete_item"].annotations.destructive_hint
        )
        assert tools["fetch_url"].annotations is not None and tools["fetch_url"].annotations.open_world_hint
        assert tools["no_annotations_write_file"].annotations is None
        assert tools["structured"].output_schema is not None
        assert tools["structured_only"].output_schema is not None

        assert text_of(await client.call_tool("echo", {"text": "héllo"})) == "héllo"
        assert text_of(await client.call_tool("add", {"a": 1, "b": 2})) == "3"
        assert text_of(await client.call_tool("add", {"a": 1, "b": 1.5})) == "2.5"
        assert text_of(await client.call_tool("sleep", {"seconds": 0.05})) == "slept 0.05"
        assert len(text_of(await client.call_tool("huge", {"chars": 300_000}))) == 300_000

        image = await client.call_tool("image", {})
        kinds = [type(b) for b in image.content]
        assert kinds == [types.TextContent, types.ImageContent]
        assert image.content[1].mime_type == "image/png"  # type: ignore[union-attr]

        resource = await client.call_tool("resource_result", {})
        assert {type(b) for b in resource.content} == {
            types.TextContent,
            types.EmbeddedResource,
            types.ResourceLink,
        }

        structured = await client.call_tool("structured", {})
        assert structured.structured_content == {
            "city": "Lisbon",
            "temperature_c": 21.5,
            "conditions": ["sunny", "breezy"],
        }
        assert structured.content  # text fallback too

        only = await client.call_tool("structured_only", {})
        assert only.content == [] and only.structured_content is not None and not only.is_error

        failed = await client.call_tool("fail", {})
        assert failed.is_error and "always fails" in text_of(failed)
        raised = await client.call_tool("raise_error", {})
        assert raised.is_error and "raise_error" in text_of(raised)

        progress: list[float] = []

        async def on_progress(value: float, total: float | None, message: str | None) -> None:
            progress.append(value)

        assert (
            text_of(await client.call_tool("progress", {"steps": 3}, progress_callback=on_progress)) == "done"
        )
        await wait_until(lambda: len(progress) == 3)

        resources = {str(r.uri) for r in (await client.list_resources()).resources}
        assert {"knob://readme", "knob://blob"} <= resources
        templates = (await client.list_resource_templates()).resource_templates
        assert [t.uri_template for t in templates] == ["knob://items/{item_id}"]
        readme = (await client.read_resource("knob://readme")).contents[0]
        assert isinstance(readme, types.TextResourceContents) and "knob server" in readme.text
        blob = (await client.read_resource("knob://blob")).contents[0]
        assert isinstance(blob, types.BlobResourceContents)
        item = (await client.read_resource("knob://items/42")).contents[0]
        assert isinstance(item, types.TextResourceContents) and json.loads(item.text)["id"] == "42"

        prompts = {p.name: p for p in (await client.list_prompts()).prompts}
        assert {"review", "greet"} <= set(prompts)
        assert [a.name for a in prompts["greet"].arguments or []] == ["name", "style"]
        greeting = await client.get_prompt("greet", {"name": "Ada"})
        assert "Ada" in greeting.messages[0].content.text  # type: ignore[union-attr]
        review = await client.get_prompt("review", {"code": "x = 1"})
        assert "x = 1" in review.messages[0].content.text  # type: ignore[union-attr]


async def test_hundreds_of_tools_and_long_names(errlog: Any) -> None:
    async with stdio_knob("--tools", 300, "--long-names", errlog=errlog) as client:
        tools = await list_all_tools(client)
        names = [t.name for t in tools]
        assert len(names) >= 300 + len(BASE_TOOLS)
        assert {f"tool_{i:04d}" for i in range(300)} <= set(names)
        assert len({t.description for t in tools if t.name.startswith("tool_")}) > 10
        for long_name in LONG_TOOL_NAMES:
            assert long_name in names and len(long_name) >= 80
        assert any(not n.isascii() for n in names) and any(" " in n for n in names)
        assert any("/" in n and "." in n for n in names)
        weird = LONG_TOOL_NAMES[2]
        assert text_of(await client.call_tool(weird, {"text": "hi"})) == f"{weird}: hi"
        assert text_of(await client.call_tool("tool_0001", {"count": 2})) == "tool_0001: count=2 flag=False"


async def test_env_vars_set_knobs(errlog: Any) -> None:
    env = {"KNOB_NAME": "from-env", "KNOB_TOOLS": "5", "KNOB_STDERR_LINE": "env-marker-line"}
    async with stdio_knob(errlog=errlog, env=env) as client:
        assert client.server_info is not None and client.server_info.name == "from-env"
        names = {t.name for t in await list_all_tools(client)}
        assert {f"tool_{i:04d}" for i in range(5)} <= names and "tool_0005" not in names
    assert "env-marker-line" in read_log(errlog)


async def test_roots_elicitation_sampling(errlog: Any) -> None:
    rec = Recorder()
    async with stdio_knob(errlog=errlog, **rec.client_kwargs()) as client:
        roots = json.loads(text_of(await client.call_tool("roots", {})))
        assert roots == {"roots": [{"uri": str(r.uri), "name": r.name} for r in ROOTS]}

        assert text_of(await client.call_tool("roots_changed_count", {})) == "0"
        await client.send_roots_list_changed()
        await client.send_roots_list_changed()
        for _ in range(100):
            if text_of(await client.call_tool("roots_changed_count", {})) == "2":
                break
            await anyio.sleep(0.02)
        assert text_of(await client.call_tool("roots_changed_count", {})) == "2"

        answer = json.loads(text_of(await client.call_tool("ask", {"question": "Who are you?"})))
        assert answer == {"action": "accept", "content": {"name": "bob", "count": 7, "ok": True}}
        (params,) = rec.elicitations
        assert isinstance(params, types.ElicitRequestFormParams) and params.message == "Who are you?"
        props = params.requested_schema["properties"]
        assert props["name"]["default"] == "anon" and props["count"]["default"] == 3
        assert props["ok"]["type"] == "boolean"

        assert text_of(await client.call_tool("sample", {"prompt": "meaning of life?"})) == "sampled: 42"
        (sampling,) = rec.samplings
        assert sampling.messages[0].content.text == "meaning of life?"  # type: ignore[union-attr]


async def test_list_changed_notifications(errlog: Any) -> None:
    rec = Recorder()
    async with stdio_knob(errlog=errlog, **rec.client_kwargs()) as client:
        await client.call_tool("add_tool", {"name": "dyn_tool"})
        await wait_until(lambda: rec.of_type(types.ToolListChangedNotification))
        assert "dyn_tool" in {t.name for t in await list_all_tools(client)}
        assert text_of(await client.call_tool("dyn_tool", {"text": "x"})) == "dynamic tool dyn_tool says x"

        await client.call_tool("remove_tool", {"name": "dyn_tool"})
        await wait_until(lambda: len(rec.of_type(types.ToolListChangedNotification)) == 2)
        assert "dyn_tool" not in {t.name for t in await list_all_tools(client)}

        await client.call_tool("touch_prompts", {})
        await wait_until(lambda: rec.of_type(types.PromptListChangedNotification))
        assert "dynamic_prompt_0" in {p.name for p in (await client.list_prompts()).prompts}

        await client.call_tool("touch_resources", {})
        await wait_until(lambda: rec.of_type(types.ResourceListChangedNotification))
        assert "knob://dynamic/0" in {str(r.uri) for r in (await client.list_resources()).resources}


# --------------------------------------------------------------------------- stdio, auto (2026-07-28)


async def test_auto_mode_stdio(errlog: Any) -> None:
    rec = Recorder()
    async with stdio_knob(errlog=errlog, mode="auto", **rec.client_kwargs()) as client:
        assert client.protocol_version == "2026-07-28"
        assert text_of(await client.call_tool("echo", {"text": "modern"})) == "modern"
        roots = json.loads(text_of(await client.call_tool("roots", {})))
        assert [r["name"] for r in roots["roots"]] == ["a", "b"]
        answer = json.loads(text_of(await client.call_tool("ask", {"question": "q"})))
        assert answer["action"] == "accept"
        assert text_of(await client.call_tool("sample", {"prompt": "p"})) == "sampled: 42"
        with pytest.raises(MCPError):
            await client.call_tool("hang", {}, read_timeout_seconds=0.3)
