"""How the chat shows a stored user message whose model-facing text is not what the user typed.

The agent stores each user message exactly as the model saw it: attachments are rendered
into the text ("Selection from <path> ... ```"), and a slash command is stored as the prompt
it expanded to. That text must stay as it is (the model's history, prompt caches), but a
resumed chat should look like the live one: the typed text plus attachment chips.

So the server keeps that display metadata next to the sessions, in its own table of the
workspace's session database (``message_display``; the agent's tables are untouched, rows
go away with their session through the foreign key), keyed by session and a digest of the
model-facing text. ``agent/sessions/resume`` adds it to the user messages it returns as
``display: {text, attachments}``. Nothing of it is ever sent to the model. The file is
opened like the session store opens it: 0600 in a 0700 folder (``make_private_db``).
"""

from __future__ import annotations

import hashlib
import json
import logging
import sqlite3
import threading
from pathlib import Path
from typing import Any

from agent_ls.agent.private_db import make_private_db

log = logging.getLogger("agent_ls.runtime")

_SCHEMA = """
CREATE TABLE IF NOT EXISTS message_display (
    session_id TEXT NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
    digest     TEXT NOT NULL,
    json       TEXT NOT NULL,
    PRIMARY KEY (session_id, digest)
) WITHOUT ROWID
"""


def digest(content: str) -> str:
    return hashlib.sha256(content.encode("utf-8", "surrogatepass")).hexdigest()


class DisplayStore:
    """Display metadata of user messages, in the session database file ``path``.

    Blocking and short, like the session store: call it through ``asyncio.to_thread``.
    """

    def __init__(self, path: str | Path, *, busy_timeout: float = 5.0) -> None:
        self.path = Path(path)
        make_private_db(self.path)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, timeout=busy_timeout, check_same_thread=False,
                                     isolation_level=None)
        self._conn.execute("PRAGMA foreign_keys=ON")
        self._conn.execute(_SCHEMA)

    def put(self, session_id: str, content: str, display: dict[str, Any]) -> None:
        """Remember how to show the user message ``content`` of ``session_id``."""
        data = json.dumps(display, ensure_ascii=False)
        with self._lock:
            self._conn.execute(
                "INSERT OR REPLACE INTO message_display (session_id, digest, json) VALUES (?, ?, ?)",
                (session_id, digest(content), data))

    def annotate(self, session_id: str, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """``messages`` with ``display`` added to the user messages that have it (copies;
        the stored history is not changed)."""
        with self._lock:
            rows = self._conn.execute(
                "SELECT digest, json FROM message_display WHERE session_id = ?", (session_id,)).fetchall()
        if not rows:
            return messages
        known = dict(rows)
        out = []
        for m in messages:
            content = m.get("content")
            if m.get("role") == "user" and isinstance(content, str):
                raw = known.get(digest(content))
                if raw is not None:
                    try:
                        m = {**m, "display": json.loads(raw)}
                    except ValueError:
                        log.warning("session %s: unreadable display metadata ignored", session_id)
            out.append(m)
        return out

    def close(self) -> None:
        with self._lock:
            self._conn.close()
