"""The model host: one warm process per user and environment that holds litellm, which every
front end (the language server, the terminal chat, the ACP agent) attaches to instead of importing
litellm itself (issue 46).

``import litellm`` takes ~3 s of CPU and ~190 MB here, paid by every ``agent-ls chat`` and
``agent-ls acp`` start and by every editor window's language server. The model host pays it once:
a front end that wants the model library (:func:`attach`) connects to the host's Unix socket, or
starts the host and waits for it (the first time: the same seconds as importing litellm itself;
the language server does it in its background warm-up), and from then on each model request goes
to the host, which makes it with :func:`agent_ls.agent.llm.stream_completion` (litellm's
``acompletion``, the same code path as in-process) and streams the deltas back.

What the host does and does not do:

- It only makes model requests (the agent's, titles, compaction summaries, MCP sampling) and
  answers litellm's token counter, model information and credential check. Tools, approvals,
  trust, hooks and the conversation stay in the front end's process: the host adds no way around
  any of them.
- It runs with the environment of the process that started it, secrets included (taken out of
  its own environment at start-up, as every agent-ls process does), and it serves only processes
  with the same environment: the socket's name is a hash of that environment (minus variables
  that differ between the shells and editor windows of one user and that litellm never reads:
  :func:`host_key`) and of the agent-ls code. A front end started with another key, proxy or CA
  bundle gets another host. A model request carries what the settings give: model, endpoint,
  configured key.
- The socket lives in a folder only the user can enter (0700, checked) and the host checks each
  peer's user id (``SO_PEERCRED``).
- It exits after :data:`IDLE_SECONDS` without a connection (``AGENT_LS_MODEL_HOST_IDLE``).
- ``AGENT_LS_MODEL_HOST=0`` turns it off: the front end imports litellm itself, as before. When the
  host cannot start (or answer) in :data:`START_TIMEOUT` seconds, the front end does the same.

The wire: one JSON object a line. A request ``{"op": "stream", "config", "messages", "tools"}``
is answered by ``{"delta": ...}`` lines and ``{"done": true}`` or ``{"error": {"kind",
"message"}}`` (an :class:`~agent_ls.agent.llm.LLMError`). It may carry ``"count": {"model", "items",
"weights", "base", "most"}`` (:class:`~agent_ls.agent.token_count.CountFirst`: what a tool step added to
the conversation, not counted yet): the host counts the items first and its first line is
``{"delta": {"counted": {"counts", "total", "sent"}}}``; the model request is made only when
``total`` (``base`` plus the weighted counts) is at most ``most`` (the session's compaction
threshold), else ``sent`` is false and ``{"done": true}`` follows at once. A tool step is thus one
round trip, its compaction decided before its request goes out. ``{"op": "complete", "config",
"messages"}`` (one answer, not streamed: MCP sampling) by ``{"result": {"text", "finish_reason"}}``
or an error; ``{"op": "call", "name", "kwargs"}`` by ``{"result": ...}`` or ``{"error": ...}``;
``{"op": "count", "model", "items"}`` (``items``: ``token_counter``'s ``{"messages"}`` or
``{"text"}`` arguments) by ``{"result": [n or null, ...]}`` (null where litellm could not count:
the front end estimates), all that a request has new counted in one round trip (a prompt before it
is kept, ``/compact``, a compaction: the counts a decision needs before any request);
``{"op": "warm", "config"}`` rehearses the first call. The deltas the host has at hand when it
next waits for the model go out in one write (one wake-up of the front end, not one per line). A client that closes its connection
cancels its request. This module is the front end's side (and the names both sides share); the
host's process is :mod:`agent_ls.agent.model_host_server`.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import logging
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import AsyncIterator, Mapping
from pathlib import Path
from typing import Any

from agent_ls.core.process import outlives_us

log = logging.getLogger(__name__)

IDLE_SECONDS = 900.0
"""The host exits after this long without a connection (``AGENT_LS_MODEL_HOST_IDLE``)."""
START_TIMEOUT = 60.0
"""A front end waits this long for a host it started (a cold litellm import on a busy machine
takes several seconds), then imports litellm itself."""
MAX_SOCKET_PATH = 107
"""The longest path a Unix socket may have (``sun_path`` is 108 bytes with its NUL on Linux)."""
LINE_LIMIT = 1 << 27
"""The longest line on the wire (a whole conversation with its attachments)."""
CALLS = frozenset({"token_counter", "get_model_info", "validate_environment"})
"""The litellm functions a front end calls through the host (pure functions of their JSON arguments)."""
_VOLATILE = frozenset({
    # the shell's own: another folder, another depth, the last command; pytest's current test
    "PWD", "OLDPWD", "SHLVL", "_", "PYTEST_CURRENT_TEST",
    # the terminal a process runs in (size, type, colours, window, multiplexer pane, the tty gpg asks on)
    "COLUMNS", "LINES", "TERM", "COLORTERM", "TERMINFO", "TERM_SESSION_ID", "WINDOWID", "SECURITYSESSIONID",
    "LS_COLORS", "LSCOLORS", "LESSOPEN", "LESSCLOSE", "GPG_TTY", "TMUX", "TMUX_PANE", "STY", "WINDOW",
    "VTE_VERSION", "TERMINAL_EMULATOR", "LC_TERMINAL", "LC_TERMINAL_VERSION", "WT_SESSION", "WT_PROFILE_ID",
    # the login session over ssh (addresses and the agent's socket: a git credential, never a provider's)
    "SSH_TTY", "SSH_CLIENT", "SSH_CONNECTION", "SSH_AUTH_SOCK", "SSH_AGENT_PID",
    # what a desktop launcher or Electron sets for the editor's own window (VS Code, code-server, Cursor)
    "CHROME_DESKTOP", "ORIGINAL_XDG_CURRENT_DESKTOP", "GDK_BACKEND", "NO_AT_BRIDGE", "GIO_LAUNCHED_DESKTOP_FILE",
    "GIO_LAUNCHED_DESKTOP_FILE_PID", "BAMF_DESKTOP_FILE_HINT", "DESKTOP_STARTUP_ID", "XDG_ACTIVATION_TOKEN",
    "APPLICATION_INSIGHTS_NO_DIAGNOSTIC_CHANNEL", "MallocNanoZone", "__CFBundleIdentifier", "XPC_SERVICE_NAME",
    "XPC_FLAGS", "Apple_PubSub_Socket_Render",
    # the editor's git helper for its terminals and extensions (a script path and an IPC handle per window)
    "GIT_ASKPASS",
    # a virtual environment's activation in one shell (agent-ls' own interpreter is in the key)
    "VIRTUAL_ENV", "VIRTUAL_ENV_PROMPT",
})
"""Variables that differ between the shells, terminals and editor windows of one user and that
neither litellm nor anything it loads reads (see :func:`host_key`)."""
_VOLATILE_PREFIXES = ("AGENT_LS_", "VSCODE_", "ELECTRON_", "TERM_PROGRAM", "KITTY_", "ALACRITTY_", "WEZTERM_",
                      "KONSOLE_", "ITERM_", "GNOME_TERMINAL_", "CURSOR_TRACE_")
"""Families of such variables: agent-ls' own (read by the front end, which sends the host what they
give), the editor's (``VSCODE_PID``, ``VSCODE_IPC_HOOK``, ``VSCODE_NLS_CONFIG``,
``VSCODE_GIT_IPC_HANDLE``..., ``ELECTRON_RUN_AS_NODE``) and the terminals' (``TERM_PROGRAM``,
``TERM_PROGRAM_VERSION``, ``KITTY_WINDOW_ID``, ``WEZTERM_PANE``, ``ITERM_SESSION_ID``...)."""


def volatile(name: str) -> bool:
    """Whether ``name`` is left out of the host's key (:data:`_VOLATILE`, :data:`_VOLATILE_PREFIXES`)."""
    return name in _VOLATILE or name.startswith(_VOLATILE_PREFIXES)


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
    """The host's name for an environment (the user's, secrets included) and this code.

    Every variable is in the key except the :func:`volatile` ones: those that differ between the
    shells, terminals and editor windows of one user, and that neither litellm nor what it loads
    (httpx, aiohttp, the openai SDK, tiktoken, boto3 and google-auth when a provider needs them)
    ever reads. With them out, the editor's windows (each has its own ``VSCODE_PID``,
    ``VSCODE_IPC_HOOK``...), the terminal chat and ``agent-ls acp`` of one user share one host.
    Whatever a provider, a proxy, a CA bundle or a credential could come from stays in: the keys
    (``*_API_KEY``, ``AWS_*``, ``AZURE_*``, ``GOOGLE_*``, ``VERTEX*``...), ``HTTP(S)_PROXY`` and
    ``NO_PROXY``, ``SSL_CERT_FILE``, ``REQUESTS_CA_BUNDLE``, ``HOME`` and the ``XDG_*`` folders (the
    AWS, gcloud and netrc files are found from them), ``PATH`` (an AWS ``credential_process``),
    ``LITELLM_*``, ``PYTHON*``, the locale. A variable this list misses costs a second host, never a
    request made with another process's settings. The key is a digest: no value is ever in the
    socket's name nor in a log."""
    digest = hashlib.sha256()
    for name in sorted(environ):
        if not volatile(name):
            digest.update(f"{name}={environ[name]}\0".encode(errors="surrogateescape"))
    digest.update(sys.executable.encode())
    here = Path(__file__).resolve().parent
    for module in ("model_host.py", "model_host_server.py", "llm.py"):  # another agent-ls: another host
        with contextlib.suppress(OSError):
            st = (here / module).stat()
            digest.update(f"{here / module}:{st.st_mtime_ns}:{st.st_size}".encode())
    return digest.hexdigest()[:20]


