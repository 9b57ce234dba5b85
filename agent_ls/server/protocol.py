"""The custom LSP protocol of agent-ls: method names and typed payloads, defined once.

Mirrored in ``editor-extension/src/protocol.ts`` and documented in ``docs/protocol.md``.
Payload classes are attrs classes; on the wire every field is camelCase. Params are
validated here (a bad shape is a JSON-RPC ``InvalidParams`` error response, never a hang).
"""

from __future__ import annotations

import re
import typing
from typing import Any, TypeVar

import attrs
import cattrs
from cattrs.gen import make_dict_structure_fn, make_dict_unstructure_fn, override

# client -> server requests --------------------------------------------------------------
PROMPT = "agent/prompt"
CANCEL = "agent/cancel"
SESSIONS_LIST = "agent/sessions/list"
SESSIONS_NEW = "agent/sessions/new"
SESSIONS_RESUME = "agent/sessions/resume"
SESSIONS_DELETE = "agent/sessions/delete"
SERVER_INFO = "agent/serverInfo"
MCP_STATUS = "mcp/status"
MCP_RESTART = "mcp/restart"
MCP_SET_ENABLED = "mcp/setEnabled"
MCP_TRUST = "mcp/trust"
MCP_RESOURCES_LIST = "mcp/resources/list"
MCP_RESOURCES_READ = "mcp/resources/read"
MCP_PROMPTS_LIST = "mcp/prompts/list"
MCP_PROMPTS_GET = "mcp/prompts/get"
MCP_CALL_TOOL = "mcp/callTool"
MCP_SIGN_IN = "mcp/signIn"
MCP_SIGN_OUT = "mcp/signOut"
SET_WORKSPACE_TRUST = "agent/setWorkspaceTrust"
CHANGE_OUTCOME = "agent/changeOutcome"
CHANGE_CONTENT = "agent/changeContent"
TOOL_OUTPUT = "agent/toolOutput"

# client -> server notifications -----------------------------------------------------------
EDITOR_TRUST = "agent/editorTrust"

# server -> client notifications -----------------------------------------------------------
EVENT = "agent/event"
MCP_STATUS_CHANGED = "mcp/statusChanged"

# server -> client requests ----------------------------------------------------------------
APPROVE = "agent/approve"
TRUST_SERVER = "mcp/trustServer"
TRUST_WORKSPACE = "agent/trustWorkspace"
ELICIT = "mcp/elicit"
SAMPLE = "mcp/sample"
REVIEW_EDIT = "agent/reviewEdit"

# workspace/executeCommand commands (carried by code actions) ------------------------------
CMD_ASK = "agent-ls.ask"
CMD_RUN_TOOL_ACTION = "agent-ls.runToolAction"
CMD_RUN_MCP_PROMPT = "agent-ls.runMcpPrompt"
COMMANDS = (CMD_ASK, CMD_RUN_TOOL_ACTION, CMD_RUN_MCP_PROMPT)

CLIENT_REQUESTS = (
    PROMPT, CANCEL, SESSIONS_LIST, SESSIONS_NEW, SESSIONS_RESUME, SESSIONS_DELETE, SERVER_INFO, MCP_STATUS,
    MCP_RESTART, MCP_SET_ENABLED, MCP_TRUST, MCP_RESOURCES_LIST, MCP_RESOURCES_READ, MCP_PROMPTS_LIST,
    MCP_PROMPTS_GET, MCP_CALL_TOOL, MCP_SIGN_IN, MCP_SIGN_OUT, SET_WORKSPACE_TRUST, CHANGE_OUTCOME, CHANGE_CONTENT,
    TOOL_OUTPUT,
)
CLIENT_NOTIFICATIONS = (EDITOR_TRUST,)
SERVER_REQUESTS = (APPROVE, TRUST_SERVER, TRUST_WORKSPACE, ELICIT, SAMPLE, REVIEW_EDIT)
SERVER_NOTIFICATIONS = (EVENT, MCP_STATUS_CHANGED)

# JSON-RPC / LSP error codes the custom methods answer with --------------------------------
INVALID_PARAMS = -32602
"""The params do not have the documented shape (the message says which field and why)."""
REQUEST_FAILED = -32803
"""Well-formed, but it cannot be done: unknown session or server, server not connected, busy."""
REQUEST_CANCELLED = -32800
"""The client cancelled the request with ``$/cancelRequest``."""
INTERNAL_ERROR = -32603
"""A bug (the message names the exception)."""

