"""The knob server's transports and stderr (see knob_server.py): stdio, with the non-JSON lines of
--garbage-stdout, Streamable HTTP on 127.0.0.1 with its LISTENING line, and the startup noise.
"""

import argparse
import socket
import sys
from collections.abc import Callable
from typing import Any

import anyio
from mcp.server.context import ServerRequestContext
from mcp.server.mcpserver import MCPServer
from mcp.server.runner import serve_loop
from mcp.server.stdio import stdio_server

GARBAGE_LINES = [
    "this line is not JSON",
    "Loading model weights... 100%",
    "{not: json, either",
    '{"jsonrpc": "2.0", "id": ',
    "WARNING: something printed to stdout by a careless library",
]


def err(line: str) -> None:
    """One line to stderr, flushed (the host captures a stderr tail)."""
    sys.stderr.write(line + "\n")
    sys.stderr.flush()


class _WireOut:
    """stdout for stdio_server(stdout=...) when --garbage-stdout is on.

    Writes are synchronous (in the event loop thread), so a garbage line can never tear a
    JSON-RPC frame. `garbage_after_next_frame` asks for a garbage line right after the next
    frame written (a tools/call response).
    """

    def __init__(self) -> None:
        self._buf = sys.stdout.buffer
        self._count = 0
        self.garbage_after_next_frame = False

    def garbage(self) -> None:
        self._buf.write((GARBAGE_LINES[self._count % len(GARBAGE_LINES)] + "\n").encode())
        self._buf.flush()
        self._count += 1

    async def write(self, data: str) -> None:
        self._buf.write(data.encode("utf-8"))
        if self.garbage_after_next_frame and data.endswith("\n"):
            self.garbage_after_next_frame = False
            self._buf.flush()
            self.garbage()

    async def flush(self) -> None:
        self._buf.flush()


async def serve_stdio(mcp: MCPServer, opts: argparse.Namespace) -> None:
    low = mcp._lowlevel_server
    wire: _WireOut | None = None
    if opts.garbage_stdout:
        wire = _WireOut()
        for _ in range(3):
            wire.garbage()

        async def garbage_around_tool_calls(ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
            result = await call_next(ctx)
            if ctx.method == "tools/call":
                wire.garbage()  # before the response frame
                wire.garbage_after_next_frame = True  # and right after it
            return result

        low.middleware.append(garbage_around_tool_calls)

    async with stdio_server(stdout=wire) as (read_stream, write_stream):  # type: ignore[arg-type]
        if opts.era == "legacy":
            # handshake era only (what mcp 1.x servers do): a request before initialize is an error,
            # so a 2026-07-28 client's server/discover probe falls back to initialize
            async with low.lifespan(low) as state:
                await serve_loop(low, read_stream, write_stream, lifespan_state=state,
                                 init_options=low.create_initialization_options())
        else:
            await low.run(read_stream, write_stream, low.create_initialization_options())


async def serve_http(mcp: MCPServer, opts: argparse.Namespace, announce: Callable[[], None]) -> None:
    import uvicorn

    app = mcp.streamable_http_app(host="127.0.0.1")
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", opts.port))
    port = sock.getsockname()[1]
    server = uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on"))

    async def announce_when_started() -> None:
        while not server.started:
            await anyio.sleep(0.01)
        err(f"LISTENING http://127.0.0.1:{port}/mcp")
        announce()

    async with anyio.create_task_group() as tg:
        tg.start_soon(announce_when_started)
        await server.serve(sockets=[sock])
        tg.cancel_scope.cancel()


def startup_stderr(opts: argparse.Namespace) -> None:
    if opts.stderr_line is not None:
        err(opts.stderr_line)
    for i in range(opts.stderr_flood):
        sys.stderr.write(f"knob stderr flood line {i}/{opts.stderr_flood}: lorem ipsum dolor sit amet\n")
    sys.stderr.flush()
