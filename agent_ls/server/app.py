"""The language server, assembled: logging to the editor, then every feature module's handlers.

:func:`create_server` is what ``agent-ls serve`` and ``python -m agent_ls.server`` run. The
handler modules it registers (:mod:`agent_ls.server.handlers`, bottom to top): :mod:`.lifecycle` (initialize, shutdown, settings files),
:mod:`.mcp_methods` (``mcp/*``), :mod:`.chat` (``agent/prompt``, ``agent/cancel``),
:mod:`.sessions` (``agent/sessions/*``, file changes, tool output), :mod:`.models` (the model
picker), :mod:`.code_actions` and
:mod:`.trust` (workspace trust), :mod:`.sandbox` (the sandbox's workspace grants). Custom requests are defined in :mod:`agent_ls.server.protocol`.
"""

from __future__ import annotations

import logging
import os

from agent_ls.server.handlers import (
    apps,
    chat,
    checkpoints,
    code_actions,
    jobs,
    lifecycle,
    mcp_methods,
    models,
    sandbox,
    sessions,
    trust,
)
from agent_ls.server.protocol.methods import INVALID_PARAMS, REQUEST_CANCELLED, REQUEST_FAILED
from agent_ls.server.server import AgentLanguageServer, LspLogHandler


def register(server: AgentLanguageServer) -> None:
    handler = LspLogHandler(server)
    # AGENT_LS_LOG_LEVEL=DEBUG (profiling: scripts/bench_editor_prompt.py --timeline): the debug
    # lines too, each with the server's clock (epoch seconds) at which it was logged
    debug = os.environ.get("AGENT_LS_LOG_LEVEL", "").upper() == "DEBUG"
    handler.setFormatter(logging.Formatter(("@%(created).3f " if debug else "") + "%(levelname)s %(name)s: %(message)s"))
    # lazy: ~2 ms at start-up
    from agent_ls.core.redact import RedactingFilter

    handler.addFilter(RedactingFilter())  # tokens seen at run time never reach the output channel
    pkg_logger = logging.getLogger("agent_ls")
    pkg_logger.addHandler(handler)
    pkg_logger.setLevel(logging.DEBUG if debug else logging.INFO)
    pkg_logger.propagate = False
    logging.getLogger("pygls.protocol.json_rpc").addFilter(_expected_errors)

    lifecycle.register(server)
    mcp_methods.register(server)
    chat.register(server)
    sessions.register(server)
    models.register(server)
    code_actions.register(server)
    trust.register(server)
    checkpoints.register(server)
    sandbox.register(server)
    jobs.register(server)
    apps.register(server)


def _expected_errors(record: logging.LogRecord) -> bool:
    """pygls logs every error response with a traceback; the expected ones (bad params,
    impossible or cancelled requests) are answered to the client, not logged."""
    exc = record.exc_info[1] if record.exc_info else None
    code = getattr(exc, "code", None)
    return code not in (INVALID_PARAMS, REQUEST_FAILED, REQUEST_CANCELLED)


def create_server() -> AgentLanguageServer:
    server = AgentLanguageServer()
    register(server)
    return server
