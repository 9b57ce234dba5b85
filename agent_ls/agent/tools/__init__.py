"""The agent's tool set: the registry (built-in, MCP and skill tools, deferred behind
``tool_search``), argument checks, and the store of oversized output. The runner that calls one
tool (events, approval, the call, paging) is :mod:`agent_ls.agent.tool_runner`."""
