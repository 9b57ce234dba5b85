"""Issue 26 over LSP: a session against a model enforcing its window compacts instead of
failing, the usage events carry the context meter, ``/compact`` works, handles read back."""

from __future__ import annotations

import pytest

from tests.agent.test_context import agent_model, write_files
from tests.lsp.conftest import Setup, close_editor, open_editor

pytestmark = pytest.mark.e2e

WINDOW = 13_000
"""12,000 for the conversation's own tools, then the built-in ``agent`` tool's description and the
background job tools' (``shell_output``, ``shell_stop``, ``task_wait``, ``run_in_background``): ~1,000."""


async def test_session_under_a_small_window_compacts_and_slash_compact_works(setup: Setup) -> None:
    write_files(setup.ws, 5)
    setup.user_settings.setdefault("agent", {})["contextWindow"] = WINDOW
    # the window is sized for the tools' own descriptions without the OS sandbox's rules (which
    # `bash` describes to the model when the sandbox is on): the first compaction clears a result
    setup.user_settings["agent"]["sandbox"] = {"enabled": False}
    setup.llm.window = WINDOW
    setup.llm.script(*(agent_model() for _ in range(40)))
    editor = await open_editor(setup)
    try:
        sid = None
        for i in range(5):
            result = await editor.request("agent/prompt", {"text": f"read f{i}", "sessionId": sid})
            sid = result["sessionId"]
            assert result["stopReason"] == "end", (result.get("error"), i)
        assert not [r for r in setup.llm.requests if r.rejected]
        events = editor.session_events(sid)
        compactions = [e for e in events if e["type"] == "compaction"]
        assert compactions and compactions[0]["reason"] == "auto" and compactions[0]["cleared"] >= 1
        assert compactions[0]["contextWindow"] == WINDOW and "out-1" in compactions[0]["handles"]
        meter = [e for e in events if e["type"] == "usage"][-1]
        assert meter["contextWindow"] == WINDOW and 0 < meter["contextTokens"] <= WINDOW
        done = await editor.request("agent/prompt", {"text": "/compact", "sessionId": sid})
        assert done["stopReason"] == "compacted" and "Compacted the conversation" in done["text"]
        assert done["usage"]["contextWindow"] == WINDOW and done["usage"]["contextTokens"] < meter["contextTokens"]
        manual = [e for e in editor.session_events(sid) if e["type"] == "compaction"][-1]
        assert manual["reason"] == "manual" and manual["summarized"] > 0
        back = await editor.request("agent/prompt", {"text": "read back out-1", "sessionId": sid})
        assert back["stopReason"] == "end"
        last = setup.llm.requests[-1].body["messages"]
        assert last[-1]["role"] == "tool" and "1\tF0 " in last[-1]["content"]
    finally:
        await close_editor(editor)
