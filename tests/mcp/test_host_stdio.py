"""The MCP host against the knob fixture server over stdio (real subprocesses)."""

from __future__ import annotations

import asyncio
import json
import re
import uuid
from pathlib import Path

import mcp_types as types
import pytest

from agent_ls.mcp.status import State
from tests.mcp.conftest import HostEnv, processes_with, status_of, wait_until
from tests.servers.launch import knob_stdio_params

NAME_RE = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


async def test_parallel_start_with_partial_failure(host: HostEnv) -> None:
    m = await host.manager({
        "good": knob_stdio_params(),
        "missing": {"command": "definitely-not-a-command-xyz"},
        "dies": knob_stdio_params("--exit-during-handshake", "7", "--stderr-line", "boom-at-start"),
        "slow": {**knob_stdio_params("--slow-handshake", "30"), "connectTimeout": 1.5},
        "off": {**knob_stdio_params(), "disabled": True},
        "badvar": {"command": "x", "env": {"T": "${NOPE_NOT_SET_123}"}},
    }, wait=20)
    good = status_of(m, "good")
    assert good.state == "connected" and good.tool_count > 20
    missing = status_of(m, "missing")
    assert missing.state == "failed"
    assert missing.error["phase"] == "spawn" and missing.error["errno"] == 2
    assert "not found on PATH" in missing.error["message"]
    dies = status_of(m, "dies")
    assert dies.state == "failed" and dies.error["phase"] == "handshake"
    assert "exited during the handshake with exit code 7" in dies.error["message"]
    assert dies.error["exitCode"] == 7
    assert any("boom-at-start" in line for line in dies.stderr_tail)
    slow = status_of(m, "slow")
    assert slow.state == "failed" and "did not finish within 1.5s" in slow.error["message"]
    assert status_of(m, "off").state == "disabled"
    badvar = status_of(m, "badvar")
    assert badvar.state == "failed" and badvar.error["phase"] == "config"
    assert "NOPE_NOT_SET_123" in badvar.error["message"] and "env.T" in badvar.error["message"]
    # The good server works despite the others.
    res = await m.call_tool("good", "echo", {"text": "hi"})
    assert not res.is_error and res.content == "hi"


async def test_apply_does_not_block_on_slow_servers(host: HostEnv) -> None:
    host.write_user({"slow": knob_stdio_params("--slow-handshake", "3")})
    from agent_ls.mcp.manager import MCPManager

    m = MCPManager(roots=[host.workspace], state=host.state)
    host.managers.append(m)
    loop = asyncio.get_running_loop()
    t0 = loop.time()
    await m.apply(host.load())
    returned_after = loop.time() - t0
    assert status_of(m, "slow").state == "starting"
    await m.wait_ready(20)
    assert status_of(m, "slow").state == "connected"
    assert returned_after < 1.0, returned_after  # apply returned long before the 3 s handshake


async def test_slow_handshake_within_timeout_and_garbage_stdout(host: HostEnv) -> None:
    m = await host.manager({
        "slowok": knob_stdio_params("--slow-handshake", "1"),
        "garbage": knob_stdio_params("--garbage-stdout"),
    })
    assert status_of(m, "slowok").state == "connected"
    assert status_of(m, "garbage").state == "connected"
    for _ in range(3):
        res = await m.call_tool("garbage", "add", {"a": 1, "b": 2})
        assert res.content == "3"


async def test_crash_mid_call_fails_fast_and_restarts(host: HostEnv) -> None:
    m = await host.manager({"c": knob_stdio_params()})
    first_pid = status_of(m, "c").pid
    assert isinstance(first_pid, int)
    res = await m.call_tool("c", "crash", {})
    assert res.is_error
    assert "c" in res.content
    # Calls while it is down fail fast with a clear error instead of hanging.
    assert status_of(m, "c").state == "restarting"
    down = await m.call_tool("c", "echo", {"text": "x"})
    assert down.is_error and "not connected" in down.content
    await wait_until(lambda: status_of(m, "c").state == "connected")
    s = status_of(m, "c")
    assert s.restarts >= 1
    assert s.pid is not None and s.pid != first_pid
    res = await m.call_tool("c", "echo", {"text": "back"})
    assert res.content == "back"


async def test_restart_is_bounded(host: HostEnv) -> None:
    m = await host.manager({"c": knob_stdio_params()})
    for _ in range(5):
        await wait_until(lambda: status_of(m, "c").state in ("connected", "failed"), timeout=20)
        if status_of(m, "c").state == "failed":
            break
        await m.call_tool("c", "crash", {})
    await wait_until(lambda: status_of(m, "c").state == "failed", timeout=20)
    s = status_of(m, "c")
    assert "not restarting" in s.error["message"]
    down = await m.call_tool("c", "echo", {"text": "x"})
    assert down.is_error and "not connected" in down.content
    await m.restart("c")
    await m.wait_ready(20)
    assert status_of(m, "c").state == "connected"


async def test_hang_mid_call_times_out_and_session_survives(host: HostEnv) -> None:
    m = await host.manager({"h": {**knob_stdio_params(), "callTimeout": 1}})
    res = await m.call_tool("h", "hang", {})
    assert res.is_error and "timed out after 1s" in res.content
    res = await m.call_tool("h", "echo", {"text": "still here"})
    assert res.content == "still here"


