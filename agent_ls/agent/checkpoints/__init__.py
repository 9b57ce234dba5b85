"""Checkpoints and rewind (issue 40): the workspace before each prompt, what each turn changed
by any path (editor edits, MCP servers, shell commands), and putting it back, all or nothing.

    checkpoints = Checkpoints.for_workspace(data_dir, roots)
    cp = checkpoints.begin(session_id, prompt_index, prompt_text)   # before the turn
    ...the turn...
    checkpoints.finish(cp)                                          # after it, however it ended
    plan = checkpoints.plan_rewind(cp.id)        # each file and what happens to it
    checkpoints.rewind(plan, code=True, conversation=True, store=session_store)
    checkpoints.redo(checkpoints.plan_redo(session_id), store=session_store)

The mechanism (a content-addressed store of our own, not git) is described in
docs/architecture.md, "Checkpoints and rewind".
"""

from agent_ls.agent.checkpoints.apply import RewindError
from agent_ls.agent.checkpoints.engine import (
    CONFLICT,
    DELETE,
    KEEP,
    RECREATE,
    RESTORE,
    UNRESTORABLE,
    Checkpoint,
    CheckpointError,
    Checkpoints,
    FileAction,
    RewindPlan,
    RewindResult,
)
from agent_ls.agent.checkpoints.scan import Limits, NotKept

__all__ = [
    "CONFLICT", "DELETE", "KEEP", "RECREATE", "RESTORE", "UNRESTORABLE", "Checkpoint", "CheckpointError",
    "Checkpoints", "FileAction", "Limits", "NotKept", "RewindError", "RewindPlan", "RewindResult",
]
