"""The MCP host: connections, manager, tool adapter, naming, capability inference.

Nothing in this package imports from ``agent_ls.server`` (the LSP layer).
"""
