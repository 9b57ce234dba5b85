"""The MCP host: connections (:mod:`.connection`), OAuth (:mod:`.oauth`), the manager, the tool
adapter and capability inference. Tool names (``mcp__<server>__<tool>``) are :mod:`agent_ls.core.naming`.

Nothing in this package imports from ``agent_ls.server`` (the LSP layer).
"""
