"""MCP Tasks in the 2025-11-25 form (experimental in that revision), for legacy servers.

A server of the ``initialize`` era declares ``capabilities.tasks.requests.tools.call`` and, per
tool, ``execution.taskSupport`` (``optional`` or ``required``). Such a tool is called
task-augmented (``tools/call`` with ``params.task``); the server answers with
``CreateTaskResult`` (``{"task": {...}}``), is polled with ``tasks/get`` (honouring its
``pollInterval``), gives the tool's result with ``tasks/result`` and is cancelled with
``tasks/cancel``. A task that needs input (``input_required``) sends its requests
(``elicitation/create``...) as ordinary server-to-client requests while ``tasks/result`` waits:
they reach the same handlers (and the same elicitation UI) as any other server's.

The task then follows the 2026-07-28 form's path (:mod:`agent_ls.mcp.tasks`): the same handle
shape (:class:`LegacyTaskHandle` is a :class:`~agent_ls.mcp.tasks.TaskHandle`), the same hook
(a job of the calling conversation: Running strip, ``task_wait``, Stop) and the same refusal of
a reused task id.

The pinned SDK (mcp 2.3) has these types (``mcp_types``: ``Task``, ``TaskMetadata``,
``GetTaskRequest``, ``GetTaskPayloadRequest``, ``CancelTaskRequest``...) but never dispatches them;
the requests go through the session's typed ``send_request``. One thing it refuses: it validates a
``tools/call`` result against the revision's ``CallToolResult`` (``content`` required), which a
``CreateTaskResult`` is not. :func:`legacy_task_results` wraps the transport's read stream (as
:mod:`agent_ls.mcp.result_kind` does) and gives such a result an empty ``content``, so it passes
and :class:`LegacyCallAnswer` reads its ``task``. Remove it when the SDK accepts the shape:
``tests/unit/test_canaries_mcp.py::test_the_sdk_still_rejects_a_legacy_create_task_result``
fails then.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Any, TypeVar

import anyio.abc
import mcp_types as types
from mcp import Client
from mcp.client.session import ClientSession
from mcp.shared.message import SessionMessage
from mcp_types.jsonrpc import JSONRPCResponse
from mcp_types.version import MODERN_PROTOCOL_VERSIONS
from pydantic import ConfigDict

from agent_ls.mcp.tasks import (
    SYNC_LIMIT,
    Ack,
    CreateTaskResult,
    DetailedTask,
    LiveTasks,
    TaskHandle,
    TaskStarted,
    take_over,
    waiting_message,
)

if TYPE_CHECKING:
    from mcp.shared.dispatcher import ProgressFnT

T = TypeVar("T")

TASK_TTL_MS = 3_600_000
"""The retention asked for a task (``params.task.ttl``): an hour, the longest a job is followed
without ``agent.backgroundTimeout``."""


def task_tool(client: Client, tools: list[types.Tool], name: str) -> bool:
    """A legacy session whose server runs ``name`` as a task: it declares task-augmented
    ``tools/call`` and the tool's ``execution.taskSupport`` is ``optional`` or ``required``."""
    if client.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return False
    caps = client.server_capabilities.tasks
    if caps is None or caps.requests is None or caps.requests.tools is None or caps.requests.tools.call is None:
        return False
    tool = next((t for t in tools if t.name == name), None)
    support = tool.execution.task_support if tool is not None and tool.execution is not None else None
    return support in ("optional", "required")


class LegacyCallAnswer(types.Result):
    """A task-augmented ``tools/call``'s answer: a ``CreateTaskResult`` (``task``), or the tool's
    result at once (a server may decline the task; its fields kept as extras)."""

    model_config = ConfigDict(extra="allow")
    task: types.Task | None = None


