"""``bash`` in the ACP client's terminal (``terminal/*``), when the client advertises
``clientCapabilities.terminal``.

The permission gate has decided before the tool runs, so an approved command is the only kind
that reaches the client. Then: ``terminal/create`` (``bash -c COMMAND`` in the session's folder),
the terminal embedded in the tool call (``{type: "terminal", terminalId}``), ``wait_for_exit``
within the command's timeout (``terminal/kill`` when it passes), ``terminal/output`` for the
text and exit status the model gets, and ``terminal/release`` in every case. Cancelling the
turn kills and releases the terminal.

A client that answers ``terminal/create`` with an error did not start anything: the command
runs in agent-ls's own shell instead (today's ``bash``), and so do the session's later
commands. A client that does not answer within :data:`CREATE_TIMEOUT` may still start it, so
the call fails with that reason rather than risk running it twice; later commands run locally.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Sequence
from pathlib import Path
from typing import Any, Protocol

import attrs
from acp.helpers import tool_terminal_ref, update_tool_call
from acp.schema import EnvVariable

from agent_ls.agent.editor.changes import current_call
from agent_ls.agent.tools.arguments import validate_arguments
from agent_ls.core.tools import Tool, ToolResult, ToolSpec

log = logging.getLogger("agent_ls.acp")


class TerminalOwner(Protocol):
    """What a client terminal needs from the session it runs in (:class:`agent_ls.acp.session.AcpSession`)."""

    conn: Any
    id: str
    folder: Path
    terminals: dict[str, str]
    """The client terminal each running ``bash`` call runs in (call id -> terminal id)."""
    terminal_unavailable: str | None
    """Why the client's terminal is not used any more."""

    async def send(self, update: Any) -> None: ...

CREATE_TIMEOUT = 5.0
"""How long the client has to answer ``terminal/create``."""
CONTROL_TIMEOUT = 5.0
"""How long the client has to answer ``terminal/output``, ``kill`` and ``release``."""
OUTPUT_BYTES_PER_CHAR = 4
"""``outputByteLimit`` is the tool's output cap in characters times this (UTF-8 at worst)."""
ENV = (("PAGER", "cat"), ("GIT_PAGER", "cat"), ("GIT_TERMINAL_PROMPT", "0"))
"""As for the local ``bash``: no pager, no credential prompt waiting for input."""


