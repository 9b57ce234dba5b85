"""The MCP host's life as the editor sees it: :class:`EditorHostListener`, the language server's
:class:`~agent_ls.runtime.lifecycle.HostListener`.

The lifecycle itself (start with the model library first, reload on settings and trust changes,
the workspace trust questions, decisions made in another window) is the runtime's
(:class:`agent_ls.runtime.lifecycle.HostLifecycle`, ``ls.lifecycle``); here is what the editor is
told: ``mcp/statusChanged`` (coalesced), the settings files' diagnostics, work-done progress, the
sign-in page through ``window/showDocument``, errors through ``window/showMessage``.
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp

from agent_ls.core.process import kill_children
from agent_ls.runtime.host import log_diagnostics
from agent_ls.server.progress import Progress, start_progress

if TYPE_CHECKING:
    from agent_ls.config.settings import LoadedSettings
    from agent_ls.runtime.conversations import Conversations
    from agent_ls.runtime.lifecycle import HostLifecycle
    from agent_ls.server.client import EditorClient
    from agent_ls.server.config_files import SettingsDiagnostics
    from agent_ls.server.status import StatusNotices

log = logging.getLogger("agent_ls.server")


class EditorHostListener:
    """The host's events, told to the editor."""

    def __init__(self, client: EditorClient, status: StatusNotices, diagnostics: SettingsDiagnostics) -> None:
        self.client = client
        self.status = status
        self.diagnostics = diagnostics

    def status_changed(self) -> None:
        self.status.notify_soon()

    def settings_read(self, settings: LoadedSettings, broken: Sequence[Path]) -> None:
        self.diagnostics.publish()
        log_diagnostics(settings)

    async def progress(self, kind: str, title: str, message: str | None = None) -> Progress | None:
        return await start_progress(self.client, kind, title, message, percentage=0 if kind == "mcp" else None)

    async def open_url(self, server: str, url: str) -> None:
        """An OAuth authorization page: the editor opens it in the browser (``window/showDocument``
        with ``external``); an editor that cannot is shown the URL."""
        window = self.client.capabilities.window
        if window is not None and window.show_document is not None and window.show_document.support:
            result = await self.client.show_document(lsp.ShowDocumentParams(uri=url, external=True))
            if result.success:
                return
        log.warning("open this URL to sign in to the MCP server %s: %s", server, url)
        self.client.show(lsp.MessageType.Info, f"agent-ls: open this URL to sign in to the MCP server '{server}': {url}")

    def show_error(self, text: str) -> None:
        self.client.show(lsp.MessageType.Error, text)


async def shutdown_host(lifecycle: HostLifecycle, conversations: Conversations) -> None:
    """Stop every background task, every MCP server (bounded: the editor waits for the answer to
    ``shutdown``; what is still there afterwards is killed) and the session store."""
    await lifecycle.shutdown()
    conversations.close_now()
    kill_children()
