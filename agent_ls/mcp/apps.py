"""MCP Apps, the ``io.modelcontextprotocol/ui`` extension (SEP-1865), host side.

A tool may carry ``_meta.ui``: ``resourceUri`` names a ``ui://`` resource (an HTML document served
as ``text/html;profile=mcp-app``) that a front end renders in a sandboxed frame under the tool
call's card, and ``visibility`` says who may call the tool: ``model`` (the agent), ``app`` (the
server's own app), both by default. This module reads that (:func:`tool_ui`: a malformed entry is
a per-tool note in the server's status, the tool stays a plain tool and the server's other tools
are untouched), advertises the extension (:data:`APPS_CLIENT_EXTENSION`) and loads an app's
resource through the SDK's ``resources/read`` (:class:`AppResources`: bounded size, the app MIME
type required, the resource's ``_meta.ui`` CSP domains and permissions read, cached per connection
until its lists change; the SDK's own response cache honours a server's ``ttlMs`` underneath).

What an app may ask of the host is checked in :meth:`AppResources.app_tool` (an app calls only its
own server's tools whose visibility includes ``app``: a model-only tool is refused without asking)
and then run by the runtime through the same tool runner and approvals as the model's calls.
"""

from __future__ import annotations

import base64
import binascii
import contextvars
import logging
from collections.abc import Sequence
from typing import Any, Protocol

import attrs
import mcp_types as types
from mcp.client.extension import advertise

from agent_ls.core.tools import AppView


class ServerConnection(Protocol):
    """What loading an app needs of a server's connection (:class:`agent_ls.mcp.connection.ServerConnection`)."""

    @property
    def name(self) -> str: ...

    @property
    def list_version(self) -> int: ...

    @property
    def listing(self) -> Any: ...

    async def read_resource(self, uri: str) -> types.ReadResourceResult: ...

    def redact(self, text: str) -> str: ...

log = logging.getLogger(__name__)

APPS_EXTENSION = "io.modelcontextprotocol/ui"
APP_MIME_TYPE = "text/html;profile=mcp-app"
APPS_CLIENT_EXTENSION = advertise(APPS_EXTENSION, {"mimeTypes": [APP_MIME_TYPE]})
"""The client's capability ad (``Client(extensions=[...])``): the host renders apps of this MIME type."""
VISIBILITIES = ("model", "app")
MAX_APP_BYTES = 5 * 1024 * 1024
"""An app resource larger than this is refused (the frame is not made)."""
MAX_RESULT_CHARS = 1_000_000
"""A tool result larger than this (as JSON) is not handed to its app (the app is told it was too large)."""
CSP_KEYS = ("connectDomains", "resourceDomains", "frameDomains", "baseUriDomains")
PERMISSION_KEYS = ("camera", "microphone", "geolocation", "clipboardWrite")


APP_INITIATED: contextvars.ContextVar[bool] = contextvars.ContextVar("agent_ls_app_initiated", default=False)
"""Set while a call an app asked for runs: its result goes back to that app, it opens no app of its own."""


class AppError(Exception):
    """An app could not be loaded, or an app's request is refused (the message says why)."""


@attrs.frozen
class ToolUi:
    """A tool's ``_meta.ui``, validated."""

    resource_uri: str | None
    visibility: tuple[str, ...] = VISIBILITIES



def tool_ui(tool: types.Tool) -> tuple[ToolUi | None, str | None]:
    """The tool's ``_meta.ui`` (None: it has none) and what is wrong with it (None: nothing).

    A malformed entry gives ``(None, why)``: the tool is treated as a plain tool (offered to the
    model, no app). The flat ``ui/resourceUri`` key of the extension's early drafts is read too."""
    meta = tool.meta or {}
    ui = meta.get("ui")
    if ui is None and "ui/resourceUri" in meta:
        ui = {"resourceUri": meta["ui/resourceUri"]}
    if ui is None:
        return None, None
    where = f"tool {tool.name!r}: its _meta.ui"
    if not isinstance(ui, dict):
        return None, f"{where} is not an object; the tool is shown without an app"
    uri = ui.get("resourceUri")
    if uri is not None and (not isinstance(uri, str) or not uri.startswith("ui://") or len(uri) > 2048):
        return None, f"{where}.resourceUri must be a ui:// URI, got {str(uri)[:80]!r}; the tool is shown without an app"
    raw = ui.get("visibility", list(VISIBILITIES))
    if (not isinstance(raw, list) or not raw or not all(isinstance(v, str) for v in raw)
            or any(v not in VISIBILITIES for v in raw)):
        return None, (f"{where}.visibility must be a non-empty list of 'model' and 'app', got {str(raw)[:80]}; "
                      "the tool is shown without an app")
    return ToolUi(uri, tuple(v for v in VISIBILITIES if v in raw)), None


def app_notes(tools: Sequence[types.Tool]) -> list[str]:
    """The per-tool notes of malformed ``_meta.ui`` entries (for the server's status)."""
    out = []
    for t in tools:
        _ui, problem = tool_ui(t)
        if problem:
            out.append(f"{problem} (the server's other tools work)")
    return out


def _domains(value: Any) -> list[str]:
    """A CSP domain list as declared, keeping only plausible origins (no quotes, spaces or
    semicolons: a declared value cannot add directives of its own)."""
    if not isinstance(value, list):
        return []
    out = []
    for d in value[:64]:
        if isinstance(d, str) and d and len(d) <= 256 and not any(c in d for c in " ;,'\"\n\r\t"):
            out.append(d)
    return out


