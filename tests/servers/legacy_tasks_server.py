"""An MCP server with tasks in the 2025-11-25 form (experimental in that revision), for the host's
legacy tasks tests, written with the SDK's low-level ``Server`` (the SDK serves no tasks: its
request handlers serve ``tasks/get``, ``tasks/result`` and ``tasks/cancel``, a middleware answers a
task-augmented ``tools/call`` with ``CreateTaskResult``, whose shape the SDK's result sieve would
refuse). It speaks only the ``initialize`` era (configure the entry with ``"protocol": "legacy"``)
and declares ``capabilities.tasks`` (task-augmented ``tools/call``, ``cancel``).

Run it as ``python tests/servers/legacy_tasks_server.py [--record PATH]`` (stdio).

Tools (each with ``execution.taskSupport``): ``slow(seconds)`` (``optional``) a task that says its
progress in ``statusMessage`` and ends with "slow done after N s"; ``never()`` (``required``) a
task that never ends; ``ask(question)`` (``optional``) a task that goes ``input_required`` and asks
its form (``elicitation/create``, tagged with the task) while the client waits on
``tasks/result``, then ends with "answered: ACTION CONTENT"; ``quick(text)`` an ordinary tool (no
task support). ``--record PATH``: one JSON line per task-augmented call (``{"call", "ttl"}``), per
``tasks/*`` request (``{"method", "taskId"}``) and per task that ends (``{"ended", "status"}``).
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
from typing import Any

import anyio
import mcp_types as types
from mcp.server.context import ServerRequestContext
from mcp.server.lowlevel import Server
from mcp.server.stdio import stdio_server
from mcp.shared.exceptions import MCPError
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

RELATED_TASK = "io.modelcontextprotocol/related-task"
SUPPORT = {"slow": "optional", "never": "required", "ask": "optional"}


def now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


class LegacyTasks:
    def __init__(self, record: str | None) -> None:
        self.record = record
        self.ids = itertools.count(1)
        self.tasks: dict[str, dict[str, Any]] = {}
        self.runs: dict[str, asyncio.Task[None]] = {}
        self.done: dict[str, asyncio.Event] = {}
        self.questions: dict[str, str] = {}
        self.answers: dict[str, asyncio.Future[types.ElicitResult]] = {}

    def log(self, **entry: Any) -> None:
        if self.record:
            with open(self.record, "a", encoding="utf-8") as f:
                f.write(json.dumps(entry) + "\n")

    # the tools -------------------------------------------------------------------------------------
    async def list_tools(self, ctx: ServerRequestContext[Any, Any],
                         params: types.PaginatedRequestParams | None) -> types.ListToolsResult:
        obj = {"type": "object"}
        tools = [types.Tool(name=name, description=f"{name} (as a task)", input_schema=obj,
                            execution=types.ToolExecution(task_support=support))  # type: ignore[arg-type]
                 for name, support in SUPPORT.items()]
        tools.append(types.Tool(name="quick", description="Return the text.", input_schema=obj))
        return types.ListToolsResult(tools=tools)

    async def call_tool(self, ctx: ServerRequestContext[Any, Any],
                        params: types.CallToolRequestParams) -> types.CallToolResult:
        """A call without ``task`` (``quick``, or ``slow`` run at once)."""
        text = str((params.arguments or {}).get("text", f"{params.name} ran synchronously"))
        return types.CallToolResult(content=[types.TextContent(type="text", text=text)])

    async def tasks_middleware(self, ctx: ServerRequestContext[Any, Any], call_next: Any) -> Any:
        """A task-augmented ``tools/call``: a task, answered as ``CreateTaskResult``; the era gate."""
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS and ctx.method != "initialize":
            raise MCPError(types.METHOD_NOT_FOUND, f"Method not found: {ctx.method} (initialize era only)")
        params = ctx.params or {}
        if ctx.method != "tools/call" or not isinstance(params.get("task"), dict) or params.get("name") not in SUPPORT:
            return await call_next(ctx)
        name, args = params["name"], params.get("arguments") or {}
        self.log(call=name, ttl=params["task"].get("ttl"))
        task_id = f"legacy-{next(self.ids)}"
        task = {"taskId": task_id, "status": "working", "statusMessage": "starting", "createdAt": now(),
                "lastUpdatedAt": now(), "ttl": params["task"].get("ttl"), "pollInterval": 100}
        self.tasks[task_id] = task
        self.done[task_id] = asyncio.Event()
        loop = asyncio.get_running_loop()
        if name == "ask":
            self.questions[task_id] = str(args.get("question", "Your name?"))
            self.answers[task_id] = loop.create_future()
            self.runs[task_id] = loop.create_task(self.ask(task))
        else:
            self.runs[task_id] = loop.create_task(self.run(task, float(args.get("seconds", 2)), name == "never"))
        return {"task": dict(task)}

    async def run(self, task: dict[str, Any], seconds: float, never: bool) -> None:
        start = time.monotonic()
        while never or time.monotonic() - start < seconds:
            await asyncio.sleep(0.1)
            task.update(statusMessage=f"step {int((time.monotonic() - start) / 0.5) + 1}", lastUpdatedAt=now())
        self.end(task, "completed", f"slow done after {seconds:g} s")

    async def ask(self, task: dict[str, Any]) -> None:
        await asyncio.sleep(0.2)
        task.update(status="input_required", statusMessage="needs your name", lastUpdatedAt=now())
        answer = await self.answers[task["taskId"]]
        task.update(status="working", statusMessage="got the answer", lastUpdatedAt=now())
        self.end(task, "completed", f"answered: {answer.action} {json.dumps(answer.content)}")

    def end(self, task: dict[str, Any], status: str, text: str) -> None:
        task.update(status=status, statusMessage="done", lastUpdatedAt=now(),
                    result={"content": [{"type": "text", "text": text}], "isError": False})
        self.log(ended=task["taskId"], status=status)
        self.done[task["taskId"]].set()

    # tasks/* ---------------------------------------------------------------------------------------
    def task(self, task_id: str) -> dict[str, Any]:
        task = self.tasks.get(task_id)
        if task is None:
            raise MCPError(types.INVALID_PARAMS, f"no task {task_id}")
        return task

    async def get(self, ctx: ServerRequestContext[Any, Any], params: types.GetTaskRequestParams) -> dict[str, Any]:
        self.log(method="tasks/get", taskId=params.task_id)
        return {k: v for k, v in self.task(params.task_id).items() if k != "result"}

    async def result(self, ctx: ServerRequestContext[Any, Any],
                     params: types.GetTaskPayloadRequestParams) -> dict[str, Any]:
        """Held until the task ends; an ``input_required`` task asks its question meanwhile."""
        self.log(method="tasks/result", taskId=params.task_id)
        task = self.task(params.task_id)
        question = self.questions.pop(params.task_id, None)
        if question is not None:
            while task["status"] != "input_required":
                await asyncio.sleep(0.05)
            schema: dict[str, Any] = {"type": "object", "properties": {"name": {"type": "string"}},
                                      "required": ["name"]}
            answer = await ctx.session.elicit_form(question, schema, related_request_id=ctx.request_id)
            self.answers[params.task_id].set_result(answer)
        await self.done[params.task_id].wait()
        return {**task["result"], "_meta": {RELATED_TASK: {"taskId": params.task_id}}}

    async def cancel(self, ctx: ServerRequestContext[Any, Any],
                     params: types.CancelTaskRequestParams) -> dict[str, Any]:
        self.log(method="tasks/cancel", taskId=params.task_id)
        task = self.task(params.task_id)
        run = self.runs.get(params.task_id)
        if run is not None and not run.done():
            run.cancel()
            task.update(status="cancelled", statusMessage="cancelled by the client", lastUpdatedAt=now())
            self.log(ended=params.task_id, status="cancelled")
        return {k: v for k, v in task.items() if k != "result"}


def build_server(record: str | None) -> tuple[Server[Any], LegacyTasks]:
    tasks = LegacyTasks(record)
    server: Server[Any] = Server("legacy-tasks", version="1.0.0", on_list_tools=tasks.list_tools,
                                 on_call_tool=tasks.call_tool)
    server.add_request_handler("tasks/get", types.GetTaskRequestParams, tasks.get)
    server.add_request_handler("tasks/result", types.GetTaskPayloadRequestParams, tasks.result)
    server.add_request_handler("tasks/cancel", types.CancelTaskRequestParams, tasks.cancel)
    server.middleware.append(tasks.tasks_middleware)
    return server, tasks


def main() -> None:
    p = argparse.ArgumentParser(prog="legacy_tasks_server.py")
    p.add_argument("--record", default=None)
    opts = p.parse_args()
    server, _ = build_server(opts.record)
    options = server.create_initialization_options()
    options.capabilities.tasks = types.ServerTasksCapability(
        cancel=types.TasksCancelCapability(),
        requests=types.ServerTasksRequestsCapability(tools=types.TasksToolsCapability(call=types.TasksCallCapability())))

    async def serve() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, options)

    anyio.run(serve)


if __name__ == "__main__":
    gc.freeze()  # the imports' long-lived objects: never walked again, by a collection nor at exit
    gc.enable()
    main()
