"""Agent test fixtures: the scripted OpenAI-compatible LLM on loopback, reached through litellm."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_ls.agent.builtin_tools import builtin_tools
from agent_ls.agent.events import Event
from agent_ls.agent.llm import LLMConfig
from agent_ls.agent.session import Session
from agent_ls.agent.tools.registry import ToolRegistry
from agent_ls.agent.workspace import Workspace
from tests.harness import llm_server as llm_server  # the session's scripted LLM (a fixture)
from tests.llm.scripted_server import ScriptedLLM

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")


@pytest.fixture
def llm(llm_server: ScriptedLLM) -> Iterator[ScriptedLLM]:
    llm_server.clear()
    llm_server.requests.clear()
    yield llm_server
    llm_server.clear()


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    root.mkdir()
    return root


def openai_config(llm: ScriptedLLM, **kw: Any) -> LLMConfig:
    return LLMConfig(model="openai/scripted", api_base=llm.openai_base, api_key="x", max_retries=0, **kw)


class Recorder:
    def __init__(self) -> None:
        self.events: list[Event] = []

    def __call__(self, event: Event) -> None:
        self.events.append(event)

    def types(self) -> list[str]:
        return [e.type for e in self.events]

    def of(self, kind: str) -> list[Any]:
        return [e for e in self.events if e.type == kind]


def make_session(llm: ScriptedLLM, root: Path, *, mcp: Any = None, gate: Any = None, store: Any = None,
                 session_id: str | None = None, config: LLMConfig | None = None, **kw: Any) -> Session:
    registry = ToolRegistry(builtin_tools(Workspace([root])), mcp, defer=kw.pop("defer", True))
    return Session(llm=config or openai_config(llm), registry=registry, gate=gate, roots=[root], store=store,
                   session_id=session_id, **kw)
