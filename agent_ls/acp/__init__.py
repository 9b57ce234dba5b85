"""``agent-ls acp``: the agent as an Agent Client Protocol server over stdio (Zed, JetBrains,
Neovim, Emacs...), a sibling of the language server over the same agent, MCP host,
permissions and session store. See docs/acp.md.

Modules: ``stdio`` (the guarded channel, strict JSON-RPC framing), ``agent`` (the ACP methods),
``session`` (one session: turn, approvals, updates, slash commands), ``host`` (settings, the
editor's MCP servers, workspace trust), ``updates`` (events and history as ``session/update``),
``files`` (``fs/read_text_file`` / ``fs/write_text_file`` for the file tools), ``terminal``
(``bash`` in the client's terminal, ``terminal/*``).
"""

from __future__ import annotations

import asyncio
import logging
import os
import sys


def main() -> int:
    """Serve ACP on stdio until the client closes it. Nothing else may write to stdout.

    Once the sessions are closed (their MCP servers stopped, their stores closed) the process
    ends at once: the interpreter's own teardown with litellm loaded takes a second or more,
    which an editor waiting for its agent to quit would feel.
    """
    # lazy: stdout is guarded before anything else is imported (a stray print would break ACP)
    from agent_ls.acp.stdio import guard_stdout

    channel = guard_stdout()
    from agent_ls.core.imports import collector_paused, front_end_start, pydantic_models_light

    # lazy: the ACP SDK and the agent, +265 modules, only once stdout is guarded; the SDK's schema
    # light (no field docstrings, models built at first use: 0.2-0.3 s) and without the
    # collector's walks over them. The methods attrs generates for our classes, here and in the
    # modules the first session imports, come from their bytecode cache (~40 ms; what this
    # process compiled is added to it as it ends); the sandbox probe runs meanwhile
    code = 0
    with front_end_start():
        with collector_paused():
            with pydantic_models_light():
                import acp  # noqa: F401
            from agent_ls.acp.agent import serve
        from agent_ls.runtime.model_library import share_model_host

        share_model_host()  # the model requests go to the user's warm model host (issue 46)
        try:
            asyncio.run(serve(channel))
        except KeyboardInterrupt:
            code = 130
    logging.shutdown()
    sys.stderr.flush()
    os._exit(code)
