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
    from pygls.progress import Progress as WorkDoneProgress

    from agent_ls.server.client import EditorClient

log = logging.getLogger("agent_ls.server")


class Progress:
    """A begun work-done progress: report on it, then end it (once)."""

    def __init__(self, progress: WorkDoneProgress, token: str) -> None:
        self.progress = progress
        self.token = token

    def report(self, message: str | None = None, percentage: int | None = None) -> None:
        self.progress.report(self.token, lsp.WorkDoneProgressReport(message=message,
                                                                                 percentage=percentage))

    def end(self, message: str | None = None) -> None:
        self.progress.end(self.token, lsp.WorkDoneProgressEnd(message=message))


async def start_progress(client: EditorClient, kind: str, title: str, message: str | None = None,
                         percentage: int | None = None) -> Progress | None:
    """Create a progress token (``agent-ls-<kind>-<hex>``) and begin it; None when the client
    has no work-done progress (or the creation failed: logged at debug level)."""
    token = f"agent-ls-{kind}-{uuid.uuid4().hex[:8]}"
    try:
        caps = client.capabilities
        if caps.window is None or not caps.window.work_done_progress:
            return None
        await client.progress.create_async(token)
        client.progress.begin(token, lsp.WorkDoneProgressBegin(title=title, message=message,
                                                                     percentage=percentage))
    except Exception as e:  # noqa: BLE001 - progress is a courtesy
        log.debug("no work-done progress: %s", e)
        return None
    return Progress(client.progress, token)