# --- the front end's side --------------------------------------------------------------------


_started: list[subprocess.Popen[bytes]] = []
_shared = False


def share(wanted: bool = True) -> None:
    """This process's model requests are to go to the user's model host (:func:`attach`) rather
    than to litellm imported here: set by every front end at start-up (the language server, the
    terminal chat, ``agent-ls acp``), read when the model library loads
    (:func:`agent_ls.agent.llm.load_library`). ``AGENT_LS_MODEL_HOST=0`` keeps everything
    in-process; so does a platform without Unix sockets, ``flock`` and ``SO_PEERCRED`` (not POSIX).
    Cheap: this module needs the standard library only."""
    global _shared
    _shared = wanted and os.environ.get("AGENT_LS_MODEL_HOST") != "0" and hasattr(os, "getuid")


def shared() -> bool:
    """Whether this process wants the model host (:func:`share`)."""
    return _shared


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
        self.trips = 0
        """Requests sent to the host so far (each is a round trip): what a test counts."""

    def call(self, name: str, **kwargs: Any) -> Any:
        """litellm's ``name`` (one of :data:`CALLS`) in the host: its result, or the exception it
        raised (as an ``Exception`` with its text). Blocking (a local round trip)."""
        return self._sync_request({"op": "call", "name": name, "kwargs": kwargs})

    def count(self, model: str, items: list[dict[str, Any]]) -> list[int | None]:
        """litellm's token count of each of ``items`` (``token_counter``'s ``messages=`` or ``text=``),
        None where it raised: one round trip for all. Blocking."""
        return list(self._sync_request({"op": "count", "model": model, "items": items}))

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
                    self.trips += 1
                    self._sync_file.write(encode(request))
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
        self.trips += 1
        reader, writer = await asyncio.open_unix_connection(str(self.path), limit=LINE_LIMIT)
        try:
            writer.write(encode(request))
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


def encode(obj: Any) -> bytes:
    """One message on the wire."""
    return json.dumps(obj, ensure_ascii=False, separators=(",", ":")).encode() + b"\n"


def _hello(path: Path) -> int:
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.settimeout(5.0)
        s.connect(str(path))
        s.sendall(encode({"op": "hello"}))
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
    if len(os.fsencode(path)) > MAX_SOCKET_PATH:
        raise HostUnavailable(f"the runtime folder's path is too long for a Unix socket ({path})")
    with contextlib.suppress(OSError, ValueError, KeyError):
        return ModelHostClient(path, _hello(path))
    log.debug("model host: starting one at %s", path)
    with open(folder / f"{path.stem}.log", "ab") as errors:
        proc = subprocess.Popen([sys.executable, "-P", "-m", "agent_ls.agent.model_host_server", str(path)], env=dict(environ),
                                cwd=folder, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=errors,
                                start_new_session=True)
    _started.append(proc)  # it outlives this process: never reaped here, never warned about
    outlives_us(proc.pid)  # nor ended with this process's children (other processes use it)
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


