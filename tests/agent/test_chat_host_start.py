"""`agent-ls chat` starts its MCP host in the background, as ACP and the language server do
(issue 46): the first model request does not wait for the MCP SDK's import nor for the servers,
the servers connected by then give their tools and the others are said to be starting, and a later
turn sees them. A workspace server that needs trust is asked about on the terminal before the
host starts and before the first request (never during a turn); with no terminal to ask on it
stays stopped, the run says so and how to trust it, and nothing waits for an answer.

The chat process gets the ``sitecustomize`` probe of ``tests/acp/test_host_start.py`` (on its
``PYTHONPATH``): it notes the MCP SDK's import in a file and holds it until the test creates a gate
file, so whether the chat waited for the SDK is a matter of order, never of timing."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any

import pytest

from agent_ls.mcp.status import STILL_STARTING
from tests.acp.test_host_start import PROBE
from tests.llm.scripted_server import ScriptedLLM, respond, text, tool_calls
from tests.servers.launch import knob_stdio_params
from tests.tooling import REPO_ROOT

pytestmark = pytest.mark.filterwarnings("ignore:.*ReadOnly.*:UserWarning")

LIMIT = 90.0
"""Seconds a step may take at most (a hang fails the test instead of stalling the suite)."""


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("mcp-probe")
    (folder / "sitecustomize.py").write_text(PROBE)
    return folder


class Chat:
    """The folders, settings and environment of ``agent-ls chat`` runs with the MCP SDK probe."""

    def __init__(self, root: Path, llm: ScriptedLLM, probe: Path) -> None:
        self.ws = root / "ws"
        (self.ws / ".agent-ls").mkdir(parents=True)
        self.config = root / "config"
        self.config.mkdir()
        self.llm = llm
        self.marker = root / "mcp-imported"
        self.gate = root / "mcp-gate"
        self.env = dict(os.environ)
        for k in ("AGENT_LS_MODEL", "AGENT_LS_USER_SETTINGS"):
            self.env.pop(k, None)
        self.env.update({"AGENT_LS_CONFIG_DIR": str(self.config), "AGENT_LS_DATA_DIR": str(root / "data"),
                         "AGENT_LS_API_BASE": llm.openai_base, "OPENAI_API_KEY": "x",
                         "PYTHONPATH": f"{probe}{os.pathsep}{REPO_ROOT}",
                         "AGENT_LS_TEST_MCP_MARKER": str(self.marker), "AGENT_LS_TEST_MCP_GATE": str(self.gate),
                         # the host's start waits for the first request however long the model
                         # library takes on a busy machine: the order below never depends on time
                         "AGENT_LS_MODEL_FIRST_LIMIT": "600"})

    def user(self, servers: dict[str, Any]) -> None:
        (self.config / "settings.json").write_text(json.dumps({"mcpServers": servers}))

    def workspace(self, servers: dict[str, Any]) -> None:
        (self.ws / ".agent-ls" / "settings.json").write_text(json.dumps({"mcpServers": servers}))

    def argv(self, *args: str) -> list[str]:
        return [sys.executable, "-m", "agent_ls.cli", "chat", "-w", str(self.ws), "--model", "openai/scripted", *args]

    def run(self, *args: str, stdin: str = "") -> subprocess.CompletedProcess[str]:
        return subprocess.run(self.argv(*args), input=stdin, env=self.env, capture_output=True, text=True,
                              timeout=LIMIT)

    def cli(self, *args: str) -> subprocess.CompletedProcess[str]:
        """Another ``agent-ls`` command on the same folders and state (no probe held)."""
        env = {**self.env, "AGENT_LS_TEST_MCP_GATE": "", "AGENT_LS_TEST_MCP_MARKER": ""}
        return subprocess.run([sys.executable, "-m", "agent_ls.cli", *args], env=env, capture_output=True,
                              text=True, timeout=LIMIT, stdin=subprocess.DEVNULL)


@pytest.fixture
def chat(tmp_path: Path, llm: ScriptedLLM, probe_dir: Path) -> Iterator[Chat]:
    c = Chat(tmp_path, llm, probe_dir)
    yield c
    c.gate.touch()  # (a process still holding the import lets go)


def marker_server(marker: Path) -> dict[str, Any]:
    """A stdio "server" that only notes it was started (it never speaks MCP)."""
    return {"command": sys.executable, "args": ["-c", f"open({str(marker)!r}, 'w').write('started')"]}


class Lines:
    """What a running process wrote to a pipe so far, read in a thread (a question without a line
    end included), and a wait for what a test expects."""

    def __init__(self, stream: IO[str]) -> None:
        self.chunks: list[str] = []
        self._changed = threading.Condition()
        threading.Thread(target=self._read, args=(stream.fileno(),), daemon=True).start()

    def _read(self, fd: int) -> None:
        while chunk := os.read(fd, 65536):
            with self._changed:
                self.chunks.append(chunk.decode(errors="replace"))
                self._changed.notify_all()

    def text(self) -> str:
        with self._changed:
            return "".join(self.chunks)

    def wait(self, seen: Callable[[str], bool], what: str) -> None:
        deadline = time.monotonic() + LIMIT
        with self._changed:
            while not seen("".join(self.chunks)):
                left = deadline - time.monotonic()
                assert left > 0, f"timed out waiting for {what}:\n{''.join(self.chunks)}"
                self._changed.wait(min(left, 0.5))


def wait_until(condition: Callable[[], bool], what: str) -> None:
    deadline = time.monotonic() + LIMIT
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)


@pytest.mark.parametrize("kept", [False, True], ids=["first run", "tools kept from the last run"])
def test_one_shot_reaches_the_model_before_the_mcp_sdk(chat: Chat, kept: bool) -> None:
    """A user server configured: the one-shot prompt's request reaches the model before the MCP
    SDK's import has even begun (before, the chat imported it and started the host first; with
    the server's tools kept from an earlier run, the prompt waited for the host to offer them), and
    the answer is printed while that import is held; the model is told the server is still
    starting; nothing says a server failed, and the run ends without waiting for the held import."""
    chat.user({"knob": knob_stdio_params()})
    if kept:  # another command connected the server: its tools are kept in the catalogue
        assert "knob" in chat.cli("mcp", "tools", "-w", str(chat.ws)).stdout
    sdk_at_request: list[bool] = []
    chat.llm.script(respond(lambda _body: sdk_at_request.append(chat.marker.exists()) or text("Hello.")))
    proc = chat.run("hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Hello."
    assert sdk_at_request == [False]
    assert not chat.gate.exists()  # (the whole run went while the SDK's import was held, if it began)
    system = str(chat.llm.requests[0].body["messages"][0]["content"])
    assert "## knob" in system and STILL_STARTING in system
    assert "fail" not in proc.stderr.lower() and "error" not in proc.stderr.lower(), proc.stderr


def test_the_host_starts_while_the_model_thinks_over_the_first_request(chat: Chat) -> None:
    """The MCP SDK's import (the host's start) begins once the first request has gone out, while
    the model has not answered yet: it does not wait for the model's first output (with a real
    model, seconds later; a server's tool asked for in that first answer would wait for it)."""
    chat.user({"knob": knob_stdio_params()})
    seen: list[tuple[bool, bool]] = []

    def think(_body: Any) -> Any:  # the model holds its answer until the import began (at most 30 s)
        at_request = chat.marker.exists()
        deadline = time.monotonic() + 30
        while not chat.marker.exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        seen.append((at_request, chat.marker.exists()))
        return text("Hello.")

    chat.llm.script(respond(think))
    proc = chat.run("hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Hello."
    assert seen == [(False, True)]  # not before the request; before the model's first output


def test_the_first_turn_goes_before_the_server_and_a_later_turn_uses_its_tool(chat: Chat) -> None:
    """Interactive: the first turn is answered while the SDK's import is held (the server said to be
    starting); once the import may go on, the next turn calls the server's tool."""
    chat.user({"knob": knob_stdio_params()})
    chat.llm.script(text("Hello."))
    proc = subprocess.Popen(chat.argv(), env=chat.env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    try:
        assert proc.stdin is not None and proc.stdout is not None and proc.stderr is not None
        err = Lines(proc.stderr)
        proc.stdin.write("hi\n")
        proc.stdin.flush()
        err.wait(lambda s: "[end;" in s, "the first turn's end")
        assert len(chat.llm.requests) == 1 and not chat.gate.exists()
        system = str(chat.llm.requests[0].body["messages"][0]["content"])
        assert "## knob" in system and STILL_STARTING in system

        chat.gate.touch()
        chat.llm.script(tool_calls([("mcp__knob__echo", {"text": "from knob"}, "call_echo")]), text("Echoed."))
        proc.stdin.write("echo it\n/exit\n")
        proc.stdin.flush()
        assert proc.wait(timeout=LIMIT) == 0, err.text()
        out = proc.stdout.read()
    finally:
        proc.kill()
    assert chat.marker.exists()  # the SDK was imported, in the background
    result = [m for m in chat.llm.requests[-1].body["messages"] if m.get("tool_call_id") == "call_echo"]
    assert result and result[0]["content"] == "from knob", err.text()
    assert out.strip().endswith("Echoed.")


def test_a_server_that_fails_says_so_and_the_turn_still_answers(chat: Chat, tmp_path: Path) -> None:
    """A server whose command does not exist: the model's call of its tool gets the failure, the
    terminal shows which server failed and why, and the turn ends with the model's answer."""
    chat.gate.touch()
    chat.user({"broken": {"command": str(tmp_path / "no-such-server")}})
    chat.llm.script(tool_calls([("mcp__broken__anything", {}, "call_1")]), text("It is broken."))
    proc = chat.run("use the broken tool")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip().endswith("It is broken.")
    result = [m for m in chat.llm.requests[-1].body["messages"] if m.get("tool_call_id") == "call_1"][0]
    assert "broken" in result["content"], result
    assert "MCP server broken: failed [spawn]" in proc.stderr, proc.stderr


def test_an_untrusted_folders_server_never_starts_and_a_pipe_never_waits(chat: Chat, tmp_path: Path) -> None:
    """A folder never trusted, its settings naming a stdio server, stdin not a terminal: the
    one-shot answers at once, the server never started, and stderr says how to trust the folder."""
    started = tmp_path / "started"
    chat.workspace({"wsserver": marker_server(started)})
    chat.llm.script(text("Answered."))
    proc = chat.run("hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Answered." and not started.exists()
    assert f"agent-ls trust --workspace {chat.ws}" in proc.stderr, proc.stderr


def test_a_server_question_due_without_a_terminal_is_skipped_and_said(chat: Chat, tmp_path: Path) -> None:
    """A trusted folder whose settings gained a stdio server since (it asks to be trusted on its
    own), stdin not a terminal: nothing waits for an answer nobody can give; the one-shot answers,
    the server never started, and stderr names it with the command that trusts it. ``--yes``
    trusts it (remembered: the next command starts it without asking)."""
    chat.gate.touch()
    chat.workspace({})
    assert chat.cli("trust", "-w", str(chat.ws)).returncode == 0
    started = tmp_path / "started"
    chat.workspace({"wsserver": marker_server(started)})
    chat.llm.script(text("Answered."))
    proc = chat.run("hi")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "Answered." and not started.exists()
    assert "the MCP server 'wsserver'" in proc.stderr and "was not started" in proc.stderr, proc.stderr
    assert f"agent-ls mcp trust wsserver -w {chat.ws}" in proc.stderr and "--yes" in proc.stderr
    assert not chat.llm.requests[0].body.get("tools") or not any(
        "wsserver" in t["function"]["name"] for t in chat.llm.requests[0].body["tools"])

    chat.llm.script(text("Answered again."))
    trusted = chat.run("--yes", "hi")
    assert trusted.returncode == 0, trusted.stderr
    assert "was not started" not in trusted.stderr, trusted.stderr
    chat.cli("mcp", "status", "-w", str(chat.ws))  # the answer was remembered: it starts without a question
    assert started.exists()


def _on_a_terminal(chat: Chat, answer: str, *args: str) -> tuple[str, dict[str, Any]]:
    """Run the chat with its stdin on a pseudo-terminal; note what had happened when the first
    ``[y/N]`` question came, then answer it; return stderr and that note."""
    primary, secondary = pty.openpty()
    proc = subprocess.Popen(chat.argv(*args), env=chat.env, stdin=secondary, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True)
    os.close(secondary)
    try:
        assert proc.stderr is not None
        err = Lines(proc.stderr)
        err.wait(lambda s: "[y/N]" in s, "the trust question")
        at_question = {"model requests": len(chat.llm.requests), "sdk imported": chat.marker.exists()}
        chat.gate.touch()
        os.write(primary, (answer + "\n").encode())
        assert proc.wait(timeout=LIMIT) == 0, err.text()
        wait_until(lambda: err.text().endswith("]\n"), "the last line")  # (the turn's end line)
        return err.text(), at_question
    finally:
        os.close(primary)
        if proc.poll() is None:
            proc.kill()


@pytest.mark.parametrize("answer", ["y", "n"])
def test_a_server_question_is_asked_on_the_terminal_before_the_sdk_and_the_model(
        chat: Chat, tmp_path: Path, answer: str) -> None:
    """On a terminal, the question about a workspace server comes before the first model request
    and without the MCP SDK (its import is held until the answer). ``y``: the server starts and
    its tool serves the turn; ``n``: it never starts, and the turn still answers."""
    chat.workspace({})
    assert chat.cli("trust", "-w", str(chat.ws)).returncode == 0
    started = tmp_path / "started"
    chat.workspace({"wsknob": knob_stdio_params("--request-log", started)})
    chat.llm.script(tool_calls([("mcp__wsknob__echo", {"text": "from wsknob"}, "call_echo")]), text("Done."))
    stderr, at_question = _on_a_terminal(chat, answer, "echo it")
    assert at_question == {"model requests": 0, "sdk imported": False}, stderr
    assert "The workspace file" in stderr and "wsknob" in stderr
    result = [m for m in chat.llm.requests[-1].body["messages"] if m.get("tool_call_id") == "call_echo"][0]
    if answer == "y":
        assert result["content"] == "from wsknob", stderr
    else:
        assert result["content"] != "from wsknob" and not started.exists(), result
    assert "[end;" in stderr
