"""Prove the failure knobs of the knob fixture server with the bare mcp SDK client: a crash, a hang
and cancellation, garbage on stdout, stderr lines and floods, a slow handshake and an exit during
it."""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import anyio
import pytest
from mcp.shared.exceptions import MCPError

from .knob_client import (
    BASE_TOOLS,
    Recorder,
    errlog,
    leaves,
    list_all_tools,
    read_log,
    stdio_knob,
    text_of,
    wait_until,
)
from .launch import KNOB_SERVER

__all__ = ["errlog"]  # the fixture, from knob_client.py


async def test_crash_kills_the_session(errlog: Any) -> None:
    async with stdio_knob(errlog=errlog) as client:
        with anyio.fail_after(10), pytest.raises(MCPError):
            await client.call_tool("crash", {})
        with anyio.fail_after(10), pytest.raises(MCPError):
            await client.call_tool("echo", {"text": "still there?"})
    assert "crash() called" in read_log(errlog)


async def test_hang_times_out_and_cancel_reaches_server(errlog: Any, tmp_path: Path) -> None:
    cancel_file = tmp_path / "cancel.txt"
    async with stdio_knob("--cancel-file", cancel_file, errlog=errlog) as client:
        started = time.monotonic()
        with pytest.raises(MCPError) as info:
            await client.call_tool("hang", {}, read_timeout_seconds=0.5)
        assert info.value.error.code == -32001
        assert time.monotonic() - started < 5
        # The session survives the timeout.
        assert text_of(await client.call_tool("echo", {"text": "alive"})) == "alive"

        # A timed-out call sends notifications/cancelled; the server records it.
        with pytest.raises(MCPError):
            await client.call_tool("cancel_probe", {}, read_timeout_seconds=0.5)
        await wait_until(lambda: cancel_file.exists() and "cancelled" in cancel_file.read_text())

        # Cancelling the awaiting task sends notifications/cancelled as well.
        cancel_file.unlink()
        async with anyio.create_task_group() as tg:
            tg.start_soon(client.call_tool, "cancel_probe", {})
            await wait_until(lambda: cancel_file.exists() and "started" in cancel_file.read_text())
            tg.cancel_scope.cancel()
        await wait_until(lambda: "cancelled" in cancel_file.read_text())
        assert text_of(await client.call_tool("echo", {"text": "alive"})) == "alive"


async def test_garbage_stdout_is_tolerated(errlog: Any) -> None:
    rec = Recorder()
    async with stdio_knob("--garbage-stdout", errlog=errlog, message_handler=rec.message_handler) as client:
        for i in range(5):
            assert text_of(await client.call_tool("echo", {"text": f"n{i}"})) == f"n{i}"
        assert len(await list_all_tools(client)) >= len(BASE_TOOLS)
        assert len(text_of(await client.call_tool("huge", {"chars": 100_000}))) == 100_000
        # The garbage really reached the client: unparsable lines surface as exceptions.
        await wait_until(lambda: len([m for m in rec.messages if isinstance(m, Exception)]) >= 10)


async def test_stderr_line_and_flood(errlog: Any) -> None:
    async with stdio_knob(
        "--stderr-line", "MARKER: hello from knob", "--stderr-flood", 500, errlog=errlog
    ) as client:
        assert text_of(await client.call_tool("flood", {"lines": 3000})) == "wrote 3000 lines to stderr"
        assert text_of(await client.call_tool("echo", {"text": "ok"})) == "ok"
    log = read_log(errlog)
    assert "MARKER: hello from knob" in log.splitlines()
    assert log.count("knob stderr flood line") == 500
    assert log.count("knob flood tool line") == 3000


async def test_slow_handshake_delays_initialize(errlog: Any) -> None:
    started = time.monotonic()
    async with stdio_knob("--slow-handshake", 1.5, errlog=errlog) as client:
        elapsed = time.monotonic() - started
        assert text_of(await client.call_tool("echo", {"text": "late"})) == "late"
    assert elapsed >= 1.5
    assert "delaying initialize" in read_log(errlog)


async def test_exit_during_handshake_fails_the_client(errlog: Any) -> None:
    with anyio.fail_after(15), pytest.raises(BaseException) as info:  # noqa: B017 - checked below
        async with stdio_knob("--exit-during-handshake", 7, errlog=errlog):
            pass
    # The SDK wraps it in task-group ExceptionGroups; the leaf is CONNECTION_CLOSED.
    (leaf,) = leaves(info.value)
    assert isinstance(leaf, MCPError) and leaf.error.code == -32000
    assert "exiting with code 7 on initialize" in read_log(errlog)


async def test_exit_during_handshake_exit_code() -> None:
    proc = await anyio.open_process(
        [sys.executable, str(KNOB_SERVER), "--exit-during-handshake", "5"], stderr=subprocess.PIPE
    )
    init = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "t", "version": "0"},
        },
    }
    async with proc:
        assert proc.stdin is not None and proc.stderr is not None
        await proc.stdin.send((json.dumps(init) + "\n").encode())
        with anyio.fail_after(15):
            code = await proc.wait()
        stderr = (await proc.stderr.receive()).decode()
    assert code == 5
    assert "exiting with code 5" in stderr
