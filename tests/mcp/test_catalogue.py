"""The kept catalogue: a server's tools are offered from the first moment, before it connects,
from what it listed last time; calls wait for it; a catalogue that turns out different is
replaced once; a changed entry starts without one; lists a 2026-07-28 server declared fresh
(``ttlMs``) are not asked for again within their TTL, across restarts."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_ls.agent.tools.registry import ToolRegistry
from agent_ls.mcp.catalogue import CatalogueStore, Listing
from agent_ls.mcp.manager import MCPManager
from agent_ls.mcp.status import State
from tests.mcp.conftest import HostEnv, status_of, wait_until
from tests.servers.launch import knob_stdio_params


def requests(log: Path, method: str) -> int:
    return log.read_text().splitlines().count(method) if log.exists() else 0


async def start(host: HostEnv, servers: dict[str, Any], store: CatalogueStore) -> MCPManager:
    """A manager that has applied the settings without waiting for any server."""
    return await host.manager(servers, wait=0, catalogue=store)


def tool_names(m: MCPManager, server: str) -> list[str]:
    return [t.spec.display_name or t.spec.name for t in m.tools() if t.server == server]


async def test_a_starting_server_offers_its_last_catalogue_and_calls_wait_for_it(host: HostEnv) -> None:
    store = CatalogueStore(host.root / "catalogue")
    slow = host.root / "slow"
    servers = {"k": knob_stdio_params("--slow-start-file", str(slow)), "other": knob_stdio_params()}

    first = await host.manager(servers, catalogue=store)
    assert status_of(first, "k").state == "connected"
    listed = tool_names(first, "k")
    assert "echo" in listed
    await first.close()

    slow.write_text("3")  # the same entry now takes 3 s to start
    m = await start(host, servers, store)
    conn = m.connection("k")
    assert conn is not None and conn.state is State.STARTING
    # Right after start: the agent's tool list and the status are complete.
    assert tool_names(m, "k") == listed
    assert status_of(m, "k").state == "starting" and status_of(m, "k").tool_count == len(listed)
    registry = ToolRegistry([], m, defer=False)
    await registry.before_prompt()  # does not wait for a server whose catalogue is kept
    assert conn.state is State.STARTING
    assert "mcp__k__echo" in [s.name for s in registry.visible_specs()]
    version = conn.list_version

    res = await m.call_tool("k", "echo", {"text": "waited"})  # waits for the handshake
    assert not res.is_error and res.content == "waited"
    assert conn.state is State.CONNECTED and not conn.from_catalogue
    assert conn.list_version == version  # the same catalogue: nothing to rebuild
    assert not await registry.before_prompt()


async def test_a_catalogue_that_changed_is_replaced_and_a_changed_entry_starts_without_one(host: HostEnv) -> None:
    store = CatalogueStore(host.root / "catalogue")
    slow = host.root / "slow"
    servers = {"k": knob_stdio_params("--slow-start-file", str(slow))}
    first = await host.manager(servers, catalogue=store)
    conn = first.connection("k")
    assert conn is not None
    key = conn.catalogue_key
    await first.close()

    # What was kept is stale: one tool the server no longer has, one it has is missing.
    kept = store.load(key)
    assert kept is not None
    gone = kept.tools[0].model_copy(update={"name": "retired_tool"})
    store.save(key, Listing([gone, *kept.tools[2:]], kept.prompts, kept.resources, kept.resource_templates))
    slow.write_text("1")
    m = await start(host, servers, store)
    assert "retired_tool" in tool_names(m, "k")
    registry = ToolRegistry([], m, defer=False)
    await registry.before_prompt()
    res = await m.call_tool("k", "retired_tool", {})  # offered, but the server does not have it
    assert res.is_error
    await wait_until(lambda: status_of(m, "k").state == "connected")
    assert "retired_tool" not in tool_names(m, "k") and "echo" in tool_names(m, "k")
    assert await registry.before_prompt()  # rebuilt once
    assert "mcp__k__retired_tool" not in [s.name for s in registry.visible_specs()]
    assert not await registry.before_prompt()
    fresh = store.load(key)
    assert fresh is not None and "retired_tool" not in [t.name for t in fresh.tools]

    # A different entry (another argument) has no catalogue: nothing offered until it connects.
    changed = {"k": knob_stdio_params("--slow-start-file", str(slow), "--name", "renamed")}
    m2 = await start(host, changed, store)
    assert tool_names(m2, "k") == [] and status_of(m2, "k").tool_count == 0
    await wait_until(lambda: status_of(m2, "k").state == "connected")
    assert "echo" in tool_names(m2, "k")


async def test_a_server_that_fails_to_start_withdraws_its_kept_tools(host: HostEnv) -> None:
    store = CatalogueStore(host.root / "catalogue")
    exit_file = host.root / "slow"
    servers = {"k": knob_stdio_params("--slow-start-file", str(exit_file)) | {"connectTimeout": 8}}
    first = await host.manager(servers, catalogue=store)
    assert status_of(first, "k").state == "connected"
    await first.close()
    exit_file.write_text("40")  # does not answer within the 8 s connect timeout
    m = await start(host, servers, store)
    assert "echo" in tool_names(m, "k")
    res = await m.call_tool("k", "echo", {"text": "x"})
    assert res.is_error and "not connected" in res.content
    # (a remembered era that times out is negotiated once more before the server counts as failed)
    await wait_until(lambda: status_of(m, "k").state == "failed", timeout=30)
    assert tool_names(m, "k") == []


async def test_an_unreadable_catalogue_is_ignored(host: HostEnv) -> None:
    store = CatalogueStore(host.root / "catalogue")
    servers = {"k": knob_stdio_params()}
    first = await host.manager(servers, catalogue=store)
    conn = first.connection("k")
    assert conn is not None
    path = store.directory / f"{conn.catalogue_key}.json"
    assert path.exists() and (path.stat().st_mode & 0o777) == 0o600
    await first.close()
    path.write_text("{not json")
    m = await start(host, servers, store)
    assert tool_names(m, "k") == []
    await wait_until(lambda: status_of(m, "k").state == "connected")
    path.write_text(json.dumps({"format": 1, "listing": {"tools": [{"name": 3}]}}))
    m2 = await start(host, servers, store)
    assert tool_names(m2, "k") == []
    await wait_until(lambda: status_of(m2, "k").state == "connected")


async def test_lists_declared_fresh_are_not_asked_for_again_within_their_ttl(host: HostEnv) -> None:
    store = CatalogueStore(host.root / "catalogue")
    log = host.root / "requests.log"
    servers = {"k": knob_stdio_params("--list-ttl-ms", "600000", "--request-log", str(log))}
    m = await host.manager(servers, catalogue=store)
    assert status_of(m, "k").protocol_version == "2026-07-28"
    assert requests(log, "tools/list") == 1
    await m.restart("k")
    await wait_until(lambda: status_of(m, "k").state == "connected")
    assert requests(log, "tools/call") == 0 and requests(log, "tools/list") == 1  # served from the cache
    await m.close()
    m2 = await host.manager(servers, catalogue=store)  # another editor session: the kept cache
    assert status_of(m2, "k").state == "connected" and "echo" in tool_names(m2, "k")
    assert requests(log, "tools/list") == 1

    # A change the server announces goes to the server, whatever the TTL said.
    await m2.call_tool("k", "add_tool", {"name": "fresh_tool"})
    await wait_until(lambda: m2.dirty)
    await m2.refresh_if_dirty()
    assert requests(log, "tools/list") == 2 and "fresh_tool" in tool_names(m2, "k")


async def test_without_a_ttl_every_connection_lists(host: HostEnv) -> None:
    store = CatalogueStore(host.root / "catalogue")
    log = host.root / "requests.log"
    m = await host.manager({"k": knob_stdio_params("--request-log", str(log))}, catalogue=store)
    assert requests(log, "tools/list") == 1
    await m.restart("k")
    await wait_until(lambda: status_of(m, "k").state == "connected")
    assert requests(log, "tools/list") == 2


async def test_the_preview_is_the_status_the_host_has_right_after_start(host: HostEnv) -> None:
    """What the editor is shown before the SDK is loaded (agent_ls.mcp.preview) is exactly what
    the manager reports once it has applied the same settings: states, counts, names, tools."""
    from agent_ls.mcp.preview import preview_status

    store = CatalogueStore(host.root / "catalogue")
    slow = host.root / "slow"
    servers: dict[str, Any] = {
        "k": knob_stdio_params("--slow-start-file", str(slow)),
        "b": knob_stdio_params("--slow-start-file", str(slow), "--name", "bee"),
        "never": knob_stdio_params("--slow-start-file", str(slow), "--name", "never"),
        "off": {**knob_stdio_params(), "disabled": True},
        "broken": {"command": 5},
    }
    first = await host.manager({k: v for k, v in servers.items() if k in ("k", "b")}, catalogue=store)
    assert status_of(first, "b").tool_count > 0
    await first.close()
    host.write_workspace({"ws": knob_stdio_params()})  # a workspace server never trusted: waits

    slow.write_text("5")
    host.write_user(servers)
    settings = host.load()
    preview = preview_status(settings, host.state, store)
    m = await start(host, servers, store)
    assert [s.name for s in preview] == m.server_names()
    assert preview == m.status()
    by_name = {s.name: s for s in preview}
    assert by_name["k"].state == "starting" and by_name["k"].tool_count == len(by_name["k"].tools) > 0
    assert by_name["never"].state == "starting" and by_name["never"].tools == ()  # nothing kept
    assert by_name["off"].state == "disabled" and by_name["ws"].state == "awaiting-trust"
    assert by_name["broken"].state == "failed" and by_name["broken"].error["phase"] == "config"
