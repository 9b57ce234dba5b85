"""OAuth for HTTP MCP servers: one :class:`~.session.OAuthSession` per server (the manager's
sign-in and sign-out are :mod:`agent_ls.mcp.sign_in`).

- :mod:`.session`: the session the connection's ``httpx`` client authenticates through;
- :mod:`.providers`: the mcp SDK's OAuth providers with the host's behaviour;
- :mod:`.state` (sign-in state and errors), :mod:`.redirect` (browser openers and the loopback
  listener), :mod:`.record` and :mod:`.store` (the stored record, shared between processes),
  :mod:`.dpop` (sender-constrained tokens) and :mod:`.wif` (workload identity JWTs).
"""
