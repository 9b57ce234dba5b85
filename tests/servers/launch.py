"""Helpers for starting the knob fixture server (see knob_server.py for the knobs).

- `KNOB_SERVER`: path of knob_server.py.
- `knob_stdio_params(*args, env=None)`: an MCP config entry dict for the stdio variant.
- `knob_server_parameters(*args, env=None)`: the same as an SDK `StdioServerParameters`.
- `run_http_knob_server(*args, env=None, timeout=15.0)`: starts the Streamable HTTP variant
  as a real subprocess on 127.0.0.1 with ``--port 0``; usable as ``with`` or ``async with``,
  both yield the URL (``http://127.0.0.1:<port>/mcp``). On exit the process group is killed.
  The context manager object keeps the process (`.process`) and the stderr lines read so far
  (`.stderr_lines`, `.stderr_text()`). ``script=`` runs another server script that takes the same
  ``--transport http --port 0`` options and prints the same LISTENING line (e.g.
  misbehaving_modern.py).
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path
from types import TracebackType
from typing import Any

KNOB_SERVER = Path(__file__).resolve().with_name("knob_server.py")

LISTENING_PREFIX = "LISTENING "


def knob_stdio_params(*args: Any, env: dict[str, str] | None = None) -> dict[str, Any]:
    """Config entry for the stdio knob server: {"command": python, "args": [knob_server.py, *args]}."""
    entry: dict[str, Any] = {"command": sys.executable, "args": [str(KNOB_SERVER), *map(str, args)]}
    if env is not None:
        entry["env"] = dict(env)
    return entry


def knob_server_parameters(*args: Any, env: dict[str, str] | None = None) -> Any:
    """`mcp.StdioServerParameters` for the stdio knob server."""
    from mcp import StdioServerParameters

    entry = knob_stdio_params(*args, env=env)
    return StdioServerParameters(command=entry["command"], args=entry["args"], env=entry.get("env"))


class run_http_knob_server:  # noqa: N801 - used like a function: `with run_http_knob_server(...) as url`
    """Run the HTTP knob server in a subprocess for the duration of a (sync or async) with-block."""

    def __init__(self, *args: Any, env: dict[str, str] | None = None, timeout: float = 15.0,
                 script: Path = KNOB_SERVER) -> None:
        self.args = [str(a) for a in args]
        self.script = script
        self.env = env
        self.timeout = timeout
        self.process: subprocess.Popen[bytes] | None = None
        self.url: str | None = None
        self.stderr_lines: list[str] = []
        self._listening = threading.Event()
        self._reader: threading.Thread | None = None

    # ---- lifecycle -------------------------------------------------------------------

    def start(self) -> str:
        cmd = [sys.executable, str(self.script), "--transport", "http", "--port", "0", *self.args]
        env = {**os.environ, **(self.env or {})}
        env.setdefault("PYTHONUNBUFFERED", "1")
        self.process = subprocess.Popen(
            cmd,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            env=env,
            start_new_session=True,  # own process group, so stop() can kill everything it spawned
        )
        self._reader = threading.Thread(target=self._read_stderr, name="knob-http-stderr", daemon=True)
        self._reader.start()
        deadline = time.monotonic() + self.timeout
        while not self._listening.wait(0.05):
            if _has_exited(self.process):
                self._reader.join(1)
                self.stop()
                raise RuntimeError(
                    f"knob HTTP server exited with code {self.process.returncode} before listening; "
                    f"stderr:\n{self.stderr_text()}"
                )
            if time.monotonic() > deadline:
                self.stop()
                raise TimeoutError(
                    f"knob HTTP server did not print LISTENING within {self.timeout}s; stderr:\n{self.stderr_text()}"
                )
        assert self.url is not None
        return self.url

    def _read_stderr(self) -> None:
        assert self.process is not None and self.process.stderr is not None
        for raw in self.process.stderr:
            line = raw.decode("utf-8", errors="replace").rstrip("\r\n")
            self.stderr_lines.append(line)
            if not self._listening.is_set() and line.startswith(LISTENING_PREFIX):
                self.url = line[len(LISTENING_PREFIX) :].strip()
                self._listening.set()

    def stop(self) -> None:
        """SIGTERM the process group, SIGKILL it after 3 s, then reap the server.

        The server is only reaped at the very end: while it is unreaped its pid (which is
        also the group id) cannot be reused, so the group signals never hit a stranger.
        """
        proc = self.process
        if proc is None or proc.returncode is not None:
            return
        _signal_group(proc, signal.SIGTERM)
        deadline = time.monotonic() + 3
        while not _has_exited(proc) and time.monotonic() < deadline:
            time.sleep(0.02)
        _signal_group(proc, signal.SIGKILL)  # leftovers of the group (or the server itself)
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            pass
        if self._reader is not None:
            self._reader.join(2)
        if proc.stderr is not None:
            proc.stderr.close()

    def stderr_text(self) -> str:
        return "\n".join(self.stderr_lines)

    # ---- context manager protocols ------------------------------------------------------

    def __enter__(self) -> str:
        return self.start()

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.stop()

    async def __aenter__(self) -> str:
        import anyio.to_thread

        return await anyio.to_thread.run_sync(self.start)

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        import anyio
        import anyio.to_thread

        with anyio.CancelScope(shield=True):
            await anyio.to_thread.run_sync(self.stop)


def _has_exited(proc: subprocess.Popen[bytes]) -> bool:
    """Whether the process has exited, without reaping it (so its pid stays reserved)."""
    if proc.returncode is not None:
        return True
    try:
        info = os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
    except ChildProcessError:
        return True
    return info is not None


def _signal_group(proc: subprocess.Popen[bytes], sig: signal.Signals) -> None:
    try:
        os.killpg(proc.pid, sig)  # the group id equals the pid thanks to start_new_session
    except (ProcessLookupError, PermissionError):
        pass
