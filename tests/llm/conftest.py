"""The scripted LLM server for the tests of the server itself: one per test module, cleared
around each test."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.llm.scripted_server import ScriptedLLM


@pytest.fixture(scope="module")
def llm() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


@pytest.fixture(autouse=True)
def _clean(llm: ScriptedLLM) -> Iterator[None]:
    llm.clear()
    yield
    llm.clear()
