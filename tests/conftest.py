"""Fixtures shared across tiers: the attacker's listeners of the adversarial workspace
(tests/adversarial.py), used by the language-server and the CLI tests."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.adversarial import Sink
from tests.leftovers import RUN_MARK, RUN_VARIABLES, leftovers, model_host_in
from tests.llm.scripted_server import ScriptedLLM


def _file(item: pytest.Item) -> str:
    return item.nodeid.split("::", 1)[0]


def file_budget(items: list[pytest.Item], default: float) -> dict[str, float]:
    """Each test file's time budget: the sum of its tests' timeouts (``@pytest.mark.timeout(N)``,
    else the ini's ``timeout``). Long tests declare long budgets (the conformance suites 900 s,
    vitest 450 s), so it ranks the files by what they may cost without a measurement."""
    budget: dict[str, float] = {}
    for item in items:
        marker = item.get_closest_marker("timeout")
        seconds = float(marker.args[0]) if marker is not None and marker.args else default
        budget[_file(item)] = budget.get(_file(item), 0.0) + seconds
    return budget


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The parallel run (``--dist loadfile``, scripts/test.sh) hands out whole files in the order
    of the collection: the files with the largest budget first (:func:`file_budget`), so a long
    file never starts last and leaves the other workers idle. (xdist's own order, by number of
    tests, put the three longest files, a single test each, at the very end: the two conformance
    suites and vitest.) Every worker sorts the same collection the same way."""
    if getattr(config.option, "dist", "no") != "loadfile":
        return
    try:
        default = float(config.getini("timeout") or 0)
    except ValueError:
        default = 0.0
    budget = file_budget(items, default)
    first: dict[str, int] = {}
    for index, item in enumerate(items):
        first.setdefault(_file(item), index)
    items.sort(key=lambda item: (-budget[_file(item)], first[_file(item)]))


@pytest.fixture(scope="session", autouse=True)
def model_hosts(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The model hosts the tests' chat and ACP processes start (agent_ls.agent.model_host) live
    in a folder of this run, and end with it (they would otherwise wait idle for minutes)."""
    folder = tmp_path_factory.mktemp("model-hosts")
    folder.chmod(0o700)
    saved = {k: os.environ.get(k) for k in RUN_VARIABLES}
    os.environ.update({"AGENT_LS_RUNTIME_DIR": str(folder), "AGENT_LS_MODEL_HOST_IDLE": "60",
                       RUN_MARK: uuid.uuid4().hex})
    yield folder
    for k, v in saved.items():
        if v is None:
            os.environ.pop(k, None)
        else:
            os.environ[k] = v
    from agent_ls.agent import model_host

    for sock in folder.glob("model-*.sock"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            os.kill(model_host._hello(sock), signal.SIGTERM)


@pytest.fixture(scope="session", autouse=True)
def no_agent_ls_process_left(model_hosts: Path) -> Iterator[None]:
    """The run leaves no agent-ls process behind: at the end of the session, none that a test of
    this process started still runs (tests/leftovers.py), but the model hosts in the run's folder,
    which ``model_hosts`` ends. A model host in the user's runtime folder (a front end started
    without the run's ``AGENT_LS_RUNTIME_DIR``) would otherwise idle there for 15 minutes."""
    since = time.time()
    yield
    if left := leftovers(since, keep=model_host_in(model_hosts)):
        pytest.fail("agent-ls processes the tests left running:\n" + "\n".join(left), pytrace=False)


@pytest.fixture(autouse=True)
def no_model_host_left_attached() -> Iterator[None]:
    """A test that runs a front end in this process (``cmd_chat``) attaches the process to a model
    host (module globals of :mod:`agent_ls.agent.llm` and :mod:`agent_ls.agent.model_host`):
    detached again after the test, or every later test of this worker would make its model calls
    in that host, with the host's environment instead of the one the test set (its secrets, its
    keys)."""
    from agent_ls.agent import model_host

    llm = sys.modules.get("agent_ls.agent.llm")
    before = (llm._host, llm._host_tried) if llm is not None else None
    shared = model_host.shared()
    yield
    model_host.share(shared)
    llm = sys.modules.get("agent_ls.agent.llm")
    if llm is None:
        return
    host, tried = before or (None, False)
    if llm._host is not None and llm._host is not host:
        with contextlib.suppress(Exception):
            llm._host.close()
    llm._host, llm._host_tried = host, tried


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
