"""The custom LSP protocol of agent-ls: method names and typed payloads, defined once.

Mirrored in ``editor-extension/src/protocol.ts`` and documented in ``docs/protocol.md``.
Payload classes are attrs classes; on the wire every field is camelCase. Params are
validated here (a bad shape is a JSON-RPC ``InvalidParams`` error response, never a hang).
"""

from __future__ import annotations

import re
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

# client -> server requests --------------------------------------------------------------
PROMPT = "agent/prompt"
SESSIONS_LIST = "agent/sessions/list"
SESSIONS_NEW = "agent/sessions/new"
SESSIONS_RESUME = "agent/sessions/resume"
SESSIONS_DELETE = "agent/sessions/delete"
MCP_STATUS = "mcp/status"
MCP_RESTART = "mcp/restart"
MCP_SET_ENABLED = "mcp/setEnabled"
MCP_TRUST = "mcp/trust"
MCP_RESOURCES_LIST = "mcp/resources/list"
MCP_RESOURCES_READ = "mcp/resources/read"
MCP_PROMPTS_LIST = "mcp/prompts/list"
MCP_PROMPTS_GET = "mcp/prompts/get"
MCP_CALL_TOOL = "mcp/callTool"

# server -> client notifications -----------------------------------------------------------
EVENT = "agent/event"
MCP_STATUS_CHANGED = "mcp/statusChanged"

# server -> client requests ----------------------------------------------------------------
APPROVE = "agent/approve"
TRUST_SERVER = "mcp/trustServer"
ELICIT = "mcp/elicit"

# workspace/executeCommand commands (used by code actions) ---------------------------------
CMD_ASK = "agent-ls.ask"
CMD_RUN_TOOL_ACTION = "agent-ls.runToolAction"
CMD_RUN_MCP_PROMPT = "agent-ls.runMcpPrompt"

CLIENT_REQUESTS = (
    PROMPT, SESSIONS_LIST, SESSIONS_NEW, SESSIONS_RESUME, SESSIONS_DELETE, MCP_STATUS, MCP_RESTART,
    MCP_SET_ENABLED, MCP_TRUST, MCP_RESOURCES_LIST, MCP_RESOURCES_READ, MCP_PROMPTS_LIST, MCP_PROMPTS_GET,
    MCP_CALL_TOOL,
)
SERVER_REQUESTS = (APPROVE, TRUST_SERVER, ELICIT)


def camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def snake_to_camel_dict(value: Any) -> Any:
    """Recursively camelCase the keys of plain dicts (for results built from attrs.asdict)."""
    if isinstance(value, dict):
        return {camel(k) if isinstance(k, str) and re.fullmatch(r"[a-z0-9_]+", k) else k: snake_to_camel_dict(v)
                for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [snake_to_camel_dict(v) for v in value]
    return value


converter = cattrs.Converter(forbid_extra_keys=False)


def _register(cls: type) -> type:
    overrides = {a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)}
    converter.register_structure_hook(cls, make_dict_structure_fn(cls, converter, **overrides))  # type: ignore[arg-type]
    converter.register_unstructure_hook(cls, make_dict_unstructure_fn(cls, converter, **overrides))  # type: ignore[arg-type]
    return cls


T = TypeVar("T")


class InvalidParams(ValueError):
    pass


