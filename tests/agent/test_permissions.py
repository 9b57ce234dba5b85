"""Permission rules (matrix) and the approval round trip inside a turn."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_ls.agent.permissions import (
    ApprovalAnswer,
    ApprovalRequest,
    Decision,
    PermissionGate,
    PermissionRules,
    decide,
    merge_rules,
)
from agent_ls.core.tools import Capability, ToolSpec
from tests.agent.conftest import Recorder, make_session
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


def spec(name: str, cap: Capability = Capability.UNKNOWN) -> ToolSpec:
    return ToolSpec(name=name, description="", input_schema={"type": "object"}, capability=cap)


@pytest.mark.parametrize(("rules", "name", "cap", "expected"), [
    (PermissionRules(), "read_file", Capability.READ, Decision.ALLOW),
    (PermissionRules(), "write_file", Capability.WRITE, Decision.ASK),
    (PermissionRules(), "mcp__web__fetch", Capability.NETWORK, Decision.ASK),
    (PermissionRules(), "mcp__x__frob", Capability.UNKNOWN, Decision.ASK),
    (PermissionRules(allow=("mcp__github__*",)), "mcp__github__create_issue", Capability.WRITE, Decision.ALLOW),
    (PermissionRules(allow=("mcp__github__*",), ask=("mcp__*__create_*",)), "mcp__github__create_issue",
     Capability.WRITE, Decision.ASK),
    (PermissionRules(allow=("mcp__github__*",), ask=("mcp__github__*",), deny=("mcp__*__delete_*",)),
     "mcp__github__delete_repo", Capability.WRITE, Decision.DENY),
    (PermissionRules(deny=("mcp__*__delete_*",)), "mcp__db__delete_row", Capability.READ, Decision.DENY),
    (PermissionRules(ask=("read_file",)), "read_file", Capability.READ, Decision.ASK),
    (PermissionRules(deny=("mcp__github__*",)), "mcp__gitlab__list", Capability.READ, Decision.ALLOW),
    (PermissionRules(allow=("bash",)), "bash", Capability.WRITE, Decision.ALLOW),
    (PermissionRules(allow=("Bash",)), "bash", Capability.WRITE, Decision.ASK),  # case-sensitive
    (PermissionRules(allow=("mcp__{github,gitlab}__*",)), "mcp__gitlab__list", Capability.WRITE, Decision.ALLOW),
    (PermissionRules(deny=("mcp__db__[!r]*",)), "mcp__db__read", Capability.READ, Decision.ALLOW),
    (PermissionRules(deny=("mcp__db__[!r]*",)), "mcp__db__write", Capability.READ, Decision.DENY),
    (PermissionRules(allow=("*",)), ".hidden", Capability.WRITE, Decision.ALLOW),
    (PermissionRules(allow=("{a,b}" * 12,)), "a" * 12, Capability.WRITE, Decision.ASK),  # unusable: no match
    # an unusable deny or ask rule applies to every tool until fixed (fail closed)
    (PermissionRules(deny=("{a,b}" * 12,)), "read_file", Capability.READ, Decision.DENY),
    (PermissionRules(ask=("{a,b}" * 12,)), "read_file", Capability.READ, Decision.ASK),
])
def test_rule_matrix(rules: PermissionRules, name: str, cap: Capability, expected: Decision) -> None:
    assert decide(rules, spec(name, cap))[0] is expected


def test_merge_combines_scopes() -> None:
    merged = merge_rules(PermissionRules(allow=("a",)), PermissionRules(deny=("a",)))
    assert decide(merged, spec("a"))[0] is Decision.DENY


async def test_gate_session_allowance_and_no_handler() -> None:
    asked: list[str] = []

    async def handler(req: ApprovalRequest) -> ApprovalAnswer:
        asked.append(req.spec.name)
        return ApprovalAnswer.ALLOW_SESSION

    gate = PermissionGate(PermissionRules(), handler)
    w = spec("write_file", Capability.WRITE)
    assert (await gate.check(w, {}))[0] is True
    assert (await gate.check(w, {}))[0] is True
    assert asked == ["write_file"]
    bare = PermissionGate(PermissionRules(), None)
    ok, msg = await bare.check(w, {})
    assert not ok and "no approver" in msg


@pytest.mark.parametrize("answer", [ApprovalAnswer.ALLOW_ONCE, ApprovalAnswer.DENY])
async def test_approval_round_trip_in_a_turn(llm: ScriptedLLM, ws: Path, answer: ApprovalAnswer) -> None:
    requests: list[ApprovalRequest] = []

    async def handler(req: ApprovalRequest) -> ApprovalAnswer:
        requests.append(req)
        return answer

    llm.script(tool_calls([("write_file", {"path": "out.txt", "content": "hi"})]), text("done"))
    s = make_session(llm, ws, gate=PermissionGate(PermissionRules(), handler))
    rec = Recorder()
    await s.prompt("write it", rec)
    assert [r.spec.name for r in requests] == ["write_file"]
    assert requests[0].arguments == {"path": "out.txt", "content": "hi"}
    assert rec.of("approval_requested")[0].name == "write_file"
    fin = rec.of("tool_call_finished")[0]
    if answer is ApprovalAnswer.DENY:
        assert fin.denied and fin.is_error and not (ws / "out.txt").exists()
        tool_msg = [m for m in llm.requests[-1].body["messages"] if m["role"] == "tool"][0]
        assert "denied" in tool_msg["content"]
    else:
        assert not fin.is_error and (ws / "out.txt").read_text() == "hi"


async def test_deny_rule_never_asks(llm: ScriptedLLM, ws: Path) -> None:
    async def handler(req: ApprovalRequest) -> ApprovalAnswer:
        raise AssertionError("must not ask")

    llm.script(tool_calls([("bash", {"command": "echo hi"})]), text("ok"))
    s = make_session(llm, ws, gate=PermissionGate(PermissionRules(deny=("bash",)), handler))
    rec = Recorder()
    await s.prompt("run", rec)
    fin = rec.of("tool_call_finished")[0]
    assert fin.denied and "rule 'bash'" in fin.content
