"""Payloads of what the server asks the editor: tool approval (``agent/approve``), trust
(``mcp/trustServer``, ``agent/trustWorkspace``, and the client's ``agent/setWorkspaceTrust`` /
``agent/editorTrust``), elicitation (``mcp/elicit``) and sampling consent (``mcp/sample``).

Mirrored in ``editor-extension/src/protocol/questions.ts`` (``WorkspaceSettingPayload``: in
``mcp.ts``).
"""

from __future__ import annotations

from typing import Any

import attrs

from agent_ls.server.protocol.codec import _register


@_register
@attrs.define
class ApprovalScope:
    """One "allow for this session" choice of an ``agent/approve`` question."""

    id: str
    """``exact`` (this shell command), ``prefix`` (shell commands starting with the words in the
    label) or ``tool`` (the tool as a whole); the answer's ``scope``."""
    label: str
    """The button's text, naming the scope in full (``Allow `git status` … for this session``)."""


@_register
@attrs.define
class ApproveParams:
    """``agent/approve`` (server -> client)."""

    call_id: str
    """The tool call's id (the ``callId`` of its events), or ``direct-<n>`` for direct calls."""
    tool: str
    """Model-facing tool name."""
    arguments: dict[str, Any]
    reason: str
    server: str | None = None
    display_name: str | None = None
    session_id: str | None = None
    """The session whose turn asks; null for direct calls (``mcp/callTool``, tool actions)."""
    reviewed_edit: bool = False
    """A built-in file tool (``edit_file``, ``write_file``) whose every change is sent to
    ``agent/reviewEdit`` before it is applied: a client that reviews before applying may answer
    at once (the review decides)."""
    scopes: list[ApprovalScope] = attrs.field(factory=list)
    """The session choices to offer, narrowest first; empty: only allow once or deny."""
    sensitive: str | None = None
    """Why the call touches a protected file (``.git/``, ``.vscode/``, ...): the card shows it."""


@_register
@attrs.define
class ApproveResult:
    answer: str
    """``allow_once``, ``allow_session`` or ``deny``; anything else is a deny."""
    scope: str | None = None
    """With ``allow_session``: the id of the chosen scope (missing: the narrowest offered; a
    scope that was not offered: allowed once)."""


@_register
@attrs.define
class WorkspaceSettingPayload:
    """One setting of a workspace file that needs the user's trust (shown as written)."""

    source: str
    """The settings file."""
    key: str
    """Where in the file, as a JSON path (``apiBase``, ``permissions.allow[0]``, ``toolActions``)."""
    value: str
    """The value as written (compact JSON), never clipped."""
    why: str
    """Why it needs trust, one sentence (``the model endpoint receives your API key and the chat``)."""


@_register
@attrs.define
class TrustServerParams:
    """``mcp/trustServer`` (server -> client): may this workspace-defined MCP server run?

    Everything that decides what runs or where data goes, as written in the file (variables
    unexpanded; literal values of secret-looking env variables and headers masked).
    """

    server: str
    command: str
    """Empty for an HTTP server."""
    args: list[str]
    source: str
    """The workspace file that defines the server."""
    cwd: str | None = None
    transport: str = "stdio"
    """``stdio``, ``http`` or ``sse``."""
    env: dict[str, str] = attrs.field(factory=dict)
    url: str | None = None
    headers: dict[str, str] = attrs.field(factory=dict)
    variables: list[str] = attrs.field(factory=list)
    """Environment variables whose values the server would receive (in env, args, URL, headers)."""
    changes: list[str] = attrs.field(factory=list)
    """What changed since the user last trusted this entry (one line each); empty for a new entry."""
    oauth: dict[str, str] = attrs.field(factory=dict)
    """Every setting of the entry's ``oauth`` object, ``idp`` flattened (``grant``, ``clientId``,
    ``assertionFile``, ``issuer``, ``scopes``, ``idp.tokenEndpoint``, ``dpop``...), as written;
    a credential's value (``clientSecret``, ``assertion``...) is ``***`` unless it names a variable."""
    options: dict[str, str] = attrs.field(factory=dict)
    """Every other key that is not cosmetic (``protocol``, ``oauth`` when not an object, other
    hosts' keys), as written."""
    refused: list[str] = attrs.field(factory=list)
    """The ``oauth`` settings (keys of ``oauth``) a workspace file may not set: credentials and
    files read for them. The server does not start, trusted or not (a diagnostic at each says why)."""


