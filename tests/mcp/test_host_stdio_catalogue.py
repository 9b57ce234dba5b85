"""The MCP host against the knob fixture server over stdio (real subprocesses): what it lists and
forwards (tools, result kinds, resources, prompts, instructions) and the server-to-client requests
(roots, elicitation, sampling)."""

from __future__ import annotations

import asyncio
import json
import re
from pathlib import Path

import mcp_types as types
import pytest

from tests.mcp.conftest import HostEnv, status_of, wait_until
from tests.servers.launch import knob_stdio_params

NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


async def test_list_changed_marks_dirty_and_refresh_is_idempotent(host: HostEnv) -> None:
    m = await host.manager({"k": knob_stdio_params()})
    before = [t.spec.name for t in m.tools()]
    assert await m.refresh_if_dirty() in (True, False)  # settle the initial apply
    assert await m.refresh_if_dirty() is False
    res = await m.call_tool("k", "add_tool", {"name": "brand_new"})
    assert not res.is_error
    await wait_until(lambda: m.dirty)
    # Only the flag is set: the tool set is unchanged until the writer refreshes.
    assert [t.spec.name for t in m.tools()] == before
    results = await asyncio.gather(m.refresh_if_dirty(), m.refresh_if_dirty())
    assert results.count(True) == 1
    after = [t.spec.name for t in m.tools()]
    assert "mcp__k__brand_new" in after and len(after) == len(before) + 1
    assert await m.refresh_if_dirty() is False
    # prompts and resources list_changed also mark dirty
    await m.call_tool("k", "touch_prompts", {})
    await wait_until(lambda: m.dirty)
    assert await m.refresh_if_dirty() is True
    assert any(p.name.startswith("dynamic_prompt_") for _, p in m.prompts())


async def test_identical_tool_sets_give_identical_bytes(host: HostEnv) -> None:
    m = await host.manager({"b": knob_stdio_params(), "a": knob_stdio_params("--tools", "5")})
    tools = m.tools()
    keys = [(t.server, t.spec.display_name) for t in tools]
    assert keys == sorted(keys)
    dump1 = json.dumps([t.spec.to_openai() for t in tools])
    m.dirty = True
    for c in ("a", "b"):
        conn = m.connection(c)
        assert conn is not None
        conn.dirty = True
    await m.refresh_if_dirty()
    dump2 = json.dumps([t.spec.to_openai() for t in m.tools()])
    assert dump1 == dump2


async def test_huge_output_is_capped_with_marker(host: HostEnv) -> None:
    m = await host.manager({"k": knob_stdio_params()}, max_output_chars=10_000)
    res = await m.call_tool("k", "huge", {"chars": 50_000})
    assert res.truncated_chars == 40_000
    assert "40000 of 50000 characters cut" in res.content
    assert len(res.content) < 10_400
    small = await m.call_tool("k", "huge", {"chars": 9_000})
    assert small.truncated_chars == 0 and len(small.content) == 9_000


async def test_hundreds_of_tools_and_long_names(host: HostEnv) -> None:
    m = await host.manager({"many": knob_stdio_params("--tools", "300", "--long-names"),
                            "many.dup": knob_stdio_params("--tools", "3")})
    tools = m.tools()
    names = [t.spec.name for t in tools]
    assert len([t for t in tools if t.server == "many"]) >= 330
    assert all(NAME_RE.match(n) for n in names)
    assert len(set(names)) == len(names)
    long = [t for t in tools if len(t.spec.display_name or "") > 64]
    assert long and all(len(t.spec.name) <= 64 for t in long)
    # the original name is what goes to the server
    t = long[0]
    res = await t.call({})
    assert "no tool" not in res.content.lower()


@pytest.mark.parametrize("protocol", ["legacy", "auto"])
async def test_roots_echo_and_list_changed(host: HostEnv, tmp_path: Path, protocol: str) -> None:
    m = await host.manager({"r": {**knob_stdio_params(), "protocol": protocol}})
    res = await m.call_tool("r", "roots", {})
    roots = json.loads(res.content)["roots"]
    assert [r["uri"] for r in roots] == [host.workspace.resolve().as_uri()]
    other = tmp_path / "second"
    other.mkdir()
    await m.set_roots([host.workspace, other])
    count = await m.call_tool("r", "roots_changed_count", {})
    # the handshake era announces the change; 2026-07-28 has no such notification (the server
    # asks for the roots in each request that needs them)
    assert count.content.strip() == ("1" if protocol == "legacy" else "0")
    res = await m.call_tool("r", "roots", {})
    assert len(json.loads(res.content)["roots"]) == 2


