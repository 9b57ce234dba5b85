"""The model host (issue 46): `agent-ls chat` and `agent-ls acp` make their model requests in one
warm process per user and environment instead of importing litellm themselves; the interactive
chat takes its prompt while the model library loads. Real processes, the scripted LLM on loopback."""

from __future__ import annotations

import contextlib
import fcntl
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from agent_ls.agent import model_host
from agent_ls.agent.token_count import CountFirst
from tests.llm.scripted_server import ScriptedLLM, Turn, Usage, respond, text, tool_calls

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

IMPORTED_LITELLM = re.compile(r"^import time:.*\|\s*litellm$", re.MULTILINE)
"""``-X importtime``'s line for the ``litellm`` package itself."""


@pytest.fixture
def runtime() -> Iterator[Path]:
    """A runtime folder of this test; its hosts are ended after it. A short path, as a real
    runtime folder is: a Unix socket's path has at most 107 bytes (pytest's folders under xdist
    are longer)."""
    base = Path(tempfile.mkdtemp(prefix="als-"))
    folder = base / "run"
    yield folder
    for sock in folder.glob("model-*.sock"):
        with contextlib.suppress(OSError, ValueError, KeyError):
            os.kill(model_host._hello(sock), signal.SIGTERM)
    shutil.rmtree(base, ignore_errors=True)


def environment(llm: ScriptedLLM, tmp: Path, runtime: Path, **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    for k in ("AGENT_LS_MODEL", "AGENT_LS_MODEL_HOST", "AGENT_LS_USER_SETTINGS"):
        env.pop(k, None)
    env.update({"AGENT_LS_CONFIG_DIR": str(tmp / "config"), "AGENT_LS_DATA_DIR": str(tmp / "data"),
                "AGENT_LS_API_BASE": llm.openai_base, "OPENAI_API_KEY": "x",
                "AGENT_LS_RUNTIME_DIR": str(runtime), "AGENT_LS_MODEL_HOST_IDLE": "30", **extra})
    return env


def chat(env: dict[str, str], ws: Path, *args: str, level: str = "DEBUG") -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "agent_ls.cli", "--log-level", level, "chat",
                           "-w", str(ws), "--model", "openai/scripted", *args], env=env, capture_output=True,
                          text=True, timeout=120, stdin=subprocess.DEVNULL)


def attached_pid(stderr: str) -> int:
    found = re.search(r"model host: attached \(pid (\d+)\)", stderr)
    assert found is not None, stderr[-3000:]
    return int(found.group(1))


def test_chat_requests_go_through_one_warm_model_host(llm: ScriptedLLM, ws: Path, tmp_path: Path,
                                                      runtime: Path) -> None:
    env = environment(llm, tmp_path, runtime)
    llm.script(text("first answer"), text("second answer"))
    first = chat(env, ws, "hello")
    second = chat(env, ws, "hello again")
    assert first.returncode == 0 and second.returncode == 0, first.stderr[-2000:] + second.stderr[-2000:]
    assert first.stdout.strip() == "first answer" and second.stdout.strip() == "second answer"
    # both reached the model through the same host, and neither chat imported litellm itself
    assert attached_pid(first.stderr) == attached_pid(second.stderr)
    assert not IMPORTED_LITELLM.search(first.stderr) and not IMPORTED_LITELLM.search(second.stderr)
    # ... which made the request with litellm (its OpenAI client), the conversation's bytes intact
    request = llm.requests[-1]
    assert request.headers.get("user-agent", "").startswith("AsyncOpenAI/Python"), request.headers
    assert request.body["messages"][-1]["content"] == "hello again"
    assert [p.suffix for p in runtime.iterdir() if p.name.startswith("model-")].count(".sock") == 1
    assert runtime.stat().st_mode & 0o777 == 0o700


