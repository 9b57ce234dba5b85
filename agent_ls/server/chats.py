"""The language server's chat sessions as one typed service (:class:`ChatSessions`, ``ls.chats``).

It owns what the chat keeps between requests: the workspace's session store
(:class:`agent_ls.agent.store.SessionStore`) and how user messages are shown
(:class:`agent_ls.server.display.DisplayStore`), the live sessions and their locks, the task
running each session's turn, the tools the user allowed "for the session", what the user did to
the agent's changes since the last prompt, and the permission gate of direct tool calls. The
handlers (:mod:`.sessions`, :mod:`.chat`, :mod:`.models`) read and change it through here.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_ls.agent.editor.changes import ChangeStore
    from agent_ls.agent.permissions import PermissionGate
    from agent_ls.agent.session import Session
    from agent_ls.agent.store import SessionStore
    from agent_ls.server.display import DisplayStore


class ChatSessions:
    """Sessions, stores, locks, turn tasks and session grants of one language server."""

    def __init__(self, folders: Callable[[], list[Path]]) -> None:
        self._folders = folders
        self.sessions: dict[str, Session] = {}
        """The live sessions by id (rebuilt on the current settings after a reload)."""
        self.allowed: dict[str, set[str]] = {}
        """The tools the user allowed "for the session", by session id: a session rebuilt (after a
        settings reload, with another model) keeps them until the language server stops."""
        self.locks: dict[str, asyncio.Lock] = {}
        """One turn at a time per session."""
        self.turn_tasks: dict[str, asyncio.Task[Any]] = {}
        """The task running each session's current turn (``agent/cancel`` cancels it)."""
        self.change_notes: dict[str, list[str]] = {}
        """Per session: what the user did to the agent's changes since its last prompt (a revert),
        said at the start of the next user message."""
        self.direct_gate: PermissionGate | None = None
        """The approval gate of direct tool calls (``mcp/callTool``, tool actions): "allow for
        session" lasts until the settings change."""
        self.store: SessionStore | None = None
        self.display_store: DisplayStore | None = None
        """How user messages sent with attachments are shown on resume (:mod:`.display`)."""

    async def ensure_store(self) -> SessionStore:
        """The session store of the first workspace folder (the current directory without one)."""
        if self.store is None:
            # lazy: sqlite3 and platformdirs, +24 modules, ~15 ms at start-up
            from agent_ls.agent.store import SessionStore
            from agent_ls.config.paths import user_data_dir

            folders = self._folders()
            root = folders[0] if folders else Path.cwd()
            self.store = await asyncio.to_thread(SessionStore.for_workspace, user_data_dir(), root)
        return self.store

    async def ensure_display_store(self) -> DisplayStore:
        store = await self.ensure_store()
        if self.display_store is None:
            # lazy: sqlite3, +7 modules, ~4 ms at start-up
            from agent_ls.server.display import DisplayStore

            self.display_store = await asyncio.to_thread(DisplayStore, store.path)
        return self.display_store

    async def change_store(self) -> ChangeStore:
        """The agent's file changes, in the session database."""
        # lazy: sqlite3 and difflib, +10 modules, ~20 ms at start-up
        from agent_ls.agent.editor.changes import ChangeStore

        store = await self.ensure_store()
        return await asyncio.to_thread(ChangeStore.for_path, store.path)

    def lock(self, session_id: str) -> asyncio.Lock:
        return self.locks.setdefault(session_id, asyncio.Lock())

    def busy(self, session_id: str) -> bool:
        """The session is answering a prompt."""
        lock = self.locks.get(session_id)
        return lock is not None and lock.locked()

    def add(self, session: Session) -> None:
        """A session built (or rebuilt): its "allow for session" answers are kept by id."""
        # lazy: wcmatch and shlex, +17 modules, ~26 ms at start-up
        from agent_ls.agent.permissions import PermissionGate

        if isinstance(session.gate, PermissionGate):
            self.allowed[session.session_id] = session.gate.session_allowed  # the gate adds to it
        self.sessions[session.session_id] = session

    def forget(self, session_id: str) -> None:
        """A deleted session."""
        self.sessions.pop(session_id, None)
        self.allowed.pop(session_id, None)
        self.locks.pop(session_id, None)

    def settings_changed(self) -> None:
        """New sessions and direct calls pick up model and permission changes."""
        self.sessions.clear()
        self.direct_gate = None

    def close(self) -> None:
        """Close the stores (shutdown)."""
        if self.store is not None:
            self.store.close()
            self.store = None
        if self.display_store is not None:
            self.display_store.close()
            self.display_store = None
