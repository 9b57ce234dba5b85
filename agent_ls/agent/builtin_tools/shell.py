"""``bash``: a shell command in the first workspace root, in its own process group, with a
timeout that kills everything it started and output kept head and tail within the cap.

The command runs without the agent's secrets (:func:`shell_environment`): every variable whose
name looks secret (provider keys, tokens, passwords: the names :mod:`agent_ls.core.redact`
masks) and every variable whose value is a registered secret is removed, except the names the
user passes through (``agent.shellEnvPassthrough``, user settings only).

With a :class:`~agent_ls.core.sandbox.Sandbox` (``agent.sandbox``, on by default) the command runs
inside it (:meth:`~agent_ls.core.sandbox.Sandbox.wrap`); the model is told what the sandbox
allows, and a failure that looks like the sandbox's (a read-only file system, a refused host)
says so and how to retry outside (``outside_sandbox: true``, which the permission gate always
puts to the user). Where no mechanism works the command runs unconfined only after the gate has
asked (every command asks then), and the result says it ran without a sandbox."""

from __future__ import annotations

import asyncio
import codecs
import collections
import contextlib
import os
import re
import signal
from collections.abc import Iterable, Mapping
from typing import Any

import attrs

from agent_ls.agent.builtin_tools.base import DEFAULT_OUTPUT_CAP_CHARS, BuiltinTool, cut_marker
from agent_ls.agent.jobs import JobTable, TooMany
from agent_ls.agent.workspace import Workspace
from agent_ls.core.process import kill_group, wait_exit
from agent_ls.core.process_secrets import environment
from agent_ls.core.redact import live_secrets, secret_env_name
from agent_ls.core.sandbox import Sandbox, SandboxUnavailable, Wrapped
from agent_ls.core.tools import Capability, SandboxMark, ToolResult

DEFAULT_BASH_TIMEOUT = 120.0
"""Default ``bash`` timeout in seconds."""
MAX_BASH_TIMEOUT = 600.0
"""Largest timeout the model may ask for (or the configured default, if larger)."""

_DRAIN_SECONDS = 0.5
"""After the shell exits, how long to wait for the end of its output."""


class _OutputCollector:
    """Keeps the head and the tail of a stream of text within a character budget."""

    def __init__(self, max_chars: int) -> None:
        self.max_chars = max_chars
        unlimited = max_chars <= 0
        self._head_limit = (1 << 62) if unlimited else max_chars * 3 // 4
        self._tail_limit = 0 if unlimited else max_chars - self._head_limit
        self._head: list[str] = []
        self._head_len = 0
        self._tail: collections.deque[str] = collections.deque()
        self._tail_len = 0
        self.total = 0
        self._decoder = codecs.getincrementaldecoder("utf-8")(errors="replace")

    def feed_bytes(self, data: bytes, *, final: bool = False) -> None:
        self.feed(self._decoder.decode(data, final))

    def feed(self, text: str) -> None:
        if not text:
            return
        self.total += len(text)
        room = self._head_limit - self._head_len
        if room > 0:
            take = text[:room]
            self._head.append(take)
            self._head_len += len(take)
            text = text[room:]
        if text and self._tail_limit > 0:
            self._tail.append(text)
            self._tail_len += len(text)
            while self._tail and self._tail_len - len(self._tail[0]) >= self._tail_limit:
                self._tail_len -= len(self._tail.popleft())

    def result(self) -> tuple[str, int]:
        head = "".join(self._head)
        kept_tail = "".join(self._tail)[-self._tail_limit :] if self._tail_limit else ""
        cut = self.total - len(head) - len(kept_tail)
        if cut <= 0:
            return head + kept_tail, 0
        return f"{head}\n{cut_marker(cut)}\n{kept_tail}", cut


async def _pump(stream: asyncio.StreamReader, collector: _OutputCollector) -> None:
    while True:
        chunk = await stream.read(65536)
        if not chunk:
            collector.feed_bytes(b"", final=True)
            return
        collector.feed_bytes(chunk)


