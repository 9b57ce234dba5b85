"""One owner of background tasks: each is named, kept alive by a strong reference, its failure
logged once, and all of them cancelled together when the owner closes.

The language server, each ACP session and the MCP manager own one (:class:`BackgroundTasks`)
instead of each keeping a set of tasks and a done-callback of its own. A task that fails is
logged with its name at the owner's level (``warning`` unless the owner says ``error``); a
cancelled task is not a failure.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import threading
from collections.abc import Awaitable, Callable, Iterator
from typing import Any, TypeVar

T = TypeVar("T")


class BackgroundTasks:
    """The background tasks of one owner (``name``: said in the log with each failure)."""

    def __init__(self, name: str, log: logging.Logger | None = None, *, level: int = logging.WARNING) -> None:
        self.name = name
        self._log = log or logging.getLogger("agent_ls")
        self._level = level
        self._tasks: dict[asyncio.Task[Any], str] = {}
        self.closed = False

    def spawn(self, coro: Awaitable[T], name: str) -> asyncio.Task[T]:
        """Run ``coro`` in the background as ``name``. After :meth:`close` the coroutine is
        closed unrun and the task returned is already cancelled."""
        task: asyncio.Task[T] = asyncio.ensure_future(coro)
        if self.closed:
            task.cancel()
            return task
        self._tasks[task] = name
        task.add_done_callback(self._done)
        return task

    def _done(self, task: asyncio.Task[Any]) -> None:
        name = self._tasks.pop(task, "task")
        if task.cancelled():
            return
        error = task.exception()
        if error is not None:
            self._log.log(self._level, "%s: background task %s failed: %r", self.name, name, error,
                          exc_info=error if self._log.isEnabledFor(logging.DEBUG) else None)

    def __iter__(self) -> Iterator[asyncio.Task[Any]]:
        return iter(list(self._tasks))

    def __len__(self) -> int:
        return len(self._tasks)

    def names(self) -> list[str]:
        """The names of the tasks running now."""
        return sorted(self._tasks.values())

    def cancel(self) -> None:
        """Cancel every task (they end at their next await)."""
        for task in list(self._tasks):
            task.cancel()

    async def wait(self, timeout: float | None = None) -> None:
        """Wait for the running tasks to end (at most ``timeout`` seconds); what they raise is
        logged by the owner, never raised here."""
        if self._tasks:
            await asyncio.wait(set(self._tasks), timeout=timeout)

    async def close(self, timeout: float | None = 5.0) -> None:
        """Cancel every task and wait (at most ``timeout`` seconds) for them to end; no task
        starts afterwards."""
        self.closed = True
        self.cancel()
        await self.wait(timeout)


async def in_daemon_thread(fn: Callable[[], T]) -> T:
    """``fn()`` in a daemon thread: an import that is still running when the editor shuts the
    server down must not hold the process (``asyncio.to_thread``'s workers are joined at exit)."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()

    def settle(ok: bool, value: Any) -> None:
        if not done.done():
            (done.set_result if ok else done.set_exception)(value)

    def run() -> None:
        try:
            result: tuple[bool, Any] = (True, fn())
        except BaseException as e:  # noqa: BLE001 - handed to the awaiting task
            result = (False, e)
        with contextlib.suppress(RuntimeError):  # the loop is gone: nobody waits any more
            loop.call_soon_threadsafe(settle, *result)

    threading.Thread(target=run, name="agent-ls import", daemon=True).start()
    return await done