class LegacyTaskHandle(TaskHandle):
    """A 2025-11-25 task, behind the shape of :class:`~agent_ls.mcp.tasks.TaskHandle`: ``get``
    answers a :class:`~agent_ls.mcp.tasks.DetailedTask` (the tool's result fetched with
    ``tasks/result`` once it completed)."""

    def __init__(self, server: str, tool: str, task: types.Task, session: ClientSession,
                 read_timeout: float | None) -> None:
        seed = CreateTaskResult(result_type="task", task_id=task.task_id, status=task.status,
                                status_message=task.status_message, poll_interval_ms=task.poll_interval,
                                ttl_ms=task.ttl)
        super().__init__(server, tool, seed, session, read_timeout)
        self._payload: types.CallToolResult | None = None

    async def get(self) -> DetailedTask:
        got = await self._session.send_request(
            types.GetTaskRequest(params=types.GetTaskRequestParams(task_id=self.task_id)), types.GetTaskResult,
            request_read_timeout_seconds=self._timeout)
        self.status, self.message = got.status, got.status_message or ""
        if got.status == "input_required":
            self.message = waiting_message(got.status_message, None)
        if got.poll_interval is not None:
            self.poll = min(max(got.poll_interval, 50), 30_000) / 1000
        detailed = DetailedTask(task_id=got.task_id, status=got.status, status_message=got.status_message)
        if got.status == "completed":
            payload = self._payload if self._payload is not None else await self._result()
            detailed.result = payload.model_dump(by_alias=True, mode="json", exclude_none=True)
        elif got.status == "failed":
            detailed.error = {"message": got.status_message or "no reason given"}
        return detailed

    async def _result(self) -> types.CallToolResult:
        """``tasks/result``: the tool's result (the server holds it until the task ends, and sends
        what the task asks for meanwhile)."""
        self._payload = await self._session.send_request(
            types.GetTaskPayloadRequest(params=types.GetTaskPayloadRequestParams(task_id=self.task_id)),
            types.CallToolResult, request_read_timeout_seconds=SYNC_LIMIT)
        return self._payload

    async def answer(self, got: object) -> None:
        """An ``input_required`` task sends its requests while ``tasks/result`` waits: wait on it
        (the requests reach the host's handlers; the result is kept for the next poll)."""
        if isinstance(got, DetailedTask) and got.status == "input_required" and self._payload is None:
            await self._result()
            self.message = "input sent"

    async def cancel(self) -> None:
        try:
            await self._session.send_request(
                types.CancelTaskRequest(params=types.CancelTaskRequestParams(task_id=self.task_id)), Ack,
                request_read_timeout_seconds=self._timeout)
        finally:
            if not self.ended:
                self.status = "cancelled"


class LegacyTasks:
    """The 2025-11-25 tasks of one session of one server."""

    def __init__(self, server: str, session: ClientSession) -> None:
        self.server = server
        self.session = session
        self.live = LiveTasks()

    async def call(self, name: str, arguments: dict[str, Any], *, timeout: float | None,
                   hook: TaskStarted | None, progress: ProgressFnT | None = None) -> types.CallToolResult:
        """Call ``name`` task-augmented; the task goes to ``hook`` (a job) or is waited for."""
        params = types.CallToolRequestParams(name=name, arguments=arguments, task=types.TaskMetadata(ttl=TASK_TTL_MS))
        answer = await self.session.send_request(types.CallToolRequest(params=params), LegacyCallAnswer,
                                                 request_read_timeout_seconds=timeout, progress_callback=progress)
        if answer.task is None:  # the server ran it at once
            result = types.CallToolResult.model_validate(answer.model_dump(by_alias=True, exclude={"task"}),
                                                         by_name=False)
            if not result.is_error:
                await self.session.validate_tool_result(name, result)
            return result
        handle = LegacyTaskHandle(self.server, name, answer.task, self.session, timeout)
        refused = self.live.add(handle)
        if refused is not None:
            return refused
        return await take_over(handle, hook)


def with_task_content(message: T) -> T:
    """``message`` with ``content: []`` added to a response result that is a legacy
    ``CreateTaskResult`` (a ``task`` object with a ``taskId``, no ``content``); anything else as is."""
    if not isinstance(message, SessionMessage):
        return message
    inner = message.message
    result = inner.result if isinstance(inner, JSONRPCResponse) else None
    if not isinstance(result, dict) or "content" in result:
        return message
    task = result.get("task")
    if not isinstance(task, dict) or not isinstance(task.get("taskId"), str):
        return message
    fixed = inner.model_copy(update={"result": {**result, "content": []}})
    return SessionMessage(message=fixed, metadata=message.metadata)  # type: ignore[return-value]


class _TaskContentStream(anyio.abc.ObjectReceiveStream[Any]):
    def __init__(self, inner: anyio.abc.ObjectReceiveStream[Any]) -> None:
        self._inner = inner

    async def receive(self) -> Any:
        return with_task_content(await self._inner.receive())

    async def aclose(self) -> None:
        await self._inner.aclose()

    @property
    def last_context(self) -> Any:
        """The sender's contextvars of the last message (the SDK's dispatcher reads it duck-typed)."""
        return getattr(self._inner, "last_context", None)


@contextlib.asynccontextmanager
async def legacy_task_results(transport: contextlib.AbstractAsyncContextManager[Any]) -> AsyncIterator[Any]:
    """``transport`` with its read stream wrapped by :func:`with_task_content`."""
    async with transport as streams:
        read, *rest = streams
        yield (_TaskContentStream(read), *rest)
