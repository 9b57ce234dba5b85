"""The MCP host against the knob fixture server over stdio (real subprocesses): start, failure,
restart, cancellation and shutdown, and how trust, reconfiguration and enable/disable drive them."""

from __future__ import annotations

import asyncio
import re
import uuid
from pathlib import Path

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
    from agent_ls.agent.tools.registry import ToolRegistry

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
