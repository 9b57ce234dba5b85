"""Names vulture reports as unused that a framework uses: read by vulture, never run.

    .venv/bin/vulture        (paths and options: [tool.vulture] in pyproject.toml; scripts/test.sh)

vulture matches by name, so each line marks that name used everywhere in agent_ls. Handlers
registered with ``@server.feature`` / ``@server.command`` (pygls) need no line: the decorators
are ignored (``ignore_decorators``). Add a name here only when something outside agent_ls
calls or reads it; code nothing uses is to be removed, not listed.
"""
# ruff: noqa: B018  (each line is a bare attribute access: that is the whitelist format)


class _Used:
    """Any attribute access marks that name used."""

    def __getattr__(self, name: str) -> None:
        return None


_ = _Used()

# The ACP SDK calls these methods of the agent (acp.interfaces.Agent): agent_ls/acp/agent.py.
_.on_connect
_.initialize
_.authenticate
_.new_session
_.load_session

# The MCP SDK's OAuth client: the TokenStorage protocol (SessionTokenStorage in agent_ls/mcp/oauth/providers.py), the expiry it
# reads from its OAuthContext, and the OAuthClientProvider hooks overridden in
# agent_ls/mcp/oauth/wif.py (checked by tests/unit/test_canaries_mcp.py).
_.set_tokens
_.get_client_info
_.set_client_info
_.token_expiry_time
_._select_authorization_server
_._perform_authorization

# litellm reads these module settings (agent_ls/agent/llm.py).
_.suppress_debug_info
_.drop_params

# attrs fields that cattrs serializes (protocol payloads, agent events, JSON-RPC messages): the
# peer reads them, agent_ls never does (agent_ls/server/protocol/, agent_ls/agent/events.py).
_.output_handle
_.has_content
_.deleted
_.python
_.loaded_modules
_.loaded_at_initialize
_.model_host_pid
_.reviewed_edit
_.previously_trusted
_.wait_ms
_.elapsed_ms
_.jsonrpc

# The protocol's published value lists (agent_ls/server/protocol/): documented in
# docs/protocol.md and compared with the TypeScript mirror (tests/extension/test_protocol_mirror.py).
_.COMMANDS
_.SERVER_NOTIFICATIONS
_.APPROVAL_ANSWERS
_.WORKSPACE_TRUST_STATES
_.INTELLIGENCE_KINDS
_.EVENT_TYPES
_.CHANGE_STATUSES

# Public methods the tests and benchmarks use to look inside (not dead: each has a test that
# reads it): the output store's handles (scripts/bench_output.py), the registry's active set,
# the session store's rename/set_model, settings diagnostics per file, redaction of a mapping
# and of live secrets, the host's elicitation handler, a DPoP key's thumbprint, the headless
# OAuth opener (scripts/conformance_client.py, tests/lsp/conftest.py), permission rule merging,
# the model host client's round trips (tests/agent/test_model_host.py).
_.trips
_.handles
_.set_active
_.rename
_.set_model
_.diagnostics_for
_.redact_mapping
_.live_secrets
_.set_elicitation_handler
_.thumbprint
_.headless_opener
_.merge_rules
_.writable  # io protocol: cli/terminal.SafeText says it can be written to
# RE2 options grep sets (agent/builtin_tools/search.py: compile_grep_pattern)
_.log_errors
_.case_sensitive
_.never_nl

# sqlite3 reads Connection.row_factory (agent_ls/agent/checkpoints/engine.py).
_.row_factory

# The observer points of the one conversation runtime (issue 39): called by name
# (runtime/conversations.py `_observe`, agent/tool_runner.py `_observe`).
_.before_turn
_.after_turn
_.before_call
_.after_call
# The seam hooks are to use for a command line (agent_ls/core/sandbox/runner.py; tests/sandbox use it)
_.wrap_shell
# For the runtime: builtin_tools(..., ask_host=host_asker(questions.approve)) (agent_ls/agent/permissions)
_.host_asker
# pydantic and the MCP SDK read these class attributes of the tasks extension (agent_ls/mcp/tasks.py):
# the wire models' config and fields, the extension's identifier.
_.model_config
_.ttl_ms
_.input_responses
_.identifier
# ACP: a subagent's tool call names its agent call in _meta (agent_ls/acp/session.py; the SDK serialises it)
_.field_meta
