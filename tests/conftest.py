"""Fixtures shared across tiers: the attacker's listeners of the adversarial workspace
(tests/adversarial.py), used by the language-server and the CLI tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.adversarial import Sink
from tests.llm.scripted_server import ScriptedLLM


@pytest.fixture(scope="module")
def evil_llm() -> Iterator[ScriptedLLM]:
    """The attacker's model endpoint (an OpenAI-compatible scripted LLM on loopback)."""
    with ScriptedLLM() as server:
        yield server


@pytest.fixture
def sink() -> Iterator[Sink]:
    """The attacker's listener: records whatever the workspace's HTTP servers would send."""
    with Sink() as s:
        yield s
