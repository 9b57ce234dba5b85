"""MCP Tasks, the ``io.modelcontextprotocol/tasks`` extension of 2026-07-28 (SEP-2663), on the
SDK's extension framework.

The pinned SDK (mcp 2.3) has only the never-dispatched 2025-11-25 task types, but it has the
frame: a :class:`~mcp.client.extension.ClientExtension` advertises the extension and claims the
``resultType: "task"`` result of ``tools/call`` (:class:`TasksExtension`); its resolver gets the
client session and returns the call's ordinary result. What the SDK lacks is here, in one module
an SDK release with tasks can replace: the wire models (:class:`CreateTaskResult`, the
``tasks/get``, ``tasks/update`` and ``tasks/cancel`` requests, :class:`DetailedTask`) and
:class:`TaskHandle` (poll, honouring the server's ``pollIntervalMs``; answer; cancel).

A task that needs input (``input_required``, its ``inputRequests``) is answered through the SDK's
own callback table (``ClientSession.dispatch_input_request``, the path an ``InputRequiredResult``
of a plain call takes), so a form reaches the same elicitation UI as any server's
``elicitation/create``; the answer (accept, decline or cancel) goes back with ``tasks/update``,
each request key once. Meanwhile the task's message says it waits for input.

A server that reports a task id one of its tasks still running has (:class:`LiveTasks`) gets the
second call answered with an error: its job would poll, show and cancel the first task.

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
from typing import Any, Literal, Protocol

import mcp_types as types
from mcp.client.extension import ClaimContext, ClientExtension, ResultClaim
from mcp.client.session import ClientRequestContext, ClientSession
from pydantic import ConfigDict, TypeAdapter
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


class UpdateTaskParams(types.RequestParams):
    """``tasks/update``: answers to a task's ``inputRequests``, by request key (each an
    ``InputResponse``: an ``ElicitResult``, a ``CreateMessageResult``, a ``ListRootsResult``)."""

    model_config = _WIRE
    task_id: str
    input_responses: dict[str, dict[str, Any]]


class UpdateTaskRequest(types.Request[UpdateTaskParams, Literal["tasks/update"]]):
    method: Literal["tasks/update"] = "tasks/update"
    params: UpdateTaskParams


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
    input_requests: dict[str, Any] | None = None
    """While ``input_required``: what the server asks for, by request key (MRTR ``InputRequests``)."""


class Ack(types.Result):
    """``tasks/cancel``'s and ``tasks/update``'s empty answer."""


class TaskInputRefused(Exception):
    """A task asked for input the host could not give (e.g. sampling without a model); the task
    was cancelled."""


_INPUT_REQUESTS: TypeAdapter[dict[str, types.InputRequest]] = TypeAdapter(dict[str, types.InputRequest])


def waiting_message(status_message: str | None, requests: dict[str, Any] | None) -> str:
    """What a task that needs input shows: that it waits, and for what (its own word, else the
    first form's message)."""
    said = status_message or ""
    if not said:
        for raw in (requests or {}).values():
            params = raw.get("params") if isinstance(raw, dict) else None
            if isinstance(params, dict) and isinstance(params.get("message"), str):
                said = params["message"]
                break
    return "waiting for input" + (f": {said}" if said else "")


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
        self._answered: set[str] = set()
        """Keys of ``inputRequests`` answered already (a later poll may still list them)."""

    @property
    def ended(self) -> bool:
        return self.status in ENDED

    async def get(self) -> DetailedTask:
        """``tasks/get`` (the poll interval follows the server's latest word)."""
        got = await self._session.send_request(GetTaskRequest(params=TaskParams(task_id=self.task_id)), DetailedTask,
                                               request_read_timeout_seconds=self._timeout)
        self.status, self.message = got.status, got.status_message or ""
        if got.status == "input_required":
            self.message = waiting_message(got.status_message, got.input_requests)
        if got.poll_interval_ms is not None:
            self.poll = _poll_seconds(got.poll_interval_ms)
        return got

    async def answer(self, got: object) -> None:
        """Answer what an ``input_required`` task asks for and has not been answered yet: each
        request through the session's callbacks (a form: the host's elicitation UI), then one
        ``tasks/update`` with every answer (accept, decline or cancel alike). A request the host
        refuses (an error) cancels the task: :class:`TaskInputRefused`."""
        if not isinstance(got, DetailedTask) or got.status != "input_required":
            return
        pending = {key: raw for key, raw in (got.input_requests or {}).items() if key not in self._answered}
        if not pending:
            return
        requests = _INPUT_REQUESTS.validate_python(pending, by_name=False)
        session = self._session

        async def one(key: str, request: types.InputRequest) -> types.InputResponse | types.ErrorData:
            meta = request.params.meta if request.params is not None else None
            return await session.dispatch_input_request(ClientRequestContext(session=session, request_id=key,
                                                                             meta=meta), request)

        keys = list(requests)
        answers = await asyncio.gather(*(one(key, requests[key]) for key in keys))
        refused = [a for a in answers if isinstance(a, types.ErrorData)]
        if refused:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.cancel(), 5)
            raise TaskInputRefused(f"the task asked for input that could not be given ({refused[0].message}); "
                                   "it was cancelled")
        responses = {key: answer.model_dump(by_alias=True, mode="json", exclude_none=True)
                     for key, answer in zip(keys, answers, strict=True) if not isinstance(answer, types.ErrorData)}
        await session.send_request(UpdateTaskRequest(params=UpdateTaskParams(task_id=self.task_id,
                                                                             input_responses=responses)),
                                   Ack, request_read_timeout_seconds=self._timeout)
        self._answered.update(pending)
        self.message = "input sent"

    async def cancel(self) -> None:
        """``tasks/cancel`` (the user stopped it, or nobody waits any more)."""
        try:
            await self._session.send_request(CancelTaskRequest(params=TaskParams(task_id=self.task_id)), Ack,
                                             request_read_timeout_seconds=self._timeout)
        finally:
            if not self.ended:
                self.status = "cancelled"  # (its id is free for another task of the server's)

    async def wait(self, limit: float) -> DetailedTask:
        """Poll until the task ends, answering what it asks for (``TimeoutError`` after ``limit`` seconds)."""
        async with asyncio.timeout(limit):
            while True:
                got = await self.get()
                if got.status in ENDED:
                    return got
                await self.answer(got)
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


