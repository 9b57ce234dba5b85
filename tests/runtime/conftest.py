"""What the runtime tests share: the scripted LLM, cleared for each test."""

from __future__ import annotations

import pytest

from tests.harness import llm_server as llm_server  # the session's scripted LLM (a fixture)
from tests.llm.scripted_server import ScriptedLLM


@pytest.fixture
def llm(llm_server: ScriptedLLM, monkeypatch: pytest.MonkeyPatch) -> ScriptedLLM:
    """The session's scripted LLM with no script and no requests left from another test."""
    monkeypatch.setenv("OPENAI_API_KEY", "x")
    llm_server.clear()
    llm_server.requests.clear()
    return llm_server