def _ui_meta(meta: dict[str, Any] | None) -> dict[str, Any]:
    ui = (meta or {}).get("ui")
    return ui if isinstance(ui, dict) else {}


@attrs.frozen
class AppResource:
    """A loaded app resource: its HTML and what its ``_meta.ui`` declares."""

    uri: str
    html: str
    csp: dict[str, list[str]]
    permissions: dict[str, Any]
    prefers_border: bool | None = None


def parse_resource(uri: str, result: types.ReadResourceResult, listed: types.Resource | None = None) -> AppResource:
    """The app resource in a ``resources/read`` result (:class:`AppError` saying why not)."""
    contents = [c for c in result.contents if str(c.uri) == uri] or list(result.contents)
    if not contents:
        raise AppError(f"the server returned no content for {uri}")
    c = contents[0]
    mime = (c.mime_type or "").replace(" ", "").lower()
    if mime != APP_MIME_TYPE:
        raise AppError(f"{uri} is {c.mime_type or 'of no MIME type'}, not {APP_MIME_TYPE}; it is not shown")
    if isinstance(c, types.TextResourceContents):
        size = len(c.text.encode("utf-8", "replace"))
        if size > MAX_APP_BYTES:
            raise AppError(f"{uri} is {size / 1e6:.1f} MB, over the {MAX_APP_BYTES // 2**20} MB limit for an app")
        html = c.text
    else:
        if len(c.blob) * 3 // 4 > MAX_APP_BYTES:
            raise AppError(f"{uri} is over the {MAX_APP_BYTES // 2**20} MB limit for an app")
        try:
            html = base64.b64decode(c.blob, validate=True).decode("utf-8")
        except (binascii.Error, UnicodeDecodeError) as e:
            raise AppError(f"{uri} is not valid base64 UTF-8 HTML ({e})") from None
    # the content's _meta.ui first (the spec's place), the listed resource's as a fallback
    ui = _ui_meta(c.meta) or _ui_meta(listed.meta if listed is not None else None)
    raw_csp = ui.get("csp")
    raw_csp = raw_csp if isinstance(raw_csp, dict) else {}
    csp = {k: _domains(raw_csp.get(k)) for k in CSP_KEYS if _domains(raw_csp.get(k))}
    raw_perm = ui.get("permissions")
    raw_perm = raw_perm if isinstance(raw_perm, dict) else {}
    permissions: dict[str, Any] = {k: {} for k in PERMISSION_KEYS if isinstance(raw_perm.get(k), dict)}
    border = ui.get("prefersBorder")
    return AppResource(uri, html, csp, permissions, border if isinstance(border, bool) else None)


def call_result_json(result: types.CallToolResult) -> dict[str, Any] | None:
    """The tool result as its app gets it (``ui/notifications/tool-result``); None when too large."""
    out = result.model_dump(mode="json", by_alias=True, exclude_none=True)
    try:
        import json

        if len(json.dumps(out)) > MAX_RESULT_CHARS:
            return None
    except (TypeError, ValueError):
        return None
    return out


class AppResources:
    """The host's apps: whether its front end renders them, the loaded resources (cached per
    connection and listing) and the check of an app's tool calls."""

    def __init__(self) -> None:
        self.renders = False
        """The front end renders apps (the editor's chat says so when it starts); otherwise a
        tool's app is named, not loaded."""
        self._cache: dict[tuple[str, int, int, str], AppResource] = {}

    async def load(self, conn: ServerConnection, uri: str) -> AppResource:
        """The app resource ``uri`` of ``conn`` (:class:`AppError` saying why it cannot be shown)."""
        key = (conn.name, id(conn), conn.list_version, uri)
        if (hit := self._cache.get(key)) is not None:
            return hit
        try:
            result = await conn.read_resource(uri)
        except Exception as e:  # noqa: BLE001 - a missing resource, a dead server: the app is not shown
            raise AppError(conn.redact(f"reading {uri} failed: {getattr(e, 'message', None) or e}")) from None
        listed = next((r for r in conn.listing.resources if str(r.uri) == uri), None)
        app = parse_resource(uri, result, listed)
        self._cache = {k: v for k, v in self._cache.items() if k[:3] == key[:3]} if len(self._cache) > 64 else self._cache
        self._cache[key] = app
        return app

    async def view(self, conn: ServerConnection, tool: types.Tool | str, ui: ToolUi,
                   arguments: dict[str, Any], result: types.CallToolResult) -> AppView:
        """What the tool call's result event carries for its app."""
        name = tool if isinstance(tool, str) else tool.name
        base = AppView(server=conn.name, tool=name, resource_uri=ui.resource_uri or "", arguments=arguments)
        if not self.renders:
            return base
        result_json = call_result_json(result)
        try:
            app = await self.load(conn, ui.resource_uri or "")
        except AppError as e:
            log.warning("MCP server %s: the app of tool %s is not shown: %s", conn.name, name, e)
            return attrs.evolve(base, error=str(e))
        return attrs.evolve(base, html=app.html, csp=app.csp, permissions=app.permissions,
                            prefers_border=app.prefers_border, result=result_json,
                            error=None if result_json is not None else "the tool's result is too large for its app")