class LiveTask(Protocol):
    """What :class:`LiveTasks` reads of a task (:class:`TaskHandle`, the legacy form's handle)."""

    task_id: str
    tool: str

    @property
    def ended(self) -> bool: ...


class LiveTasks:
    """The tasks of one connection that have not ended, by task id. A server that reports an id
    one of them still has is refused (the second call gets an error result; the first task's job
    goes on untouched): the host polls, shows and cancels a task by its id alone."""

    def __init__(self) -> None:
        self._tasks: dict[str, LiveTask] = {}

    def add(self, task: LiveTask) -> types.CallToolResult | None:
        """Track ``task``; an error result for the call instead when its id is taken."""
        held = self._tasks.get(task.task_id)
        if held is not None and not held.ended:
            text = (f"the server reported task id {task.task_id!r} for this call, but that id belongs to a task of "
                    f"its {held.tool!r} call that is still running; this call's task cannot be told apart from it, "
                    "so it is not followed (the running one goes on)")
            log.warning("MCP server reused the running task id %r (tool %s)", task.task_id, task.tool)
            return types.CallToolResult(content=[types.TextContent(type="text", text=text)], is_error=True)
        self._tasks = {k: t for k, t in self._tasks.items() if not t.ended}
        self._tasks[task.task_id] = task
        return None


TaskStarted = Callable[[TaskHandle], "str | None"]
"""The host takes a task over: the job id the model is told (None: the call waits for it). (A
legacy task's handle has the same shape: :class:`agent_ls.mcp.legacy_tasks.LegacyTaskHandle`.)"""


def started_text(job_id: str) -> str:
    """What the model is told of a call whose task became a job."""
    return (f"The server runs this as a task; it started as {job_id} and the turn goes on. Wait for it with "
            f"task_wait (id {job_id!r}), look with shell_output, stop it with shell_stop; you will be told "
            "when it ends.")


class TasksExtension(ClientExtension):
    """The client side of the tasks extension for one server's connection (``started``: reads
    the host's hook at each task, so the hook may be set after the connection starts)."""

    identifier = TASKS_EXTENSION

    def __init__(self, server: str, started: Callable[[], TaskStarted | None]) -> None:
        self.server = server
        self._started = started
        self.live = LiveTasks()

    def claims(self) -> Sequence[ResultClaim[Any]]:
        return [ResultClaim(result_type="task", model=CreateTaskResult, resolve=self._resolve)]

    async def _resolve(self, created: CreateTaskResult, ctx: ClaimContext) -> types.CallToolResult:
        handle = TaskHandle(self.server, ctx.tool_name, created, ctx.session, ctx.read_timeout_seconds)
        refused = self.live.add(handle)
        if refused is not None:
            return refused
        return await take_over(handle, self._started())


async def take_over(handle: TaskHandle, hook: TaskStarted | None) -> types.CallToolResult:
    """The call's result once its task exists: "started as bg-N" when the host takes the task
    over, else the task's own result once it ends (bounded by :data:`SYNC_LIMIT`; a call that is
    cancelled or runs out cancels the task)."""
    job_id = hook(handle) if hook is not None else None
    if job_id is not None:
        return types.CallToolResult(content=[types.TextContent(type="text", text=started_text(job_id))])
    try:
        return final_result(await handle.wait(SYNC_LIMIT))
    except TaskInputRefused as e:
        return types.CallToolResult(content=[types.TextContent(type="text", text=str(e))], is_error=True)
    except (asyncio.CancelledError, TimeoutError):
        with contextlib.suppress(Exception):
            await asyncio.shield(asyncio.wait_for(handle.cancel(), 5))
        raise
