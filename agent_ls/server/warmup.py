"""litellm and the agent, imported off the event loop: warmed up before the MCP host starts
(:func:`agent_ls.server.host.start_host`), or loaded (with work-done progress) when a prompt needs
them first."""

from __future__ import annotations

import asyncio
import contextlib
import importlib
import logging
import os
import sys
from typing import TYPE_CHECKING

from agent_ls.server.approval import agent_settings_now
from agent_ls.server.progress import start_progress
from agent_ls.server.server import in_daemon_thread

if TYPE_CHECKING:
    from agent_ls.server.server import AgentLanguageServer

log = logging.getLogger("agent_ls.server")


async def load_llm() -> None:
    """litellm takes seconds to import: never on the event loop (requests, including
    ``$/cancelRequest``, keep being answered meanwhile)."""
    # lazy: ~4 ms at start-up (litellm itself is imported later still)
    from agent_ls.agent import llm

    if llm._litellm is None:
        log.debug("litellm: loading (or waiting for its load)")
        await in_daemon_thread(llm.get_litellm)
        log.debug("litellm: loaded")


async def load_llm_with_progress(ls: AgentLanguageServer) -> None:
    """:func:`load_llm`, or the whole warm-up while it runs: its rehearsal of the first call
    builds what the provider needs (0.3-0.5 s of CPU), which the prompt's own first call would
    otherwise build again at the same time, each slowing the other down. While a prompt waits,
    the editor shows work-done progress saying so."""
    # lazy: ~4 ms at start-up (litellm itself is imported later still)
    from agent_ls.agent import llm

    warming = prewarm_llm(ls)  # the running warm-up, or one started now (a prompt before the host's start began it)
    if llm._litellm is not None and warming is None:
        return
    progress = await start_progress(ls, "load", "agent-ls", "Loading the model library (first prompt only)…")
    try:
        if warming is not None:
            with contextlib.suppress(Exception):  # a failed warm-up: the prompt loads what it needs itself
                await asyncio.shield(warming)  # (a cancelled prompt leaves the warm-up running)
        await load_llm()
    finally:
        if progress is not None:
            progress.end()


def prewarm_llm(ls: AgentLanguageServer) -> asyncio.Task[None] | None:
    """Import litellm and the agent in the background when a model is configured, so that the
    first prompt is as fast as the later ones; the task (the one already running, if any), or
    None when there is nothing to do. ``AGENT_LS_WARMUP=0`` turns it off (benchmarks)."""
    if ls.warm_up_task is not None and not ls.warm_up_task.done():
        return ls.warm_up_task
    if os.environ.get("AGENT_LS_WARMUP") == "0":
        return None
    if agent_settings_now(ls).model and "litellm" not in sys.modules:  # (sys.modules: also while importing)
        ls.warm_up_task = ls.run_task(warm_up(ls), "warm up the agent")
        return ls.warm_up_task
    return None


async def warm_up(ls: AgentLanguageServer) -> None:
    def load() -> None:
        for name in ("agent_ls.runtime.sessions",):  # the session, the tools, the registry
            importlib.import_module(name)

    log.debug("warm-up: started")
    await load_llm()
    await in_daemon_thread(load)
    log.debug("warm-up: the session modules imported")
    config = agent_settings_now(ls).llm_config(None)
    if config is not None:  # litellm's first call builds the provider's client: do it now, not at the first prompt
        # lazy: ~4 ms at start-up (litellm itself is imported later still)
        from agent_ls.agent import llm

        await in_daemon_thread(lambda: llm.warm_up(config))
    log.debug("warm-up: done")
