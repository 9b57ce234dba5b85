"""``python -m agent_ls.server``: serve LSP on stdio, importing only the server package.

The same start-up as ``agent-ls`` / ``agent-ls serve`` (:func:`agent_ls.server.serve`); this
entry point skips the CLI's argument parsing.
"""

from agent_ls.server import serve

serve()
