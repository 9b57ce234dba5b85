"""What every front end shares, above the agent and the MCP host and below the front ends.

- :mod:`.host`: one :class:`~agent_ls.runtime.host.RuntimeHost` per set of workspace folders:
  the settings (loaded, reloaded with the last valid values kept), the trust policy and the
  remembered decisions, and the MCP manager, wired to the front end's questions.
- :mod:`.sessions`: session assembly (the model, the tool registry with the MCP host's tools and
  skills, the permission gate, the store).
- :mod:`.questions`: :class:`~agent_ls.runtime.questions.Questions`, what the runtime asks the
  user; each front end (LSP, ACP, terminal) implements it once.

``agent`` and ``mcp`` never import each other: this layer puts them together.
"""
