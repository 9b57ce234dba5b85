"""Payloads of the MCP methods: ``mcp/status`` and its changes, server control, resources,
prompts and direct tool calls (``mcp/callTool``).

Mirrored in ``editor-extension/src/protocol/mcp.ts``.
"""

from __future__ import annotations

from typing import Any

import attrs

from agent_ls.server.protocol.codec import _register
from agent_ls.server.protocol.questions import TrustServerParams, WorkspaceSettingPayload


@_register
@attrs.define
class ServerParams:
    """``mcp/restart``."""

    server: str | None = None
    """A server name; all servers when absent."""


@_register
@attrs.define
class SetEnabledParams:
    """``mcp/setEnabled`` (remembered per workspace)."""

    server: str
    enabled: bool


@_register
@attrs.define
class SignInParams:
    """``mcp/signIn`` and ``mcp/signOut``: an HTTP server that uses OAuth."""

    server: str


@_register
@attrs.define
class TrustParams:
    """``mcp/trust``: the user's decision about a workspace-defined MCP server."""

    server: str
    trusted: bool


@_register
@attrs.define
class ResourcesListParams:
    """``mcp/resources/list``."""

    server: str | None = None
    """Only this server's resources; every connected server's when absent."""


@_register
@attrs.define
class ReadResourceParams:
    """``mcp/resources/read``."""

    server: str
    uri: str


@_register
@attrs.define
class PromptsListParams:
    """``mcp/prompts/list``."""

    server: str | None = None


@_register
@attrs.define
class GetPromptParams:
    """``mcp/prompts/get``."""

    server: str
    name: str
    arguments: dict[str, str] = attrs.field(factory=dict)


@_register
@attrs.define
class CallToolParams:
    """``mcp/callTool``: a direct call, through the approval gate."""

    server: str
    tool: str
    """The tool's name on its server (or its model-facing name)."""
    arguments: dict[str, Any] = attrs.field(factory=dict)


@_register
@attrs.define
class AppCallToolParams:
    """``agent/appCallTool``: a ``tools/call`` an MCP App asks for (the chat's bridge sends it)."""

    session_id: str
    """The conversation whose tool call shows the app (its gate and approvals)."""
    server: str
    """The app's server (the bridge's record of the frame, never what the app says)."""
    tool: str
    """The tool's name on that server."""
    arguments: dict[str, Any] = attrs.field(factory=dict)
    call_id: str | None = None
    """The call's id in its events (default: ``app-<request id>``)."""


@_register
@attrs.define
class AppContextParams:
    """``agent/appContext``: an MCP App's ``ui/update-model-context`` (its text content)."""

    session_id: str
    server: str
    resource_uri: str
    text: str


@_register
@attrs.define
class AppResourceParams:
    """``agent/appResource``: the app of a resumed tool call, read from its server again."""

    server: str
    tool: str
    """The tool's name on that server (the transcript's ``run.app``)."""


@_register
@attrs.define
class AppResourcePayload:
    """Result of ``agent/appResource``: the app as ``tool_call_finished``'s ``app`` carries it."""

    resource_uri: str
    html: str
    csp: dict[str, list[str]] = attrs.field(factory=dict)
    permissions: dict[str, Any] = attrs.field(factory=dict)
    prefers_border: bool | None = None


@_register
@attrs.define
class ToolResultPayload:
    """Result of ``mcp/callTool`` and ``agent-ls.runToolAction``."""

    is_error: bool
    content: str
    denied: bool = False
    """The approval gate refused the call (``isError`` is true too)."""
    structured: dict[str, Any] | None = None
    truncated_chars: int = 0
    attachments: list[dict[str, Any]] = attrs.field(factory=list)
    title: str | None = None
    """``agent-ls.runToolAction``: the action's title."""
    applied: bool | None = None
    """``agent-ls.runToolAction`` with ``apply``: whether the editor applied the edit."""


@_register
@attrs.define
class ToolInfoPayload:
    name: str
    """Model-facing name (``mcp__<server>__<tool>``)."""
    original: str
    """The name on the MCP server."""
    capability: str
    """``read``, ``write``, ``network`` or ``unknown``."""
    description: str


