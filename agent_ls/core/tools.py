"""The Tool protocol every tool (built-in or MCP) implements for the agent.

A tool is described by a :class:`ToolSpec` (what the model and the UI see) and is run with
:meth:`Tool.call`, which returns a :class:`ToolResult`. Tool failures are results with
``is_error=True``; exceptions are reserved for cancellation and programming errors.
"""

from __future__ import annotations

import enum
from typing import Any, Protocol, runtime_checkable

import attrs


class Capability(enum.StrEnum):
    """What a tool may do, as far as the approval gate is concerned."""

    READ = "read"
    """Reads local state only; runs without asking."""
    WRITE = "write"
    """Changes files, data or other state."""
    NETWORK = "network"
    """Reaches the open world (web, remote APIs)."""
    UNKNOWN = "unknown"
    """Nothing tells; treated like write by the gate."""


@attrs.frozen
class ToolSpec:
    """What the model and the UI know about a tool."""

    name: str
    """Model-facing name: ``[A-Za-z0-9_-]``, at most 64 characters, unique in a tool set."""
    description: str
    """Description sent to the model."""
    input_schema: dict[str, Any]
    """JSON schema of the arguments; always an object schema."""
    capability: Capability = Capability.UNKNOWN
    """Capability for the approval gate."""
    source: str = "builtin"
    """``"builtin"`` or ``"mcp"``."""
    server: str | None = None
    """For MCP tools: the configured server name."""
    display_name: str | None = None
    """For MCP tools: the tool's original name on its server (shown in the UI)."""
    output_schema: dict[str, Any] | None = None
    """For MCP tools with an ``outputSchema``."""
    annotations: dict[str, Any] | None = None
    """For MCP tools: the tool annotations as sent by the server (camelCase keys)."""
    app_resource: str | None = None
    """For MCP tools with an app (MCP Apps, ``_meta.ui.resourceUri``): its ``ui://`` resource."""
    visibility: tuple[str, ...] = ("model", "app")
    """For MCP tools: who may call it (``_meta.ui.visibility``): ``model`` (the agent), ``app``
    (its server's app). A tool without ``model`` is never offered to the model."""

    def to_openai(self) -> dict[str, Any]:
        """The OpenAI-style ``tools`` entry (what litellm accepts for every provider)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description, "parameters": self.input_schema},
        }


@attrs.frozen
class Attachment:
    """Non-text output of a tool, kept for the model and the UI instead of being dropped."""

    kind: str
    """``image``, ``audio``, ``resource`` (embedded) or ``resource_link``."""
    mime_type: str | None = None
    data: str | None = None
    """Base64 payload for images, audio and blob resources."""
    text: str | None = None
    """Text of an embedded text resource."""
    uri: str | None = None
    name: str | None = None


@attrs.frozen
class SandboxMark:
    """Where a command ran, for the mark on its card in the chat (issue 47)."""

    mode: str
    """``sandboxed``, ``outside`` (outside the sandbox, as the user approved) or ``unsandboxed``
    (no mechanism here: the user approved running it with full rights)."""
    mechanism: str = ""
    """The mechanism that confined it (``bubblewrap``, ``landlock``), when sandboxed."""
    network: str = ""
    """``off`` (no network at all) or ``proxy`` (only through agent-ls's proxy), when sandboxed."""
    hosts: tuple[str, ...] = ()
    """Hosts the proxy refused during the call."""
    paths: tuple[str, ...] = ()
    """Places outside the writable ones the command failed to write (the folder a grant would open)."""


@attrs.frozen
class AppView:
    """An MCP App to show with a tool call's result (MCP Apps, ``io.modelcontextprotocol/ui``).

    Without ``html`` the front end only says that the tool has an app it cannot show (it does not
    render apps, or ``error`` says why the app could not be loaded); the text result is shown as
    for any tool."""

    server: str
    tool: str
    """The tool's name on its server."""
    resource_uri: str
    arguments: dict[str, Any] = attrs.field(factory=dict)
    """The call's arguments (``ui/notifications/tool-input``)."""
    html: str | None = None
    csp: dict[str, list[str]] | None = None
    """The resource's declared domains (``connectDomains``, ``resourceDomains``, ``frameDomains``,
    ``baseUriDomains``); empty or None: the spec's restrictive default."""
    permissions: dict[str, Any] | None = None
    prefers_border: bool | None = None
    result: dict[str, Any] | None = None
    """The ``CallToolResult`` as JSON (``ui/notifications/tool-result``)."""
    error: str | None = None
    """Why the app is not shown (a missing resource, not the app MIME type, too large)."""

    @property
    def notice(self) -> str | None:
        """What a front end that does not show this app says under the call (None: it is shown)."""
        if self.html is not None:
            return None
        if self.error:
            return f"The app of tool {self.tool!r} (MCP server {self.server!r}) cannot be shown: {self.error}"
        return (f"The tool {self.tool!r} of MCP server {self.server!r} has an interactive app ({self.resource_uri}) "
                "that this client cannot show; its text result is shown instead.")

    def to_json(self) -> dict[str, Any]:
        """The app as an event carries it (camelCase; the arguments and result exactly as given)."""
        return {"server": self.server, "tool": self.tool, "resourceUri": self.resource_uri,
                "arguments": self.arguments, "html": self.html, "csp": self.csp, "permissions": self.permissions,
                "prefersBorder": self.prefers_border, "result": self.result, "error": self.error,
                "notice": self.notice}


@attrs.frozen
class ToolResult:
    """The outcome of a tool call."""

    content: str
    """Text the model sees (already capped, with an explicit marker when cut)."""
    is_error: bool = False
    """True when the tool failed: the model sees it as an error result."""
    attachments: tuple[Attachment, ...] = ()
    structured: dict[str, Any] | None = None
    """``structuredContent`` of an MCP result, when present."""
    truncated_chars: int = 0
    """How many characters of text were cut by the output cap (0 when nothing was cut)."""
    sandbox: SandboxMark | None = None
    """Where a command ran (``bash``): sandboxed or not, and what the sandbox refused."""
    app: AppView | None = None
    """The MCP App that shows this result (an MCP tool with ``_meta.ui``)."""

    @classmethod
    def error(cls, message: str) -> ToolResult:
        return cls(content=message, is_error=True)


def cap_text(text: str, max_chars: int) -> tuple[str, int]:
    """Cut ``text`` to about ``max_chars`` keeping head and tail, with an explicit marker in
    between that says how much was cut (output is never cut silently). Returns (text, cut)."""
    if max_chars <= 0 or len(text) <= max_chars:
        return text, 0
    cut = len(text) - max_chars
    head = max_chars * 3 // 4
    tail = max_chars - head
    marker = (
        f"\n\n[... output truncated by agent-ls: {cut} of {len(text)} characters cut "
        f"(limit {max_chars}); the start and the end are shown ...]\n\n"
    )
    return text[:head] + marker + (text[-tail:] if tail else ""), cut


@runtime_checkable
class Tool(Protocol):
    """Anything the agent can call."""

    @property
    def spec(self) -> ToolSpec: ...

    async def call(self, arguments: dict[str, Any]) -> ToolResult:
        """Run the tool. Cancelling the awaiting task cancels the call."""
        ...
