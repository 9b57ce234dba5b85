"""``python -m agent_ls.server``: serve LSP on stdio, importing only the server package.

The same server as ``agent-ls`` / ``agent-ls serve``; this entry point skips the CLI's module
imports (the MCP SDK is imported after ``initialize`` instead of before it).
"""

import logging
import sys

from agent_ls.core.imports import collector_paused

with collector_paused():  # pygls, lsprotocol and the server's modules live as long as the process
    from agent_ls.server.app import create_server
    from agent_ls.server.process_exit import serve_stdio

    server = create_server()
logging.basicConfig(level=logging.WARNING, stream=sys.stderr, format="%(levelname)s %(name)s: %(message)s")
serve_stdio(server)