# Values ---------------------------------------------------------------------------------------
APPROVAL_ANSWERS = ("allow_once", "allow_session", "deny")
ELICIT_ACTIONS = ("accept", "decline", "cancel")
SAMPLING_ANSWERS = ("allow_once", "allow_session", "deny")
WORKSPACE_TRUST_STATES = ("trusted", "restricted", "declined", "editor-restricted", "nothing-to-trust")
EVENT_TYPES = ("turn_started", "text", "thinking", "tool_call_started", "approval_requested", "tool_call_finished",
               "file_change", "usage", "error", "turn_finished")
REVIEW_DECISIONS = ("accept", "reject", "deferred")
CHANGE_STATUSES = ("proposed", "accepted", "rejected", "failed", "written", "applied", "kept", "reverted")
CHANGE_OUTCOMES = ("kept", "reverted")
REVIEW_CAPABILITY = "reviewEdits"
"""``capabilities.experimental.agentLs.reviewEdits: true``: the client answers ``agent/reviewEdit``."""


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


_PAYLOADS: set[type] = set()


def _register(cls: type) -> type:
    """A payload class: camelCase on the wire. Its (un)structure functions are generated on
    first use, not at import (that keeps ``initialize`` fast)."""
    _PAYLOADS.add(cls)
    return cls


def _renames(cls: Any) -> dict[str, Any]:
    return {a.name: override(rename=camel(a.name)) for a in attrs.fields(cls)}


converter.register_structure_hook_factory(
    lambda t: t in _PAYLOADS, lambda t: make_dict_structure_fn(t, converter, **_renames(t)))
converter.register_unstructure_hook_factory(
    lambda t: t in _PAYLOADS, lambda t: make_dict_unstructure_fn(t, converter, **_renames(t)))


T = TypeVar("T")


class InvalidParams(ValueError):
    """Params that do not fit their payload class (answered with ``INVALID_PARAMS``)."""


class RequestFailed(RuntimeError):
    """A well-formed request that cannot be done (answered with ``REQUEST_FAILED``)."""


def _strict_str(value: Any, _type: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"expected a string, not {type(value).__name__}")
    return value


def _strict_bool(value: Any, _type: Any) -> bool:
    if not isinstance(value, bool):
        raise TypeError(f"expected true or false, not {type(value).__name__}")
    return value


def _strict_dict(value: Any, _type: Any) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise TypeError(f"expected an object, not {type(value).__name__}")
    return value


def _strict_str_dict(value: Any, _type: Any) -> dict[str, str]:
    d = _strict_dict(value, _type)
    bad = [k for k, v in d.items() if not isinstance(v, str)]
    if bad:
        raise TypeError(f"values must be strings ({', '.join(map(repr, bad))} are not)")
    return d


def _is_list(t: Any) -> bool:
    return typing.get_origin(t) is list


