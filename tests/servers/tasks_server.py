"""An MCP server with tasks (the ``io.modelcontextprotocol/tasks`` extension of 2026-07-28,
SEP-2663), for the host's tasks tests, written with the SDK's extension framework: an
``Extension`` intercepts ``tools/call`` of its task tools (answering ``resultType: "task"``) and
serves ``tasks/get`` and ``tasks/cancel`` as extension methods; no hand-written JSON-RPC.

Run it as ``python tests/servers/tasks_server.py [--record PATH]`` (stdio, both eras).

Tools: ``slow(seconds)`` a task that reports its progress in ``statusMessage`` and ends with
"slow done after N s"; ``never()`` a task that never ends; ``ask(question)`` a task that asks for
input midway (``input_required`` with one form in ``inputRequests``, answered with
``tasks/update``) and ends with "answered: ACTION CONTENT"; ``reused()`` a task that never ends
and whose id is always ``task-same`` (a server that reuses a task id); ``quick(text)`` an
ordinary tool. ``--record PATH``: one JSON line per ``tasks/*`` request (``{"method", "taskId"}``,
with ``inputResponses`` for ``tasks/update``) and per task that ends (``{"ended", "status"}``).
"""

from __future__ import annotations

import gc

if __name__ == "__main__":  # a server process: no collection during the imports (see the end of the file)
    gc.disable()

import argparse
import asyncio
import itertools
import json
import time
from collections.abc import Sequence
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.extension import Extension, MethodBinding
from mcp.server.mcpserver import MCPServer
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError

from agent_ls.mcp.tasks import TASKS_EXTENSION, TaskParams

_ids = itertools.count(1)


class UpdateParams(TaskParams):
    """``tasks/update``: the answers, by input request key."""

    input_responses: dict[str, dict[str, Any]]


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class TasksServer(Extension):
    identifier = TASKS_EXTENSION

    def __init__(self, record: str | None) -> None:
        self.record = record
        self.tasks: dict[str, dict[str, Any]] = {}
        self.runs: dict[str, asyncio.Task[None]] = {}

    def log(self, **entry: Any) -> None:
        if self.record:
            with open(self.record, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")

    def methods(self) -> Sequence[MethodBinding]:
        return [MethodBinding("tasks/get", TaskParams, self.get), MethodBinding("tasks/cancel", TaskParams, self.cancel),
                MethodBinding("tasks/update", UpdateParams, self.update)]

    async def intercept_tool_call(self, params: types.CallToolRequestParams, ctx: ServerRequestContext[Any, Any],
                                  call_next: Any) -> Any:
        if params.name not in ("slow", "never", "ask", "reused"):
            return await call_next(ctx)
        task_id = "task-same" if params.name == "reused" else f"task-{next(_ids)}"
        task = {"taskId": task_id, "status": "working", "statusMessage": "starting", "createdAt": now(),
                "lastUpdatedAt": now(), "ttlMs": 600_000, "pollIntervalMs": 100}
        if params.name == "reused" and task_id in self.tasks:
            return {"resultType": "task", **task}  # the id of a task still running, again
        self.tasks[task_id] = task
        args = params.arguments or {}
        loop = asyncio.get_running_loop()
        if params.name == "ask":
            self.runs[task_id] = loop.create_task(self.ask(task, str(args.get("question", "Your name?"))))
        else:
            seconds = float(args.get("seconds", 2))
            self.runs[task_id] = loop.create_task(self.run(task, seconds, params.name in ("never", "reused")))
        return {"resultType": "task", **task}

    async def ask(self, task: dict[str, Any], question: str) -> None:
        """Work a moment, then ask (``input_required``) and wait for the answer; end with it."""
        await asyncio.sleep(0.2)
        answered = asyncio.Event()
        task.update(status="input_required", statusMessage=None, lastUpdatedAt=now(), inputRequests={
            "ask-1": {"method": "elicitation/create", "params": {
                "mode": "form", "message": question,
                "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}},
                                    "required": ["name"]}}}})
        task["answered"] = answered
        await answered.wait()
        response = task.pop("response")
        task.update(status="completed", statusMessage="done", lastUpdatedAt=now(), result={"content": [
            {"type": "text", "text": f"answered: {response.get('action')} {json.dumps(response.get('content'))}"}],
            "isError": False})
        self.log(ended=task["taskId"], status="completed")

    async def update(self, ctx: ServerRequestContext[Any, Any], params: UpdateParams) -> dict[str, Any]:
        self.log(method="tasks/update", taskId=params.task_id, inputResponses=params.input_responses)
        task = self.task(params)
        response = params.input_responses.get("ask-1")
        if task.get("status") == "input_required" and response is not None:
            task.pop("inputRequests", None)
            task.update(status="working", statusMessage="got the answer", response=response)
            task.pop("answered").set()
        return {"resultType": "complete"}

    async def run(self, task: dict[str, Any], seconds: float, never: bool) -> None:
        start = time.monotonic()
        while never or time.monotonic() - start < seconds:
            await asyncio.sleep(0.1)
            task["statusMessage"] = f"step {int((time.monotonic() - start) / 0.5) + 1}"
            task["lastUpdatedAt"] = now()
        task.update(status="completed", statusMessage="done",
                    result={"content": [{"type": "text", "text": f"slow done after {seconds:g} s"}], "isError": False})
        self.log(ended=task["taskId"], status="completed")

    def task(self, params: TaskParams) -> dict[str, Any]:
        task = self.tasks.get(params.task_id)
        if task is None:
            raise MCPError(types.INVALID_PARAMS, f"no task {params.task_id}")
        return task

    async def get(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        self.log(method="tasks/get", taskId=params.task_id)
        shown = {k: v for k, v in self.task(params).items() if k not in ("answered", "response") and v is not None}
        return {"resultType": "complete", **shown}

    async def cancel(self, ctx: ServerRequestContext[Any, Any], params: TaskParams) -> dict[str, Any]:
        self.log(method="tasks/cancel", taskId=params.task_id)
        task = self.task(params)
        run = self.runs.get(params.task_id)
        if run is not None and not run.done():
            run.cancel()
            task.update(status="cancelled", statusMessage="cancelled by the client")
            self.log(ended=params.task_id, status="cancelled")
        return {"resultType": "complete"}


def build_server(record: str | None) -> MCPServer:
    mcp = MCPServer("tasks", version="1.0.0", log_level="WARNING", extensions=[TasksServer(record)])

    @mcp.tool(structured_output=False)
    def slow(seconds: float = 2) -> str:
        """Run a long job (as a task) for the given seconds."""
        return "ran synchronously"

    @mcp.tool(structured_output=False)
    def never() -> str:
        """Start a job (as a task) that never finishes."""
        return "ran synchronously"

    @mcp.tool(structured_output=False)
    def ask(question: str = "Your name?") -> str:
        """Start a job (as a task) that asks the user a question midway."""
        return "ran synchronously"

    @mcp.tool(structured_output=False)
    def reused() -> str:
        """Start a job (as a task) whose id the server reuses."""
        return "ran synchronously"

    @mcp.tool(structured_output=False)
    def quick(text: str) -> str:
        """Return the text."""
        return text

    return mcp


def main() -> None:
    p = argparse.ArgumentParser(prog="tasks_server.py")
    p.add_argument("--record", default=None)
    opts = p.parse_args()
    low = build_server(opts.record)._lowlevel_server

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await low.run(read_stream, write_stream, low.create_initialization_options())

    anyio.run(serve)


if __name__ == "__main__":
    gc.freeze()  # the imports' long-lived objects: never walked again, by a collection nor at exit
    gc.enable()
    main()
