"""The stored sessions of every workspace, for a front end that lists them across folders
(ACP's ``session/list`` without a ``cwd``). One folder's sessions are
:meth:`agent_ls.runtime.conversations.Conversations.sessions`."""

from __future__ import annotations

import asyncio
import logging
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from agent_ls.agent.store import SessionInfo

log = logging.getLogger("agent_ls.runtime")


def _read(folder: Path | None) -> list[tuple[Path, SessionInfo]]:
    # lazy: sqlite3 and platformdirs, +24 modules, ~15 ms at start-up
    from agent_ls.agent.store import SessionStore, all_workspace_stores
    from agent_ls.config.paths import user_data_dir

    if folder is not None:
        with SessionStore.for_workspace(user_data_dir(), folder) as store:
            return [(folder, i) for i in store.list_sessions()]
    out: list[tuple[Path, SessionInfo]] = []
    for path in all_workspace_stores(user_data_dir()):
        try:
            with SessionStore(path) as store:
                root = store.workspace_root()
                if root is not None:  # a store of an older version: its folder is unknown
                    out += [(root, i) for i in store.list_sessions()]
        except Exception as e:  # one unreadable store must not hide the others
            log.warning("stored sessions: %s skipped: %s", path, e)
    return sorted(out, key=lambda x: -x[1].updated)


async def stored_sessions(folder: Path | None = None) -> list[tuple[Path, SessionInfo]]:
    """The stored sessions of ``folder``, or of every workspace without it, each with its
    workspace folder, newest first (read off the event loop; a store that cannot be read is
    skipped and logged, a store too old to know its folder is left out)."""
    return await asyncio.to_thread(_read, folder)