@_register
@attrs.define
class ServerStatusPayload:
    """One MCP server as the status view shows it (secrets redacted)."""

    name: str
    state: str
    """``starting``, ``connected``, ``connected-listing-failed``, ``restarting``, ``failed``,
    ``disabled``, ``awaiting-trust`` or ``untrusted``."""
    transport: str
    scope: str
    source: str
    """The settings file that defines the server."""
    tool_count: int = 0
    prompt_count: int = 0
    resource_count: int = 0
    error: dict[str, Any] | None = None
    """``{phase, message}`` plus ``errno``, ``exitCode`` or ``httpStatus`` when known."""
    stderr_tail: list[str] = attrs.field(factory=list)
    server_info: str | None = None
    protocol_version: str | None = None
    restarts: int = 0
    pid: int | None = None
    tools: list[ToolInfoPayload] = attrs.field(factory=list)
    auth: dict[str, Any] | None = None
    """OAuth state of an HTTP server, when the host reports one."""
    sandbox: str | None = None
    """A stdio server in the OS sandbox: the mechanism and its network in words (null: not sandboxed)."""


@_register
@attrs.define
class WorkspaceStatusPayload:
    """The trust state of one workspace folder."""

    folder: str
    state: str
    """``trusted``; ``restricted`` (waiting for the user's decision); ``declined`` (the user kept it
    restricted: not asked again until its settings change); ``editor-restricted`` (the editor's
    own workspace trust is not granted); ``nothing-to-trust`` (its files ask for nothing that
    needs trust)."""
    message: str
    """One sentence for the user."""
    ignored: list[WorkspaceSettingPayload] = attrs.field(factory=list)
    """Settings ignored while the folder is not trusted."""
    servers: list[TrustServerParams] = attrs.field(factory=list)
    """The MCP servers its files define, as the trust prompt shows them (while not trusted; they
    show ``awaiting-trust`` in ``servers``)."""


@_register
@attrs.define
class StatusResult:
    """Result of ``mcp/status``, ``mcp/restart``, ``mcp/setEnabled``, ``mcp/trust``,
    ``agent/setWorkspaceTrust``."""

    servers: list[ServerStatusPayload]
    diagnostics: list[str] = attrs.field(factory=list)
    """Problems in the settings files, one line each (also published as LSP diagnostics)."""
    workspaces: list[WorkspaceStatusPayload] = attrs.field(factory=list)
    """The trust state of each workspace folder."""


@_register
@attrs.define
class StatusChangedParams:
    """``mcp/statusChanged`` (server -> client notification)."""

    servers: list[ServerStatusPayload]
    workspaces: list[WorkspaceStatusPayload] = attrs.field(factory=list)


@_register
@attrs.define
class ResourcePayload:
    server: str
    uri: str
    name: str
    mime_type: str | None = None
    description: str | None = None


@_register
@attrs.define
class ResourcesListResult:
    resources: list[ResourcePayload]
    templates: list[dict[str, Any]] = attrs.field(factory=list)
    """Resource templates: ``{server, uriTemplate, name, mimeType, description}``."""


@_register
@attrs.define
class ReadResourceResult:
    contents: list[dict[str, Any]]
    """MCP resource contents: ``{uri, mimeType, text}`` or ``{uri, mimeType, blob}`` (base64)."""


@_register
@attrs.define
class PromptArgumentPayload:
    name: str
    description: str | None = None
    required: bool = False


@_register
@attrs.define
class PromptPayload:
    server: str
    name: str
    description: str | None = None
    arguments: list[PromptArgumentPayload] = attrs.field(factory=list)


@_register
@attrs.define
class PromptsListResult:
    prompts: list[PromptPayload]


@_register
@attrs.define
class PromptMessagePayload:
    role: str
    text: str
    """Text content; other content is described in brackets (``[image image/png]``)."""


@_register
@attrs.define
class GetPromptResult:
    description: str | None
    messages: list[PromptMessagePayload]
