"""The language server's request and notification handlers, one module per concept; each
module's ``register(server)`` adds its features (:mod:`agent_ls.server.app` calls them all).

Handlers stay thin (parse the params, call a service, map the result, return), registered with
:func:`agent_ls.server.server.request` (typed params in, a payload class out; commands with
:func:`agent_ls.server.server.command`). The state lives in the typed services the server holds
(``ls.client``: :class:`agent_ls.server.client.EditorClient`; ``ls.runtime``:
:class:`agent_ls.runtime.host.RuntimeHost`; ``ls.lifecycle``:
:class:`agent_ls.runtime.lifecycle.HostLifecycle`; ``ls.conversations``:
:class:`agent_ls.runtime.conversations.Conversations`; ``ls.turns``:
:class:`agent_ls.server.turns.EditorTurns`; ``ls.status``, ``ls.questions``,
``ls.direct_tools``, ``ls.settings_diagnostics``); a handler passes on the services a helper
needs, never the server.

- :mod:`.lifecycle`: initialize, shutdown, exit, settings files and workspace folders
- :mod:`.mcp_methods`: ``mcp/*`` (status, tools, prompts, resources, restart, sign-in, callTool)
- :mod:`.chat`: ``agent/prompt``, ``agent/cancel``
- :mod:`.sessions`: ``agent/sessions/*``, file changes, tool output
- :mod:`.models`: the model picker
- :mod:`.code_actions`: code actions and their commands
- :mod:`.trust`: workspace and editor trust
- :mod:`.apps`: MCP Apps (``agent/appCallTool``, ``agent/appContext``)
"""
