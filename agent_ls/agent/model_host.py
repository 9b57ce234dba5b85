"""The model host: one warm process per user and environment that holds litellm, which the
terminal chat and the ACP agent attach to instead of importing litellm themselves (issue 46).

``import litellm`` takes ~3 s of CPU and ~200 MB here, paid by every ``agent-ls chat`` and
``agent-ls acp`` start. The model host pays it once: a front end that wants the model library
(:func:`attach`) connects to the host's Unix socket, or starts the host and waits for it (the
first time: the same seconds as importing litellm itself), and from then on each model request
goes to the host, which makes it with :func:`agent_ls.agent.llm.stream_completion` (litellm's
``acompletion``, the same code path as in-process) and streams the deltas back.

What the host does and does not do:

- It only makes model requests (and answers litellm's token counter, model information and
  credential check). Tools, approvals, trust, hooks and the conversation stay in the front end's
  process: the host adds no way around any of them.
- It runs with the environment of the process that started it, secrets included (taken out of
  its own environment at start-up, as every agent-ls process does), and it serves only processes
  with the same environment: the socket's name is a hash of that environment (minus variables
  that change between shells of one user: ``PWD``, ``SHLVL``, agent-ls' own ``AGENT_LS_*``...)
  and of the agent-ls code. A front end started with another key, proxy or CA bundle gets
  another host. A model request carries what the settings give: model, endpoint, configured key.
- The socket lives in a folder only the user can enter (0700, checked) and the host checks each
  peer's user id (``SO_PEERCRED``).
- It exits after :data:`IDLE_SECONDS` without a connection (``AGENT_LS_MODEL_HOST_IDLE``).
- ``AGENT_LS_MODEL_HOST=0`` turns it off: the front end imports litellm itself, as before. When the
  host cannot start (or answer) in :data:`START_TIMEOUT` seconds, the front end does the same.

The wire: one JSON object a line. A request ``{"op": "stream", "config", "messages", "tools"}``
is answered by ``{"delta": ...}`` lines and ``{"done": true}`` or ``{"error": {"kind",
"message"}}`` (an :class:`~agent_ls.agent.llm.LLMError`); ``{"op": "call", "name", "kwargs"}`` by
``{"result": ...}`` or ``{"error": ...}``; ``{"op": "warm", "config"}`` rehearses the first call.
A client that closes its connection cancels its request.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

log = logging.getLogger(__name__)

IDLE_SECONDS = 900.0
"""The host exits after this long without a connection (``AGENT_LS_MODEL_HOST_IDLE``)."""
START_TIMEOUT = 60.0
"""A front end waits this long for a host it started (a cold litellm import on a busy machine
takes several seconds), then imports litellm itself."""
LINE_LIMIT = 1 << 27
"""The longest line on the wire (a whole conversation with its attachments)."""
CALLS = frozenset({"token_counter", "get_model_info", "validate_environment"})
"""The litellm functions a front end calls through the host (pure functions of their JSON arguments)."""
_VOLATILE = frozenset({"PWD", "OLDPWD", "SHLVL", "_", "PYTEST_CURRENT_TEST", "COLUMNS", "LINES",
                       "TERM_SESSION_ID", "WINDOWID", "SECURITYSESSIONID"})
"""Variables that differ between shells and runs of one user and that litellm never reads."""


def runtime_dir() -> Path:
    """The folder of the hosts' sockets: ``AGENT_LS_RUNTIME_DIR``, else ``$XDG_RUNTIME_DIR/agent-ls``,
    else ``<tmp>/agent-ls-<uid>``."""
    override = os.environ.get("AGENT_LS_RUNTIME_DIR")
    if override:
        return Path(override)
    xdg = os.environ.get("XDG_RUNTIME_DIR")
    if xdg and Path(xdg).is_dir():
        return Path(xdg) / "agent-ls"
    return Path(tempfile.gettempdir()) / f"agent-ls-{os.getuid()}"


def private_dir(path: Path) -> Path:
    """``path``, made if missing, checked to belong to this user and to be closed to others."""
    path.mkdir(mode=0o700, parents=True, exist_ok=True)
    st = path.lstat()
    if st.st_uid != os.getuid() or st.st_mode & 0o077 or not path.is_dir() or path.is_symlink():
        raise PermissionError(f"{path} is not a private folder of this user")
    return path


def host_key(environ: Mapping[str, str]) -> str:
    """The host's name for an environment (the user's, secrets included) and this code."""
    digest = hashlib.sha256()
    for name in sorted(environ):
        if name not in _VOLATILE and not name.startswith("AGENT_LS_"):
            digest.update(f"{name}={environ[name]}\0".encode(errors="surrogateescape"))
    digest.update(sys.executable.encode())
    here = Path(__file__).resolve().parent
    for module in ("model_host.py", "llm.py"):  # another agent-ls: another host
        with contextlib.suppress(OSError):
            st = (here / module).stat()
            digest.update(f"{here / module}:{st.st_mtime_ns}:{st.st_size}".encode())
    return digest.hexdigest()[:20]


# --- the host process ------------------------------------------------------------------------


class _Host:
    def __init__(self, path: Path, idle: float) -> None:
        self.path = path
        self.idle = idle
        self.active = 0
        self.last = time.monotonic()
        self.warmed: set[str] = set()
        self.changed = asyncio.Event()
        """Set when a connection ends (the idle clock starts again)."""

    async def serve(self) -> None:
        server = await asyncio.start_unix_server(self._client, path=str(self.path), limit=LINE_LIMIT)
        os.chmod(self.path, 0o600)
        ino = self.path.stat().st_ino
        log.info("model host: serving on %s (pid %d)", self.path, os.getpid())
        try:
            while (left := self.idle - (time.monotonic() - self.last)) > 0 or self.active:
                self.changed.clear()
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(self.changed.wait(), None if self.active else left)
        finally:
            server.close()
            with contextlib.suppress(OSError):
                if self.path.stat().st_ino == ino:
                    self.path.unlink()
            log.info("model host: idle for %.0f s, exiting", self.idle)

    async def _client(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.active += 1
        try:
            if _peer_uid(writer) not in (None, os.getuid()):
                return
            while line := await reader.readline():
                request = json.loads(line)
                op = request.get("op")
                log.debug("model host: %s %s", op, request.get("name", ""))
                if op == "stream":  # the last request of its connection (closed to cancel it)
                    await self._stream(request, reader, writer)
                    return
                elif op == "call":
                    writer.write(_line(self._call(request)))
                elif op == "warm":
                    await self._warm(request)
                    writer.write(_line({"result": None}))
                elif op == "hello":
                    writer.write(_line({"result": {"pid": os.getpid()}}))
                else:
                    writer.write(_line({"error": {"kind": "internal", "message": f"unknown op {op!r}"}}))
                await writer.drain()
        except (ConnectionError, ValueError) as e:
            log.debug("model host: a client went away (%s)", type(e).__name__)
        finally:
            self.active -= 1
            self.last = time.monotonic()
            self.changed.set()
            writer.close()

    def _call(self, request: dict[str, Any]) -> dict[str, Any]:
        from agent_ls.agent import llm  # lazy: the host's first line of work, after its lock

        name = request.get("name")
        if name not in CALLS:
            return {"error": {"kind": "internal", "message": f"not a host call: {name!r}"}}
        try:
            return {"result": getattr(llm.get_litellm(), name)(**request.get("kwargs", {}))}
        except Exception as e:
            return {"error": {"kind": "exception", "message": f"{type(e).__name__}: {e}"}}

    async def _warm(self, request: dict[str, Any]) -> None:
        from agent_ls.agent import llm

        config = llm.LLMConfig(**request["config"])
        if config.model not in self.warmed:
            self.warmed.add(config.model)
            await asyncio.to_thread(llm.warm_up, config)

    async def _stream(self, request: dict[str, Any], reader: asyncio.StreamReader,
                      writer: asyncio.StreamWriter) -> None:
        from agent_ls.agent import llm

        async def run() -> None:
            try:
                config = llm.LLMConfig(**request["config"])
                async for delta in llm.stream_completion(config, request["messages"], request["tools"]):
                    writer.write(_line({"delta": delta_wire(delta)}))
                    await writer.drain()
                writer.write(_line({"done": True}))
            except llm.LLMError as e:
                writer.write(_line({"error": {"kind": e.kind, "message": e.message}}))
            await writer.drain()

        task = asyncio.ensure_future(run())
        gone = asyncio.ensure_future(reader.read(1))  # the client sends nothing more: EOF = it cancelled
        try:
            await asyncio.wait({task, gone}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            gone.cancel()
            if not task.done():
                task.cancel()
                log.debug("model host: a client cancelled its request")
        task.result()


def _peer_uid(writer: asyncio.StreamWriter) -> int | None:
    sock = writer.get_extra_info("socket")
    so_peercred = getattr(socket, "SO_PEERCRED", None)
    if sock is None or so_peercred is None:
        return None
    creds = sock.getsockopt(socket.SOL_SOCKET, so_peercred, struct.calcsize("3i"))
    return int(struct.unpack("3i", creds)[1])


def _line(obj: Any) -> bytes:
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def delta_wire(delta: Any) -> dict[str, Any]:
    """A :class:`~agent_ls.agent.llm.StreamDelta` as JSON (its default fields left out)."""
    import attrs

    return attrs.asdict(delta, filter=lambda a, v: v != a.default)


def main(argv: list[str] | None = None) -> int:
    """``python -m agent_ls.agent.model_host SOCKET``: serve until idle. Exits at once (0) when
    another host holds the socket's lock (two front ends started one at the same moment)."""
    import fcntl

    from agent_ls.core.process_secrets import take_process_secrets

    take_process_secrets()  # first: the provider keys in memory only, as in every agent-ls process
    path = Path((argv or sys.argv[1:])[0])
    lock = open(path.with_suffix(".lock"), "a")  # noqa: SIM115 (held for the process's life)
    try:
        fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return 0
    from agent_ls.core.redact import log_to_stderr

    log_to_stderr(os.environ.get("AGENT_LS_MODEL_HOST_LOG", "WARNING"))
    from agent_ls.agent import llm

    llm.get_litellm()  # before the socket exists: a client that connects finds it loaded
    with contextlib.suppress(FileNotFoundError):
        path.unlink()  # a host that died (its lock went with it)
    idle = float(os.environ.get("AGENT_LS_MODEL_HOST_IDLE") or IDLE_SECONDS)
    asyncio.run(_Host(path, idle).serve())
    return 0


