"""docs/protocol.md stays in step with agent_ls/server/protocol.py."""

from __future__ import annotations

import re
from pathlib import Path

import attrs

from agent_ls.server import protocol as P

DOC = (Path(__file__).resolve().parents[2] / "docs" / "protocol.md").read_text(encoding="utf-8")


def test_every_method_and_command_has_a_section() -> None:
    headings = set(re.findall(r"^### (\S+)$", DOC, flags=re.M))
    names = (set(P.CLIENT_REQUESTS) | set(P.CLIENT_NOTIFICATIONS) | set(P.SERVER_REQUESTS)
             | set(P.SERVER_NOTIFICATIONS) | set(P.COMMANDS))
    assert names - headings == set(), "methods without a section in docs/protocol.md"
    assert headings - names == set(), "sections for methods protocol.py does not define"


def test_every_event_type_and_error_code_is_documented() -> None:
    for kind in P.EVENT_TYPES:
        assert f"| `{kind}` |" in DOC, kind
    for code in (P.INVALID_PARAMS, P.REQUEST_FAILED, P.REQUEST_CANCELLED, P.INTERNAL_ERROR):
        assert f"| {code} |" in DOC, code


def test_every_payload_field_is_mentioned() -> None:
    payloads = [P.PromptParams, P.PromptResult, P.ApproveParams, P.TrustServerParams, P.ElicitParams,
                P.ServerStatusPayload, P.ToolResultPayload, P.ServerInfoResult, P.SessionInfo, P.AskResult,
                P.CancelParams, P.CancelResult, P.MessageDisplay, P.DisplayAttachment, P.TrustWorkspaceParams,
                P.TrustWorkspaceResult, P.SetWorkspaceTrustParams, P.EditorTrustParams, P.WorkspaceStatusPayload,
                P.WorkspaceSettingPayload, P.StatusResult, P.SampleParams, P.ReviewEditParams, P.ReviewEditResult,
                P.ChangeOutcomeParams, P.ChangeContentParams, P.ChangeContentResult, P.FileChangePayload,
                P.ToolOutputParams, P.ToolOutputResult]
    missing = [f"{cls.__name__}.{P.camel(a.name)}" for cls in payloads for a in attrs.fields(cls)
               if f"`{P.camel(a.name)}`" not in DOC and f"{P.camel(a.name)}" not in DOC]
    assert missing == []
