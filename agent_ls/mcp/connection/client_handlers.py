"""What a server may ask of the client, and what the host plugs in to answer.

:class:`HostCallbacks` is what a connection needs from its host (roots, the elicitation and
sampling handlers, change listeners, the era memory, the catalogue store);
:class:`ClientHandlers` are the callbacks a connection gives the SDK: ``roots/list``,
``elicitation/create``, ``sampling/createMessage``, list-changed notifications and log messages.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

import attrs
import mcp_types as types
from mcp.client.session import ClientRequestContext
from pydantic import FileUrl

from agent_ls.mcp.catalogue import CatalogueStore
from agent_ls.mcp.connection.eras import EraMemory

if TYPE_CHECKING:
    from agent_ls.mcp.tasks import TaskStarted

log = logging.getLogger(__name__)


class ElicitationHandler(Protocol):
    async def __call__(self, server: str, params: types.ElicitRequestParams) -> types.ElicitResult: ...


class SamplingHandler(Protocol):
    async def __call__(
        self, server: str, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData: ...


@attrs.define
class HostCallbacks:
    """What a connection needs from its host; handlers may be attached or replaced at any time."""

    roots: Callable[[], Sequence[Path]] = lambda: ()
    elicitation: ElicitationHandler | None = None
    sampling: SamplingHandler | None = None
    on_change: Callable[[str], None] = lambda _name: None
    """Called with the server name whenever its state or lists change."""
    on_dirty: Callable[[str], None] = lambda _name: None
    """Called with the server name on any list_changed notification."""
    eras: EraMemory | None = None
    """Where the protocol era each entry negotiated is remembered (``protocol: auto``)."""
    catalogue: CatalogueStore | None = None
    """Where each entry's last catalogue and response cache are kept (None: memory only)."""
    task_started: TaskStarted | None = None
    """Takes over an MCP task a tool call started (:data:`agent_ls.mcp.tasks.TaskStarted`; the
    runtime's: a job of the calling conversation); None: the call waits for the task."""


def fill_schema_defaults(content: dict[str, Any] | None, schema: dict[str, Any] | None) -> dict[str, Any]:
    """Accepted elicitation content with the requested schema's defaults for missing fields.

    The SDK does not do this; the spec (SEP-1034) wants the defaults applied.
    """
    out = dict(content or {})
    props = (schema or {}).get("properties") or {}
    for key, prop in props.items():
        if key not in out and isinstance(prop, dict) and "default" in prop:
            out[key] = prop["default"]
    return out


@attrs.define
class ClientHandlers:
    """The SDK callbacks of one server's connection."""

    server: str
    callbacks: HostCallbacks
    mark_dirty: Callable[[], None]
    """A list of the server changed."""
    log_line: Callable[[str], None]
    """Where the server's log messages go (its stderr tail)."""

    async def list_roots(self, context: ClientRequestContext) -> types.ListRootsResult:
        roots = [types.Root(uri=FileUrl(p.resolve().as_uri()), name=p.name or str(p)) for p in self.callbacks.roots()]
        return types.ListRootsResult(roots=roots)

    async def elicit(self, context: ClientRequestContext, params: types.ElicitRequestParams) -> types.ElicitResult:
        handler = self.callbacks.elicitation
        if handler is None:
            log.info("MCP server %s asked for input but no elicitation handler is attached: declined", self.server)
            return types.ElicitResult(action="decline")
        result = await handler(self.server, params)
        if result.action == "accept" and isinstance(params, types.ElicitRequestFormParams):
            result = types.ElicitResult(
                action="accept", content=fill_schema_defaults(result.content, params.requested_schema)
            )
        return result

    async def sample(
        self, context: ClientRequestContext, params: types.CreateMessageRequestParams
    ) -> types.CreateMessageResult | types.ErrorData:
        handler = self.callbacks.sampling
        if handler is None:
            return types.ErrorData(
                code=-1, message="agent-ls: sampling is not available (no sampling handler is attached)"
            )
        return await handler(self.server, params)

    async def on_message(self, message: Any) -> None:
        if isinstance(message, Exception):
            log.debug("MCP server %s: transport message error: %s", self.server, message)
            return
        if isinstance(
            message,
            (types.ToolListChangedNotification, types.PromptListChangedNotification,
             types.ResourceListChangedNotification),
        ):
            self.mark_dirty()

    async def on_log(self, params: types.LoggingMessageNotificationParams) -> None:
        self.log_line(f"[log {params.level}] {params.data}")