@pytest.mark.parametrize("protocol", ["legacy", "auto"])  # a server-to-client request / an input_required round
async def test_elicitation_declined_without_handler_and_defaults_filled(host: HostEnv, protocol: str) -> None:
    m = await host.manager({"e": {**knob_stdio_params(), "protocol": protocol}})
    assert status_of(m, "e").protocol_version == ("2025-11-25" if protocol == "legacy" else "2026-07-28")
    res = await m.call_tool("e", "ask", {"question": "who?"})
    assert json.loads(res.content)["action"] == "decline"

    seen: list[str] = []

    async def handler(server: str, params: types.ElicitRequestParams) -> types.ElicitResult:
        seen.append(server)
        return types.ElicitResult(action="accept", content={"ok": True})

    m.set_elicitation_handler(handler)
    res = await m.call_tool("e", "ask", {"question": "who?"})
    body = json.loads(res.content)
    assert seen == ["e"]
    assert body["action"] == "accept"
    assert body["content"]["name"] == "anon" and body["content"]["count"] == 3 and body["content"]["ok"] is True


async def test_sampling_error_without_handler_and_routed_with_one(host: HostEnv) -> None:
    m = await host.manager({"s": knob_stdio_params()})
    res = await m.call_tool("s", "sample", {"prompt": "hi"})
    assert res.is_error or "not available" in res.content

    async def handler(server: str, params: types.CreateMessageRequestParams) -> types.CreateMessageResult:
        return types.CreateMessageResult(role="assistant", content=types.TextContent(text="sampled!"),
                                         model="test-model")

    m.callbacks.sampling = handler
    res = await m.call_tool("s", "sample", {"prompt": "hi"})
    assert "sampled!" in res.content


async def test_result_kinds_are_kept(host: HostEnv) -> None:
    m = await host.manager({"k": knob_stdio_params()})
    img = await m.call_tool("k", "image", {})
    assert any(a.kind == "image" and a.mime_type == "image/png" for a in img.attachments)
    assert "[image: image/png" in img.content
    rr = await m.call_tool("k", "resource_result", {})
    kinds = {a.kind for a in rr.attachments}
    assert {"resource", "resource_link"} <= kinds
    so = await m.call_tool("k", "structured_only", {})
    assert so.structured is not None and so.content.strip().startswith("{")
    fail = await m.call_tool("k", "fail", {})
    assert fail.is_error and "returned an error" in fail.content
    boom = await m.call_tool("k", "raise_error", {})
    assert boom.is_error
    unknown = await m.call_tool("k", "nope_tool", {})
    assert unknown.is_error and "no tool named" in unknown.content


async def test_capabilities_from_annotations(host: HostEnv) -> None:
    m = await host.manager({"k": knob_stdio_params()})
    caps = {t.spec.display_name: t.spec.capability.value for t in m.tools()}
    assert caps["echo"] == "read"
    assert caps["delete_item"] == "write"
    assert caps["fetch_url"] == "network"
    assert caps["no_annotations_write_file"] == "write"


async def test_resources_and_prompts(host: HostEnv) -> None:
    m = await host.manager({"k": knob_stdio_params()})
    uris = [str(r.uri) for _, r in m.resources()]
    assert "knob://readme" in uris
    assert any("items" in t.uri_template for _, t in m.resource_templates())
    read = await m.read_resource("k", "knob://readme")
    assert read.contents and read.contents[0].text  # type: ignore[union-attr]
    names = [p.name for _, p in m.prompts()]
    assert {"review", "greet"} <= set(names)
    got = await m.get_prompt("k", "review", {"code": "x = 1"})
    assert got.messages


async def test_explicit_modern_protocol_lists_without_discovery(host: HostEnv) -> None:
    """"protocol": "2026-07-28" adopts the modern protocol without server/discover, so the
    server's capabilities are unknown: the host must still list tools, prompts and resources."""
    m = await host.manager({"modern": {**knob_stdio_params(), "protocol": "2026-07-28"},
                            "auto": {**knob_stdio_params(), "protocol": "auto"}})
    st = {s.name: s for s in m.status()}
    assert st["modern"].protocol_version == "2026-07-28", st["modern"]
    assert st["modern"].state == "connected", st["modern"].error
    assert st["modern"].tool_count == st["auto"].tool_count > 0
    assert st["modern"].prompt_count == st["auto"].prompt_count > 0
    assert st["modern"].resource_count == st["auto"].resource_count > 0
    result = await m.call_tool("modern", "echo", {"text": "hi"})
    assert result.content == "hi" and not result.is_error


async def test_instructions_sorted_sections(host: HostEnv) -> None:
    m = await host.manager({
        "zeta": knob_stdio_params("--instructions", "Use zeta carefully."),
        "alpha": knob_stdio_params("--instructions", "Alpha first."),
        "none": knob_stdio_params(),
    })
    text = m.instructions()
    assert text.index("## alpha") < text.index("## zeta")
    assert "## none" not in text
    assert "Alpha first." in text
