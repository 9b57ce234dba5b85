"""Leaving the process in bounded time, whatever is still running.

After ``exit`` (or when the editor closes stdin) asyncio cancels the remaining tasks, then the
interpreter finalizes: it joins worker threads, runs ``atexit`` hooks and collects every object.
A task that ignores its cancellation, a worker thread stuck in a call, or the daemon thread that
is still importing litellm can hold the process there for ever, and the editor keeps a server
that never ends (with its MCP servers' children, if any survived).

So the language server (like ``agent-ls acp``) ends with ``os._exit`` once pygls returns: the
MCP servers are stopped and the stores closed by then (``shutdown``), nothing is left for
finalization to do. And from the moment the connection ends a watchdog runs
(:class:`agent_ls.core.process.ExitWatchdog`): if the process is still there a few seconds
later, it writes every thread's stack to stderr (the editor's log, so the cause can be found),
ends the children and the process itself.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import traceback
from collections.abc import Callable
from typing import TYPE_CHECKING, BinaryIO, NoReturn

if TYPE_CHECKING:
    from agent_ls.server.server import AgentLanguageServer


class EofWatch:
    """stdin for pygls that arms the watchdog when the editor closes it (no ``exit`` came)."""

    def __init__(self, stream: BinaryIO, on_eof: Callable[[], None]) -> None:
        self._stream = stream
        self._on_eof = on_eof

    def readline(self) -> bytes:
        return self._seen(self._stream.readline())

    def read(self, n: int = -1) -> bytes:
        return self._seen(self._stream.read(n))

    def _seen(self, data: bytes) -> bytes:
        if not data:
            self._on_eof()
        return data


def serve_stdio(server: AgentLanguageServer) -> NoReturn:
    """Serve LSP on stdio until the editor ends the connection, then end the process at once.

    Exit code as the LSP specification asks: 0 when ``shutdown`` came before, 1 otherwise.
    """
    stdin = EofWatch(sys.stdin.buffer, lambda: server.exit_watchdog.arm(1))
    code = 1
    try:
        server.start_io(stdin=stdin)  # type: ignore[arg-type]  # pygls reads with readline/read only
        code = 0 if server.shutdown_requested else 1
    except BaseException:  # noqa: BLE001 - reported below; the process ends either way
        with contextlib.suppress(Exception):
            traceback.print_exc()
    finally:
        logging.shutdown()
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):
                stream.flush()
    os._exit(code)