# --- the front end's side --------------------------------------------------------------------


_started: list[subprocess.Popen[bytes]] = []


class HostUnavailable(Exception):
    """The model host could not be reached or started (the front end loads litellm itself)."""


class ModelHostClient:
    """A front end's connection to its model host (``path``: the socket)."""

    def __init__(self, path: Path, pid: int) -> None:
        self.path = path
        self.pid = pid
        self._sync: socket.socket | None = None
        self._sync_file: Any = None
        self._lock = threading.Lock()

    def call(self, name: str, **kwargs: Any) -> Any:
        """litellm's ``name`` (one of :data:`CALLS`) in the host: its result, or the exception it
        raised (as an ``Exception`` with its text). Blocking (a local round trip)."""
        return self._sync_request({"op": "call", "name": name, "kwargs": kwargs})

    def warm(self, config: dict[str, Any]) -> None:
        """The host rehearses litellm's first call for ``config``'s model (once). Blocking."""
        self._sync_request({"op": "warm", "config": config})

    def _sync_request(self, request: dict[str, Any]) -> Any:
        with self._lock:
            for attempt in (0, 1):
                try:
                    if self._sync_file is None:
                        self._sync = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                        self._sync.connect(str(self.path))
                        self._sync_file = self._sync.makefile("rwb")
                    self._sync_file.write(_line(request))
                    self._sync_file.flush()
                    line = self._sync_file.readline()
                    if not line:
                        raise ConnectionError("the model host closed the connection")
                    break
                except OSError:
                    self.close()
                    if attempt:
                        raise
        answer = json.loads(line)
        if "error" in answer:
            raise Exception(answer["error"]["message"])  # noqa: TRY002 (litellm's own exception, by text)
        return answer["result"]

    async def request(self, request: dict[str, Any]) -> AsyncIterator[dict[str, Any]]:
        """The answer lines to one request, on a connection of its own (closed when the caller stops
        reading: the host then cancels the request)."""
        reader, writer = await asyncio.open_unix_connection(str(self.path), limit=LINE_LIMIT)
        try:
            writer.write(_line(request))
            await writer.drain()
            while True:
                line = await reader.readline()
                if not line:
                    raise ConnectionError(f"the model host (pid {self.pid}) closed the connection")
                answer = json.loads(line)
                yield answer
                if "delta" not in answer:
                    return
        finally:
            writer.close()

    def close(self) -> None:
        with contextlib.suppress(OSError):
            if self._sync_file is not None:
                self._sync_file.close()
            if self._sync is not None:
                self._sync.close()
        self._sync = self._sync_file = None


