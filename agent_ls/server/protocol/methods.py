"""The custom LSP protocol's names and values: methods, commands, error codes, value lists.

Mirrored in ``editor-extension/src/protocol/methods.ts`` and documented in ``docs/protocol.md``.
The payloads are in the sibling modules (``prompt``, ``sessions``, ``mcp``, ``questions``,
``commands``, ``jobs``); how they go on the wire is :mod:`agent_ls.server.protocol.codec`.
"""

from __future__ import annotations

# client -> server requests --------------------------------------------------------------
PROMPT = "agent/prompt"
CANCEL = "agent/cancel"
SESSIONS_LIST = "agent/sessions/list"
SESSIONS_NEW = "agent/sessions/new"
SESSIONS_RESUME = "agent/sessions/resume"
SESSIONS_DELETE = "agent/sessions/delete"
SESSIONS_RENAME = "agent/sessions/rename"
SERVER_INFO = "agent/serverInfo"
MCP_STATUS = "mcp/status"
MCP_RESTART = "mcp/restart"
MCP_SET_ENABLED = "mcp/setEnabled"
MCP_TRUST = "mcp/trust"
MCP_RESOURCES_LIST = "mcp/resources/list"
MCP_RESOURCES_READ = "mcp/resources/read"
MCP_PROMPTS_LIST = "mcp/prompts/list"
MCP_PROMPTS_GET = "mcp/prompts/get"
MCP_CALL_TOOL = "mcp/callTool"
APP_CALL_TOOL = "agent/appCallTool"
APP_CONTEXT = "agent/appContext"
APP_RESOURCE = "agent/appResource"
MCP_SIGN_IN = "mcp/signIn"
MCP_SIGN_OUT = "mcp/signOut"
SET_WORKSPACE_TRUST = "agent/setWorkspaceTrust"
CHANGE_OUTCOME = "agent/changeOutcome"
CHANGE_CONTENT = "agent/changeContent"
TOOL_OUTPUT = "agent/toolOutput"
MODELS = "agent/models"
SET_MODEL = "agent/setModel"
CHECKPOINTS = "agent/checkpoints"
REWIND = "agent/rewind"
REDO = "agent/redo"
SANDBOX_GRANTS = "agent/sandboxGrants"
SET_SANDBOX_GRANT = "agent/setSandboxGrant"
JOBS = "agent/jobs"
STOP_JOB = "agent/stopJob"

# client -> server notifications -----------------------------------------------------------
EDITOR_TRUST = "agent/editorTrust"

# server -> client notifications -----------------------------------------------------------
EVENT = "agent/event"
MCP_STATUS_CHANGED = "mcp/statusChanged"
JOBS_CHANGED = "agent/jobsChanged"

# server -> client requests ----------------------------------------------------------------
APPROVE = "agent/approve"
TRUST_SERVER = "mcp/trustServer"
TRUST_WORKSPACE = "agent/trustWorkspace"
ELICIT = "mcp/elicit"
SAMPLE = "mcp/sample"
REVIEW_EDIT = "agent/reviewEdit"
EDITOR_INTELLIGENCE = "agent/editorIntelligence"

# workspace/executeCommand commands (carried by code actions, or run by the user) ----------
CMD_ASK = "agent-ls.ask"
CMD_RUN_TOOL_ACTION = "agent-ls.runToolAction"
CMD_RUN_MCP_PROMPT = "agent-ls.runMcpPrompt"
CMD_TRUST_WORKSPACE = "agent-ls.trustWorkspace"
"""Ask again about the folders that wait for trust, then about the workspace MCP servers that wait
for their own decision (for editors without ``agent/trustWorkspace`` / ``mcp/trustServer``)."""
COMMANDS = (CMD_ASK, CMD_RUN_TOOL_ACTION, CMD_RUN_MCP_PROMPT, CMD_TRUST_WORKSPACE)

CLIENT_REQUESTS = (
    PROMPT, CANCEL, SESSIONS_LIST, SESSIONS_NEW, SESSIONS_RESUME, SESSIONS_DELETE, SESSIONS_RENAME, SERVER_INFO, MCP_STATUS,
    MCP_RESTART, MCP_SET_ENABLED, MCP_TRUST, MCP_RESOURCES_LIST, MCP_RESOURCES_READ, MCP_PROMPTS_LIST,
    MCP_PROMPTS_GET, MCP_CALL_TOOL, MCP_SIGN_IN, MCP_SIGN_OUT, SET_WORKSPACE_TRUST, CHANGE_OUTCOME, CHANGE_CONTENT,
    TOOL_OUTPUT, MODELS, SET_MODEL, CHECKPOINTS, REWIND, REDO, SANDBOX_GRANTS, SET_SANDBOX_GRANT, JOBS, STOP_JOB,
    APP_CALL_TOOL, APP_CONTEXT, APP_RESOURCE,
)
CLIENT_NOTIFICATIONS = (EDITOR_TRUST,)
SERVER_REQUESTS = (APPROVE, TRUST_SERVER, TRUST_WORKSPACE, ELICIT, SAMPLE, REVIEW_EDIT, EDITOR_INTELLIGENCE)
SERVER_NOTIFICATIONS = (EVENT, MCP_STATUS_CHANGED, JOBS_CHANGED)

# JSON-RPC / LSP error codes the custom methods answer with --------------------------------
INVALID_PARAMS = -32602
"""The params do not have the documented shape (the message says which field and why)."""
REQUEST_FAILED = -32803
"""Well-formed, but it cannot be done: unknown session or server, server not connected, busy."""
REQUEST_CANCELLED = -32800
"""The client cancelled the request with ``$/cancelRequest``."""
INTERNAL_ERROR = -32603
"""A bug (the message names the exception)."""

# Values ---------------------------------------------------------------------------------------
APPROVAL_ANSWERS = ("allow_once", "allow_session", "deny")
ELICIT_ACTIONS = ("accept", "decline", "cancel")
SAMPLING_ANSWERS = ("allow_once", "allow_session", "deny")
WORKSPACE_TRUST_STATES = ("trusted", "restricted", "declined", "editor-restricted", "nothing-to-trust")
EVENT_TYPES = ("turn_started", "text", "thinking", "tool_call_started", "tool_call_progress", "approval_requested",
               "tool_call_finished", "file_change", "plan", "usage", "compaction", "hook", "error",
               "turn_finished", "subagent")
REVIEW_DECISIONS = ("accept", "reject", "deferred")
CHANGE_STATUSES = ("proposed", "accepted", "rejected", "failed", "written", "applied", "kept", "reverted")
CHANGE_OUTCOMES = ("kept", "reverted")
PLAN_STATUSES = ("pending", "in_progress", "completed")
"""A plan step's status (the ``plan`` event; ``agent_ls.agent.plan.PLAN_STATUSES``)."""
REVIEW_CAPABILITY = "reviewEdits"
"""``capabilities.experimental.agentLs.reviewEdits: true``: the client answers ``agent/reviewEdit``."""
INTELLIGENCE_CAPABILITY = "intelligence"
"""``capabilities.experimental.agentLs.intelligence: true``: the client answers ``agent/editorIntelligence``."""
APPS_CAPABILITY = "mcpApps"
"""``capabilities.experimental.agentLs.mcpApps: true``: the client renders MCP Apps (a tool's app
is loaded and carried by ``tool_call_finished``; it calls ``agent/appCallTool``...)."""
INTELLIGENCE_KINDS = ("diagnostics", "definition", "references", "symbols")
