"""One MCP server connection and what it is made of.

- :mod:`.lifecycle`: :class:`~.lifecycle.ServerConnection`, the owner task that connects,
  restarts and closes one server (the mcp SDK's context managers stay in that one task);
- :mod:`.state`: what the host reads from a connection without I/O (state, error, listing) and
  the waits on its changes; :mod:`.calls`: the requests on its live session;
- :mod:`.transports` (stdio and HTTP), :mod:`.eras` (the protocol era a server speaks),
  :mod:`.listing` (tools, resources, prompts), :mod:`.client_handlers` (what a server may ask
  of the client) and :mod:`.failures` (errors, restarts and their messages).
"""