class TerminalBashTool:
    """The ``bash`` tool run through the client's terminal (same spec as the local one)."""

    def __init__(self, local: Tool, owner: TerminalOwner) -> None:
        self._local = local
        self._owner = owner

    @property
    def spec(self) -> ToolSpec:
        """The local spec, its description saying where the command runs: the editor's terminal
        while the client's terminal is in use, agent-ls's own shell once it is not."""
        spec = self._local.spec
        describe = getattr(self._local, "description_for", None)
        if (self._owner.terminal_unavailable is not None or describe is None
                or getattr(self._local, "sandbox", None) is not None):
            return spec
        return attrs.evolve(spec, description=describe(terminal=True))

    async def call(self, arguments: dict[str, Any]) -> ToolResult:
        owner = self._owner
        if owner.terminal_unavailable is not None or getattr(self._local, "sandbox", None) is not None:
            # With the OS sandbox on (agent.sandbox), the command runs confined in agent-ls's own
            # shell: the client's terminal would run it with the user's full rights.
            return await self._local.call(arguments)
        args = validate_arguments(self.spec, arguments)
        if isinstance(args, str):
            return ToolResult.error(args)
        command: str = args["command"]
        if "\x00" in command:
            return ToolResult.error("The command contains a NUL byte")
        timeout = float(args.get("timeout", getattr(self._local, "timeout", 120.0)))
        cap = int(getattr(self._local, "output_cap_chars", 30_000))
        workspace = getattr(self._local, "workspace", None)
        cwd = str(workspace.root) if workspace is not None else str(owner.folder)
        try:
            created = await asyncio.wait_for(owner.conn.create_terminal(
                session_id=owner.id, command="bash", args=["-c", command], cwd=cwd,
                env=[EnvVariable(name=k, value=v) for k, v in ENV],
                output_byte_limit=cap * OUTPUT_BYTES_PER_CHAR if cap > 0 else None), CREATE_TIMEOUT)
        except TimeoutError:
            owner.terminal_unavailable = f"terminal/create got no answer within {CREATE_TIMEOUT:g} s"
            log.warning("ACP: %s; bash runs in agent-ls's own shell from now on", owner.terminal_unavailable)
            return ToolResult.error(
                f"The editor did not answer terminal/create within {CREATE_TIMEOUT:g} s, so the command's "
                "fate is unknown (it may have started in the editor's terminal); it was not run here. Later "
                "commands run in agent-ls's own shell.")
        except asyncio.CancelledError:
            raise
        except Exception as e:
            owner.terminal_unavailable = f"terminal/create failed: {_reason(e)}"
            log.warning("ACP: %s; bash runs in agent-ls's own shell from now on", owner.terminal_unavailable)
            result = await self._local.call(arguments)
            note = f"[the editor's terminal refused the command ({_reason(e)}); it ran in agent-ls's own shell]\n"
            return attrs.evolve(result, content=note + result.content)
        return await self._follow(created.terminal_id, timeout)

    async def _follow(self, terminal_id: str, timeout: float) -> ToolResult:
        owner = self._owner
        call = current_call.get()
        if call is not None:
            owner.terminals[call.call_id] = terminal_id
            await owner.send(update_tool_call(call.call_id, status="in_progress",
                                              content=[tool_terminal_ref(terminal_id)]))
        ids = {"session_id": owner.id, "terminal_id": terminal_id}
        timed_out = False
        try:
            try:
                await asyncio.wait_for(owner.conn.wait_for_terminal_exit(**ids), timeout)
            except TimeoutError:
                timed_out = True
                await _bounded(owner.conn.kill_terminal(**ids), "terminal/kill")
            output = await asyncio.wait_for(owner.conn.terminal_output(**ids), CONTROL_TIMEOUT)
        except asyncio.CancelledError:
            await asyncio.shield(self._end(terminal_id, kill=True))
            raise
        except Exception as e:
            await self._end(terminal_id, kill=True)
            why = "no answer" if isinstance(e, TimeoutError) else _reason(e)
            return ToolResult.error(f"The editor's terminal failed while running the command: {why}")
        await self._end(terminal_id, kill=False)
        return _result(output, timeout, timed_out)

    async def _end(self, terminal_id: str, *, kill: bool) -> None:
        ids = {"session_id": self._owner.id, "terminal_id": terminal_id}
        if kill:
            await _bounded(self._owner.conn.kill_terminal(**ids), "terminal/kill")
        await _bounded(self._owner.conn.release_terminal(**ids), "terminal/release")


def _reason(e: Exception) -> str:
    """An error answer as words: its message and, when the client gave them, its details."""
    data = getattr(e, "data", None)
    details = data.get("details") if isinstance(data, dict) else data if isinstance(data, str) else None
    return f"{e}: {details}" if details else str(e) or type(e).__name__


async def _bounded(request: Awaitable[Any], what: str) -> None:
    """A terminal request whose answer does not matter beyond arriving in time."""
    try:
        await asyncio.wait_for(request, CONTROL_TIMEOUT)
    except asyncio.CancelledError:
        raise
    except Exception as e:
        log.info("ACP: %s: %s", what, _reason(e))


def _result(output: Any, timeout: float, timed_out: bool) -> ToolResult:
    """The model's result, as the local ``bash`` words it."""
    text: str = output.output or ""
    if output.truncated:
        text = "[earlier output was cut by the editor's terminal]\n" + text
    status = output.exit_status
    code = status.exit_code if status is not None else None
    signal = status.signal if status is not None else None
    if timed_out:
        note = f"[command timed out after {timeout:g} s; it was killed]"
    elif code is not None:
        note = f"[exit code {code}]"
    elif signal:
        note = f"[killed by {signal}]"
    else:
        note = "[exit code unknown]"
    if not text:
        text = "(no output)\n"
    elif not text.endswith("\n"):
        text += "\n"
    content = text + note
    if timed_out:
        content = f"Command timed out after {timeout:g} s and was killed.\n" + content
    return ToolResult(content=content, is_error=timed_out or code != 0)


def with_terminal(tools: Sequence[Tool], owner: TerminalOwner) -> list[Tool]:
    """``bash`` through the client's terminal (the other tools as they are)."""
    return [TerminalBashTool(t, owner) if t.spec.name == "bash" and t.spec.server is None else t for t in tools]
