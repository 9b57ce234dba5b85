"""What the first ``mcp/status`` needs, imported as soon as the ``initialize`` result is on its way.

The first answer to ``mcp/status`` comes from the settings, the remembered decisions and the kept
catalogue (:mod:`agent_ls.mcp.preview`), none of which needs the MCP SDK. Importing those modules
(attrs classes, wcmatch, platformdirs, filelock) costs tens of milliseconds. Started before the
language server's own imports (as it once was), the thread competed with them for the
interpreter and made ``initialize`` slower (issue 30 item 3); now :mod:`.lifecycle` starts it
when the result has been written, while the editor reads it and sends ``initialized``. A daemon
thread: a server told to exit while it still runs exits at once.
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