def _hello(path: Path) -> int:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5.0)
        s.connect(str(path))
        s.sendall(_line({"op": "hello"}))
        with s.makefile("rb") as f:
            return int(json.loads(f.readline())["result"]["pid"])


def attach(environ: Mapping[str, str], timeout: float = START_TIMEOUT) -> ModelHostClient:
    """The model host for ``environ`` (the user's environment, secrets included), started when
    none answers, and waited for. Blocking (seconds when it starts the host): call it in a worker
    thread. :class:`HostUnavailable` when there is none after ``timeout`` seconds."""
    try:
        folder = private_dir(runtime_dir())
    except OSError as e:
        raise HostUnavailable(f"no private runtime folder: {e}") from e
    path = folder / f"model-{host_key(environ)}.sock"
    with contextlib.suppress(OSError, ValueError, KeyError):
        return ModelHostClient(path, _hello(path))
    log.debug("model host: starting one at %s", path)
    with open(folder / f"{path.stem}.log", "ab") as errors:
        proc = subprocess.Popen([sys.executable, "-P", "-m", "agent_ls.agent.model_host", str(path)], env=dict(environ),
                                cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors,
                                start_new_session=True)
    _started.append(proc)  # it outlives this process: never reaped here, never warned about
    deadline = time.monotonic() + timeout
    mine = True
    while time.monotonic() < deadline:
        with contextlib.suppress(OSError, ValueError, KeyError):
            return ModelHostClient(path, _hello(path))
        if mine and proc.poll() is not None:  # another host holds the lock (it is loading), or it failed
            mine = False
            if proc.returncode:
                raise HostUnavailable(f"the model host exited with {proc.returncode} (see {errors.name})")
        time.sleep(0.02)
    raise HostUnavailable(f"no model host after {timeout:g} s")


if __name__ == "__main__":
    sys.exit(main())
