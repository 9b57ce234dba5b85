"""The turn loop against the scripted LLM through litellm's real HTTP path when things fail: every
provider error, secrets in errors, a missing key, litellm imported lazily, crash safety of the
session store and resume."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_ls.agent.events import TurnStarted, to_dict
from agent_ls.agent.history import INTERRUPTED_RESULT
from agent_ls.agent.llm import LLMConfig
from agent_ls.agent.store import SessionStore
from agent_ls.core.tools import Capability
from tests.agent.conftest import Recorder, make_session
from tests.agent.helpers import Source, Timed, assert_history_consistent
from tests.llm.scripted_server import ScriptedLLM, error, text, tool_calls

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")
REPO = Path(__file__).resolve().parents[2]


# --- provider errors --------------------------------------------------------------------------


@pytest.mark.parametrize(("status", "kind", "words"), [
    (401, "auth", "rejected the API key"),
    (429, "rate_limit", "rate limiting"),
    (400, "context_window", "too long"),
    (500, "provider", "provider failed"),
    (503, "provider", "provider failed"),
])
async def test_openai_shaped_errors(llm: ScriptedLLM, ws: Path, status: int, kind: str, words: str) -> None:
    llm.script(error(status), error(status))  # a context-length error is retried once, after compacting
    s = make_session(llm, ws)
    rec = Recorder()
    result = await s.prompt("x", rec)
    assert result.stop_reason == "error" and result.error is not None
    assert result.error.kind == kind and words in result.error.message, result.error.message
    assert rec.types()[-2:] == ["error", "turn_finished"]
    assert s.history == [{"role": "user", "content": "x"}]  # nothing half-written


@pytest.mark.parametrize(("status", "kind"), [(401, "auth"), (429, "rate_limit"), (400, "context_window"),
                                              (500, "provider"), (529, "provider")])
async def test_anthropic_shaped_errors(llm: ScriptedLLM, ws: Path, status: int, kind: str) -> None:
    llm.script(error(status), error(status))
    cfg = LLMConfig(model="anthropic/claude-test", api_base=llm.url, api_key="x", max_retries=0)
    result = await make_session(llm, ws, config=cfg).prompt("x")
    assert llm.requests[-1].path.endswith("/v1/messages")
    assert result.error is not None and result.error.kind == kind, result.error


async def test_unreachable_provider_is_a_connection_error(llm: ScriptedLLM, ws: Path) -> None:
    import socket

    with socket.socket() as sock:  # a port that was free a moment ago: nothing listens there
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    cfg = LLMConfig(model="openai/scripted", api_base=f"http://127.0.0.1:{port}/v1", api_key="x", max_retries=0)
    result = await make_session(llm, ws, config=cfg).prompt("x")
    assert result.error is not None and result.error.kind == "connection"
    assert f"cannot reach the model provider for openai/scripted at http://127.0.0.1:{port}/v1" in result.error.message
    assert "refused" in result.error.message or "failed" in result.error.message


async def test_errors_never_show_the_api_key(llm: ScriptedLLM, ws: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key = "sk-test-SECRET-0123456789abcdef"
    env_secret = "ghp_EnvironmentSecret987654"
    monkeypatch.setenv("SOME_SERVICE_TOKEN", env_secret)
    body = {"error": {"message": f"Incorrect API key provided: {key}. Also {env_secret}.",
                      "type": "invalid_request_error", "param": None, "code": "invalid_api_key"}}
    llm.script(error(401, body))
    cfg = LLMConfig(model="openai/scripted", api_base=llm.openai_base, api_key=key, max_retries=0)
    rec = Recorder()
    result = await make_session(llm, ws, config=cfg).prompt("x", rec)
    assert result.error is not None and result.error.kind == "auth"
    assert llm.requests[-1].headers["authorization"] == f"Bearer {key}"  # it was sent...
    dumped = json.dumps([to_dict(e) for e in rec.events])
    assert key not in dumped and env_secret not in dumped and "***" in result.error.message  # ...never shown


async def test_missing_key_names_the_provider_variable(llm: ScriptedLLM, ws: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    result = await make_session(llm, ws, config=LLMConfig(model="openai/gpt-4o")).prompt("x")
    assert result.error is not None and result.error.kind == "missing_key"
    assert "OPENAI_API_KEY" in result.error.message and "apiBase" in result.error.message
    assert not llm.requests
    # a local server (api_base) needs no key check
    llm.script(text("local"))
    cfg = LLMConfig(model="openai/scripted", api_base=llm.openai_base)
    monkeypatch.setenv("OPENAI_API_KEY", "unused-but-required-by-the-sdk")
    assert (await make_session(llm, ws, config=cfg).prompt("x")).text == "local"


def test_litellm_is_imported_lazily_with_the_local_cost_map() -> None:
    code = """
