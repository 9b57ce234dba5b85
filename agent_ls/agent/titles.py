"""Session titles made by a model (``agent.titleModel``).

A new session is titled from its first message at once (:func:`agent_ls.agent.store.session_title`).
With ``agent.titleModel`` set, once the first turn has ended, that model is asked, in the
background, for a title of a few words, which then replaces it. The call is small (the first
message, cut, and an instruction; at most :data:`agent_ls.agent.config.TITLE_MAX_TOKENS` tokens
back) and never holds up the turn; if it fails, the first-message title stays.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING

from agent_ls.agent.llm import LLMConfig, LLMError, stream_completion

if TYPE_CHECKING:
    from agent_ls.agent.store import SessionStore

log = logging.getLogger("agent_ls.agent")

TITLE_INSTRUCTIONS = (
    "Write a title of at most six words for a conversation with a coding assistant that starts "
    "with the user's message below. Reply with the title only: no quotes, no final full stop."
)
FIRST_MESSAGE_CHARS = 2000
"""Of the first message, what the title model reads."""

_running: dict[str, asyncio.Task[None]] = {}
"""The background title calls by session id (at most one per session at a time)."""


def pending_title(session_id: str) -> asyncio.Task[None] | None:
    """The background call titling ``session_id``, while it runs (a front end that shows the
    title elsewhere, such as ACP's ``session_info_update``, waits for it)."""
    return _running.get(session_id)


def clean_title(raw: str) -> str:
    """The title in a model's reply: its first non-empty line without a ``Title:`` label,
    markdown emphasis, quotes or a final full stop ('' if nothing is left)."""
    line = next((ln.strip() for ln in raw.splitlines() if ln.strip()), "")
    if line.lower().startswith("title:"):
        line = line[len("title:"):].strip()
    line = line.strip("#*_` ").strip().strip("\"'“”‘’").strip()
    return line.rstrip(".").strip()


async def model_title(llm: LLMConfig, first_message: str) -> str:
    """A title for a session that starts with ``first_message`` ('' if the model gave none)."""
    messages = [{"role": "system", "content": TITLE_INSTRUCTIONS},
                {"role": "user", "content": first_message[:FIRST_MESSAGE_CHARS]}]
    parts = [d.text async for d in stream_completion(llm, messages, []) if d.text]
    return clean_title("".join(parts))


def title_in_background(llm: LLMConfig, store: SessionStore, session_id: str, first_message: str) -> None:
    """Ask ``llm`` for the session's title and store it, without waiting for it."""

    async def run() -> None:
        try:
            title = await model_title(llm, first_message)
        except LLMError as e:
            log.info("session %s keeps its first-message title: %s (%s)", session_id, e.message, llm.model)
            return
        except Exception as e:  # a background nicety: whatever happens, the first-message title stays
            log.warning("session %s keeps its first-message title: %s", session_id, type(e).__name__)
            return
        if title:
            await asyncio.to_thread(store.set_title, session_id, title)
            log.info("session %s titled by %s", session_id, llm.model)

    task = asyncio.get_running_loop().create_task(run(), name=f"title {session_id}")
    _running[session_id] = task
    task.add_done_callback(lambda t: _running.pop(session_id, None) if _running.get(session_id) is t else None)
