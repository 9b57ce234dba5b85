"""The editor at the other end of the connection, as the server's parts use it: :class:`EditorClient`.

The language server object (:class:`agent_ls.server.server.AgentLanguageServer`) holds the
server's services; the parts that talk to the editor (the questions, progress, the settings
files' diagnostics, the editor's files and language intelligence, the chat's events) are given
this one narrow, typed service instead of the server: what the client can do (its
capabilities), its open documents, and the messages the server sends it. Nothing here reaches
the runtime, the conversations or the MCP host.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types as lsp

from agent_ls.server.protocol.codec import RawResponse

if TYPE_CHECKING:
    from pygls.lsp.server import LanguageServer
    from pygls.progress import Progress as WorkDoneProgress
    from pygls.workspace import Workspace


def offers(capabilities: lsp.ClientCapabilities, feature: str) -> bool:
    """The client says it answers one of agent-ls's own requests: ``experimental.agentLs.<feature>``
    is ``true`` in its capabilities (``reviewEdits``, ``intelligence``)."""
    try:
        experimental = capabilities.experimental
    except AttributeError:
        return False
    ours = experimental.get("agentLs") if isinstance(experimental, dict) else None
    return isinstance(ours, dict) and ours.get(feature) is True


class EditorClient:
    """What the server asks of and tells the editor (one per connection)."""

    def __init__(self, server: LanguageServer, folders: Callable[[], list[Path]]) -> None:
        self._server = server
        self.folders = folders
        """The workspace folders the editor opened."""
        self._counter = 0
        self.unsupported: set[str] = set()
        """The questions (``agent/trustWorkspace``, ``mcp/trustServer``) the editor answered with
        method-not-found: it is asked with ``window/showMessageRequest`` instead."""

    @property
    def capabilities(self) -> lsp.ClientCapabilities:
        """What the editor said it supports at ``initialize``."""
        return self._server.client_capabilities

    @property
    def workspace(self) -> Workspace:
        """The editor's open documents and folders (raises RuntimeError before ``initialize``)."""
        return self._server.workspace

    @property
    def progress(self) -> WorkDoneProgress:
        """Work-done progress (:mod:`agent_ls.server.progress`)."""
        return self._server.work_done_progress

    @property
    def request_id(self) -> int | str | None:
        """The id of the client request being handled now (None outside one)."""
        return self._server.protocol.msg_id

    async def request(self, method: str, params: Any) -> Any:
        """A server -> client request. Cancelling the caller withdraws the request
        (``$/cancelRequest`` to the client); the answer comes back as plain JSON."""
        self._counter += 1
        msg_id = f"agent-ls-{self._counter}-{uuid.uuid4().hex[:6]}"
        protocol = self._server.protocol
        future = protocol.send_request_async(method, params, msg_id=msg_id)
        try:
            raw = await future
        except asyncio.CancelledError:
            protocol.notify(lsp.CANCEL_REQUEST, lsp.CancelParams(id=msg_id))
            raise
        return raw.result if isinstance(raw, RawResponse) else raw

    def notify(self, method: str, params: Any) -> None:
        self._server.protocol.notify(method, params)

    def show(self, kind: lsp.MessageType, message: str) -> None:
        """``window/showMessage``."""
        self._server.window_show_message(lsp.ShowMessageParams(type=kind, message=message))

    async def show_document(self, params: lsp.ShowDocumentParams) -> lsp.ShowDocumentResult:
        return await self._server.window_show_document_async(params)

    async def apply_edit(self, params: lsp.ApplyWorkspaceEditParams) -> lsp.ApplyWorkspaceEditResult:
        return await self._server.workspace_apply_edit_async(params)

    def publish_diagnostics(self, uri: str, diagnostics: list[lsp.Diagnostic]) -> None:
        self._server.text_document_publish_diagnostics(lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))

    async def register_capability(self, params: lsp.RegistrationParams) -> None:
        await self._server.client_register_capability_async(params)