async def test_cancelling_a_call_sends_notifications_cancelled(host: HostEnv, tmp_path: Path) -> None:
    probe = tmp_path / "cancel.log"
    m = await host.manager({"p": knob_stdio_params("--cancel-file", str(probe))})
    task = asyncio.create_task(m.call_tool("p", "cancel_probe", {}))
    await wait_until(lambda: probe.exists() and "started" in probe.read_text())
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    await wait_until(lambda: "cancelled" in probe.read_text())
    assert status_of(m, "p").state == "connected"


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

    m.set_sampling_handler(handler)
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


async def test_trust_flow_for_workspace_servers(host: HostEnv) -> None:
    host.write_workspace({"ws": knob_stdio_params()})
    asked: list[str] = []
    answer: list[bool | None] = [None]

    async def trust(cfg):  # type: ignore[no-untyped-def]
        asked.append(cfg.name)
        return answer[0]

    m = await host.manager(trust_handler=trust, wait=5)
    assert asked == ["ws"]
    assert status_of(m, "ws").state == "awaiting-trust"
    await m.set_trust("ws", True)
    await m.wait_ready(20)
    assert status_of(m, "ws").state == "connected"
    await m.close()
    # Remembered: a new manager does not ask again.
    asked.clear()
    m2 = await host.manager(trust_handler=trust, wait=20)
    assert asked == [] and status_of(m2, "ws").state == "connected"
    await m2.close()
    # A changed entry (new args) asks again.
    host.write_workspace({"ws": knob_stdio_params("--tools", "2")})
    answer[0] = False
    m3 = await host.manager(trust_handler=trust, wait=5)
    await m3.wait_ready(5)
    assert asked == ["ws"]
    assert status_of(m3, "ws").state == "untrusted"


async def test_user_scope_stdio_needs_no_trust(host: HostEnv) -> None:
    async def trust(cfg):  # type: ignore[no-untyped-def]
        raise AssertionError("must not be asked")

    m = await host.manager({"u": knob_stdio_params()}, trust_handler=trust)
    assert status_of(m, "u").state == "connected"


async def test_reconfigure_keeps_restarts_stops_and_starts(host: HostEnv) -> None:
    m = await host.manager({"keep": knob_stdio_params(), "change": knob_stdio_params(),
                            "remove": knob_stdio_params("--name", "removed-marker-" + uuid.uuid4().hex)})
    keep_conn = m.connection("keep")
    change_conn = m.connection("change")
    marker = status_of(m, "remove")
    assert marker.state == "connected"
    host.write_user({"keep": knob_stdio_params(), "change": knob_stdio_params("--tools", "2"),
                     "new": knob_stdio_params()})
    await m.apply(host.load())
    await m.wait_ready(20)
    assert m.connection("keep") is keep_conn and keep_conn is not None and keep_conn.state is State.CONNECTED
    assert m.connection("change") is not change_conn
    assert status_of(m, "change").tool_count == status_of(m, "keep").tool_count + 2
    assert "remove" not in m.server_names()
    assert status_of(m, "new").state == "connected"


async def test_enable_disable_persists(host: HostEnv) -> None:
    m = await host.manager({"k": knob_stdio_params()})
    await m.set_enabled("k", False)
    assert status_of(m, "k").state == "disabled"
    await m.close()
    m2 = await host.manager()
    assert status_of(m2, "k").state == "disabled"
    await m2.set_enabled("k", True)
    await m2.wait_ready(20)
    assert status_of(m2, "k").state == "connected"


async def test_secrets_never_in_status(host: HostEnv) -> None:
    secret = "sk-supersecret-" + uuid.uuid4().hex
    host.environ["MY_TEST_TOKEN"] = secret
    m = await host.manager({
        "k": {**knob_stdio_params("--stderr-line", f"token is {secret}"), "env": {"TOKEN": "${MY_TEST_TOKEN}"}},
        "bad": {**knob_stdio_params("--exit-during-handshake", "1", "--stderr-line", f"bad {secret}"),
                "env": {"TOKEN": "${MY_TEST_TOKEN}"}},
    })
    dumped = repr(m.status())
    assert secret not in dumped
    assert "***" in dumped


async def test_shutdown_leaves_no_child_process(host: HostEnv) -> None:
    marker = "no-orphan-" + uuid.uuid4().hex
    m = await host.manager({
        f"s{i}": knob_stdio_params("--name", marker) for i in range(3)
    } | {"hung": {**knob_stdio_params("--name", marker, "--slow-handshake", "60"), "connectTimeout": 30}}, wait=5)
    assert len(processes_with(marker)) >= 4
    await m.call_tool("s0", "sleep", {"seconds": 0.1})
    pending = asyncio.create_task(m.call_tool("s1", "hang", {}))
    await asyncio.sleep(0.2)
    await m.close()
    pending.cancel()
    await wait_until(lambda: not processes_with(marker), timeout=15)


async def test_a_call_to_a_server_that_is_restarting_waits_for_it(host: HostEnv) -> None:
    """A settings change or a trust decision restarts a server; a tool call (or a prompt's tool
    list) in that moment waits for it, bounded by its connect timeout, instead of failing."""
    from agent_ls.agent.registry import ToolRegistry

    m = await host.manager({"k": knob_stdio_params()})
    await m.restart("k")
    conn = m.connection("k")
    assert conn is not None and conn.settling
    res = await m.call_tool("k", "echo", {"text": "after the restart"})
    assert not res.is_error and res.content == "after the restart"
    await m.restart("k")
    registry = ToolRegistry([], m, defer=False)
    await registry.before_prompt()
    assert "mcp__k__echo" in [s.name for s in registry.visible_specs()]
