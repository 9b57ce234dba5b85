"""Issue 25 over `agent-ls chat` (a real process, the scripted LLM): the approval shows the
whole call (finding 3) and "for the session" covers only the scope the user picked (finding 2)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.agent.test_chat_cli import chat
from tests.llm.scripted_server import ScriptedLLM, text, tool_calls

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


def test_the_approval_text_is_never_cut(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    command = "ls src/" + "module_with_a_long_name/" * 13 + "\x1b[2K; touch HIDDEN"
    assert len(command) > 330
    llm.script(tool_calls([("bash", {"command": command})]), text("done"))
    proc = chat(llm, tmp_path, ws, "list", "it", stdin="d\n")
    assert proc.returncode == 0, proc.stderr
    block = proc.stderr[proc.stderr.index("[approve] bash"):]
    assert "\\u001B[2K; touch HIDDEN" in block  # all of it, the escape sequence written as an escape
    assert "\x1b" not in block
    assert not (ws / "HIDDEN").exists()


def test_a_session_answer_covers_only_that_command(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    llm.script(
        tool_calls([("bash", {"command": "git status --short"})]),
        tool_calls([("bash", {"command": "git status --short"})]),
        tool_calls([("bash", {"command": "git status; touch PWNED"})]),
        text("done"),
    )
    proc = chat(llm, tmp_path, ws, "status", stdin="s\nd\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("[approve] bash") == 2  # the same command again did not ask; the compound did
    assert "[e] Allow exactly this command for this session" in proc.stderr
    assert "[p] Allow `git status` … for this session" in proc.stderr
    assert not (ws / "PWNED").exists()


def test_a_prefix_answer_covers_that_prefix_only(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    llm.script(
        tool_calls([("bash", {"command": "git status --short"})]),
        tool_calls([("bash", {"command": "git status -uno"})]),
        tool_calls([("bash", {"command": "git status && touch PWNED"})]),
        text("done"),
    )
    proc = chat(llm, tmp_path, ws, "status", stdin="p\nd\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("[approve] bash") == 2
    assert "not allowed yet: `touch PWNED`" in proc.stderr
    assert not (ws / "PWNED").exists()


def test_a_protected_file_asks_even_after_a_session_write_grant(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    llm.script(
        tool_calls([("write_file", {"path": "app.py", "content": "x = 1\n"})]),
        tool_calls([("write_file", {"path": ".git/config", "content": "[core]\n\tfsmonitor = touch PWNED\n"})]),
        text("done"),
    )
    proc = chat(llm, tmp_path, ws, "edit", stdin="s\nd\n")
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr.count("[approve] write_file") == 2
    assert "protected: git runs commands named in .git/config" in proc.stderr
    assert not (ws / ".git" / "config").exists()


async def test_the_chat_asks_through_the_terminal_questions(llm: ScriptedLLM, ws: Path, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The chat's approvals are the front end's questions (issue 29 item 2): the one
    TerminalQuestions the host asks trust with also answers the permission gate."""
    from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest
    from agent_ls.cli import build_parser
    from agent_ls.cli.chat import cmd_chat
    from agent_ls.cli.questions import TerminalQuestions

    for name, value in {"AGENT_LS_CONFIG_DIR": str(tmp_path / "config"), "AGENT_LS_DATA_DIR": str(tmp_path / "data"),
                        "AGENT_LS_API_BASE": llm.openai_base, "OPENAI_API_KEY": "x"}.items():
        monkeypatch.setenv(name, value)
    asked: list[tuple[object, str]] = []

    async def approve(self: TerminalQuestions, request: ApprovalRequest) -> ApprovalAnswer:
        asked.append((self, request.spec.name))
        return ApprovalAnswer.ALLOW_ONCE

    monkeypatch.setattr(TerminalQuestions, "approve", approve)
    llm.script(tool_calls([("write_file", {"path": "out.txt", "content": "42"})]), text("done"))
    args = build_parser().parse_args(["chat", "-w", str(ws), "--model", "openai/scripted", "write", "it"])
    assert await cmd_chat(args) == 0
    assert [(type(q), name) for q, name in asked] == [(TerminalQuestions, "write_file")]
    assert (ws / "out.txt").read_text() == "42"


async def test_the_chat_reads_the_settings_once(llm: ScriptedLLM, ws: Path, tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """The chat reads the settings files to settle the folders' trust; the MCP host it starts
    then takes those settings instead of reading every scope again (~50 ms of its start-up)."""
    from agent_ls.cli import build_parser
    from agent_ls.cli.chat import cmd_chat
    from agent_ls.runtime.host import RuntimeHost

    for name, value in {"AGENT_LS_CONFIG_DIR": str(tmp_path / "config"), "AGENT_LS_DATA_DIR": str(tmp_path / "data"),
                        "AGENT_LS_API_BASE": llm.openai_base, "OPENAI_API_KEY": "x"}.items():
        monkeypatch.setenv(name, value)
    reads = 0
    read_settings = RuntimeHost.read_settings

    def counted(self: RuntimeHost) -> object:
        nonlocal reads
        reads += 1
        return read_settings(self)

    monkeypatch.setattr(RuntimeHost, "read_settings", counted)
    llm.script(text("hello"))
    args = build_parser().parse_args(["chat", "-w", str(ws), "--model", "openai/scripted", "hi"])
    assert await cmd_chat(args) == 0
    assert reads == 1
