"""Both protocol eras (issue 15, item 1): with ``"protocol": "auto"`` the host connects to a
modern-only, a legacy-only and a dual server, over stdio and Streamable HTTP, and remembers the
era each entry negotiated, so the next start neither probes a legacy server with
``server/discover`` nor repeats the probe for a modern one; a remembered era that no longer holds
is negotiated afresh.

The knob server plays each kind of server (``--era both|legacy|modern``) and logs the handshake
requests it receives (``--handshake-log``)."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from tests.mcp.conftest import HostEnv, status_of
from tests.servers.launch import knob_stdio_params, run_http_knob_server

MODERN = "2026-07-28"
LEGACY = "2025-11-25"


@contextlib.asynccontextmanager
async def knob_entry(transport: str, *args: str) -> AsyncIterator[dict[str, Any]]:
    if transport == "stdio":
        yield {**knob_stdio_params(*args), "protocol": "auto"}
    else:
        async with run_http_knob_server(*args) as url:
            yield {"type": "http", "url": url, "protocol": "auto"}


def handshakes(log: Path) -> list[str]:
    return log.read_text().split() if log.exists() else []


@pytest.mark.parametrize("transport", ["stdio", "http"])
@pytest.mark.parametrize(("era", "version"), [("both", MODERN), ("modern", MODERN), ("legacy", LEGACY)])
async def test_auto_connects_to_every_era_and_remembers_it(host: HostEnv, tmp_path: Path, transport: str,
                                                           era: str, version: str) -> None:
    log = tmp_path / "handshakes.log"
    async with knob_entry(transport, "--era", era, "--handshake-log", str(log)) as entry:
        first = await host.manager({"k": entry})
        s = status_of(first, "k")
        assert s.state == "connected" and s.protocol_version == version, s
        assert (await first.call_tool("k", "echo", {"text": "hi"})).content == "hi"
        probe = handshakes(log)
        assert probe[0] == "server/discover"  # the first start negotiates
        assert probe == (["server/discover", "initialize"] if era == "legacy" else ["server/discover"])
        await first.close()
        record = host.state.era(first.connection("k").config.fingerprint())  # type: ignore[union-attr]
        assert record is not None and record["mode"] == ("legacy" if era == "legacy" else MODERN)
        log.unlink()
        second = await host.manager({"k": entry})
        s = status_of(second, "k")
        assert s.state == "connected" and s.protocol_version == version, s
        # the next start uses the era it remembered: initialize only, or no handshake at all
        assert handshakes(log) == (["initialize"] if era == "legacy" else [])
        assert (await second.call_tool("k", "add", {"a": 1, "b": 2})).content == "3"


async def test_a_remembered_era_that_no_longer_holds_is_negotiated_again(host: HostEnv, tmp_path: Path) -> None:
    # The same entry (same key), but the server behind it changed era (an upgrade of the package).
    era_file = tmp_path / "era"
    era_file.write_text("modern")
    entry = {**knob_stdio_params("--era-file", str(era_file)), "protocol": "auto"}
    first = await host.manager({"k": entry})
    assert status_of(first, "k").protocol_version == MODERN
    key = first.connection("k").config.fingerprint()  # type: ignore[union-attr]
    assert host.state.era(key)["mode"] == MODERN  # type: ignore[index]
    await first.close()
    era_file.write_text("legacy")
    second = await host.manager({"k": entry})
    s = status_of(second, "k")
    assert s.state == "connected" and s.protocol_version == LEGACY, s
    assert host.state.era(key)["mode"] == "legacy"  # type: ignore[index]
    assert (await second.call_tool("k", "echo", {"text": "still works"})).content == "still works"


async def test_an_explicit_protocol_is_never_second_guessed(host: HostEnv, tmp_path: Path) -> None:
    log = tmp_path / "handshakes.log"
    entry = {**knob_stdio_params("--handshake-log", str(log)), "protocol": "legacy"}
    for _ in range(2):
        m = await host.manager({"k": entry})
        assert status_of(m, "k").protocol_version == LEGACY
        await m.close()
    assert handshakes(log) == ["initialize", "initialize"]
    assert host.state.era(m.connection("k").config.fingerprint()) is None  # type: ignore[union-attr]


@pytest.mark.parametrize("transport", ["stdio", "http"])
async def test_list_changes_reach_the_host_in_the_modern_era(host: HostEnv, transport: str) -> None:
    """A 2026-07-28 session has no list_changed notifications: the host holds a
    subscriptions/listen stream, and a change marks the server dirty like a notification does."""
    import asyncio

    from tests.mcp.conftest import wait_until

    async with knob_entry(transport) as entry:
        m = await host.manager({"k": entry})
        assert status_of(m, "k").protocol_version == MODERN
        await m.refresh_if_dirty()
        before = [t.spec.name for t in m.tools()]
        assert not (await m.call_tool("k", "add_tool", {"name": "brand_new"})).is_error
        await wait_until(lambda: m.dirty)
        assert await m.refresh_if_dirty() is True
        assert "mcp__k__brand_new" in [t.spec.name for t in m.tools()] and len(m.tools()) == len(before) + 1
        await m.call_tool("k", "touch_prompts", {})
        await wait_until(lambda: m.dirty)
        assert await m.refresh_if_dirty() is True
        assert any(p.name.startswith("dynamic_prompt_") for _, p in m.prompts())
        await asyncio.sleep(0)
