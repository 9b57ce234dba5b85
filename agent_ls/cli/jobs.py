"""``/jobs`` and ``/stop N`` in ``agent-ls chat``: the session's background jobs (``bash`` with
``run_in_background``), listed and stopped through the runtime's jobs (the same the editor's
Running strip and ``agent/jobs`` use), and a line on the terminal when one ends.

- ``/jobs``: each job with its id, state, elapsed time, command and last line.
- ``/stop N`` (``N`` or ``bg-N``): stop it with its process group; the model is told at its next
  request.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from agent_ls.core.visible import visible

if TYPE_CHECKING:
    from agent_ls.agent.jobs import JobState
    from agent_ls.runtime.conversations import Conversations


def _elapsed(seconds: float) -> str:
    seconds = int(seconds)
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def _state(s: JobState) -> str:
    if s.running:
        return s.status
    if s.exit_code is not None:
        return f"{s.status} ({s.exit_code})"
    return f"{s.status} ({s.signal})" if s.signal else s.status


def job_line(s: JobState) -> str:
    last = f"  | {visible(s.last_line)}" if s.last_line else ""
    return f"{s.id:>6}  {_state(s):<16} {_elapsed(s.elapsed):>7}  {visible(s.title)}{last}"


def jobs_command(conversations: Conversations, session_id: str) -> str:
    """``/jobs``: the answer to print."""
    states = conversations.jobs.states(session_id).get(session_id, [])
    if not states:
        return "no background jobs in this session (the agent starts one with bash run_in_background)"
    return "\n".join(job_line(s) for s in states)


async def stop_command(conversations: Conversations, session_id: str, rest: str) -> str:
    """``/stop N``: the answer to print."""
    word = rest.strip()
    if not word:
        return "usage: /stop N (a job's number from /jobs)"
    job_id = word if word.startswith("bg-") else f"bg-{word}"
    state = await conversations.jobs.stop(session_id, job_id)
    if state is None:
        return f"no background job {visible(job_id)} in this session (see /jobs)"
    return job_line(state)


def announce_ends(conversations: Conversations, session_id: str) -> None:
    """Print a line on stderr when a job of ``session_id`` ends."""
    ended: set[str] = set()

    def changed(sid: str, states: list[JobState]) -> None:
        if sid != session_id:
            return
        for s in states:
            if not s.running and s.id not in ended:
                ended.add(s.id)
                print(f"\n[background {job_line(s).strip()}]", file=sys.stderr, flush=True)

    conversations.jobs.listeners.append(changed)