_NOT_SECRET = frozenset({"PWD", "OLDPWD"})
"""Standard names a secret pattern matches ("pwd" is short for password elsewhere)."""


def shell_environment(environ: Mapping[str, str], passthrough: Iterable[str] = ()) -> dict[str, str]:
    """``environ`` without the agent's secrets: names that look secret (``*_API_KEY``,
    ``*_TOKEN``, ``*PASSWORD*``, ``*SECRET*``, ...) and values registered as secrets are left
    out, unless the name is in ``passthrough``."""
    keep = _NOT_SECRET.union(passthrough)
    secrets = set(live_secrets())
    return {k: v for k, v in environ.items() if k in keep or not (secret_env_name(k) or v in secrets)}


_PATH_IN_ERROR = re.compile(r"'(/[^'\n]+)'|(?:^|\s)(/[^\s:'\"]+)")


def refused_writes(output: str, sandbox: Sandbox | None) -> tuple[str, ...]:
    """The places a sandboxed command failed to write because they are read-only in the sandbox
    (from the error messages of its output: ``touch: cannot touch '/x/y': Read-only file
    system``, ``OSError: [Errno 30] Read-only file system: '/x/y'``), as the nearest existing
    folder a grant would make writable. Never a power file, a writable place, ``/`` or home."""
    if sandbox is None or "Read-only file system" not in output:
        return ()
    policy = sandbox.policy
    home = os.path.realpath(os.path.expanduser("~"))
    power = [p.path for p in policy.power]
    out: list[str] = []
    for line in output.splitlines():
        m = _PATH_IN_ERROR.search(line) if "Read-only file system" in line else None
        if m is None:
            continue
        path = m.group(1) or m.group(2)
        folder = os.path.dirname(os.path.realpath(path))
        while folder != "/" and not os.path.isdir(folder):
            folder = os.path.dirname(folder)
        inside = [w for w in policy.writable if folder == w or folder.startswith(w.rstrip("/") + "/")]
        guarded = [p for p in power if os.path.realpath(path) == p or os.path.realpath(path).startswith(p + "/")]
        if folder in ("/", home) or inside or guarded or folder in out:
            continue
        out.append(folder)
        if len(out) >= 5:
            break
    return tuple(out)


def _format_seconds(seconds: float) -> str:
    return f"{seconds:g} s"


