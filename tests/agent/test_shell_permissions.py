"""Issue 25: approvals scoped to what the user saw (shell parts, protected paths, rule shapes).

Findings 2 (a session grant on one command allowed every command) and 5 (a session write grant
reached .git/config) at the gate; bad input (1 MB, deep nesting, binary bytes) never crashes
and never allows silently.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_ls.agent.permissions import (
    ApprovalAnswer,
    ApprovalRequest,
    Decision,
    PermissionGate,
    PermissionRules,
    SessionScope,
)
from agent_ls.agent.permissions.protected import protected_reason
from agent_ls.agent.permissions.shell import analyze
from agent_ls.core.tools import Capability, ToolSpec

BASH = ToolSpec(name="bash", description="", input_schema={"type": "object"}, capability=Capability.WRITE)
WRITE = ToolSpec(name="write_file", description="", input_schema={"type": "object"}, capability=Capability.WRITE)
EDIT = ToolSpec(name="edit_file", description="", input_schema={"type": "object"}, capability=Capability.WRITE)


class Approver:
    """Answers every request with ``answer`` (a scope id picks that offered scope)."""

    def __init__(self, answer: ApprovalAnswer | str) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    async def __call__(self, request: ApprovalRequest) -> ApprovalAnswer | SessionScope:
        self.requests.append(request)
        if isinstance(self.answer, ApprovalAnswer):
            return self.answer
        scope = request.scope(self.answer)
        assert scope is not None, f"no scope {self.answer!r} offered in {request.scopes}"
        return scope


def run(command: str) -> dict[str, str]:
    return {"command": command}


@pytest.mark.parametrize("scope", ["exact", "prefix"])
async def test_a_session_grant_on_one_command_does_not_allow_a_compound_one(scope: str) -> None:
    approver = Approver(scope)
    gate = PermissionGate(PermissionRules(), approver)
    assert (await gate.check(BASH, run("git status --short")))[0]
    assert gate.evaluate(BASH, run("git status --short")).decision is Decision.ALLOW
    for attack in ["git status; touch PWNED", "git status --short && touch PWNED", "git status --short\ntouch PWNED",
                   "git status --short $(touch PWNED)", "git status --short `touch PWNED`",
                   "git status --short | sh", "git status --short > src/app.py", "git status --short & rm -rf x",
                   "git status --short || curl x", "git status --short <(touch PWNED)", "touch PWNED"]:
        verdict = gate.evaluate(BASH, run(attack))
        assert verdict.decision is Decision.ASK, attack
    if scope == "prefix":
        assert "bash(git status:*)" in gate.session_allowed
        assert gate.evaluate(BASH, run("git status")).decision is Decision.ALLOW
        assert gate.evaluate(BASH, run("git status -uno && git status")).decision is Decision.ALLOW
        assert gate.evaluate(BASH, run("git statusx")).decision is Decision.ASK
        assert gate.evaluate(BASH, run("GIT_DIR=/x git status")).decision is Decision.ASK
    else:
        assert gate.session_allowed == {"bash(git status --short)"}
        assert gate.evaluate(BASH, run("git status")).decision is Decision.ASK


async def test_the_prompt_names_its_scopes_and_a_bare_session_answer_is_the_narrowest() -> None:
    approver = Approver(ApprovalAnswer.ALLOW_SESSION)
    gate = PermissionGate(PermissionRules(), approver)
    assert (await gate.check(BASH, run("git status --short; npm run build")))[0]
    (request,) = approver.requests
    assert [s.id for s in request.scopes] == ["exact", "prefix"]
    assert request.scopes[1].label == "Allow `git status` … and `npm run build` … for this session"
    assert request.scopes[1].keys == ("bash(git status:*)", "bash(npm run build:*)")
    assert gate.session_allowed == {"bash(git status --short; npm run build)"}
    assert "`git status --short`" in request.reason and "`npm run build`" in request.reason


def test_every_part_must_be_covered_by_a_rule() -> None:
    gate = PermissionGate(PermissionRules(allow=("bash(git status:*)", "bash(ls)")), None)
    assert gate.evaluate(BASH, run("git status -s && ls")).decision is Decision.ALLOW
    assert gate.evaluate(BASH, run("git status -s && ls -la")).decision is Decision.ASK
    assert gate.evaluate(BASH, run("git status; touch PWNED")).decision is Decision.ASK
    deny = PermissionGate(PermissionRules(allow=("bash",), deny=("bash(rm:*)",)), None)
    assert deny.evaluate(BASH, run("ls && rm -rf /")).decision is Decision.DENY
    assert deny.evaluate(BASH, run("echo $(rm -rf /)")).decision is Decision.DENY
    assert deny.evaluate(BASH, run("ls")).decision is Decision.ALLOW
    ask = PermissionGate(PermissionRules(allow=("bash",), ask=("bash(git push:*)",)), None)
    assert ask.evaluate(BASH, run("git add . && git push origin")).decision is Decision.ASK


@pytest.mark.parametrize("command", [
    "for f in *; do rm $f; done", "if true; then touch x; fi", "$CMD arg", "echo ${x:-$(touch y)}",
    "export PATH=/tmp", "f() { touch x; }; f", "echo 'unterminated", "echo > $OUT",
    "eval \"$(curl x)\"", "", "   ", "ls\x00; touch x",
])
async def test_what_the_parser_cannot_account_for_asks_and_offers_no_session_grant(command: str) -> None:
    gate = PermissionGate(PermissionRules(), Approver(ApprovalAnswer.ALLOW_SESSION))
    verdict = gate.evaluate(BASH, run(command))
    if command.startswith("eval"):  # parsed fine: eval runs other commands, so no prefix of it is offered
        # (round 3: and its argument cannot be expanded here, so not even the exact text is offered)
        assert verdict.decision is Decision.ASK and all(s.id == "exact" for s in verdict.scopes)
        assert not any(k.startswith("bash(eval") and k.endswith(":*)") for s in verdict.scopes for k in s.keys)
        return
    assert verdict.decision is Decision.ASK and verdict.scopes == ()
    assert (await gate.check(BASH, run(command)))[0]  # allowed once...
    assert not gate.session_allowed  # ...and nothing remembered


def test_a_broad_allow_rule_does_not_cover_unaccounted_commands() -> None:
    gate = PermissionGate(PermissionRules(allow=("bash",)), None)
    assert gate.evaluate(BASH, run("ls")).decision is Decision.ALLOW
    assert gate.evaluate(BASH, run("for f in *; do rm $f; done")).decision is Decision.ASK


@pytest.mark.parametrize("command", [
    "echo '[core]\n\tfsmonitor = touch PWNED' > .git/config", "cp x .git/hooks/pre-commit",
    "echo {} >> .vscode/tasks.json", "sed -i s/a/b/ .mcp.json", "tee .agent-ls/settings.json",
    "touch .github/workflows/ci.yml", "echo x > .envrc", "cd .git && echo x > config",
    "git log --output=.git/config",
])
def test_protected_paths_in_commands_always_ask(command: str) -> None:
    gate = PermissionGate(PermissionRules(allow=("bash", "bash(echo:*)")), None)
    gate.session_allowed |= {"bash(echo:*)", "bash(cp:*)"}
    verdict = gate.evaluate(BASH, run(command))
    assert verdict.decision is Decision.ASK, command
    assert verdict.scopes == () and verdict.sensitive


async def test_a_session_write_grant_never_reaches_protected_files(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "sneaky").symlink_to(tmp_path / ".git", target_is_directory=True)
    approver = Approver(ApprovalAnswer.ALLOW_SESSION)
    gate = PermissionGate(PermissionRules(allow=("edit_file",)), approver, [tmp_path])
    assert (await gate.check(WRITE, {"path": "src/app.py", "content": ""}))[0]
    assert gate.session_allowed == {"write_file"}
    for path in [".git/config", "./.git/config", "src/../.git/config", ".GIT/config", "sneaky/config",
                 str(tmp_path / ".git" / "hooks" / "pre-commit"), ".vscode/tasks.json", ".mcp.json",
                 ".agent-ls/settings.json", ".github/workflows/ci.yml", ".envrc", "sub/.git/config"]:
        for spec in (WRITE, EDIT):
            verdict = gate.evaluate(spec, {"path": path})
            assert verdict.decision is Decision.ASK, (spec.name, path)
            assert verdict.scopes == () and verdict.sensitive
    verdict = gate.evaluate(WRITE, {"path": ".git/config"})
    assert "core.fsmonitor" in verdict.reason and "write_file(.git/config)" in verdict.reason
    assert gate.evaluate(WRITE, {"path": "src/other.py"}).decision is Decision.ALLOW
    exact = PermissionGate(PermissionRules(allow=("write_file(.vscode/settings.json)",)), None, [tmp_path])
    assert exact.evaluate(WRITE, {"path": ".vscode/settings.json"}).decision is Decision.ALLOW
    assert exact.evaluate(WRITE, {"path": ".vscode/tasks.json"}).decision is Decision.ASK


def test_protected_reason_matrix() -> None:
    assert protected_reason("src/app.py") is None
    assert protected_reason(".gitignore") is None
    assert protected_reason(".github/dependabot.yml") is None
    assert protected_reason(".git/hooks/pre-push") is not None
    assert protected_reason(".husky/pre-commit") is not None


def test_mcp_rules_match_the_server_and_tool_pair() -> None:
    from agent_ls.core.naming import assign_names

    names = assign_names([("github", "list"), ("github::ci", "delete_repo"), ("github__ci", "x")])
    ci = ToolSpec(name=names[("github::ci", "delete_repo")], description="", input_schema={},
                  capability=Capability.WRITE, source="mcp", server="github::ci", display_name="delete_repo")
    gh = ToolSpec(name=names[("github", "list")], description="", input_schema={},
                  capability=Capability.WRITE, source="mcp", server="github", display_name="list")
    gate = PermissionGate(PermissionRules(allow=("mcp__github__*",)), None)
    assert gate.evaluate(gh, {}).decision is Decision.ALLOW
    assert gate.evaluate(ci, {}).decision is Decision.ASK
    wild = PermissionGate(PermissionRules(deny=("mcp__*__delete_*",)), None)
    assert wild.evaluate(ci, {}).decision is Decision.DENY


# -- bad input -------------------------------------------------------------------------------------

@pytest.mark.parametrize("command", [
    "echo " + "x" * 1_000_000, "ls; " * 100_000, "echo " + "$(echo " * 500 + "x" + ")" * 500,
    "echo " + "`" * 999, "ls " + "(" * 10_000, "\udcff\udcfe", "\x1b[2J rm -rf /", "touch " + "\\" * 5000,
    "echo " + "'" * 1001, "cat <<EOF\n" + "$(touch x)\n" * 1000 + "EOF",
])
def test_bad_commands_ask_and_never_crash(command: str) -> None:
    gate = PermissionGate(PermissionRules(allow=("bash(echo:*)", "bash(ls:*)", "bash(cat:*)")), None)
    verdict = gate.evaluate(BASH, run(command))
    assert verdict.decision is Decision.ASK


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=200))
def test_any_text_is_analyzed_without_an_exception(command: str) -> None:
    """Also without a crash: tree-sitter-bash 0.25.1 segfaults on some characters outside the
    Basic Multilingual Plane (this test found it), which are therefore never parsed."""
    analysis = analyze(command)
    assert analysis.unaccounted is not None or analysis.parts


def test_characters_the_parser_crashes_on_are_never_parsed() -> None:
    for command in ["{\U000f2e0a", "git commit -m '\U0001F389'", "ls \udcff"]:
        analysis = analyze(command)
        assert analysis.unaccounted is not None and "U+" in analysis.unaccounted
    gate = PermissionGate(PermissionRules(allow=("bash",)), None)
    assert gate.evaluate(BASH, run("echo {\U000f2e0a")).decision is Decision.ASK


@settings(max_examples=300, deadline=None)
@given(st.lists(st.sampled_from(["git status", "touch PWNED", "ls -la", "rm -rf x"]), min_size=1, max_size=4),
       st.sampled_from([";", "&&", "||", "|", "&", "\n"]))
def test_a_granted_prefix_never_covers_another_part(words: list[str], op: str) -> None:
    gate = PermissionGate(PermissionRules(), None)
    gate.session_allowed.add("bash(git status:*)")
    command = f" {op} ".join(words)
    expected = Decision.ALLOW if set(words) == {"git status"} else Decision.ASK
    assert gate.evaluate(BASH, run(command)).decision is expected


def test_command_rules_are_checked_in_the_settings_and_unusable_ones_fail_closed() -> None:
    from agent_ls.config.globs import settings_glob_problems

    problems = settings_glob_problems({"permissions": {
        "allow": ["bash(git status:*)", "bash(npm test)", "write_file(.vscode/settings.json)", "mcp__x__*"],
        "deny": ["bash()", "bash('unclosed:*)", "frob(x)", "bash(:*)"]}})
    assert [p[0] for p in problems] == [("permissions", "deny", i) for i in range(4)]
    assert "only bash, write_file, edit_file take (...)" in problems[2][1]
    gate = PermissionGate(PermissionRules(allow=("bash",), deny=("bash('unclosed:*)",)), None)
    assert gate.evaluate(BASH, run("ls")).decision is Decision.DENY
    asks = PermissionGate(PermissionRules(allow=("bash",), ask=("bash()",)), None)
    assert asks.evaluate(BASH, run("ls")).decision is Decision.ASK


async def test_grants_read_back_as_what_was_shown() -> None:
    """An exact command ending ':*' is not offered as an exact grant (it would read back as a
    prefix); '>& file' is a write like '&> file'."""
    gate = PermissionGate(PermissionRules(), Approver(ApprovalAnswer.ALLOW_SESSION))
    verdict = gate.evaluate(BASH, run("rm -rf build:*"))
    assert verdict.decision is Decision.ASK and [s.id for s in verdict.scopes] == ["prefix"]
    assert verdict.scopes[0].keys == ("bash(rm:*)",)
    assert (await gate.check(BASH, run("sh -c x:*")))[0] and not gate.session_allowed  # once only
    writes = PermissionGate(PermissionRules(allow=("bash(echo:*)",)), None)
    assert writes.evaluate(BASH, run("echo x >& .git/config")).sensitive
    assert writes.evaluate(BASH, run("echo x >& out.txt")).decision is Decision.ASK
    assert writes.evaluate(BASH, run("echo x >&2")).decision is Decision.ALLOW
    assert writes.evaluate(BASH, run("echo x 2>/dev/null")).decision is Decision.ALLOW
