"""agent-ls: a coding agent and MCP host served as a language server."""

__version__ = "0.1.0"