class BashTool(BuiltinTool):
    _name = "bash"
    _capability = Capability.WRITE
    _required = ["command"]

    def __init__(
        self,
        workspace: Workspace,
        *,
        output_cap_chars: int = DEFAULT_OUTPUT_CAP_CHARS,
        timeout: float = DEFAULT_BASH_TIMEOUT,
        env_passthrough: Iterable[str] = (),
        sandbox: Sandbox | None = None,
        jobs: JobTable | None = None,
    ) -> None:
        self.timeout = timeout
        self.sandbox = sandbox
        self._last_refused: tuple[str, ...] = ()
        self.jobs = jobs
        """Where ``run_in_background`` commands go (None: no background commands)."""
        self.env_passthrough = tuple(env_passthrough)
        self.max_timeout = max(MAX_BASH_TIMEOUT, timeout)
        self._description = self.description_for(terminal=False)
        self._properties = {
            "command": {"type": "string", "description": "The command line to run with `bash -c`."},
            "timeout": {
                "type": "number",
                "exclusiveMinimum": 0,
                "maximum": self.max_timeout,
                "description": f"Timeout in seconds (default {timeout:g}).",
            },
        }
        if jobs is not None:
            self._properties["run_in_background"] = {
                "type": "boolean",
                "description": "Start the command in the background and return at once with its id (bg-N): for "
                               "servers, watchers and long builds. Read its output with shell_output, stop it with "
                               "shell_stop; you are told when it ends. The timeout does not apply.",
            }
        if sandbox is not None:
            self._properties["outside_sandbox"] = {
                "type": "boolean",
                "description": "Run this command outside the OS sandbox. Only after a command failed because of "
                               "the sandbox; the user is always asked first.",
            }
        super().__init__(workspace, output_cap_chars=output_cap_chars)

    def description_for(self, *, terminal: bool) -> str:
        """What the model is told: run here (no terminal, stdin empty), or in the editor's
        terminal (the ACP client's ``terminal/*``, shown to the user with the call)."""
        where = (
            "Run a shell command with `bash -c` in the workspace root, in the editor's terminal (the "
            "user sees it with the tool call), and return its output (stdout and stderr interleaved) "
            "and exit code. Nobody types into that terminal: a command that waits for input waits "
            "until its timeout. "
            if terminal else
            "Run a shell command with `bash -c` in the workspace root and return its output "
            "(stdout and stderr interleaved) and exit code. There is no terminal and no "
            "input (stdin is empty). "
        )
        cut = ("Very long output keeps its end (the editor's terminal drops the beginning, with a marker). "
               if terminal else "Very long output is cut in the middle with a marker. ")
        box = ""
        if self.sandbox is not None:
            avail = self.sandbox.availability
            box = (self.sandbox.policy.describe() + " " if avail.available
                   else f"There is no OS sandbox here ({avail.detail}): the user is asked before every command. ")
        return (
            f"{where}{box}Default timeout {_format_seconds(self.timeout)}, at most "
            f"{_format_seconds(self.max_timeout)}; on timeout the command and everything it "
            f"started are killed. {cut}Prefer "
            "read_file, grep, glob and edit_file for reading, searching and editing files."
        )

    async def _run(self, args: dict[str, Any]) -> ToolResult:
        command: str = args["command"]
        timeout = float(args.get("timeout", self.timeout))
        if "\x00" in command:
            return ToolResult.error("The command contains a NUL byte")
        env = shell_environment(environment(), self.env_passthrough)  # passthrough names may be taken secrets
        env.update({"PAGER": "cat", "GIT_PAGER": "cat", "GIT_TERMINAL_PROMPT": "0"})
        argv: list[str] = ["bash", "-c", command]
        wrapped: Wrapped | None = None
        unconfined = ""
        mark: SandboxMark | None = None
        if self.sandbox is not None and args.get("outside_sandbox") is True:
            unconfined = "[ran outside the sandbox, as the user approved]"
            mark = SandboxMark("outside")
        elif self.sandbox is not None:
            try:
                wrapped = await self.sandbox.wrap(argv, cwd=str(self.workspace.root), env=env,
                                                  network=self.jobs.network if self.jobs is not None else None)
            except SandboxUnavailable as exc:  # the gate asked the user for this command (it always does then)
                unconfined = f"[ran without a sandbox: {exc}]"
                mark = SandboxMark("unsandboxed")
            else:
                argv, env = wrapped.argv, wrapped.env
                mark = SandboxMark("sandboxed", wrapped.mechanism.value,
                                   "off" if self.sandbox.policy.network.is_off else "proxy")
        if args.get("run_in_background") is True and self.jobs is not None:
            return await self._start_background(command, argv, env, wrapped, unconfined)
        try:
            result = await self._spawn_and_collect(argv, env, timeout, unconfined)
        finally:
            if wrapped is not None:
                wrapped.cleanup()
        if mark is not None and mark.mode == "sandboxed":
            mark = attrs.evolve(mark, hosts=self._last_refused, paths=refused_writes(result.content, self.sandbox))
        return attrs.evolve(result, sandbox=mark)

    async def _start_background(self, command: str, argv: list[str], env: dict[str, str], wrapped: Wrapped | None,
                                unconfined: str) -> ToolResult:
        """The command as a background job (:mod:`agent_ls.agent.jobs`): its id at once; the
        sandbox's files are cleaned up when it ends."""
        assert self.jobs is not None
        cleanup = wrapped.cleanup if wrapped is not None else None
        try:
            job = await self.jobs.start_shell(command, argv, cwd=str(self.workspace.root), env=env, cleanup=cleanup)
        except (TooMany, OSError) as exc:
            if cleanup is not None:
                cleanup()
            return ToolResult.error(f"Could not start the command in the background: {exc}")
        limit = (f"it is stopped after {_format_seconds(self.jobs.timeout)} (agent.backgroundTimeout)"
                 if self.jobs.timeout is not None else "it runs until it ends or is stopped")
        lines = [f"Started in the background as {job.id} ({limit}). Read its output with shell_output "
                 f"(id {job.id!r}), stop it with shell_stop; you will be told when it ends."]
        if unconfined:
            lines.append(unconfined)
        return ToolResult(content="\n".join(lines))

    async def _spawn_and_collect(self, argv: list[str], env: dict[str, str], timeout: float,
                                 unconfined: str) -> ToolResult:
        spawn = asyncio.ensure_future(
            asyncio.create_subprocess_exec(
                *argv,
                cwd=self.workspace.root,
                stdin=asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                start_new_session=True,
                env=env,
            )
        )
        try:
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            # Cancelled while the process was being set up: it may already be running (and
            # have started children). Unshielded, asyncio would kill only bash itself and
            # orphan the rest; wait for the spawn to finish and kill the whole group.
            with contextlib.suppress(BaseException):
                kill_group(await spawn)
            raise
        except OSError as exc:
            return ToolResult.error(f"Could not start bash: {exc}")
        assert proc.stdout is not None
        collector = _OutputCollector(self.output_cap_chars)
        reader = asyncio.create_task(_pump(proc.stdout, collector))
        timed_out = False
        leftovers = False
        try:
            try:
                await asyncio.wait_for(wait_exit(proc), timeout)
            except TimeoutError:
                timed_out = True
                kill_group(proc)
            done, _ = await asyncio.wait({reader}, timeout=_DRAIN_SECONDS)
            if not done:
                # Something the command started still holds the output open.
                leftovers = True
                kill_group(proc)
                done, _ = await asyncio.wait({reader}, timeout=_DRAIN_SECONDS)
                if not done:
                    reader.cancel()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(wait_exit(proc), 5)
        except BaseException:
            kill_group(proc)
            reader.cancel()
            raise
        if reader.done() and not reader.cancelled() and reader.exception() is not None:
            collector.feed(f"\n[error reading output: {reader.exception()}]")

        output, cut = collector.result()
        code = proc.returncode
        notes: list[str] = []
        if timed_out:
            notes.append(
                f"[command timed out after {_format_seconds(timeout)}; it was killed with its process group]"
            )
        elif leftovers:
            notes.append("[background processes still holding the output open were killed]")
        if code is None:
            notes.append("[exit code unknown]")
        elif code < 0:
            try:
                name = signal.Signals(-code).name
            except ValueError:
                name = f"signal {-code}"
            notes.append(f"[killed by {name}]" if not timed_out else f"[exit: killed by {name}]")
        else:
            notes.append(f"[exit code {code}]")
        if unconfined:
            notes.append(unconfined)
        elif self.sandbox is not None:
            notes += self._sandbox_notes(output, code)
        if not output:
            output = "(no output)\n"
        elif not output.endswith("\n"):
            output += "\n"
        text = output + "\n".join(notes)
        if timed_out:
            text = f"Command timed out after {_format_seconds(timeout)} and was killed.\n" + text
        return ToolResult(content=text, is_error=timed_out or code != 0, truncated_chars=cut)

    def _sandbox_notes(self, output: str, code: int | None) -> list[str]:
        """What the sandbox refused during the call, with the way to retry outside it."""
        assert self.sandbox is not None
        refused = self.sandbox.take_refused()
        self._last_refused = tuple(refused)
        notes = []
        if refused:
            notes.append(f"[sandbox: the network proxy refused {', '.join(refused)} "
                         f"({self.sandbox.policy.network.describe()})]")
        signs = ("Read-only file system", "Permission denied", "Operation not permitted")
        if code != 0 and (any(sign in output for sign in signs) or refused):
            notes.append("[this command ran in the OS sandbox and may have failed because of it; to retry it outside "
                         "the sandbox call bash again with outside_sandbox: true (the user is asked first)]")
        return notes
