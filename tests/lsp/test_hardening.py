"""Issue 25 over the real language server: what an approved command and a grep may do.

- item 6: ``printenv OPENAI_API_KEY`` in an approved ``bash`` call prints nothing, although the
  server was started with the key (``agentLs.server.env``); the user settings file can pass a
  named variable through, the workspace's cannot.
- item 8: a catastrophic regular expression given to ``grep`` (``(a+)+$`` on lines of a's)
  finishes the turn instead of holding a worker thread of the server at full CPU for ever.
"""

from __future__ import annotations

import json
from typing import Any

import pytest

from agent_ls.server.protocol import methods as P
from tests.adversarial import SECRET_ENV, USER_KEY
from tests.llm.scripted_server import text, tool_calls
from tests.lsp.conftest import Editor, Setup, close_editor, open_editor

pytestmark = pytest.mark.e2e


def _finished(events: list[dict[str, Any]], tool: str) -> list[dict[str, Any]]:
    return [e for e in events if e["type"] == "tool_call_finished" and e["name"] == tool]


async def test_an_approved_command_gets_no_provider_key(setup: Setup) -> None:
    setup.extra_env.update(SECRET_ENV)
    setup.extra_env["PASSED_TOKEN"] = "passed-token-value-77"
    setup.user_settings["agent"]["shellEnvPassthrough"] = ["PASSED_TOKEN"]
    setup.ws_settings = {"agent": {"shellEnvPassthrough": ["OPENAI_API_KEY", "SECRET_TOKEN"]}}
    ed = await open_editor(setup)
    try:
        setup.llm.script(tool_calls([("bash", {"command": "printenv OPENAI_API_KEY; printenv SECRET_TOKEN; "
                                                          "echo \"[$PASSED_TOKEN]\""})]), text("done"))
        result = await ed.request(P.PROMPT, {"text": "run the tests"})
        assert result["stopReason"] == "end"
        assert [a["tool"] for a in ed.approvals] == ["bash"]  # approved (allow once)
        [done] = _finished(ed.session_events(), "bash")
        assert USER_KEY not in done["content"] and SECRET_ENV["SECRET_TOKEN"] not in done["content"]
        assert "[passed-token-value-77]" in done["content"]
        sent = json.dumps(setup.llm.requests[-1].body["messages"])  # what the model saw of the output
        assert USER_KEY not in sent and "[passed-token-value-77]" in sent
    finally:
        await close_editor(ed)


async def test_a_catastrophic_grep_pattern_ends_the_turn(editor: Editor, setup: Setup) -> None:
    (setup.ws / "aaa.txt").write_text(("a" * 5000 + "!\n") * 20)
    setup.llm.script(tool_calls([("grep", {"pattern": "(a+)+$"})]), text("done"))
    result = await editor.request(P.PROMPT, {"text": "search"}, timeout=90)
    assert result["stopReason"] == "end"
    [done] = _finished(editor.session_events(), "grep")
    assert "No matches for '(a+)+$'" in done["content"] and not done["isError"]
