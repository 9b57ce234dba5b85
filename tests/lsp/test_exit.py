"""The server process ends, and with the exit code the LSP specification asks for: 0 after
``shutdown`` + ``exit``, 1 after ``exit`` alone or when the editor closes the pipe. Each case
runs with an MCP server connected and the LLM library still warming up."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from tests.lsp.conftest import Setup, open_editor, pid_alive, wait_for

pytestmark = pytest.mark.e2e


def process_of(client: Any) -> asyncio.subprocess.Process:
    proc = client._server  # pygls' handle on the server process
    assert proc is not None
    return proc  # type: ignore[no-any-return]


async def ended(proc: asyncio.subprocess.Process, within: float = 20) -> int:
    try:
        return await asyncio.wait_for(proc.wait(), within)
    except TimeoutError:
        proc.kill()
        pytest.fail(f"the language server was still running {within} s after the connection ended")


@pytest.mark.parametrize("how", ["shutdown+exit", "exit", "stdin closed"])
async def test_the_server_ends_with_the_specified_code(setup: Setup, how: str) -> None:
    ed = await open_editor(setup)
    proc = process_of(ed.client)
    knob_pid = (await ed.wait_state("knob", "connected"))["pid"]
    try:
        if how == "shutdown+exit":
            await asyncio.wait_for(ed.client.shutdown_async(None), 30)
            ed.client.exit(None)
        elif how == "exit":
            ed.client.exit(None)
        else:
            assert proc.stdin is not None
            proc.stdin.close()
        code = await ended(proc)
    finally:
        await ed.client.stop()
    assert code == (0 if how == "shutdown+exit" else 1)
    await wait_for(lambda: not pid_alive(knob_pid), what="the MCP server to end with the language server")