def _strict_list(value: Any, type_: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError(f"expected an array, not {type(value).__name__}")
    (item,) = typing.get_args(type_) or (Any,)
    if item is Any:
        return list(value)
    errors: list[Exception] = []
    out = []
    for i, v in enumerate(value):
        try:
            out.append(converter.structure(v, item))
        except Exception as e:
            e.__notes__ = [*getattr(e, "__notes__", []), cattrs.errors.IterableValidationNote(
                f"Structuring {type_} @ index {i}", i, item)]
            errors.append(e)
    if errors:
        raise cattrs.errors.IterableValidationError(f"While structuring {type_!r}", errors, type_)
    return out


# cattrs would happily turn 5 into "5" or a dict into a list of its keys: be strict instead.
converter.register_structure_hook(str, _strict_str)
converter.register_structure_hook(bool, _strict_bool)
converter.register_structure_hook_func(_is_list, _strict_list)
converter.register_structure_hook_func(lambda t: t == dict[str, Any], _strict_dict)
converter.register_structure_hook_func(lambda t: t == dict[str, str], _strict_str_dict)


def parse(cls: type[T], params: Any) -> T:
    """Structure raw params into ``cls``; a clear :class:`InvalidParams` when they do not fit."""
    if params is None:
        params = {}
    if not isinstance(params, dict):
        raise InvalidParams(f"params must be an object, not {type(params).__name__}")
    try:
        return converter.structure(params, cls)
    except Exception as e:  # cattrs ClassValidationError and friends
        msgs = [_wire_message(m) for m in cattrs.transform_error(e, format_exception=_format_exception)] \
            if isinstance(e, cattrs.BaseValidationError) else [str(e)]
        raise InvalidParams("invalid params: " + "; ".join(msgs)) from None


def _format_exception(exc: BaseException, type_: Any) -> str:
    if isinstance(exc, (TypeError, ValueError)) and type(exc) in (TypeError, ValueError) and str(exc) and \
            not str(exc).startswith(("invalid literal", "int() argument")):
        return str(exc)  # our own checks say exactly what is wrong
    from cattrs.v import format_exception

    return format_exception(exc, type_)


def _wire_message(message: str) -> str:
    """cattrs' ``<problem> @ $.session_id[0]`` -> ``sessionId[0]: <problem>`` (wire names)."""
    problem, sep, path = message.rpartition(" @ ")
    if not sep:
        return message
    path = re.sub(r"[A-Za-z_][A-Za-z0-9_]*", lambda m: camel(m.group(0)), path.removeprefix("$").lstrip("."))
    problem = problem.replace("invalid value for type, expected ", "expected ")
    return f"{path or 'params'}: {problem}"


def dump(value: Any) -> Any:
    return converter.unstructure(value)


# requests: params -----------------------------------------------------------------------------

@_register
@attrs.define
class NoParams:
    """Methods without params accept null or an object (extra fields are ignored)."""


@_register
@attrs.define
class Range:
    """An LSP range (zero-based lines and UTF-16 characters)."""

    start: dict[str, int]
    end: dict[str, int]


@_register
@attrs.define
class Attachment:
    """Context attached to a prompt."""

    kind: str
    """``selection``, ``file`` or ``resource``."""
    uri: str | None = None
    """File URI (selection, file) or resource URI."""
    text: str | None = None
    """The text (selection), or None to read it (file: the open document or the file on disk)."""
    server: str | None = None
    """For ``resource``: the MCP server that has it."""
    range: dict[str, Any] | None = None
    """For ``selection``: the LSP range."""
    language_id: str | None = None

    def __attrs_post_init__(self) -> None:
        if self.kind not in ("selection", "file", "resource"):
            raise ValueError(f"attachment kind must be selection, file or resource, not {self.kind!r}")
        if self.kind == "resource" and not (self.uri and self.server):
            raise ValueError("a resource attachment needs uri and server")
        if self.kind == "file" and not self.uri:
            raise ValueError("a file attachment needs uri")


@_register
@attrs.define
class PromptParams:
    """``agent/prompt``."""

    text: str
    """The user's message."""
    session_id: str | None = None
    """Continue this session; a new one is created when absent."""
    attachments: list[Attachment] = attrs.field(factory=list)
    model: str | None = None
    """Override the configured model for this prompt (any litellm model string)."""
    display_text: str | None = None
    """What the chat shows as the user's message when it differs from ``text`` (a slash command
    the client expanded); kept for resume, never sent to the model."""


@_register
@attrs.define
class CancelParams:
    """``agent/cancel``: stop the running turn of a session (whoever started it)."""

    session_id: str


@_register
@attrs.define
class CancelResult:
    cancelled: bool
    """True when a turn was running and has now ended; false when the session had none."""


@_register
@attrs.define
class SessionParams:
    """``agent/sessions/resume`` and ``agent/sessions/delete``."""

    session_id: str


@_register
@attrs.define
class NewSessionParams:
    """``agent/sessions/new``."""

    title: str | None = None


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


# requests: results ------------------------------------------------------------------------------

@_register
@attrs.define
class PromptResult:
    """Result of ``agent/prompt`` (sent when the turn ends; events streamed before it)."""

    session_id: str
    stop_reason: str
    """``end``, ``max_steps`` or ``error`` (see ``error``). A cancelled prompt gets the
    ``REQUEST_CANCELLED`` error response instead of a result."""
    text: str
    """The final assistant text."""
    usage: dict[str, int]
    """``inputTokens``, ``outputTokens``, ``cacheReadTokens``, ``cacheWriteTokens`` of the turn."""
    error: dict[str, str] | None = None
    """``{kind, message}`` when ``stopReason`` is ``error``."""


@_register
@attrs.define
class SessionInfo:
    id: str
    title: str | None
    created: float
    """Seconds since the epoch."""
    updated: float
    model: str | None
    message_count: int = 0


@_register
@attrs.define
class SessionsListResult:
    sessions: list[SessionInfo]
    """Most recently updated first."""


@_register
@attrs.define
class NewSessionResult:
    session_id: str


@_register
@attrs.define
class ResumeResult:
    session_id: str
    messages: list[dict[str, Any]]
    """The stored history in the LLM message format (``role``, ``content``, ``tool_calls``,
    ``tool_call_id``), oldest first. A user message sent with attachments (or a
    ``displayText``) also carries ``display``: ``{text, attachments}`` (see ``MessageDisplay``).
    A tool result (``role: tool``) carries ``run``: ``{server, displayName, durationMs, isError,
    denied}`` when the store recorded how the call ran."""
    changes: list[FileChangePayload] = attrs.field(factory=list)
    """The agent's file changes in the session, oldest first, with their outcome (no texts)."""


@_register
@attrs.define
class FileChangePayload:
    """An agent change to a file as the chat's file card shows it (a resumed session; the
    ``file_change`` event has the same fields but ``hasContent``)."""

    change_id: str
    call_id: str | None
    path: str
    """The absolute path."""
    shown: str
    """The path relative to its workspace folder."""
    added: int
    removed: int
    created: bool
    status: str
    """One of ``CHANGE_STATUSES``."""
    turn: int = 0
    uri: str | None = None
    reason: str | None = None
    has_content: bool = False
    """The texts before and after are kept (``agent/changeContent`` returns them)."""


@_register
@attrs.define
class ChangeOutcomeParams:
    """``agent/changeOutcome``: the user kept or reverted a change that was applied unreviewed
    (the editor made the revert itself); recorded for resume."""

    session_id: str
    change_id: str
    outcome: str
    """``kept`` or ``reverted``."""

    def __attrs_post_init__(self) -> None:
        if self.outcome not in CHANGE_OUTCOMES:
            raise ValueError(f"outcome must be kept or reverted, not {self.outcome!r}")


@_register
@attrs.define
class ChangeContentParams:
    """``agent/changeContent``: the texts of a recorded change (Review / Revert on a resumed card)."""

    session_id: str
    change_id: str


@_register
@attrs.define
class ChangeContentResult:
    change: FileChangePayload
    before: str | None
    """The file's text before the change (empty for a new file); null when it was not kept
    (too long)."""
    after: str | None


@_register
@attrs.define
class DisplayAttachment:
    """An attachment as the chat shows it (a chip): no content, just what it was."""

    kind: str
    uri: str | None = None
    server: str | None = None
    range: dict[str, Any] | None = None
    language_id: str | None = None


@_register
@attrs.define
class MessageDisplay:
    """How the chat shows a user message whose model-facing text differs from what the user
    typed: the typed text and the attachments as chips (``display`` in a resumed message)."""

    text: str
    attachments: list[DisplayAttachment] = attrs.field(factory=list)


@_register
@attrs.define
class DeleteResult:
    deleted: bool


@_register
@attrs.define
class ServerInfoResult:
    """``agent/serverInfo``: facts about the server process (for diagnostics and tests)."""

    name: str
    version: str
    pid: int
    python: str
    loaded_modules: dict[str, bool]
    """Whether the heavy dependencies are imported now: ``litellm``, ``mcp``."""
    loaded_at_initialize: dict[str, bool]
    """The same, recorded while ``initialize`` was answered (both false: it stays light)."""
    workspace_folders: list[str]


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
class AskResult:
    """Result of ``agent-ls.ask`` and ``agent-ls.runMcpPrompt``: a turn started in the background."""

    session_id: str
    started: bool
    text: str = ""
    """The user message the turn was started with."""


# server -> client ---------------------------------------------------------------------------------

@_register
@attrs.define
class EventParams:
    """``agent/event``: one streamed event of a running prompt."""

    session_id: str | None
    """The session; null for events outside any session (a tool action run from a code action)."""
    event: dict[str, Any]
    """``type`` plus the event's fields (see ``EVENT_TYPES`` and docs/protocol.md)."""


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


@_register
@attrs.define
class ApproveResult:
    answer: str
    """``allow_once``, ``allow_session`` or ``deny``; anything else is a deny."""


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


@_register
@attrs.define
class ReviewEditParams:
    """``agent/reviewEdit`` (server -> client): the agent wants to change a file. Sent for every
    change through the editor when the client has the ``reviewEdits`` capability; the client
    decides when to answer (at once with ``deferred``, or once the user decided)."""

    change_id: str
    uri: str
    path: str
    """The path relative to its workspace folder."""
    before: str
    """The current text (the open buffer's, unsaved changes included; empty for a new file)."""
    after: str
    """The text after the change."""
    added: int
    removed: int
    created: bool
    """The change creates the file."""
    session_id: str | None = None
    call_id: str | None = None
    """The tool call that makes the change (its card)."""
    turn: int = 0


@_register
@attrs.define
class ReviewEditResult:
    decision: str
    """``accept`` (apply it), ``reject`` (do not; the model is told, with ``reason``) or
    ``deferred`` (apply it now, the user reviews it afterwards: Keep or Revert); anything
    else is a reject."""
    reason: str | None = None


@_register
@attrs.define
class ToolOutputParams:
    """``agent/toolOutput``: the whole of a tool output that was longer than a page (the
    ``outputHandle`` of its ``tool_call_finished`` event)."""

    session_id: str
    handle: str


@_register
@attrs.define
class ToolOutputResult:
    handle: str
    tool: str
    """The tool that produced it (model-facing name)."""
    text: str
    """The output as kept (at most the session's output store size)."""
    total_chars: int
    """The tool's whole output; more than ``text`` only when it exceeded the store."""


# Raw JSON-RPC envelopes: custom messages whose params pygls must not convert ---------------

@attrs.define
class RawRequest:
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
