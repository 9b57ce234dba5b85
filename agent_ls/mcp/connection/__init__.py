"""One MCP server connection and what it is made of.

- :mod:`.connection`: :class:`~.connection.ServerConnection`, one cohesive class: the owner task
  that connects, restarts and closes one server (the mcp SDK's context managers stay in that
  one task), what the host reads from it without I/O (state, error, listing, handshake, stderr
  tail), the waits on its changes and the requests on its live session;
- what it calls: :mod:`.transports` (stdio and HTTP), :mod:`.eras` (the protocol era a server
  speaks), :mod:`.listing` (tools, resources, prompts, every page), :mod:`.client_handlers`
  (what a server may ask of the client) and :mod:`.failures` (errors, restarts and their
  messages).
"""
