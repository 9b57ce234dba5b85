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

from agent_ls.agent.jobs import JobState, JobTable

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
