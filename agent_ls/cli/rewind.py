"""``/rewind`` and ``/redo`` in ``agent-ls chat``: the session's checkpoints, and taking the
workspace and the conversation back to before one of its prompts, through the runtime's
conversations (the same rewind the headless ``agent-ls checkpoints`` and the editor use).

- ``/rewind``: the session's checkpoints, numbered (the prompt's number, its time, its first
  words, how many files its turn changed).
- ``/rewind N [code|conversation|both]``: what would happen to each file, then asked (y/N); a
  file changed by hand since the checkpoint is left alone and listed.
- ``/redo``: undo the latest rewind (until the next prompt).
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

from agent_ls.cli.checkpoints import print_plan
from agent_ls.cli.common import read_line
from agent_ls.core.visible import visible
from agent_ls.runtime.conversations import ConversationError

if TYPE_CHECKING:
    from agent_ls.runtime.conversations import Conversations

MODES = {"code": (True, False), "conversation": (False, True), "both": (True, True)}


async def rewind_command(conversations: Conversations, session_id: str, rest: str, roots: list[Path]) -> str:
    """``/rewind [N [code|conversation|both]]``: the answer to print."""
    try:
        checkpoints = await conversations.checkpoint_list(session_id)
    except ConversationError as e:
        return f"error: {e}"
    words = rest.split()
    if not words:
        if not checkpoints:
            return "no checkpoints in this session yet (one is taken before each prompt)"
        lines = []
        for cp in checkpoints:
            when = time.strftime("%H:%M", time.localtime(cp.created))
            text = visible(" ".join(cp.prompt.split()))
            text = text if len(text) <= 50 else text[:49] + "…"
            lines.append(f"{cp.prompt_index + 1:>3}  {when}  {len(cp.changed):>3} files changed  {text}")
        return "\n".join([*lines, "(/rewind N [code|conversation|both] goes back to before prompt N)"])
    mode = words[1] if len(words) > 1 else "both"
    if not words[0].isdigit() or mode not in MODES or len(words) > 2:
        return "usage: /rewind [N [code|conversation|both]]"
    found = [cp for cp in checkpoints if cp.prompt_index + 1 == int(words[0])]
    if not found:
        return f"error: no checkpoint before prompt {words[0]} in this session (/rewind lists them)"
    code, conversation = MODES[mode]
    try:
        plan = await conversations.plan_rewind(found[0].id)
    except ConversationError as e:
        return f"error: {e}"
    print_plan(plan, roots, code, file=sys.stderr)
    if conversation:
        print(f"  conversation: back to before prompt {words[0]} (kept for /redo)", file=sys.stderr)
    answer = await read_line("Rewind? [y/N] ")  # (a piped chat answers from its input, like its prompts)
    if (answer or "").strip().lower() not in ("y", "yes"):
        return "nothing was changed"
    try:
        result = await conversations.rewind(plan, code=code, conversation=conversation)
    except ConversationError as e:
        return f"error: {e}"
    left = f"; left alone (changed since, or not kept): {len(result.left_alone)}" if result.left_alone else ""
    return (f"[rewound: {len(result.changed)} files" + (", the conversation" if result.messages_removed else "")
            + f"{left}; /redo undoes it]")


async def redo_command(conversations: Conversations, session_id: str) -> str:
    try:
        result = await conversations.redo(session_id)
    except ConversationError as e:
        return f"error: {e}"
    return f"[redone: {len(result.changed)} files" + (", the conversation" if result.messages_removed else "") + "]"