@_register
@attrs.define
class TrustServerResult:
    trusted: bool | None = None
    """True / False is remembered per workspace and entry; null asks again later."""


@_register
@attrs.define
class TrustWorkspaceParams:
    """``agent/trustWorkspace`` (server -> client): the folder's settings files ask for things
    that need trust; until the user trusts it they are ignored."""

    folder: str
    servers: list[TrustServerParams] = attrs.field(factory=list)
    """Every MCP server its files define (trusting the workspace trusts these entries)."""
    settings: list[WorkspaceSettingPayload] = attrs.field(factory=list)
    """Every other setting that needs trust."""
    changes: list[str] = attrs.field(factory=list)
    """What changed in those settings since the user last trusted this folder."""
    previously_trusted: bool = False
    """The folder was trusted before, with different settings."""


@_register
@attrs.define
class TrustWorkspaceResult:
    trusted: bool | None = None
    """True: trust the folder (its settings and the servers listed); false: keep it restricted
    (not asked again until those settings change); null: no decision (asked again later)."""


@_register
@attrs.define
class SetWorkspaceTrustParams:
    """``agent/setWorkspaceTrust``: the user trusts a workspace folder (its settings and the MCP
    servers its files define now) or restricts it again."""

    trusted: bool
    folder: str | None = None
    """A workspace folder path; absent: every workspace folder."""


@_register
@attrs.define
class EditorTrustParams:
    """``agent/editorTrust`` (client -> server notification): the editor's own workspace trust
    changed (VS Code's ``onDidGrantWorkspaceTrust``). The initial value is the
    ``workspaceTrusted`` initialization option (absent: the editor has no such notion)."""

    trusted: bool


@_register
@attrs.define
class ElicitParams:
    """``mcp/elicit`` (server -> client)."""

    server: str
    message: str
    requested_schema: dict[str, Any] = attrs.field(factory=dict)
    """A flat JSON schema (``type: object`` with primitive ``properties``, ``required``)."""


@_register
@attrs.define
class ElicitResultPayload:
    action: str
    """``accept``, ``decline`` or ``cancel``."""
    content: dict[str, Any] | None = None
    """The form values when accepted (schema defaults fill missing fields)."""


@_register
@attrs.define
class SampleMessage:
    """One message of a sampling request, as the user is shown it."""

    role: str
    """``user`` or ``assistant``."""
    text: str
    """The message's text (cut to 600 characters, marked); images as ``[image image/png, 1.2 KB]``."""


@_register
@attrs.define
class SampleParams:
    """``mcp/sample`` (server -> client): an MCP server asks to use the model (MCP sampling);
    the user consents or not."""

    server: str
    messages: list[SampleMessage]
    """The most recent messages (at most 20)."""
    max_tokens: int
    """The most the model may write (the server's ``maxTokens`` under ``agent.sampling.maxTokens``)."""
    model: str
    """The litellm model string the request would use."""
    system_prompt: str | None = None
    requested_max_tokens: int | None = None
    """What the MCP server asked for."""
    omitted_messages: int = 0
    """Earlier messages not in ``messages``."""
    endpoint: str | None = None
    """The API base URL the request goes to (null: the provider's default endpoint)."""


@_register
@attrs.define
class SampleResult:
    answer: str
    """``allow_once``, ``allow_session`` (this server, until the language server restarts) or
    ``deny``; anything else is a deny."""
