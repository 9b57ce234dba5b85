"""The exit watchdog: once the connection has ended, a process that is still there after the
grace period writes every thread's stack to stderr and ends itself."""

from __future__ import annotations

import io
import threading
import time
from pathlib import Path

from agent_ls.core.process import ExitWatchdog
from agent_ls.server.process_exit import EofWatch


def test_the_watchdog_dumps_the_stacks_and_ends_the_process(tmp_path: Path) -> None:
    exits: list[int] = []
    fired = threading.Event()

    def fake_exit(code: int) -> None:
        exits.append(code)
        fired.set()

    with open(tmp_path / "stderr", "w+", encoding="utf-8") as stream:  # faulthandler needs a real file
        dog = ExitWatchdog(0.2, last_words=lambda: exits.append(-1), exit_fn=fake_exit, stream=stream)
        started = time.monotonic()
        dog.arm(0)
        dog.arm(1)  # the first countdown stands
        assert fired.wait(10)
        assert time.monotonic() - started >= 0.2
        stream.seek(0)
        dump = stream.read()
    assert exits == [-1, 0]  # the last words (kill the children) come first
    assert dump.startswith("agent-ls: the server was still running 0.2 s after its connection ended; ending it now.")
    assert "test_the_watchdog_dumps_the_stacks_and_ends_the_process" in dump  # this thread's stack, waiting


def test_an_unarmed_watchdog_does_nothing() -> None:
    exits: list[int] = []
    ExitWatchdog(0.01, last_words=lambda: exits.append(-1), exit_fn=exits.append)
    time.sleep(0.05)
    assert exits == []


def test_stdin_arms_the_watchdog_at_end_of_file() -> None:
    seen: list[str] = []
    stdin = EofWatch(io.BytesIO(b"Content-Length: 2\r\n\r\n{}"), lambda: seen.append("eof"))
    assert stdin.readline() == b"Content-Length: 2\r\n" and stdin.readline() == b"\r\n"
    assert stdin.read(2) == b"{}" and seen == []
    assert stdin.readline() == b"" and seen == ["eof"]
