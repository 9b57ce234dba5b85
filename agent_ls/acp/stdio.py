"""The ACP channel on stdio: a guarded stdout and a strict newline-delimited JSON-RPC transport.

stdout is the protocol channel, so before anything else runs the real stdout is moved to a
private file descriptor and fd 1 (and ``sys.stdout``) point at stderr: a stray ``print`` or a
library banner lands in the log, never in the middle of a JSON-RPC frame.

The transport is the ``agent-client-protocol`` package's :class:`acp.Connection` seam (a
message-level ``Transport``). Unlike the package's default NDJSON reader, which logs and skips
a line that is not JSON, it answers what JSON-RPC 2.0 requires: ``-32700 Parse error`` for a
line that is not JSON and ``-32600 Invalid request`` for JSON that is not a request, a
notification or a response (an array, a number, an object without ``method`` or ``id``).
Either way the agent keeps serving.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import stat
import sys
import threading
from typing import Any

log = logging.getLogger("agent_ls.acp")

LINE_LIMIT = 50 * 1024 * 1024
"""Longest frame accepted (prompts may carry embedded files and images)."""


def guard_stdout() -> int:
    """Move the protocol channel off fd 1; returns the descriptor that now holds it."""
    sys.stdout.flush()
    channel = os.dup(1)
    os.dup2(2, 1)
    sys.stdout = sys.stderr
    return channel


class StrictNdjsonTransport:
    """Newline-delimited JSON-RPC over asyncio streams, answering malformed input."""

    def __init__(self, reader: asyncio.StreamReader, writer: Any) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()
        self._closed = False

    async def send(self, message: dict[str, Any]) -> None:
        data = (json.dumps(message, separators=(",", ":"), ensure_ascii=False) + "\n").encode("utf-8")
        async with self._lock:
            if self._closed:
                raise ConnectionError("the ACP channel is closed")
            self._writer.write(data)
            await self._writer.drain()

    async def _error(self, request_id: Any, code: int, message: str, details: str) -> None:
        try:
            await self.send({"jsonrpc": "2.0", "id": request_id,
                             "error": {"code": code, "message": message, "data": {"details": details}}})
        except (ConnectionError, OSError) as e:
            log.info("could not answer a malformed message: %s", e)

    async def receive(self) -> dict[str, Any] | None:
        while True:
            line = await self._read_line()
            if not line:
                return None
            line = line.strip()
            if not line:
                continue
            try:
                message = json.loads(line)
            except (ValueError, UnicodeDecodeError) as e:
                log.warning("ACP: a frame that is not JSON (%s)", e)
                await self._error(None, -32700, "Parse error", f"not JSON: {e}")
                continue
            problem = _shape_problem(message)
            if problem is not None:
                log.warning("ACP: invalid request: %s", problem)
                request_id = message.get("id") if isinstance(message, dict) else None
                if not isinstance(request_id, (str, int)) or isinstance(request_id, bool):
                    request_id = None
                await self._error(request_id, -32600, "Invalid request", problem)
                continue
            return message

    async def _read_line(self) -> bytes:
        chunks: list[bytes] = []
        try:
            while True:
                try:
                    chunks.append(await self._reader.readuntil(b"\n"))
                    return b"".join(chunks)
                except asyncio.LimitOverrunError as exc:
                    chunks.append(await self._reader.readexactly(exc.consumed))
        except asyncio.IncompleteReadError as exc:
            chunks.append(exc.partial)
            return b"".join(chunks)

    async def close(self) -> None:
        async with self._lock:
            if self._closed:
                return
            self._closed = True
            try:
                self._writer.close()
            except (OSError, RuntimeError):
                pass


def _shape_problem(message: Any) -> str | None:
    """Why a decoded frame is not a JSON-RPC 2.0 message this side can take, or None."""
    if isinstance(message, list):
        return "batches are not supported"
    if not isinstance(message, dict):
        return f"a message must be a JSON object, not {type(message).__name__}"
    if "method" in message:
        if not isinstance(message["method"], str):
            return "\"method\" must be a string"
        if "params" in message and message["params"] is not None and not isinstance(message["params"], (dict, list)):
            return "\"params\" must be an object or an array"
        return None
    if "id" in message and ("result" in message or "error" in message):
        return None
    return "a message needs \"method\" (a request or notification) or \"id\" with \"result\"/\"error\""


class _FileWriter:
    """The protocol channel when it is a regular file (output redirected): plain blocking writes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd

    def write(self, data: bytes) -> None:
        view = memoryview(data)
        while view:
            view = view[os.write(self.fd, view):]

    async def drain(self) -> None:
        return None

    def close(self) -> None:
        os.close(self.fd)


def _is_stream(fd: int) -> bool:
    mode = os.fstat(fd).st_mode
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or stat.S_ISCHR(mode)


def _feed_from_thread(loop: asyncio.AbstractEventLoop, reader: asyncio.StreamReader, fd: int) -> None:
    def pump() -> None:
        try:
            while chunk := os.read(fd, 65536):
                loop.call_soon_threadsafe(reader.feed_data, chunk)
        except OSError:
            pass
        finally:
            loop.call_soon_threadsafe(reader.feed_eof)

    threading.Thread(target=pump, name="acp-stdin", daemon=True).start()


async def open_stdio(channel_fd: int) -> tuple[asyncio.StreamReader, Any]:
    """Streams over stdin and the protocol descriptor returned by :func:`guard_stdout` (pipes
    as editors give them; regular files work too, for scripted runs)."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader(limit=LINE_LIMIT)
    stdin_fd = sys.stdin.fileno()
    if _is_stream(stdin_fd):
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    else:
        _feed_from_thread(loop, reader, stdin_fd)
    if not _is_stream(channel_fd):
        return reader, _FileWriter(channel_fd)
    out = os.fdopen(channel_fd, "wb", buffering=0)
    transport, protocol = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, out)
    writer = asyncio.StreamWriter(transport, protocol, None, loop)  # type: ignore[arg-type]
    return reader, writer
