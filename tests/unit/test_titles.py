"""The title a model gives a session (agent_ls/agent/titles.py): what of its reply is kept."""

from __future__ import annotations

import pytest

from agent_ls.agent.config import TITLE_MAX_TOKENS, AgentSettings
from agent_ls.agent.titles import clean_title


@pytest.mark.parametrize(("reply", "title"), [
    ("Merge the settings scopes", "Merge the settings scopes"),
    ('Title: "Merge the settings scopes."', "Merge the settings scopes"),
    ("**Fix the flaky test**\n\nThis title says what the user asked.", "Fix the flaky test"),
    ("\n\n  “Rename calc”  \n", "Rename calc"),
    ("# Add a CLI flag", "Add a CLI flag"),
    ("", ""),
    ('""', ""),
])
def test_clean_title(reply: str, title: str) -> None:
    assert clean_title(reply) == title


def test_the_title_call_is_small_and_not_retried() -> None:
    assert AgentSettings(model="openai/main").title_llm() is None
    llm = AgentSettings(model="openai/main", api_base="http://127.0.0.1:1/v1", title_model="openai/small").title_llm()
    assert llm is not None
    assert (llm.model, llm.api_base, llm.max_tokens, llm.max_retries) == ("openai/small", "http://127.0.0.1:1/v1",
                                                                          TITLE_MAX_TOKENS, 0)
