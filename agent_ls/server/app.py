"""The language server, assembled: logging to the editor, then every feature module's handlers.

:func:`create_server` is what ``agent-ls serve`` and ``python -m agent_ls.server`` run. The
handler modules it registers (:mod:`agent_ls.server.handlers`, bottom to top): :mod:`.lifecycle` (initialize, shutdown, settings files),
:mod:`.mcp_methods` (``mcp/*``), :mod:`.chat` (``agent/prompt``, ``agent/cancel``),
:mod:`.sessions` (``agent/sessions/*``, file changes, tool output), :mod:`.models` (the model
picker), :mod:`.code_actions` and
:mod:`.trust` (workspace trust). Custom requests are defined in :mod:`agent_ls.server.protocol`.
"""

from __future__ import annotations

import functools
import logging
import os

from agent_ls.runtime.conversations import Conversations
from agent_ls.runtime.front import FrontEnd
from agent_ls.server.editor_questions import LspQuestions
from agent_ls.server.handlers import (
    chat,
    checkpoints,
    code_actions,
    jobs,
    lifecycle,
    mcp_methods,
    models,
    sessions,
    trust,
)
from agent_ls.server.host import EditorHostListener
from agent_ls.server.protocol.methods import INVALID_PARAMS, REQUEST_CANCELLED, REQUEST_FAILED
from agent_ls.server.server import AgentLanguageServer, LspLogHandler
from agent_ls.server.workspaces import workspaces_payload


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

    server.runtime.questions = LspQuestions(server)
    server.lifecycle.listener = EditorHostListener(server)
    server.conversations = lsp_conversations(server)
    server.lifecycle.reloaded.append(server.conversations.settings_changed)
    server.lifecycle.settled.append(server.conversations.warm_checkpoints)
    server.status.workspaces = functools.partial(workspaces_payload, server)
    lifecycle.register(server)
    mcp_methods.register(server)
    chat.register(server)
    sessions.register(server)
    models.register(server)
    code_actions.register(server)
    trust.register(server)
    checkpoints.register(server)
    jobs.register(server)


def lsp_conversations(server: AgentLanguageServer) -> Conversations:
    """The chat's conversations: sessions on the workspace folders with the editor's files,
    language intelligence and questions, the MCP host as it starts, the model library loaded with
    the editor's progress."""

    def front() -> FrontEnd:
        # lazy: the editor's file and intelligence adapters (sqlite3, difflib), ~40 ms at start-up
        from agent_ls.server.editor.editor_files import LspEditorFiles
        from agent_ls.server.editor.intelligence import lsp_intelligence

        return FrontEnd(questions=server.runtime.questions, editor=LspEditorFiles(server),
                        intelligence=lsp_intelligence(server))

    return Conversations(folders=server.folders, settings=server.runtime.agent_settings,
                         host=server.lifecycle.session_host, front=front,
                         prepare=lambda: server.lifecycle.models.ready(server.lifecycle.listener.progress),
                         tasks=server.tasks, checkpoints=True)


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
