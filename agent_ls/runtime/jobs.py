"""The runtime owns background jobs: one :class:`~agent_ls.agent.jobs.JobTable` per conversation.

A table is made when a conversation's session is first built and kept by :class:`ConversationJobs`
for the server's life, apart from the session: a session rebuilt after a settings change, a
compaction or a switch to another conversation leaves its jobs running. The jobs stop, with their
process groups, when the conversation is deleted (:meth:`ConversationJobs.drop`) or the service
closes (:meth:`ConversationJobs.close`; :meth:`ConversationJobs.kill_now` at the language server's
shutdown). A crash kills them too (:mod:`agent_ls.core.reaper`).

Front ends list them (:meth:`ConversationJobs.states`), stop one (:meth:`ConversationJobs.stop`)
and are told of each change through :attr:`ConversationJobs.listeners` (the LSP ``agent/jobs``
notification, the terminal's ``/jobs``).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import TYPE_CHECKING

from agent_ls.agent.jobs import JobState, JobTable

if TYPE_CHECKING:
    from agent_ls.mcp.tasks import TaskHandle

log = logging.getLogger("agent_ls.runtime.jobs")

JobsListener = Callable[[str, list[JobState]], None]
"""Told ``(session_id, states)`` after each change of a conversation's jobs."""


class ConversationJobs:
    """The job tables of every conversation of one service."""

    def __init__(self) -> None:
        self._tables: dict[str, JobTable] = {}
        self.listeners: list[JobsListener] = []

    def table(self, session_id: str | None, *, max_jobs: int, timeout: float | None) -> JobTable:
        """The table of ``session_id`` (a new one for a conversation not yet created: bind it with
        :meth:`bind` once it has its id); the limits follow the settings now."""
        table = self._tables.get(session_id) if session_id is not None else None
        if table is None:
            table = JobTable(max_jobs=max_jobs, timeout=timeout)
            if session_id is not None:
                self.bind(session_id, table)
        table.max_jobs, table.timeout = max_jobs, timeout
        return table

    def bind(self, session_id: str, table: JobTable) -> None:
        if self._tables.get(session_id) is table:
            return
        self._tables[session_id] = table
        table.listeners.append(lambda t: self._changed(session_id, t))

    def _changed(self, session_id: str, table: JobTable) -> None:
        states = table.states()
        for listener in list(self.listeners):
            try:
                listener(session_id, states)
            except Exception:  # a front end's listener must not break a job
                log.exception("a jobs listener failed")

    def get(self, session_id: str) -> JobTable | None:
        return self._tables.get(session_id)

    def states(self, session_id: str | None = None) -> dict[str, list[JobState]]:
        """The jobs of ``session_id`` (of every conversation with any, without it), by session id."""
        tables = ({session_id: self._tables[session_id]} if session_id in self._tables
                  else {} if session_id is not None else self._tables)
        return {sid: t.states() for sid, t in tables.items() if len(t.jobs())}

    async def stop(self, session_id: str, job_id: str) -> JobState | None:
        """Stop a job (the user's Stop); None when there is no such job."""
        table = self._tables.get(session_id)
        job = await table.stop(job_id) if table is not None else None
        return job.state() if job is not None else None

    async def drop(self, session_id: str) -> None:
        """The conversation is deleted: its jobs stop."""
        table = self._tables.pop(session_id, None)
        if table is not None:
            await table.close()

    async def close(self, timeout: float = 10.0) -> None:
        tables = list(self._tables.values())
        if tables:
            done = asyncio.gather(*(t.close() for t in tables), return_exceptions=True)
            try:
                await asyncio.wait_for(done, timeout)
            except TimeoutError:
                log.warning("background jobs did not stop within %.0f s; killing them", timeout)
        self.kill_now()

    def kill_now(self) -> None:
        for table in self._tables.values():
            table.kill_now()

    def task_started(self, handle: TaskHandle) -> str | None:
        """The MCP host's hook (:data:`agent_ls.mcp.tasks.TaskStarted`, the runtime host's
        :attr:`~agent_ls.runtime.host.RuntimeHost.task_owner`): a task a tool call of a
        conversation started becomes a job of that conversation, found by the turn's call context
        (the call returns its id at once).
        A call outside a conversation (a direct call of the user's) waits for its task: None."""
        # lazy: the turn's call context (+sqlite3), only once an MCP task starts
        from agent_ls.agent.editor.changes import current_call

        call = current_call.get()
        table = self._tables.get(call.session_id) if call is not None else None
        if table is None or table.closed:
            return None
        return table.add_task(f"{handle.server}: {handle.tool}", handle, _task_text).id


def _task_text(detailed: object) -> tuple[str, bool]:
    """A finished task's result as the model reads it (the tool's result, as any MCP result)."""
    # lazy: the MCP SDK (seconds at start-up); loaded by then, since a server sent the task
    from agent_ls.mcp.results import convert_call_result
    from agent_ls.mcp.tasks import DetailedTask, final_result

    result = final_result(detailed) if isinstance(detailed, DetailedTask) else None
    if result is None:
        return "(no result)", True
    converted = convert_call_result(result)
    return converted.content, converted.is_error