def parse(cls: type[T], params: Any) -> T:
    """Structure raw params into ``cls``; a clear :class:`InvalidParams` when they do not fit."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidParams(f"params must be an object, not {type(params).__name__}")
    try:
        return converter.structure(params, cls)
    except Exception as e:  # cattrs ClassValidationError and friends
        msgs = cattrs.transform_error(e) if isinstance(e, cattrs.BaseValidationError) else [str(e)]
        raise InvalidParams("invalid params: " + "; ".join(msgs)) from None


def dump(value: Any) -> Any:
    return converter.unstructure(value)


# payloads ----------------------------------------------------------------------------------

@_register
@attrs.define
class Attachment:
    """Context attached to a prompt."""

    kind: str
    """``selection``, ``file`` or ``resource``."""
    uri: str | None = None
    """File URI (selection, file) or resource URI."""
    text: str | None = None
    """The text (selection), or None to read it (file, resource)."""
    server: str | None = None
    """For ``resource``: the MCP server that has it."""
    range: dict[str, Any] | None = None
    """For ``selection``: the LSP range."""
    language_id: str | None = None


@_register
@attrs.define
class PromptParams:
    text: str
    """The user's message."""
    session_id: str | None = None
    """Continue this session; a new one is created when absent."""
    attachments: list[Attachment] = attrs.field(factory=list)
    model: str | None = None
    """Override the configured model for this prompt."""


@_register
@attrs.define
class PromptResult:
    session_id: str
    stop_reason: str
    """``end``, ``max_steps``, ``error`` (see ``error``)."""
    text: str
    usage: dict[str, int]
    error: dict[str, str] | None = None


@_register
@attrs.define
class EventParams:
    """``agent/event``: one streamed event of a running prompt."""

    session_id: str
    event: dict[str, Any]
    """``type`` plus the event's fields: ``text`` {text}, ``tool_call_started`` {callId, name,
    arguments, server, displayName}, ``approval_requested`` {callId, name, arguments, reason},
    ``tool_call_finished`` {callId, name, isError, content, durationMs, denied, attachments},
    ``usage`` {inputTokens, outputTokens, cacheReadTokens, cacheWriteTokens}, ``error`` {kind,
    message}, ``turn_started`` {turn}, ``turn_finished`` {stopReason, usage, steps, text}."""


@_register
@attrs.define
class SessionParams:
    session_id: str


@_register
@attrs.define
class NewSessionParams:
    title: str | None = None


@_register
@attrs.define
class ServerParams:
    server: str | None = None
    """A server name; all servers when absent (restart)."""


@_register
@attrs.define
class SetEnabledParams:
    server: str
    enabled: bool


@_register
@attrs.define
class TrustParams:
    server: str
    trusted: bool


@_register
@attrs.define
class ReadResourceParams:
    server: str
    uri: str


@_register
@attrs.define
class GetPromptParams:
    server: str
    name: str
    arguments: dict[str, str] = attrs.field(factory=dict)


@_register
@attrs.define
class CallToolParams:
    server: str
    tool: str
    """The tool's name on its server (or its model-facing name)."""
    arguments: dict[str, Any] = attrs.field(factory=dict)


@_register
@attrs.define
class ApproveParams:
    """``agent/approve`` (server -> client)."""

    call_id: str
    tool: str
    arguments: dict[str, Any]
    reason: str
    server: str | None = None
    display_name: str | None = None


@_register
@attrs.define
class ApproveResult:
    answer: str
    """``allow_once``, ``allow_session`` or ``deny``."""


@_register
@attrs.define
class TrustServerParams:
    """``mcp/trustServer`` (server -> client)."""

    server: str
    command: str
    args: list[str]
    source: str
    """The workspace file that defines the server."""


@_register
@attrs.define
class TrustServerResult:
    trusted: bool | None = None
    """True / False remembers the decision; null asks again later."""


@_register
@attrs.define
class ElicitParams:
    """``mcp/elicit`` (server -> client)."""

    server: str
    message: str
    requested_schema: dict[str, Any] = attrs.field(factory=dict)


@_register
@attrs.define
class ElicitResultPayload:
    action: str
    """``accept``, ``decline`` or ``cancel``."""
    content: dict[str, Any] | None = None


@attrs.define
class RawRequest:
    """A custom request whose params pygls must not convert (they are validated by ``parse``)."""

    id: int | str
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawNotification:
    method: str
    jsonrpc: str
    params: Any = None


@attrs.define
class RawResponse:
    id: int | str
    jsonrpc: str
    result: Any = None
