"""The one session builder (agent_ls.runtime.sessions) every front end uses: what the settings file
says ends up in the session (model, permission rules, bash timeout, output pages, step limit,
instructions, MCP deferral), the MCP host's tools join the built-in ones, and the front end's
questions (approvals), editor and tool wrapper are the ones the session uses."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.config import agent_settings
from agent_ls.agent.editor.editor_files import OpenDocument
from agent_ls.agent.permissions import ApprovalAnswer, ApprovalRequest, PermissionRules, SessionScope
from agent_ls.agent.store import SessionStore
from agent_ls.agent.tools.output_store import READ_OUTPUT, ReadOutputTool
from agent_ls.config.settings import load_settings
from agent_ls.core.tools import Capability, Tool
from agent_ls.runtime.questions import NoQuestions
from agent_ls.runtime.sessions import FrontEnd, build_session
from tests.agent.test_editor_files import FakeEditor
from tests.agent.test_registry import BUILTINS, FakeMCPTool, Source
from tests.tooling import TRUST_ALL

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


class Host(Source):
    """The MCP host as the builder sees it: the registry's tool source and the skills' servers."""

    def server_names(self) -> list[str]:
        return ["s"]

    def connection(self, name: str) -> Any:
        return None


def settings_from(tmp_path: Path, user: dict[str, Any]) -> Any:
    ws = tmp_path / "ws"
    ws.mkdir(exist_ok=True)
    path = tmp_path / "user.json"
    path.write_text(json.dumps(user))
    return ws, agent_settings(load_settings([ws], user_settings=path, environ={}, trust=TRUST_ALL), environ={})


USER = {
    "model": "openai/from-settings",
    "permissions": {"allow": ["mcp__s__*"], "ask": ["read_file"], "deny": ["write_file"]},
    "agent": {"bashTimeout": 7, "maxSteps": 3, "instructions": "Answer in haiku.", "deferMcpTools": False,
              "outputPageChars": 5_000, "outputStoreChars": 50_000},
}


async def test_the_session_is_what_the_settings_say(tmp_path: Path) -> None:
    ws, agent = settings_from(tmp_path, USER)
    assert not agent.problems
    llm = agent.llm_config()
    assert llm is not None
    host = Host([FakeMCPTool("s", "search"), FakeMCPTool("s", "drop", cap=Capability.WRITE)])
    asked: list[ApprovalRequest] = []

    class Asking(NoQuestions):  # the front end's questions: only approve answers yes
        async def approve(self, request: ApprovalRequest) -> ApprovalAnswer | SessionScope:
            asked.append(request)
            return ApprovalAnswer.ALLOW_ONCE

    session = await build_session(agent, llm, roots=[ws], front=FrontEnd(questions=Asking()), manager=host)

    assert session.llm.model == "openai/from-settings"
    names = sorted(s.name for s in session.registry.visible_specs())
    assert names == sorted([*BUILTINS, "mcp__s__drop", "mcp__s__search"])  # not deferred: deferMcpTools false
    bash: Any = session.registry.get("bash")
    assert bash.timeout == 7
    reader = session.registry.get(READ_OUTPUT)
    assert isinstance(reader, ReadOutputTool) and session.outputs is reader.store
    assert (session.outputs.page_chars, session.outputs.max_chars) == (5_000, 50_000)
    assert session.max_steps == 3
    assert "# User instructions\nAnswer in haiku." in session.frozen.text
    assert f"- {ws}" in session.frozen.text

    gate: Any = session.gate
    assert gate.rules == PermissionRules(allow=("mcp__s__*",), ask=("read_file",), deny=("write_file",))
    drop: Any = session.registry.get("mcp__s__drop")
    assert gate.runs_without_asking(drop.spec)  # a write tool, allowed by the rule
    write_file: Any = session.registry.get("write_file")
    assert await gate.check(write_file.spec, {}) == (False, "This call was not run: denied by the rule "
                                                             "'write_file' in the permissions settings.")
    read_file: Any = session.registry.get("read_file")
    assert (await gate.check(read_file.spec, {"path": "a"}))[0]  # asked, and the approver allowed it
    assert [r.spec.name for r in asked] == ["read_file"]


async def test_the_front_end_s_editor_and_tool_wrapper_are_used(tmp_path: Path) -> None:
    ws, agent = settings_from(tmp_path, {"model": "openai/m"})
    editor = FakeEditor()
    editor.docs[ws / "open.txt"] = OpenDocument("unsaved buffer text\n", 4)
    wrapped: list[str] = []

    def wrap(tools: list[Tool], workspace: Any) -> list[Tool]:
        wrapped.extend(t.spec.name for t in tools)
        assert list(workspace.roots) == [ws]
        return [t for t in tools if t.spec.name != "bash"]

    llm = agent.llm_config()
    assert llm is not None
    session = await build_session(agent, llm, roots=[ws], front=FrontEnd(editor=editor, wrap_tools=wrap))
    assert sorted(wrapped) == BUILTINS
    assert session.registry.get("bash") is None and session.registry.get("read_file") is not None
    read_file: Any = session.registry.get("read_file")
    result = await read_file.call({"path": "open.txt"})
    assert "unsaved buffer text" in result.content  # read from the editor: the file is not on disk
    assert session.gate is not None and session.gate.approval_reason(session.registry.get("edit_file").spec) is None
    # no questions: nobody is asked, a call that needs approval is refused


async def test_a_stored_session_is_resumed_with_its_allowed_tools(tmp_path: Path) -> None:
    ws, agent = settings_from(tmp_path, {"model": "openai/m"})
    llm = agent.llm_config()
    assert llm is not None
    with SessionStore(tmp_path / "sessions.sqlite3") as store:
        first = await build_session(agent, llm, roots=[ws], front=FrontEnd(), store=store)
        store.append_message(first.session_id, {"role": "user", "content": "hello"})
        again = await build_session(agent, llm, roots=[ws], front=FrontEnd(), store=store,
                                    session_id=first.session_id, session_allowed={"bash(git status:*)"})
        assert again.session_id == first.session_id
        assert again.history == [{"role": "user", "content": "hello"}]
        gate: Any = again.gate
        assert gate.session_allowed == {"bash(git status:*)"}
        bash = again.registry.get("bash").spec
        assert await gate.check(bash, {"command": "git status -s"}) == (True, "allowed for this session")
        assert (await gate.check(bash, {"command": "git status; touch PWNED"}))[0] is False  # no questions: denied
