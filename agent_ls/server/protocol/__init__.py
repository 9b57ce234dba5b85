"""The custom LSP protocol of agent-ls: method names and typed payloads, defined once.

Mirrored module by module in ``editor-extension/src/protocol/`` and documented in
``docs/protocol.md``:

- :mod:`.methods`: method and command names, error codes, value lists;
- :mod:`.codec`: camelCase (un)structuring with cattrs, :func:`~.codec.parse` (a bad shape is
  a JSON-RPC ``InvalidParams`` error response, never a hang), the raw JSON-RPC envelopes;
- payloads by feature: :mod:`.prompt`, :mod:`.sessions` (sessions, file changes, edit review),
  :mod:`.mcp` (status, servers, resources, prompts, tools), :mod:`.questions` (approval, trust,
  elicitation, sampling consent), :mod:`.commands` (code action commands), :mod:`.intelligence`
  (the editor's language intelligence for the agent's tools).

This module re-exports nothing: import from the module that defines a name.
"""
