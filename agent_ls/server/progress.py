"""Work-done progress the server starts itself (``window/workDoneProgress/create``).

Progress is a courtesy: a client that does not advertise ``window.workDoneProgress``, or that
answers the create request with an error, gets none (``start_progress`` returns None) and
nothing else changes.
"""

from __future__ import annotations

import logging
import uuid
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

if TYPE_CHECKING:
    from agent_ls.server.server import AgentLanguageServer

log = logging.getLogger("agent_ls.server")


class Progress:
    """A begun work-done progress: report on it, then end it (once)."""

    def __init__(self, ls: AgentLanguageServer, token: str) -> None:
        self.ls = ls
        self.token = token

    def report(self, message: str | None = None, percentage: int | None = None) -> None:
        self.ls.work_done_progress.report(self.token, lsp.WorkDoneProgressReport(message=message,
                                                                                 percentage=percentage))

    def end(self, message: str | None = None) -> None:
        self.ls.work_done_progress.end(self.token, lsp.WorkDoneProgressEnd(message=message))


async def start_progress(ls: AgentLanguageServer, kind: str, title: str, message: str | None = None,
                         percentage: int | None = None) -> Progress | None:
    """Create a progress token (``agent-ls-<kind>-<hex>``) and begin it; None when the client
    has no work-done progress (or the creation failed: logged at debug level)."""
    token = f"agent-ls-{kind}-{uuid.uuid4().hex[:8]}"
    try:
        caps = ls.client_capabilities
        if caps.window is None or not caps.window.work_done_progress:
            return None
        await ls.work_done_progress.create_async(token)
        ls.work_done_progress.begin(token, lsp.WorkDoneProgressBegin(title=title, message=message,
                                                                     percentage=percentage))
    except Exception as e:  # noqa: BLE001 - progress is a courtesy
        log.debug("no work-done progress: %s", e)
        return None
    return Progress(ls, token)
