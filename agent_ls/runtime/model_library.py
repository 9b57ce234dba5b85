"""The model library (litellm) and the session modules, loaded off the event loop once per
process: warmed up in the background as soon as a model is configured, or loaded (with the
front end's progress) when a turn needs them first.

litellm takes seconds of CPU to import. Every front end goes through :class:`ModelLibrary`: the
host's lifecycle warms it up (:mod:`agent_ls.runtime.lifecycle`: the language server before the MCP
host starts, ACP beside it), a turn waits for it (:meth:`ModelLibrary.ready`).
"""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import sys
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Protocol

from agent_ls.core.tasks import BackgroundTasks, in_daemon_thread

if TYPE_CHECKING:
    from agent_ls.agent.config import AgentSettings
    from agent_ls.agent.llm import LLMConfig

log = logging.getLogger("agent_ls.runtime")


class Progress(Protocol):
    """A front end's progress indicator, begun: report on it, then end it (once)."""

    def report(self, message: str | None = None, percentage: int | None = None) -> None: ...

    def end(self, message: str | None = None) -> None: ...


ProgressStarter = Callable[[str, str, str | None], Awaitable["Progress | None"]]
"""``(kind, title, message)`` -> a begun progress, or None (the front end shows none)."""


async def load() -> None:
    """litellm, imported in a daemon thread (never on the event loop: requests, including
    cancellations, keep being answered meanwhile; a quitting editor is not held by it)."""
    # lazy: ~4 ms at start-up (litellm itself is imported later still)
    from agent_ls.agent import llm

    if not llm.library_loaded():
        log.debug("litellm: loading (or waiting for its load)")
        await in_daemon_thread(llm.load_library)
        log.debug("litellm: loaded")


class ModelLibrary:
    """The model library of one process's front end (``settings``: the agent's settings now;
    ``tasks``: who owns the warm-up task)."""

    def __init__(self, settings: Callable[[], AgentSettings], tasks: BackgroundTasks) -> None:
        self._settings = settings
        self._tasks = tasks
        self.warm_up_task: asyncio.Task[None] | None = None
        """The warm-up while it runs (or after it ended)."""
        self._warmed = False

    def prewarm(self) -> asyncio.Task[None] | None:
        """Import litellm and the session modules in the background, and rehearse the first call,
        when a model is configured: the first prompt is then as fast as the later ones. The task
        (the one already running, if any), or None when there is nothing to do.
        ``AGENT_LS_WARMUP=0`` turns it off (benchmarks)."""
        if self.warm_up_task is not None and not self.warm_up_task.done():
            return self.warm_up_task
        if os.environ.get("AGENT_LS_WARMUP") == "0":
            return None
        if self._settings().model and not self._warmed and "litellm" not in sys.modules:  # (also while importing)
            self.warm_up_task = self._tasks.spawn(self._warm_up(), "warm up the agent")
            return self.warm_up_task
        return None

    async def _warm_up(self) -> None:
        def sessions() -> None:
            importlib.import_module("agent_ls.runtime.sessions")  # the session, the tools, the registry

        log.debug("warm-up: started")
        # The session modules meanwhile: while a model host starts (another process imports
        # litellm), this process would only wait.
        imported = asyncio.ensure_future(in_daemon_thread(sessions))
        try:
            await load()
        finally:
            await imported
        log.debug("warm-up: the session modules imported")
        config = self._settings().llm_config(None)
        if config is not None:  # litellm's first call builds the provider's client: now, not at the first prompt
            # lazy: ~4 ms at start-up (litellm itself is imported later still)
            from agent_ls.agent import llm

            await in_daemon_thread(lambda: llm.warm_up(config))
        self._warmed = True  # (in a model host, litellm is never in this process's sys.modules)
        log.debug("warm-up: done")

    async def ready(self, progress: ProgressStarter | None = None) -> None:
        """litellm loaded, or the whole warm-up while it runs: its rehearsal of the first call
        builds what the provider needs (0.3-0.5 s of CPU), which the prompt's own first call would
        otherwise build again at the same time. While a turn waits, ``progress`` shows it."""
        # lazy: ~4 ms at start-up (litellm itself is imported later still)
        from agent_ls.agent import llm

        warming = self.prewarm()  # the running warm-up, or one started now
        if llm.library_loaded() and warming is None:
            return
        shown = await progress("load", "agent-ls", "Loading the model library (first prompt only)…") \
            if progress is not None else None
        try:
            if warming is not None:
                with contextlib.suppress(Exception):  # a failed warm-up: the turn loads what it needs itself
                    await asyncio.shield(warming)  # (a cancelled turn leaves the warm-up running)
            await load()
        finally:
            if shown is not None:
                shown.end()


def share_model_host() -> None:
    """This process's model requests go to the user's model host (one warm process that holds
    litellm, :mod:`agent_ls.agent.model_host`) instead of importing litellm here: what every front
    end does at start-up (the language server, ``agent-ls chat``, ``agent-ls acp``), unless
    ``AGENT_LS_MODEL_HOST=0``. Cheap (the standard library only): the host is attached, or
    started, when the model library loads (the warm-up, or the first turn)."""
    # lazy: <1 ms, and not agent.llm (+15 ms), so that a front end may call it before it serves
    from agent_ls.agent import model_host

    model_host.share()


def state() -> tuple[str, int | None]:
    """Where this process's model requests go: ``("host", pid)`` (the model host), ``("process",
    None)`` (litellm imported in this process) or ``("none", None)`` (the library is not loaded).
    Loads nothing."""
    llm = sys.modules.get("agent_ls.agent.llm")
    return llm.library_state() if llm is not None else ("none", None)


def credentials_problem(config: LLMConfig) -> str | None:
    """Why a request to ``config``'s model would fail for want of a key (None: it has what it
    needs, or an endpoint of its own)."""
    # lazy: ~4 ms at start-up (litellm itself is not imported)
    from agent_ls.agent.llm import LLMError, check_credentials

    try:
        check_credentials(config)
    except LLMError as e:
        return str(e)
    return None
