"""MCP Tasks, the ``io.modelcontextprotocol/tasks`` extension of 2026-07-28 (SEP-2663), on the
SDK's extension framework.

The pinned SDK (mcp 2.3) has only the never-dispatched 2025-11-25 task types, but it has the
frame: a :class:`~mcp.client.extension.ClientExtension` advertises the extension and claims the
``resultType: "task"`` result of ``tools/call`` (:class:`TasksExtension`); its resolver gets the
client session and returns the call's ordinary result. What the SDK lacks is here, in one module
an SDK release with tasks can replace: the wire models (:class:`CreateTaskResult`, the
``tasks/get`` and ``tasks/cancel`` requests, :class:`DetailedTask`) and :class:`TaskHandle`
(poll, honouring the server's ``pollIntervalMs``; cancel).

A task does not hold the turn: when the host gives a ``started`` hook (the runtime's, which makes
the task a job of the calling conversation: ``task_wait``, ``shell_output``, Stop), the resolver
hands the task over and the model gets "task started as bg-N" at once. Without one, the resolver
polls until the task ends (bounded by :data:`SYNC_LIMIT`) and ``tasks/cancel`` is sent if the call
is cancelled.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Callable, Sequence
from typing import Any, Literal

import mcp_types as types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientSession
from pydantic import ConfigDict
from pydantic.alias_generators import to_camel

log = logging.getLogger("agent_ls.mcp.tasks")

TASKS_EXTENSION = "io.modelcontextprotocol/tasks"
DEFAULT_POLL_MS = 1000
MIN_POLL_MS = 50
"""A server's ``pollIntervalMs`` below this is raised to it (no busy loop on a server's word)."""
MAX_POLL_MS = 30_000
SYNC_LIMIT = 3600.0
"""Seconds a task is waited for when nobody takes it over (then it is cancelled)."""
ENDED = frozenset({"completed", "failed", "cancelled"})

_WIRE = ConfigDict(alias_generator=to_camel, populate_by_name=True, extra="allow")


class TaskParams(types.RequestParams):
    """``tasks/get`` and ``tasks/cancel``: which task."""

    model_config = _WIRE
    task_id: str


class GetTaskRequest(types.Request[TaskParams, Literal["tasks/get"]]):
    method: Literal["tasks/get"] = "tasks/get"
    params: TaskParams


class CancelTaskRequest(types.Request[TaskParams, Literal["tasks/cancel"]]):
    method: Literal["tasks/cancel"] = "tasks/cancel"
    params: TaskParams


class CreateTaskResult(types.Result):
    """A ``tools/call`` answered with a task (a flat ``Result & Task``)."""

    model_config = _WIRE
    result_type: Literal["task"]
    task_id: str
    status: str = "working"
    status_message: str | None = None
    poll_interval_ms: int | None = None
    ttl_ms: int | None = None


class DetailedTask(types.Result):
    """``tasks/get``: the task now; ``result`` (the tool's result) once completed, ``error`` once failed."""

    model_config = _WIRE
    task_id: str
    status: str
    status_message: str | None = None
    poll_interval_ms: int | None = None
    result: dict[str, Any] | None = None
    error: dict[str, Any] | None = None


class Ack(types.Result):
    """``tasks/cancel``'s empty answer."""


def _poll_seconds(ms: int | None) -> float:
    return min(max(ms if ms is not None else DEFAULT_POLL_MS, MIN_POLL_MS), MAX_POLL_MS) / 1000


class TaskHandle:
    """One task of one server, through the session of its connection."""

    def __init__(self, server: str, tool: str, created: CreateTaskResult, session: ClientSession,
                 read_timeout: float | None) -> None:
        self.server = server
        self.tool = tool
        self.task_id = created.task_id
        self.status = created.status
        self.message = created.status_message or ""
        self.poll = _poll_seconds(created.poll_interval_ms)
        self._session = session
        self._timeout = read_timeout

    async def get(self) -> DetailedTask:
        """``tasks/get`` (the poll interval follows the server's latest word)."""
        got = await self._session.send_request(GetTaskRequest(params=TaskParams(task_id=self.task_id)), DetailedTask,
                                               request_read_timeout_seconds=self._timeout)
        self.status, self.message = got.status, got.status_message or ""
        if got.poll_interval_ms is not None:
            self.poll = _poll_seconds(got.poll_interval_ms)
        return got

    async def cancel(self) -> None:
        """``tasks/cancel`` (the user stopped it, or nobody waits any more)."""
        await self._session.send_request(CancelTaskRequest(params=TaskParams(task_id=self.task_id)), Ack,
                                         request_read_timeout_seconds=self._timeout)

    async def wait(self, limit: float) -> DetailedTask:
        """Poll until the task ends (``TimeoutError`` after ``limit`` seconds)."""
        async with asyncio.timeout(limit):
            while True:
                got = await self.get()
                if got.status in ENDED:
                    return got
                await asyncio.sleep(self.poll)


def final_result(task: DetailedTask) -> types.CallToolResult:
    """The tool's result a finished task carries (a failed or cancelled task: an error result)."""
    if task.status == "completed" and task.result is not None:
        return types.CallToolResult.model_validate(task.result)
    if task.status == "failed":
        error = task.error or {}
        text = f"the task failed: {error.get('message', 'no reason given')}"
    else:
        text = f"the task ended {task.status}" + (f": {task.status_message}" if task.status_message else "")
    return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)


TaskStarted = Callable[[TaskHandle], "str | None"]
"""The host takes a task over: the job id the model is told (None: the call waits for it)."""


class TasksExtension(ClientExtension):
    """The client side of the tasks extension for one server's connection (``started``: reads
    the host's hook at each task, so the hook may be set after the connection starts)."""

    identifier = TASKS_EXTENSION

    def __init__(self, server: str, started: Callable[[], TaskStarted | None]) -> None:
        self.server = server
        self._started = started

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self._resolve)]

    async def _resolve(self, created: CreateTaskResult, ctx: ClaimContext) -> types.CallToolResult:
        handle = TaskHandle(self.server, ctx.tool_name, created, ctx.session, ctx.read_timeout_seconds)
        hook = self._started()
        job_id = hook(handle) if hook is not None else None
        if job_id is not None:
            text = (f"The server runs this as a task; it started as {job_id} and the turn goes on. Wait for it with "
                    f"task_wait (id {job_id!r}), look with shell_output, stop it with shell_stop; you will be told "
                    "when it ends.")
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)])
        try:
            return final_result(await handle.wait(SYNC_LIMIT))
        except (asyncio.CancelledError, TimeoutError):
            with contextlib.suppress(Exception):
                await asyncio.shield(asyncio.wait_for(handle.cancel(), 5))
            raise
