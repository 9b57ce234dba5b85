"""docs/protocol.md stays in step with agent_ls/server/protocol/."""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from agent_ls.server.protocol.codec import camel
from agent_ls.server.protocol.commands import AskResult
from agent_ls.server.protocol.mcp import (
    AppCallToolParams,
    AppContextParams,
    AppResourceParams,
    AppResourcePayload,
    ServerStatusPayload,
    StatusResult,
    ToolResultPayload,
    WorkspaceStatusPayload,
)
from agent_ls.server.protocol.methods import (
    CLIENT_NOTIFICATIONS,
    CLIENT_REQUESTS,
    COMMANDS,
    EVENT_TYPES,
    INTERNAL_ERROR,
    INVALID_PARAMS,
    REQUEST_CANCELLED,
    REQUEST_FAILED,
    SERVER_NOTIFICATIONS,
    SERVER_REQUESTS,
)
from agent_ls.server.protocol.prompt import CancelParams, CancelResult, PromptParams, PromptResult
from agent_ls.server.protocol.questions import (
    ApproveParams,
    EditorTrustParams,
    ElicitParams,
    SampleParams,
    SetWorkspaceTrustParams,
    TrustServerParams,
    TrustWorkspaceParams,
    TrustWorkspaceResult,
    WorkspaceSettingPayload,
)
from agent_ls.server.protocol.sessions import (
    ChangeContentParams,
    ChangeContentResult,
    ChangeOutcomeParams,
    DisplayAttachment,
    FileChangePayload,
    MessageDisplay,
    ReviewEditParams,
    ReviewEditResult,
    ServerInfoResult,
    SessionInfo,
    ToolOutputParams,
    ToolOutputResult,
)

DOC = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")


def test_every_method_and_command_has_a_section() -> None:
    headings = set(re.findall(r"^### (\S+)$", DOC, flags=re.M))
    names = (set(CLIENT_REQUESTS) | set(CLIENT_NOTIFICATIONS) | set(SERVER_REQUESTS)
             | set(SERVER_NOTIFICATIONS) | set(COMMANDS))
    assert names - headings == set(), "methods without a section in docs/protocol.md"
    assert headings - names == set(), "sections for methods protocol.py does not define"


def test_every_event_type_and_error_code_is_documented() -> None:
    for kind in EVENT_TYPES:
        assert f"| `{kind}` |" in DOC, kind
    for code in (INVALID_PARAMS, REQUEST_FAILED, REQUEST_CANCELLED, INTERNAL_ERROR):
        assert f"| {code} |" in DOC, code


def test_every_payload_field_is_mentioned() -> None:
    payloads = [PromptParams, PromptResult, ApproveParams, TrustServerParams, ElicitParams,
                ServerStatusPayload, ToolResultPayload, ServerInfoResult, SessionInfo, AskResult,
                CancelParams, CancelResult, MessageDisplay, DisplayAttachment, TrustWorkspaceParams,
                TrustWorkspaceResult, SetWorkspaceTrustParams, EditorTrustParams, WorkspaceStatusPayload,
                WorkspaceSettingPayload, StatusResult, SampleParams, ReviewEditParams, ReviewEditResult,
                ChangeOutcomeParams, ChangeContentParams, ChangeContentResult, FileChangePayload,
                ToolOutputParams, ToolOutputResult, AppCallToolParams, AppContextParams,
                AppResourceParams, AppResourcePayload]
    missing = [f"{cls.__name__}.{camel(a.name)}" for cls in payloads for a in attrs.fields(cls)
               if f"`{camel(a.name)}`" not in DOC and f"{camel(a.name)}" not in DOC]
    assert missing == []
