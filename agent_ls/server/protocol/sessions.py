"""Payloads of stored sessions and the agent's file changes: ``agent/sessions/*``,
``agent/changeOutcome``, ``agent/changeContent``, ``agent/toolOutput``, ``agent/reviewEdit``
(server -> client), ``agent/models``, ``agent/setModel`` and ``agent/serverInfo``.

Mirrored in ``editor-extension/src/protocol/sessions.ts``.
"""

from __future__ import annotations

from typing import Any

import attrs

from agent_ls.server.protocol.codec import _register
from agent_ls.server.protocol.methods import CHANGE_OUTCOMES


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
class NewSessionResult:
    session_id: str


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
    plan: list[PlanEntryPayload] = attrs.field(factory=list)
    """The session's plan (the model's ``update_plan`` checklist) as last updated; empty: none."""


@_register
@attrs.define
class PlanEntryPayload:
    """A step of the agent's plan (the ``plan`` event's ``entries`` and a resumed session's ``plan``)."""

    content: str
    status: str
    """``pending``, ``in_progress`` or ``completed``."""
    priority: str = "medium"
    """``high``, ``medium`` or ``low``."""


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
class ModelsParams:
    """``agent/models``: the models a session may use (without ``session_id``: a new session's)."""

    session_id: str | None = None


@_register
@attrs.define
class SetModelParams:
    """``agent/setModel``: the model for the session's next requests, kept with the session."""

    session_id: str
    model: str
    """One of ``agent/models``' ``models``."""


@_register
@attrs.define
class ModelsResult:
    """The model choice of a session (``agent/models``, ``agent/setModel``)."""

    models: list[str]
    """The settings' ``model`` (the default) first, then ``models``, each once; empty without a model."""
    current: str | None
    """The model the session's next request uses (its choice, else the default); null: none configured."""
    default: str | None
    """The settings' ``model``."""
    session_id: str | None = None


@_register
@attrs.define
class DeleteResult:
    deleted: bool


@_register
@attrs.define
class RenameParams:
    """``agent/sessions/rename``: the session and its new title (empty or null clears it)."""

    session_id: str
    title: str | None = None


@_register
@attrs.define
class RenameResult:
    """``agent/sessions/rename``: the title kept (one line, at most 120 characters; null: none)."""

    title: str | None


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
    model_library: str
    """Where the model requests go: ``host`` (the user's model host, which holds litellm),
    ``process`` (litellm imported in this process) or ``none`` (not loaded yet)."""
    model_host_pid: int | None
    """The model host's process id while ``model_library`` is ``host``."""


@_register
@attrs.define
class CheckpointsParams:
    """``agent/checkpoints``: the checkpoints of a session (without ``session_id``: of every
    session of the workspace)."""

    session_id: str | None = None


@_register
@attrs.define
class NotKeptPayload:
    """A file a checkpoint did not keep (too large, past the file limit, unreadable)."""

    path: str
    reason: str


@_register
@attrs.define
class CheckpointPayload:
    """The workspace before one prompt of a session, and what that prompt's turn changed."""

    id: str
    session_id: str
    prompt_index: int
    """0: the session's first user message."""
    prompt: str
    created: float
    finished: float | None
    """When the turn's changes were recorded (null: the turn has not finished)."""
    changed: list[str]
    """Absolute paths the turn created, changed or deleted."""
    not_kept: list[NotKeptPayload]


@_register
@attrs.define
class CheckpointsResult:
    checkpoints: list[CheckpointPayload]


@_register
@attrs.define
class RewindParams:
    """``agent/rewind``: back to before the prompt of ``checkpoint_id``: the files (``code``)
    and/or the conversation; ``preview``: only say what would happen to each file."""

    checkpoint_id: str
    code: bool = True
    conversation: bool = True
    overwrite: bool = False
    """Also restore files the user changed since the checkpoint (default: left alone, listed)."""
    preview: bool = False


@_register
@attrs.define
class RedoParams:
    """``agent/redo``: undo the session's latest rewind (until its next prompt); ``preview``: only
    say what would happen to each file and whether the conversation comes back."""

    session_id: str
    overwrite: bool = False
    """Also put back files changed since the rewind (default: left alone, listed)."""
    preview: bool = False


@_register
@attrs.define
class FileActionPayload:
    path: str
    action: str
    """``restore``, ``recreate``, ``delete``, ``conflict`` (changed by the user since: left alone
    unless ``overwrite``), ``keep`` (changed only by the user) or ``not-kept``."""
    protected: str | None = None
    """Why the path is a protected one (``.vscode/``, ``.mcp.json``, git hooks...): restored like
    any other file, shown with this reason before the user confirms; None when it is not."""


@_register
@attrs.define
class RewindResult:
    checkpoint: CheckpointPayload
    actions: list[FileActionPayload]
    """What happens (or happened) to each file."""
    done: bool
    """False for a preview."""
    changed: list[str] = attrs.field(factory=list)
    """Paths the rewind wrote or removed."""
    left_alone: list[str] = attrs.field(factory=list)
    conversation: bool = False
    """The conversation was taken back (or, for a redo, put back)."""