def test_model_host_off_keeps_litellm_in_process(llm: ScriptedLLM, ws: Path, tmp_path: Path, runtime: Path) -> None:
    env = environment(llm, tmp_path, runtime, AGENT_LS_MODEL_HOST="0")
    llm.script(text("in process"))
    proc = chat(env, ws, "hello")  # at DEBUG: litellm's own records too, never on stdout (the answer)
    assert proc.returncode == 0 and proc.stdout.strip() == "in process", proc.stdout[-2000:]
    assert "LiteLLM" in proc.stderr  # its records reach the user's log, on stderr
    assert IMPORTED_LITELLM.search(proc.stderr) and "model host" not in proc.stderr
    assert not list(runtime.glob("model-*.sock")) if runtime.exists() else True


def read_until(stream: IO[str], needle: str, timeout: float = 60.0) -> str:
    """What ``stream`` gave up to and including ``needle`` (a line-less prompt too: char by char)."""
    seen = ""
    deadline = time.monotonic() + timeout
    while needle not in seen:
        assert time.monotonic() < deadline, f"no {needle!r} in {seen[-2000:]!r}"
        ch = stream.read(1)
        assert ch, f"the stream ended before {needle!r}: {seen[-2000:]!r}"
        seen += ch
    return seen


def test_interactive_chat_takes_the_prompt_while_the_model_library_loads(
        llm: ScriptedLLM, ws: Path, tmp_path: Path, runtime: Path) -> None:
    env = environment(llm, tmp_path, runtime)
    model_host.private_dir(runtime)
    path = runtime / f"model-{model_host.host_key(env)}.sock"
    held = open(path.with_suffix(".lock"), "a")  # noqa: SIM115 (released mid-test)
    fcntl.flock(held, fcntl.LOCK_EX)  # no host can start: the model library cannot load yet
    llm.script(text("answered once the library came"))
    proc = subprocess.Popen([sys.executable, "-m", "agent_ls.cli", "chat", "-w", str(ws), "--model", "openai/scripted"],
                            env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    host: subprocess.Popen[Any] | None = None
    try:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        shown = read_until(proc.stderr, "> ")  # the prompt, at once
        assert "[session" not in shown
        proc.stdin.write("what is up\n")
        proc.stdin.flush()
        read_until(proc.stderr, "[starting the model library (first prompt only)…]")  # taken, and said why it waits
        assert not llm.requests
        held.close()  # now a host may start: this test starts it, the chat attaches to it
        host = subprocess.Popen([sys.executable, "-m", "agent_ls.agent.model_host_server", str(path)], env=env,
                                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        assert read_until(proc.stdout, "answered once the library came")
        proc.stdin.write("/exit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
        assert llm.requests[-1].body["messages"][-1]["content"] == "what is up"
    finally:
        held.close()
        if proc.poll() is None:
            proc.kill()
        proc.wait()
        if host is not None:
            host.terminate()
            host.wait(timeout=30)


def test_one_shot_into_a_pipe_says_nothing_while_it_waits_and_the_host_ends_when_idle(
        llm: ScriptedLLM, ws: Path, tmp_path: Path, runtime: Path) -> None:
    env = environment(llm, tmp_path, runtime, AGENT_LS_MODEL_HOST_IDLE="1")
    llm.script(text("quiet"))
    proc = chat(env, ws, "hello")
    assert proc.returncode == 0 and proc.stdout.strip() == "quiet"
    assert "starting the model library" not in proc.stderr
    pid = attached_pid(proc.stderr)
    deadline = time.monotonic() + 60
    while any(runtime.glob("model-*.sock")) or Path(f"/proc/{pid}").exists() and "Z" not in _state(pid):
        assert time.monotonic() < deadline, "the idle model host is still there"
        time.sleep(0.1)


def _state(pid: int) -> str:
    with contextlib.suppress(OSError):
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    return "gone"


def test_a_host_serves_only_its_environment() -> None:
    base = {"PATH": "/usr/bin", "OPENAI_API_KEY": "k1", "PWD": "/a", "AGENT_LS_CONFIG_DIR": "/c1"}
    same = model_host.host_key(base)
    # another shell of the same user: another folder, agent-ls' own settings
    assert model_host.host_key({**base, "PWD": "/b", "OLDPWD": "/a", "AGENT_LS_CONFIG_DIR": "/c2"}) == same
    # another key, proxy or CA bundle: another host
    assert model_host.host_key({**base, "OPENAI_API_KEY": "k2"}) != same
    assert model_host.host_key({**base, "HTTPS_PROXY": "http://proxy:3128"}) != same
    assert model_host.host_key({**base, "SSL_CERT_FILE": "/etc/ca.pem"}) != same


def test_editor_windows_and_terminals_of_one_user_share_a_host() -> None:
    """What differs between VS Code windows, the extension host and a terminal's shell, and what
    litellm never reads, is left out of the key; what a provider, proxy, CA bundle or credential
    can come from is not."""
    base = {"PATH": "/usr/bin", "HOME": "/home/u", "OPENAI_API_KEY": "k1", "LANG": "C.UTF-8"}
    window = {**base, "VSCODE_PID": "101", "VSCODE_IPC_HOOK": "/run/user/1/vscode-1.sock", "VSCODE_NLS_CONFIG": "{}",
              "VSCODE_CWD": "/home/u", "ELECTRON_RUN_AS_NODE": "1", "CHROME_DESKTOP": "code.desktop",
              "GIO_LAUNCHED_DESKTOP_FILE_PID": "99", "ORIGINAL_XDG_CURRENT_DESKTOP": "GNOME"}
    other_window = {**window, "VSCODE_PID": "202", "VSCODE_IPC_HOOK": "/run/user/1/vscode-2.sock"}
    terminal = {**base, "TERM": "xterm-256color", "COLORTERM": "truecolor", "TERM_PROGRAM": "vscode",
                "TERM_PROGRAM_VERSION": "1.99", "VSCODE_GIT_IPC_HANDLE": "/run/user/1/git.sock", "SHLVL": "2",
                "PWD": "/home/u/src", "TMUX": "/tmp/tmux-1/default,1,0", "TMUX_PANE": "%3", "GPG_TTY": "/dev/pts/3",
                "SSH_CONNECTION": "10.0.0.1 5 10.0.0.2 22", "LS_COLORS": "di=01;34", "VIRTUAL_ENV": "/home/u/src/.venv"}
    keys = {model_host.host_key(env) for env in (base, window, other_window, terminal)}
    assert len(keys) == 1
    # what litellm, its HTTP clients or a provider's SDK read: another host
    for name, value in [("OPENAI_API_KEY", "k2"), ("HTTPS_PROXY", "http://proxy:3128"), ("NO_PROXY", "internal"),
                        ("REQUESTS_CA_BUNDLE", "/etc/ca.pem"), ("AWS_PROFILE", "work"), ("HOME", "/home/other"),
                        ("LITELLM_LOG", "DEBUG"), ("PATH", "/opt/bin:/usr/bin"), ("XDG_CONFIG_HOME", "/x")]:
        assert model_host.host_key({**terminal, name: value}) not in keys, name


def test_the_runtime_folder_must_be_private(tmp_path: Path) -> None:
    folder = tmp_path / "run"
    assert model_host.private_dir(folder) == folder and folder.stat().st_mode & 0o777 == 0o700
    folder.chmod(0o755)
    with pytest.raises(PermissionError):
        model_host.private_dir(folder)


def test_a_host_that_went_away_is_started_again(llm: ScriptedLLM, ws: Path, tmp_path: Path, runtime: Path) -> None:
    env = environment(llm, tmp_path, runtime)
    llm.script(text("one"), text("two"))
    proc = subprocess.Popen([sys.executable, "-m", "agent_ls.cli", "--log-level", "DEBUG", "chat", "-w", str(ws),
                             "--model", "openai/scripted"], env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        proc.stdin.write("first\n")
        proc.stdin.flush()
        first = attached_pid(read_until(proc.stderr, "model host: attached (pid", 120) + proc.stderr.readline())
        threading.Thread(target=proc.stderr.read, daemon=True).start()  # the rest of the log: never blocks the chat
        read_until(proc.stdout, "one")
        os.kill(first, signal.SIGKILL)  # the host is gone between two prompts
        proc.stdin.write("second\n")
        proc.stdin.flush()
        read_until(proc.stdout, "two", 120)
        proc.stdin.write("/exit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=60) == 0
        assert llm.requests[-1].body["messages"][-1]["content"] == "second"
        assert [model_host._hello(s) for s in runtime.glob("model-*.sock")] not in ([], [first])
    finally:
        if proc.poll() is None:
            proc.kill()
        proc.wait()


def test_a_runtime_folder_too_long_for_a_socket_is_said(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A Unix socket's path has at most 107 bytes: a longer runtime folder is a clear reason to
    load the model library in the process, not a host that cannot bind."""
    monkeypatch.setenv("AGENT_LS_RUNTIME_DIR", str(tmp_path / ("x" * 110)))
    with pytest.raises(model_host.HostUnavailable, match="too long for a Unix socket"):
        model_host.attach({"PATH": "/usr/bin"}, timeout=1)


async def test_an_error_from_the_host_is_masked_again_with_this_processs_environment(
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The host masks secrets with its own environment. A value this process holds that the host
    did not (an environment changed after the host started) is masked here too, before the error
    reaches a log, the chat or a tool result."""
    from agent_ls.agent import llm

    class Host:
        pid = 1

        async def request(self, request: dict[str, object]) -> AsyncIterator[dict[str, object]]:
            yield {"error": {"kind": "auth", "message": "401: key sk-live-from-here-123 and token tok-abcdef-42"}}

    monkeypatch.setattr(llm, "_host", Host())
    monkeypatch.setenv("SOME_SERVICE_TOKEN", "tok-abcdef-42")
    config = llm.LLMConfig(model="openai/x", api_key="sk-live-from-here-123")
    with pytest.raises(llm.LLMError) as err:
        async for _ in llm._host_stream(config, [], []):
            pass
    assert "sk-live" not in str(err.value) and "tok-abcdef" not in str(err.value)
    assert "***" in str(err.value)


def test_a_tool_step_is_one_round_trip_to_the_host(llm: ScriptedLLM, ws: Path, tmp_path: Path, runtime: Path) -> None:
    """Each tool step of a turn asks the host once: its model request carries the count of what the
    step added (the assistant's message and the tool's result), answered in the request's first
    frame. The prompt makes no count of its own either (its bytes show it fits the window; a
    message that can never fit is still refused, counted first). Read from the host's own log of
    the requests it served."""
    env = environment(llm, tmp_path, runtime, AGENT_LS_MODEL_HOST_LOG="DEBUG")
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "settings.json").write_text('{"permissions": {"allow": ["bash", "read_file"]}}')
    steps = 6
    for i in range(steps):
        llm.script(tool_calls([("bash", {"command": f"echo step {i}"})]))
    llm.script(text("done"))
    proc = chat(env, ws, "do the steps")
    assert proc.returncode == 0 and proc.stdout.strip().endswith("done"), proc.stderr[-3000:]
    assert len(llm.requests) == steps + 1
    served = re.findall(r"model host: (\w+) (\w*)", "".join(p.read_text() for p in runtime.glob("model-*.log")))
    streams = served.count(("stream", ""))
    counts = sum(1 for op, name in served if op == "count" or name == "token_counter")
    assert streams == steps + 1
    assert counts == 0, served  # none per step (each was one more before), nor for the prompt


def test_token_counts_through_the_host_are_litellms_in_one_trip(runtime: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """TokenCounter counts what a request has new in one host call, and gets the very counts litellm
    gives in this process, one call per message or text as before; a host killed mid-session is
    started again and counts the same."""
    from agent_ls.agent import llm as llm_mod
    from agent_ls.agent.context import TokenCounter

    monkeypatch.setenv("AGENT_LS_RUNTIME_DIR", str(runtime))
    host = model_host.attach(os.environ, timeout=120)
    monkeypatch.setattr(llm_mod, "_host", host)
    model = "openai/gpt-4o"
    system = [{"role": "system", "content": "You are a coding agent. Be brief."}]
    tools = [{"type": "function", "function": {"name": "bash", "parameters": {"type": "object"}}}]
    history: list[dict[str, Any]] = [{"role": "user", "content": "list the files, then read één.txt"}]

    def in_process(messages: list[dict[str, Any]]) -> int:  # the counter's sum, one litellm call per part
        import json

        litellm = llm_mod.get_litellm()
        total = 3 + sum(litellm.token_counter(model=model, text=json.dumps(m, ensure_ascii=False)) + 3 for m in system)
        total += sum(litellm.token_counter(model=model, messages=[m]) for m in messages)
        return int(total + litellm.token_counter(model=model, text=json.dumps(tools, ensure_ascii=False)))

    counter = TokenCounter(model)
    trips = host.trips
    assert counter.request([*system, *history], tools, system=1) == in_process(history)
    assert host.trips == trips + 1  # system, tools and prompt: one trip
    history += [{"role": "assistant", "content": None, "tool_calls": [
                    {"id": "c1", "type": "function", "function": {"name": "bash", "arguments": '{"command": "ls"}'}}]},
                {"role": "tool", "tool_call_id": "c1", "content": "a.txt\nééé.txt\n" * 40}]
    assert counter.request([*system, *history], tools, system=1) == in_process(history)
    assert host.trips == trips + 2  # the step's assistant message and tool result: one trip
    assert counter.request([*system, *history], tools, system=1) == in_process(history)
    assert host.trips == trips + 2  # nothing new: no trip
    os.kill(host.pid, signal.SIGKILL)  # gone mid-session: started again, the same counts
    history.append({"role": "user", "content": "thanks"})
    assert counter.request([*system, *history], tools, system=1) == in_process(history)
    assert llm_mod._host is not host and llm_mod._host.pid != host.pid


async def test_the_deltas_the_host_has_at_hand_go_out_in_one_write(monkeypatch: pytest.MonkeyPatch) -> None:
    """A chunk of the model's stream that carries several deltas (a tool call's id, name and
    arguments, the finish reason, the usage) reaches the front end as one write, one wake-up:
    not a line each. Deltas that come while the host waits for the model still go out at once."""
    import asyncio

    from agent_ls.agent import llm, model_host_server

    async def stream(config: Any, messages: Any, tools: Any, count: Any = None) -> AsyncIterator[llm.StreamDelta]:
        for i in range(4):  # at hand together
            yield llm.StreamDelta(text=f"t{i}")
        await asyncio.sleep(0.01)  # the host waits for the model: what it has goes out meanwhile
        yield llm.StreamDelta(finish_reason="stop")

    class Writer:
        def __init__(self) -> None:
            self.writes: list[bytes] = []

        def write(self, data: bytes) -> None:
            self.writes.append(data)

        def is_closing(self) -> bool:
            return False

        async def drain(self) -> None:
            pass

    monkeypatch.setattr(llm, "stream_completion", stream)
    writer = Writer()
    host = model_host_server._Host(Path("unused"), 1.0)
    await host._stream({"config": {"model": "openai/x"}, "messages": [], "tools": []}, writer)  # type: ignore[arg-type]
    assert [w.count(b"\n") for w in writer.writes] == [4, 2]
    assert b"".join(writer.writes).splitlines()[-1] == b'{"done":true}'


NO_USAGE = Usage(prompt_tokens=0, completion_tokens=5)
"""A provider that reports no prompt tokens: the meter shows our count after every step."""


def reads_files(n: int) -> Turn:
    """Reads f0.txt ... f{n-1}.txt one step each (the next after the last one read), then answers."""
    from tests.agent.test_context import is_summary_request

    def answer(body: dict[str, Any]) -> Turn:
        if is_summary_request(body):
            return text("The user had files read one by one; each was read.", usage=NO_USAGE)
        last = body["messages"][-1]
        found = re.search(r"\tF(\d+) ", last["content"]) if last["role"] == "tool" else None
        i = int(found.group(1)) + 1 if found else (0 if last["role"] == "user" else n)
        if i < n:
            return tool_calls([("read_file", {"path": f"f{i}.txt"}, f"call_f{i}")], usage=NO_USAGE)
        return text(f"read {n} files", usage=NO_USAGE)

    return respond(answer)


@pytest.mark.parametrize("where", ["in-process", "model host"])
async def test_counting_with_the_request_compacts_and_meters_as_counting_first(
        llm: ScriptedLLM, ws: Path, runtime: Path, monkeypatch: pytest.MonkeyPatch, where: str) -> None:
    """A tool step's count rides with its model request, which goes out only when no compaction is
    due; when one is (a file read pushes the conversation past the threshold), nothing is sent, the
    conversation is compacted, and the request goes out then. The model sees the same requests,
    and the user the same meter and compactions, as when every request is counted before it is
    sent (today's order, and the only one before): in this process (``AGENT_LS_MODEL_HOST=0``)
    and through the model host."""
    import attrs

    from agent_ls.agent import llm as llm_mod
    from agent_ls.agent import session as session_mod
    from tests.agent.conftest import Recorder, make_session
    from tests.agent.test_context import WINDOW, write_files

    write_files(ws, 6)
    llm.window = WINDOW
    counted: list[Any] = []
    stream = session_mod.stream_completion

    async def spy(*args: Any) -> AsyncIterator[Any]:
        async for d in stream(*args):
            if d.counted is not None:
                counted.append(d.counted)
            yield d

    monkeypatch.setattr(session_mod, "stream_completion", spy)

    async def run(count_first: bool) -> tuple[list[Any], list[Any]]:
        llm.requests.clear()
        llm.script(*(reads_files(6) for _ in range(12)))
        s = make_session(llm, ws, context_window=WINDOW)
        if count_first:  # every request counted before it is sent, as before
            async def step(sink: Any) -> Any:
                await s._fit(sink)
                return await s._stream_step(sink)

            monkeypatch.setattr(s, "_step", step)
        rec = Recorder()
        for prompt in ("read the files", "thanks"):
            assert (await s.prompt(prompt, rec)).stop_reason == "end"
        shown = [(e.type, attrs.asdict(e)) for e in rec.events if e.type in ("usage", "compaction")]
        return shown, [r.body["messages"] for r in llm.requests]

    before, sent_before = await run(count_first=True)
    assert not counted
    if where == "model host":
        monkeypatch.setenv("AGENT_LS_RUNTIME_DIR", str(runtime))
        monkeypatch.setattr(llm_mod, "_host", model_host.attach(os.environ, timeout=120))
    after, sent_after = await run(count_first=False)
    assert [c.sent for c in counted].count(False) == 1  # the step that passed the threshold: not sent
    assert len([c for c in counted if c.sent]) >= 4  # the other steps: sent with their count
    assert any(kind == "compaction" and e["reason"] == "auto" for kind, e in after)
    assert not [r for r in llm.requests if r.rejected]
    assert after == before
    assert sent_after == sent_before


@pytest.mark.parametrize("count", ["without a count", "counted and sent", "counted, not sent"])
async def test_the_adapter_says_when_the_request_has_gone_to_the_host(monkeypatch: pytest.MonkeyPatch,
                                                                      count: str) -> None:
    """``llm.request_sent`` (the conversation service holds its checkpoint's snapshot and the MCP
    SDK's import until then, issue 46): called once as the request is handed to the model host,
    before its answer; with a count riding on it, once the host's first delta says it counted and
    sent the request; never for a request the count kept back (a compaction comes first)."""
    from agent_ls.agent import llm

    seen: list[str] = []
    first = {"counts": [3], "total": 10, "sent": count != "counted, not sent"}

    class Host:
        pid = 1

        async def request(self, request: dict[str, object]) -> AsyncIterator[dict[str, object]]:
            seen.append("handed over")
            if count != "without a count":
                yield {"delta": {"counted": dict(first)}}
                if not first["sent"]:
                    yield {"done": True}
                    return
            yield {"delta": {"text": "hi"}}
            yield {"done": True}

    monkeypatch.setattr(llm, "_host", Host())
    told = llm.request_sent.set(lambda: seen.append("sent"))
    try:
        ask = None if count == "without a count" else CountFirst("openai/x", [{"text": "a"}], [1], 7, 20)
        async for d in llm.stream_completion(llm.LLMConfig(model="openai/x"), [], [], ask):
            seen.append("counted" if d.counted is not None else f"delta {d.text}")
    finally:
        llm.request_sent.reset(told)
    assert seen == {"without a count": ["sent", "handed over", "delta hi"],
                    "counted and sent": ["handed over", "sent", "counted", "delta hi"],
                    "counted, not sent": ["handed over", "counted"]}[count]
