"""What the language-server tests (tests/lsp) and the ACP tests (tests/acp) share: the scripted LLM
for the session, the folders and environment of one agent-ls process, and polling.

- :func:`llm_server`: a session fixture (each conftest imports it): one :class:`ScriptedLLM`.
- :class:`ProcessSetup`: the workspace, user settings, data folder and environment of one
  ``agent-ls`` process (the LSP ``Setup`` and the ACP ``AcpSetup`` extend it);
  :func:`fresh_setup` is the body of their ``setup`` fixtures.
- :func:`wait_for`: poll a condition on the running event loop.
- :func:`happens_before_end`: wait for an event a running request must cause.
"""

from __future__ import annotations

import asyncio
import json
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from tests.llm.scripted_server import ScriptedLLM
from tests.tooling import REPO_ROOT


@pytest.fixture(scope="session")
def llm_server() -> Iterator[ScriptedLLM]:
    with ScriptedLLM() as server:
        yield server


class ProcessSetup:
    """Workspace, user settings and environment for one agent-ls process (the real process reads
    its user settings from ``config``, keeps its state in ``data``, and uses the scripted LLM)."""

    def __init__(self, root: Path, llm: ScriptedLLM) -> None:
        self.root = root
        self.ws = root / "ws"
        self.ws.mkdir()
        self.config = root / "config"
        self.config.mkdir()
        self.data = root / "data"
        self.llm = llm
        self.user_settings: dict[str, Any] = {
            "model": "openai/scripted", "apiBase": llm.openai_base,
            "agent": {"maxRetries": 0, "deferMcpTools": False},
        }
        self.ws_settings: dict[str, Any] | None = None

    @property
    def user_file(self) -> Path:
        return self.config / "settings.json"

    @property
    def ws_file(self) -> Path:
        return self.ws / ".agent-ls" / "settings.json"

    @property
    def state_file(self) -> Path:
        return self.data / "host-state.json"

    def write(self) -> None:
        self.user_file.write_text(json.dumps(self.user_settings, indent=2))
        if self.ws_settings is not None:
            self.ws_file.parent.mkdir(exist_ok=True)
            self.ws_file.write_text(json.dumps(self.ws_settings, indent=2))

    def env(self) -> dict[str, str]:
        e = dict(os.environ)
        e.update({"AGENT_LS_CONFIG_DIR": str(self.config), "AGENT_LS_DATA_DIR": str(self.data),
                  "OPENAI_API_KEY": "x", "PYTHONPATH": str(REPO_ROOT)})
        for k in ("AGENT_LS_MODEL", "AGENT_LS_API_BASE", "AGENT_LS_USER_SETTINGS"):
            e.pop(k, None)
        return e


S = TypeVar("S", bound=ProcessSetup)


def fresh_setup(cls: type[S], tmp_path: Path, llm_server: ScriptedLLM) -> Iterator[S]:
    """A written setup on a scripted LLM with an empty script and an epoch of its own (a request
    from an earlier test's process cannot take this test's turns), emptied again afterwards."""
    llm_server.new_epoch()
    s = cls(tmp_path, llm_server)
    s.write()
    yield s
    llm_server.clear()


async def wait_for(pred: Callable[[], Any], timeout: float = 30.0, what: str = "condition") -> None:
    loop = asyncio.get_running_loop()
    end = loop.time() + timeout
    while not pred():
        if loop.time() > end:
            raise AssertionError(f"{what} not met within {timeout}s")
        await asyncio.sleep(0.02)


async def happens_before_end(event: asyncio.Event, request: asyncio.Future[Any], what: str) -> None:
    """Wait until ``event`` is set while ``request`` (a request in flight) runs; the request
    ending first fails the test with its outcome. No deadline of its own: how long a loaded
    machine takes is not what the test checks (pytest-timeout bounds the test)."""
    waiter = asyncio.ensure_future(event.wait())
    try:
        await asyncio.wait({waiter, request}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        waiter.cancel()
    if not event.is_set():
        outcome = "cancelled" if request.cancelled() else (request.exception() or request.result())
        raise AssertionError(f"{what} never happened: the request ended first ({outcome!r})")
