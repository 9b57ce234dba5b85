"""What the first ``mcp/status`` needs, imported while the process is still starting.

The first answer to ``mcp/status`` comes from the settings, the remembered decisions and the kept
catalogue (:mod:`agent_ls.mcp.preview`), none of which needs the MCP SDK. Importing those modules
(attrs classes, wcmatch, platformdirs) costs tens of milliseconds; started in a daemon thread
before the language server's own imports, it is done by the time ``initialize`` arrives instead
of delaying the first status after it. A daemon thread: a server told to exit while it still runs
exits at once.
"""

from __future__ import annotations

import importlib
import logging
import threading

log = logging.getLogger(__name__)

FIRST_STATUS_MODULES = ("agent_ls.config.settings", "agent_ls.config.state", "agent_ls.mcp.preview")


def import_first_status_modules() -> None:
    for name in FIRST_STATUS_MODULES:
        try:
            importlib.import_module(name)
        except Exception:  # the real import after initialize reports it
            log.debug("early import of %s failed", name, exc_info=True)


def start() -> threading.Thread:
    """Start importing :data:`FIRST_STATUS_MODULES` in a daemon thread; returns the thread."""
    thread = threading.Thread(target=import_first_status_modules, name="agent-ls preload", daemon=True)
    thread.start()
    return thread
