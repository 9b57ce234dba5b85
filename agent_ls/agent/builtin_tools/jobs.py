"""``shell_output``, ``shell_stop`` and ``task_wait``: the model's view of its background commands
(:mod:`agent_ls.agent.jobs`), started by ``bash`` with ``run_in_background: true``.

Both only touch what this conversation started, so neither asks: ``shell_output`` reads (new
output since the last read, or since an offset, with the state), ``shell_stop`` ends a job and its
process group. A long read is paged by the session through its output store like any result.
"""

from __future__ import annotations

from typing import Any

from agent_ls.agent.builtin_tools.base import object_schema
from agent_ls.agent.jobs import JobTable
from agent_ls.agent.tools.arguments import validate_arguments
from agent_ls.core.tools import Capability, ToolResult, ToolSpec

SHELL_OUTPUT = "shell_output"
SHELL_STOP = "shell_stop"
TASK_WAIT = "task_wait"
MAX_WAIT = 600.0
READ_LIMIT = 200_000
"""Characters one ``shell_output`` returns at most (the session pages them to the model)."""


class _JobTool:
    _spec: ToolSpec

    def __init__(self, jobs: JobTable) -> None:
        self.jobs = jobs

    @property
    def spec(self) -> ToolSpec:
        return self._spec

    async def call(self, arguments: dict[str, Any]) -> ToolResult:
        args = validate_arguments(self._spec, arguments)
        if isinstance(args, str):
            return ToolResult.error(args)
        return await self._run(args)

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        raise NotImplementedError


_ID = {"type": "string", "description": "The job's id, as bash returned it (e.g. bg-1)."}


class ShellOutputTool(_JobTool):
    _spec = ToolSpec(
        name=SHELL_OUTPUT,
        description="Read the output of a background command (started by bash with run_in_background): what it "
                    "printed since your last read (or since the character offset `since`), and whether it still "
                    "runs or how it ended (exit code, signal).",
        input_schema=object_schema({"id": _ID, "since": {
            "type": "integer", "minimum": 0,
            "description": "Character offset to read from (default: where your last read ended)."}}, ["id"]),
        capability=Capability.READ,
    )

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        job = self.jobs.get(args["id"])
        if job is None:
            return ToolResult.error(self.jobs.unknown(args["id"]))
        return ToolResult(content=await job.read(args.get("since"), READ_LIMIT))


class ShellStopTool(_JobTool):
    _spec = ToolSpec(
        name=SHELL_STOP,
        description="Stop a background command (started by bash with run_in_background) and every process it "
                    "started: SIGTERM, then SIGKILL after 2 s. Returns how it ended and its last output.",
        input_schema=object_schema({"id": _ID}, ["id"]),
        capability=Capability.READ,  # it only ends what this conversation started
    )

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        job = self.jobs.get(args["id"])
        if job is None:
            return ToolResult.error(self.jobs.unknown(args["id"]))
        was_running = job.state().running
        await self.jobs.stop(job.id, by_model=True)
        text = await job.read(None, READ_LIMIT)
        if not was_running:
            text = f"{job.id} had already ended.\n{text}"
        return ToolResult(content=text)


class TaskWaitTool(_JobTool):
    _spec = ToolSpec(
        name=TASK_WAIT,
        description="Wait for a background job (an MCP task a tool started, or a background command) to end, at "
                    f"most `timeout` seconds (default 60, at most {MAX_WAIT:g}), and return its result (a task's) or "
                    "its new output; if it still runs, say so (you can go on and wait again later).",
        input_schema=object_schema({"id": _ID, "timeout": {"type": "number", "exclusiveMinimum": 0,
                                                            "maximum": MAX_WAIT}}, ["id"]),
        capability=Capability.READ,
    )

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        job = self.jobs.get(args["id"])
        if job is None:
            return ToolResult.error(self.jobs.unknown(args["id"]))
        ended = await job.wait(float(args.get("timeout", 60.0)))
        text = await job.read(None, READ_LIMIT)
        return ToolResult(content=text if ended else f"{job.id} still runs.\n{text}",
                          is_error=ended and bool(getattr(job, "is_error", False)))


def job_tools(jobs: JobTable) -> list[Any]:
    return [ShellOutputTool(jobs), ShellStopTool(jobs), TaskWaitTool(jobs)]
