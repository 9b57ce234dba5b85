"""Background jobs over LSP: ``agent/jobs`` (what runs), ``agent/stopJob`` (the user's Stop) and
the ``agent/jobsChanged`` notification, translated to the runtime's jobs
(:class:`agent_ls.runtime.jobs.ConversationJobs`, the same ``agent-ls chat``'s ``/jobs`` and
``/stop`` use)."""

from __future__ import annotations

from agent_ls.agent.jobs import JobState
from agent_ls.runtime.conversations import ConversationError
from agent_ls.server.protocol.codec import dump
from agent_ls.server.protocol.jobs import JobPayload, JobsChangedParams, JobsParams, JobsResult, StopJobParams
from agent_ls.server.protocol.methods import JOBS, JOBS_CHANGED, STOP_JOB
from agent_ls.server.server import AgentLanguageServer, request


def job_payload(session_id: str, s: JobState) -> JobPayload:
    return JobPayload(session_id=session_id, id=s.id, kind=s.kind, title=s.title, status=s.status,
                      running=s.running, started=s.started, elapsed_ms=int(s.elapsed * 1000), last_line=s.last_line,
                      exit_code=s.exit_code, signal=s.signal, message=s.message)


def register(server: AgentLanguageServer) -> None:
    def changed(session_id: str, states: list[JobState]) -> None:
        server.protocol.notify(JOBS_CHANGED, dump(JobsChangedParams(
            session_id=session_id, jobs=[job_payload(session_id, s) for s in states])))

    server.conversations.jobs.listeners.append(changed)

    @request(server, JOBS, JobsParams)
    async def jobs(ls: AgentLanguageServer, p: JobsParams) -> JobsResult:
        found = ls.conversations.jobs.states(p.session_id)
        return JobsResult(jobs=[job_payload(sid, s) for sid, states in found.items() for s in states])

    @request(server, STOP_JOB, StopJobParams)
    async def stop_job(ls: AgentLanguageServer, p: StopJobParams) -> JobPayload:
        state = await ls.conversations.jobs.stop(p.session_id, p.job_id)
        if state is None:
            raise ConversationError(f"no background job {p.job_id!r} in session {p.session_id!r}")
        return job_payload(p.session_id, state)
