"""The LSP payloads built from a lower layer's types by cattrs (``payload_from`` of
agent_ls/server/protocol/codec.py) carry every field of those types, and the wire stays as
docs/protocol.md and editor-extension/src/protocol/ have it.

A field added to ``ServerStatus`` (agent_ls/mcp/status.py), to the store's ``SessionInfo``
(agent_ls/agent/store.py) or to a recorded file change (agent_ls/agent/editor/changes.py) and not to
its payload fails here, unless it is named in the exclusions below (with the reason).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import attrs

from agent_ls.agent import store as agent_store
from agent_ls.agent.editor.changes import ChangeStore
from agent_ls.agent.events import FileChange
from agent_ls.mcp.status import ServerStatus, ToolInfo
from agent_ls.server.handlers.sessions import change_payload
from agent_ls.server.protocol import sessions as protocol_sessions
from agent_ls.server.protocol.codec import dump, payload_from
from agent_ls.server.protocol.mcp import ServerStatusPayload, ToolInfoPayload
from agent_ls.server.status import status_payload

NOT_IN_PAYLOAD: dict[type, set[str]] = {
    ServerStatus: set(),
    ToolInfo: set(),
    agent_store.SessionInfo: set(),
    FileChange: {"type"},  # the event's tag (``file_change``); a resumed change is not an event
}
"""Fields a lower layer's type has and its payload does not, on purpose."""

PAYLOADS: list[tuple[type, type]] = [
    (ServerStatus, ServerStatusPayload),
    (ToolInfo, ToolInfoPayload),
    (agent_store.SessionInfo, protocol_sessions.SessionInfo),
    (FileChange, protocol_sessions.FileChangePayload),
]


def names(cls: type) -> set[str]:
    return {a.name for a in attrs.fields(cls)}


def test_every_field_of_the_lower_layer_is_in_its_payload() -> None:
    missing = {f"{lower.__name__}.{name}" for lower, payload in PAYLOADS
               for name in names(lower) - names(payload) - NOT_IN_PAYLOAD[lower]}
    assert missing == set(), "add the field to the payload (and docs/protocol.md, src/protocol/), or exclude it"
    stale = {f"{lower.__name__}.{name}" for lower, excluded in NOT_IN_PAYLOAD.items()
             for name in excluded - names(lower)}
    assert stale == set(), "an exclusion names a field that is gone"


def test_a_status_goes_on_the_wire_as_before() -> None:
    status = ServerStatus(
        name="s", state="connected", transport="http", scope="workspace", source="/w/.agent-ls/settings.json",
        tool_count=1, prompt_count=2, resource_count=3, error={"phase": "listing", "message": "m", "exitCode": 1},
        stderr_tail=("a", "b"), server_info="srv 1.0", protocol_version="2025-06-18", restarts=4,
        tools=(ToolInfo("mcp__s__t", "t", "read", "reads"),), pid=42,
        auth={"state": "signed-in", "expiresAt": 1700000000}, sandbox="sandboxed (bubblewrap); no network")
    [payload] = status_payload([status])
    assert isinstance(payload, ServerStatusPayload) and isinstance(payload.tools[0], ToolInfoPayload)
    assert dump(payload) == {
        "name": "s", "state": "connected", "transport": "http", "scope": "workspace",
        "source": "/w/.agent-ls/settings.json", "toolCount": 1, "promptCount": 2, "resourceCount": 3,
        "error": {"phase": "listing", "message": "m", "exitCode": 1}, "stderrTail": ["a", "b"],
        "serverInfo": "srv 1.0", "protocolVersion": "2025-06-18", "restarts": 4, "pid": 42,
        "tools": [{"name": "mcp__s__t", "original": "t", "capability": "read", "description": "reads"}],
        "auth": {"state": "signed-in", "expiresAt": 1700000000}, "sandbox": "sandboxed (bubblewrap); no network",
    }
    [bare] = status_payload([ServerStatus("f", "failed", "?", "user", "/u.json")])
    assert dump(bare) == {
        "name": "f", "state": "failed", "transport": "?", "scope": "user", "source": "/u.json", "toolCount": 0,
        "promptCount": 0, "resourceCount": 0, "error": None, "stderrTail": [], "serverInfo": None,
        "protocolVersion": None, "restarts": 0, "pid": None, "tools": [], "auth": None, "sandbox": None,
    }


def test_sessions_and_changes_go_on_the_wire_as_before(tmp_path: Path) -> None:
    store = agent_store.SessionStore(tmp_path / "s.sqlite3")
    info = store.create_session(title="t", model="m")
    assert dump(payload_from(info, protocol_sessions.SessionInfo)) == {
        "id": info.id, "title": "t", "created": info.created, "updated": info.updated, "model": "m",
        "messageCount": 0}

    changes = ChangeStore(store.path)
    changes.record(info.id, FileChange(change_id="c1", call_id="k1", path="/w/a.py", shown="a.py", added=2,
                                       removed=1, status="applied", turn=3, uri="file:///w/a.py"), "x\n", "y\n")
    [listed] = changes.list(info.id)
    wire: dict[str, Any] = {
        "changeId": "c1", "callId": "k1", "path": "/w/a.py", "shown": "a.py", "added": 2, "removed": 1,
        "created": False, "status": "applied", "turn": 3, "uri": "file:///w/a.py", "reason": None,
        "hasContent": True}
    assert dump(change_payload(listed)) == wire
    record = changes.set_status(info.id, "c1", "kept")
    assert record is not None
    assert dump(change_payload(record)) == {**wire, "status": "kept", "hasContent": False}
    # every field of a recorded change reaches its payload
    assert set(listed) - names(protocol_sessions.FileChangePayload) == set()
