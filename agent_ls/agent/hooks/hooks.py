"""The hooks of one session (or of a front end's direct calls): one method per event.

Each method runs the event's matching hooks (:mod:`agent_ls.config.hooks`) at once, each with
the event's JSON on stdin (:meth:`Hooks.run`), and returns the combined
:class:`~agent_ls.agent.hooks.outcome.HookOutcome`. Every run is reported as it ends
(:attr:`Hooks.report`, and the ``report`` a call passes: :func:`agent_ls.agent.hooks.shown.reporter`
makes each a ``hook`` event of the turn) and logged.

The tool events are run by the one tool runner (:mod:`agent_ls.agent.tool_runner`). The
conversation events are run by whoever owns the conversation (the runtime's conversation
service); what each outcome means for it:

- :meth:`Hooks.session_start`: ``context`` joins the model's first request.
- :meth:`Hooks.user_prompt_submit`: ``blocked``: the prompt is not sent, ``message`` is shown;
  else ``context`` goes with the prompt to the model.
- :meth:`Hooks.pre_compact`: ``blocked``: no compaction now (``message`` for the user).
- :meth:`Hooks.stop`: ``blocked``: the turn goes on, with ``message`` as the next user message
  (``stop_hook_active`` is true on that next stop, so a hook can let it end).
- :meth:`Hooks.session_end`: nothing can be blocked; ``notices`` for the user.

In every case ``notices`` are for the user (non-blocking errors, the hooks' messages).
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any

import attrs

from agent_ls.agent.hooks.outcome import HookOutcome, HookRun, combine, read_run
from agent_ls.agent.hooks.process import hook_environment, run_hook_process
from agent_ls.config.hooks import HookSpec
from agent_ls.config.sandbox import SandboxSettings
from agent_ls.core.sandbox import Sandbox

log = logging.getLogger(__name__)

Report = Callable[[HookRun], Awaitable[None] | None]
"""Told about each hook run as it ends (a broken listener is logged, never raised)."""


async def _tell(report: Report | None, run: HookRun) -> None:
    if report is None:
        return
    try:
        out = report(run)
        if inspect.isawaitable(out):
            await out
    except Exception:
        log.exception("hook report failed")


@attrs.define
class Hooks:
    """The hooks in effect for a session in ``folder`` (the first workspace folder)."""

    specs: Sequence[HookSpec]
    folder: Path
    """Where a user hook runs (a workspace file's hook runs in its own folder)."""
    session_id: str = ""
    env_passthrough: tuple[str, ...] = ()
    """``agent.shellEnvPassthrough``: secret-looking variables the hooks still get, like ``bash``."""
    report: Report | None = None
    sandbox: Sandbox | None = None
    """The OS sandbox the hooks run in (``agent.sandbox``; None: off)."""

    def matching(self, event: str, name: str | None = None) -> list[HookSpec]:
        """The hooks of ``event`` that apply to ``name`` (a tool, a SessionStart source, a PreCompact
        trigger), each command once."""
        seen: set[tuple[str, Path | None]] = set()
        out = []
        for spec in self.specs:
            if spec.event == event and spec.matches(name) and (spec.command, spec.folder) not in seen:
                seen.add((spec.command, spec.folder))
                out.append(spec)
        return out

    def has(self, event: str) -> bool:
        return any(s.event == event for s in self.specs)

    async def run(self, event: str, data: dict[str, Any], *, name: str | None = None,
                  report: Report | None = None) -> HookOutcome:
        """Run ``event``'s hooks for ``name`` with ``data`` (the event's fields, snake_case like
        Claude Code's) and combine what they say. Cancelling kills the running hooks."""
        specs = self.matching(event, name)
        if not specs:
            return HookOutcome(event)
        runs = await asyncio.gather(*(self._one(spec, data, report) for spec in specs))
        return combine(event, runs)

    async def _one(self, spec: HookSpec, data: dict[str, Any], report: Report | None) -> HookRun:
        folder = spec.folder or self.folder
        payload = {"session_id": self.session_id, "workspace_folder": str(folder), "cwd": str(folder),
                   "hook_event_name": spec.event, **data}
        stdin = json.dumps(payload, ensure_ascii=False, default=str).encode()
        env = hook_environment(folder, spec.event, self.env_passthrough)
        result = await run_hook_process(spec.command, stdin, cwd=folder, env=env, timeout=spec.timeout,
                                        sandbox=self.sandbox)
        run = read_run(spec, result)
        log.info("%s (%s)", run.line(), spec.where)
        await _tell(self.report, run)
        await _tell(report, run)
        return run

    # -- tool events (the tool runner) -------------------------------------------------------------
    async def pre_tool_use(self, tool: str, tool_input: dict[str, Any], call_id: str, *,
                           report: Report | None = None) -> HookOutcome:
        return await self.run("PreToolUse", {"tool_name": tool, "tool_input": tool_input, "tool_use_id": call_id},
                              name=tool, report=report)

    async def permission_request(self, tool: str, tool_input: dict[str, Any], call_id: str, reason: str, *,
                                 report: Report | None = None) -> HookOutcome:
        data = {"tool_name": tool, "tool_input": tool_input, "tool_use_id": call_id, "reason": reason}
        return await self.run("PermissionRequest", data, name=tool, report=report)

    async def post_tool_use(self, tool: str, tool_input: dict[str, Any], call_id: str, response: dict[str, Any], *,
                            report: Report | None = None) -> HookOutcome:
        data = {"tool_name": tool, "tool_input": tool_input, "tool_use_id": call_id, "tool_response": response}
        return await self.run("PostToolUse", data, name=tool, report=report)

    async def post_tool_use_failure(self, tool: str, tool_input: dict[str, Any], call_id: str, error: str, *,
                                    report: Report | None = None) -> HookOutcome:
        data = {"tool_name": tool, "tool_input": tool_input, "tool_use_id": call_id, "error": error}
        return await self.run("PostToolUseFailure", data, name=tool, report=report)

    # -- conversation events (the runtime's conversation service) ---------------------------------
    async def session_start(self, source: str = "startup", *, report: Report | None = None) -> HookOutcome:
        """``source``: ``startup`` (a new conversation), ``resume``, ``clear`` or ``compact``."""
        return await self.run("SessionStart", {"source": source}, name=source, report=report)

    async def user_prompt_submit(self, prompt: str, *, report: Report | None = None) -> HookOutcome:
        return await self.run("UserPromptSubmit", {"prompt": prompt}, report=report)

    async def pre_compact(self, trigger: str = "manual", instructions: str = "", *,
                          report: Report | None = None) -> HookOutcome:
        """``trigger``: ``manual`` (``/compact``) or ``auto`` (the window filled up)."""
        return await self.run("PreCompact", {"trigger": trigger, "custom_instructions": instructions}, name=trigger,
                              report=report)

    async def stop(self, *, stop_hook_active: bool = False, last_message: str = "",
                   report: Report | None = None) -> HookOutcome:
        """The model ended its turn. ``stop_hook_active``: this turn already went on because a Stop
        hook blocked (a hook must not keep the turn going forever)."""
        data = {"stop_hook_active": stop_hook_active, "last_assistant_message": last_message}
        return await self.run("Stop", data, report=report)

    async def session_end(self, reason: str = "other", *, report: Report | None = None) -> HookOutcome:
        """``reason``: ``clear``, ``logout``, ``exit`` (the front end closed) or ``other``."""
        return await self.run("SessionEnd", {"reason": reason}, report=report)


def hooks_for(specs: Sequence[HookSpec], roots: Sequence[Path], session_id: str = "",
              env_passthrough: Sequence[str] = (), report: Report | None = None,
              sandbox: SandboxSettings | None = None) -> Hooks | None:
    """A session's :class:`Hooks` (None when no hook is configured: nothing to run, nothing to
    pay), in the OS sandbox of ``sandbox`` (the ``agent.sandbox`` settings) when it is on."""
    if not specs or not roots:
        return None
    box = sandbox.sandbox(list(roots)) if sandbox is not None else None
    return Hooks(tuple(specs), Path(roots[0]), session_id, tuple(env_passthrough), report, box)
