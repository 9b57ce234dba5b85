"""The model library (litellm: seconds to import) for front ends that load it themselves: in a
daemon thread, never on the event loop. The language server's warm-up is
:mod:`agent_ls.server.warmup`."""

from __future__ import annotations

import asyncio
import sys
import threading

_started = False


def load_in_background() -> None:
    """Start importing litellm in a daemon thread (once per process), so that the first prompt
    does not wait for it; a front end that quits meanwhile is not kept waiting for the import."""
    global _started
    if _started or "litellm" in sys.modules:
        return
    # lazy: +1 module, ~4 ms at start-up (litellm itself: seconds, in the thread)
    from agent_ls.agent.llm import get_litellm

    _started = True
    threading.Thread(target=get_litellm, name="import litellm", daemon=True).start()


async def load() -> None:
    """litellm imported (waiting for the background import when it runs), off the event loop."""
    # lazy: +1 module, ~4 ms at start-up (litellm itself: seconds, in a worker thread)
    from agent_ls.agent.llm import get_litellm

    await asyncio.to_thread(get_litellm)
