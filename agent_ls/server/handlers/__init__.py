"""The language server's request and notification handlers, one module per concept; each
module's ``register(server)`` adds its features (:mod:`agent_ls.server.app` calls them all).

Handlers stay thin (parse the params, call a service, map the result, return), registered with
:func:`agent_ls.server.server.request` (typed params in, a payload class out). The state lives
in the typed services beside them (``ls.runtime``: :class:`agent_ls.runtime.host.RuntimeHost`;
``ls.conversations``: :class:`agent_ls.runtime.conversations.Conversations`; ``ls.status``:
:class:`agent_ls.server.status.StatusNotices`; ``ls.trust_prompts``:
:class:`agent_ls.server.server.TrustPrompts`).

- :mod:`.lifecycle`: initialize, shutdown, exit, settings files and workspace folders
- :mod:`.mcp_methods`: ``mcp/*`` (status, tools, prompts, resources, restart, sign-in, callTool)
- :mod:`.chat`: ``agent/prompt``, ``agent/cancel``
- :mod:`.sessions`: ``agent/sessions/*``, file changes, tool output
- :mod:`.models`: the model picker
- :mod:`.code_actions`: code actions and their commands
- :mod:`.trust`: workspace and editor trust
"""
