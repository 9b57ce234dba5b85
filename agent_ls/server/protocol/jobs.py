"""Payloads of background jobs: ``agent/jobs``, ``agent/stopJob`` and the ``agent/jobsChanged``
notification (:mod:`agent_ls.runtime.jobs`).

Mirrored in ``editor-extension/src/protocol/jobs.ts``.
"""

from __future__ import annotations

import attrs

from agent_ls.server.protocol.codec import _register


@_register
@attrs.define
class JobsParams:
    """``agent/jobs``: the background jobs of a session (without ``session_id``: of every session)."""

    session_id: str | None = None


@_register
@attrs.define
class StopJobParams:
    """``agent/stopJob``: the user's Stop."""

    session_id: str
    job_id: str
    """The job's id (``bg-3``)."""


@_register
@attrs.define
class JobPayload:
    """One background job as the chat's Running strip shows it."""

    session_id: str
    id: str
    """Short and stable within the session: ``bg-1``, ``bg-2``, ..."""
    kind: str
    """``shell`` (a background ``bash`` command) or ``task`` (an MCP task)."""
    title: str
    """The command line, or the task's tool."""
    status: str
    """``running``, ``exited``, ``killed``, ``stopped``, ``timed_out``, ``failed``; for a task also
    ``working``, ``input_required``, ``completed``, ``cancelled``."""
    running: bool
    started: float
    """Start time, seconds since the epoch."""
    elapsed_ms: int
    """How long it ran (until the answer while it runs)."""
    last_line: str = ""
    """The last line it printed that is not blank (a task's status message)."""
    exit_code: int | None = None
    signal: str | None = None
    """The signal that ended it (``SIGTERM``), when one did."""
    message: str = ""


@_register
@attrs.define
class JobsResult:
    """``agent/jobs``: the jobs, each session's in start order."""

    jobs: list[JobPayload]


@_register
@attrs.define
class JobsChangedParams:
    """``agent/jobsChanged``: a job of ``session_id`` started, ended or changed status; ``jobs``:
    all of that session's jobs now."""

    session_id: str
    jobs: list[JobPayload]
