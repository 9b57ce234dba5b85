"""The agent: tool protocol, built-in tools, permissions, prompt, LLM loop, sessions.

Nothing in this package imports from ``agent_ls.server`` (the LSP layer).
"""