import os, sys
os.environ.pop("LITELLM_LOCAL_MODEL_COST_MAP", None)
import agent_ls.agent.session, agent_ls.agent.tools.registry, agent_ls.agent.builtin_tools, agent_ls.agent.config
import agent_ls.agent.llm, agent_ls.agent.prompt, agent_ls.agent.store, agent_ls.agent.permissions
assert "litellm" not in sys.modules, "litellm imported eagerly"
from agent_ls.agent.llm import get_litellm
lit = get_litellm()
assert os.environ["LITELLM_LOCAL_MODEL_COST_MAP"] == "True"
assert lit.suppress_debug_info is True
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "ok"  # and nothing else on stdout (no banner)


# --- crash safety and resume ------------------------------------------------------------------


CHILD = """
import asyncio, sys
sys.path.insert(0, {repo!r})
from pathlib import Path
from agent_ls.agent.events import ToolCallStarted
from agent_ls.agent.store import SessionStore
from tests.agent.conftest import make_session
class L: openai_base = {base!r}
store = SessionStore(Path({db!r}))
s = make_session(L(), Path({ws!r}), store=store)
print(s.session_id, flush=True)
def sink(e):
    if isinstance(e, ToolCallStarted):
        print("tool started", flush=True)
asyncio.run(s.prompt("run the long job", sink))
"""


def test_a_crash_mid_tool_loses_no_completed_message_and_resume_repairs(llm: ScriptedLLM, ws: Path,
                                                                        tmp_path: Path) -> None:
    db = tmp_path / "s.sqlite3"
    llm.script(tool_calls([("glob", {"pattern": "*"})]),
               tool_calls([("bash", {"command": "echo $$ > shell.pid; sleep 120"}), ("glob", {"pattern": "*"})]))
    code = CHILD.format(repo=str(REPO), base=llm.openai_base, db=str(db), ws=str(ws))
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None
        sid = proc.stdout.readline().strip()
        assert proc.stdout.readline().strip() == "tool started"  # the glob of step 1
        assert proc.stdout.readline().strip() == "tool started"  # bash of step 2
        for _ in range(200):
            if (ws / "shell.pid").exists() and (ws / "shell.pid").read_text().strip():
                break
            time.sleep(0.02)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
        pid_file = ws / "shell.pid"
        if pid_file.exists() and pid_file.read_text().strip():
            try:
                os.killpg(int(pid_file.read_text()), signal.SIGKILL)  # the orphaned bash of the dead agent
            except ProcessLookupError:
                pass
    store = SessionStore(db)
    stored = store.load_messages(sid)
    # every completed message is there: user, step 1 call + result, step 2 call (its results never came)
    assert [m["role"] for m in stored] == ["user", "assistant", "tool", "assistant"]
    assert [c["function"]["name"] for c in stored[-1]["tool_calls"]] == ["bash", "glob"]
    # resuming closes the dangling calls (and persists that), so the next request is valid
    s = make_session(llm, ws, store=store, session_id=sid)
    assert [m["content"] for m in s.history[-2:]] == [INTERRUPTED_RESULT, INTERRUPTED_RESULT]
    assert_history_consistent(s.history)
    assert len(store.load_messages(sid)) == 6
    llm.clear()
    llm.script(text("recovered"))
    assert asyncio.run(s.prompt("what happened?")).text == "recovered"
    assert_history_consistent(llm.requests[-1].body["messages"])
    again = make_session(llm, ws, store=store, session_id=sid)  # a second resume adds nothing
    assert len(again.history) == len(store.load_messages(sid)) == 8
    store.close()


async def test_resume_keeps_tools_loaded_by_tool_search(llm: ScriptedLLM, ws: Path, tmp_path: Path) -> None:
    tools = [Timed("mcp__s__alpha", Capability.READ, [], 0), Timed("mcp__s__beta", Capability.READ, [], 0)]
    store = SessionStore(tmp_path / "s.sqlite3")
    llm.script(tool_calls([("tool_search", {"query": "select:mcp__s__beta"})]), text("loaded"))
    s = make_session(llm, ws, mcp=Source(tools), store=store)
    await s.prompt("load beta")
    assert "mcp__s__beta" in [t["function"]["name"] for t in llm.requests[-1].body["tools"]]
    before = json.dumps(llm.requests[-1].body["tools"])
    resumed = make_session(llm, ws, mcp=Source(tools), store=store, session_id=s.session_id)
    assert resumed.registry.loaded == {"mcp__s__beta"}
    rec = Recorder()
    llm.script(text("still here"))
    await resumed.prompt("again", rec)
    assert json.dumps(llm.requests[-1].body["tools"]) == before
    assert isinstance(rec.events[0], TurnStarted) and rec.events[0].turn == 2
    store.close()
