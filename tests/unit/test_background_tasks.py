"""core/tasks.py: one owner of background tasks (issue 39 item 3)."""

from __future__ import annotations

import asyncio
import logging

import pytest

from agent_ls.core.tasks import BackgroundTasks, in_daemon_thread


async def test_a_failure_is_logged_once_with_the_task_and_owner_names(caplog: pytest.LogCaptureFixture) -> None:
    tasks = BackgroundTasks("the owner", logging.getLogger("agent_ls.test"))

    async def fails() -> None:
        raise ValueError("boom")

    with caplog.at_level(logging.WARNING, logger="agent_ls.test"):
        task = tasks.spawn(fails(), "a named job")
        await asyncio.wait({task})
        await asyncio.sleep(0)
    failures = [r for r in caplog.records if "boom" in r.getMessage()]
    assert len(failures) == 1
    assert "the owner" in failures[0].getMessage() and "a named job" in failures[0].getMessage()
    assert len(tasks) == 0  # the reference is dropped once it ended


async def test_a_cancelled_task_is_not_a_failure(caplog: pytest.LogCaptureFixture) -> None:
    tasks = BackgroundTasks("owner", logging.getLogger("agent_ls.test"))
    with caplog.at_level(logging.DEBUG, logger="agent_ls.test"):
        task = tasks.spawn(asyncio.sleep(60), "sleeper")
        await asyncio.sleep(0)
        task.cancel()
        await asyncio.wait({task})
        await asyncio.sleep(0)
    assert not [r for r in caplog.records if "failed" in r.getMessage()]


async def test_close_cancels_every_task_and_refuses_new_ones() -> None:
    tasks = BackgroundTasks("owner")
    running = [tasks.spawn(asyncio.sleep(60), f"sleeper {i}") for i in range(3)]
    assert tasks.names() == ["sleeper 0", "sleeper 1", "sleeper 2"]
    await tasks.close(timeout=5)
    assert all(t.cancelled() for t in running)
    late = tasks.spawn(asyncio.sleep(60), "late")
    await asyncio.sleep(0)
    assert late.cancelled() and len(tasks) == 0


async def test_tasks_are_kept_alive_by_the_owner() -> None:
    tasks = BackgroundTasks("owner")
    done = asyncio.Event()

    async def job() -> None:
        await asyncio.sleep(0.01)
        done.set()

    tasks.spawn(job(), "job")  # no reference kept here: the owner holds it
    await asyncio.wait_for(done.wait(), 5)


async def test_in_daemon_thread_returns_and_raises() -> None:
    assert await in_daemon_thread(lambda: 6 * 7) == 42

    def fails() -> None:
        raise KeyError("x")

    with pytest.raises(KeyError):
        await in_daemon_thread(fails)
