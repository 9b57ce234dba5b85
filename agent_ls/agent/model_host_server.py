"""The model host's process (:mod:`agent_ls.agent.model_host` says what it is and how a front end
reaches it): ``python -m agent_ls.agent.model_host_server SOCKET`` loads litellm, then serves model
requests with :func:`agent_ls.agent.llm.stream_completion` until it has been idle long enough."""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import socket
import struct
import sys
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from agent_ls.agent.model_host import CALLS, IDLE_SECONDS, LINE_LIMIT, encode
from agent_ls.agent.token_count import CountFirst, count_tokens

log = logging.getLogger(__name__)


class _Host:
    def __init__(self, path: Path, idle: float) -> None:
        self.path = path
        self.idle = idle
        self.active = 0
        self.last = time.monotonic()
        self.warmed: set[str] = set()
        self.changed = asyncio.Event()
        """Set when a connection ends (the idle clock starts again)."""

    async def serve(self) -> None:
        server = await asyncio.start_unix_server(self._client, path=str(self.path), limit=LINE_LIMIT)
        os.chmod(self.path, 0o600)
        ino = self.path.stat().st_ino
        log.info("model host: serving on %s (pid %d)", self.path, os.getpid())
        try:
            while (left := self.idle - (time.monotonic() - self.last)) > 0 or self.active:
                self.changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.changed.wait(), None if self.active else left)
        finally:
            server.close()
            with contextlib.suppress(OSError):
                if self.path.stat().st_ino == ino:
                    self.path.unlink()
            log.info("model host: idle for %.0f s, exiting", self.idle)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.active += 1
        try:
            if _peer_uid(writer) not in (None, os.getuid()):
                return
            while line := await reader.readline():
                request = json.loads(line)
                op = request.get("op")
                log.debug("model host: %s %s", op, request.get("name", ""))
                if op in ("stream", "complete"):  # the last request of its connection (closed to cancel it)
                    await self._cancellable(self._stream if op == "stream" else self._complete, request, reader, writer)
                    return
                elif op == "call":
                    writer.write(encode(self._call(request)))
                elif op == "count":
                    writer.write(encode(self._count(request)))
                elif op == "warm":
                    await self._warm(request)
                    writer.write(encode({"result": None}))
                elif op == "hello":
                    writer.write(encode({"result": {"pid": os.getpid()}}))
                else:
                    writer.write(encode({"error": {"kind": "internal", "message": f"unknown op {op!r}"}}))
                await writer.drain()
        except (ConnectionError, ValueError) as e:
            log.debug("model host: a client went away (%s)", type(e).__name__)
        finally:
            self.active -= 1
            self.last = time.monotonic()
            self.changed.set()
            writer.close()

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        from agent_ls.agent import llm  # lazy: the host's first line of work, after its lock

        name = request.get("name")
        if name not in CALLS:
            return {"error": {"kind": "internal", "message": f"not a host call: {name!r}"}}
        try:
            return {"result": getattr(llm.get_litellm(), name)(**request.get("kwargs", {}))}
        except Exception as e:
            return {"error": {"kind": "exception", "message": f"{type(e).__name__}: {e}"}}

    def _count(self, request: dict[str, Any]) -> dict[str, Any]:
        from agent_ls.agent import llm

        return {"result": count_tokens(llm.get_litellm(), request["model"], request["items"])}

    async def _warm(self, request: dict[str, Any]) -> None:
        from agent_ls.agent import llm

        config = llm.LLMConfig(**request["config"])
        if config.model not in self.warmed:
            self.warmed.add(config.model)
            await asyncio.to_thread(llm.warm_up, config)

    async def _stream(self, request: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        from agent_ls.agent import llm

        config = llm.LLMConfig(**request["config"])
        count = CountFirst(**request["count"]) if request.get("count") is not None else None
        # the deltas litellm has at hand go out together (one write, one wake-up of the front end):
        # a line waits only until this task next waits for the model (call_soon runs then)
        pending: list[bytes] = []
        loop = asyncio.get_running_loop()

        def flush() -> None:
            if pending and not writer.is_closing():
                writer.write(b"".join(pending))
            pending.clear()

        try:
            async for delta in llm.stream_completion(config, request["messages"], request["tools"], count):
                if not pending:
                    loop.call_soon(flush)
                pending.append(encode({"delta": delta_wire(delta)}))
                await writer.drain()
            pending.append(encode({"done": True}))
        finally:
            flush()  # before an error's line

    async def _complete(self, request: dict[str, Any], writer: asyncio.StreamWriter) -> None:
        import attrs

        from agent_ls.agent import llm

        answer = await llm.complete(llm.LLMConfig(**request["config"]), request["messages"])
        writer.write(encode({"result": attrs.asdict(answer)}))

    async def _cancellable(self, answer: Callable[[dict[str, Any], asyncio.StreamWriter], Awaitable[None]],
                           request: dict[str, Any], reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """``answer`` the request, cancelled when the client closes its connection (it sends nothing
        more after a model request); an :class:`~agent_ls.agent.llm.LLMError` is its last line."""
        from agent_ls.agent import llm

        async def run() -> None:
            try:
                await answer(request, writer)
            except llm.LLMError as e:
                writer.write(encode({"error": {"kind": e.kind, "message": e.message}}))
            await writer.drain()

        task = asyncio.ensure_future(run())
        gone = asyncio.ensure_future(reader.read(1))  # the client sends nothing more: EOF = it cancelled
        try:
            await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            if not task.done():
                task.cancel()
                log.debug("model host: a client cancelled its request")
        task.result()


def _peer_uid(writer: asyncio.StreamWriter) -> int | None:
    sock = writer.get_extra_info("socket")
    so_peercred = getattr(socket, "SO_PEERCRED", None)
    if sock is None or so_peercred is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, so_peercred, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def delta_wire(delta: Any) -> dict[str, Any]:
    """A :class:`~agent_ls.agent.llm.StreamDelta` as JSON (its default fields left out)."""
    import attrs

    return attrs.asdict(delta, filter=lambda a, v: v != a.default)


def main(argv: list[str] | None = None) -> int:
    """``python -m agent_ls.agent.model_host_server SOCKET``: serve until idle. Exits at once (0) when
    another host holds the socket's lock (two front ends started one at the same moment)."""
    import fcntl

    from agent_ls.core.process_secrets import take_process_secrets

    take_process_secrets()  # first: the provider keys in memory only, as in every agent-ls process
    path = Path((argv or sys.argv[1:])[0])
    lock = open(path.with_suffix(".lock"), "a")  # noqa: SIM115 (held for the process's life)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0
    from agent_ls.core.redact import log_to_stderr

    log_to_stderr(os.environ.get("AGENT_LS_MODEL_HOST_LOG", "WARNING"))
    from agent_ls.agent import llm

    llm.get_litellm()  # before the socket exists: a client that connects finds it loaded
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a host that died (its lock went with it)
    idle = float(os.environ.get("AGENT_LS_MODEL_HOST_IDLE") or IDLE_SECONDS)
    asyncio.run(_Host(path, idle).serve())
    return 0


if __name__ == "__main__":
    sys.exit(main())
