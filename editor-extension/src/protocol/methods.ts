/**
 * agent-ls protocol: the method names, command names, error codes and value lists.
 * Mirrors agent_ls/server/protocol/methods.py (tests/extension/test_protocol_mirror.py compares them).
 */

// client -> server requests ---------------------------------------------------------------
export const PROMPT = "agent/prompt";
/** Stops a session's running turn, also one a code action started in the background. */
export const CANCEL = "agent/cancel";
export const SESSIONS_LIST = "agent/sessions/list";
export const SESSIONS_NEW = "agent/sessions/new";
export const SESSIONS_RESUME = "agent/sessions/resume";
export const SESSIONS_DELETE = "agent/sessions/delete";
export const SESSIONS_RENAME = "agent/sessions/rename";
export const SERVER_INFO = "agent/serverInfo";
export const MCP_STATUS = "mcp/status";
export const MCP_RESTART = "mcp/restart";
export const MCP_SET_ENABLED = "mcp/setEnabled";
export const MCP_TRUST = "mcp/trust";
export const MCP_RESOURCES_LIST = "mcp/resources/list";
export const MCP_RESOURCES_READ = "mcp/resources/read";
export const MCP_PROMPTS_LIST = "mcp/prompts/list";
export const MCP_PROMPTS_GET = "mcp/prompts/get";
export const MCP_CALL_TOOL = "mcp/callTool";
/** MCP Apps: an app's tools/call (through the session's approvals) and its ui/update-model-context. */
export const APP_CALL_TOOL = "agent/appCallTool";
export const APP_CONTEXT = "agent/appContext";
export const APP_RESOURCE = "agent/appResource";
/** OAuth (issue 7); a server without it answers "method not found". */
export const MCP_SIGN_IN = "mcp/signIn";
export const MCP_SIGN_OUT = "mcp/signOut";
/** Trust or restrict a workspace folder (issue 14). */
export const SET_WORKSPACE_TRUST = "agent/setWorkspaceTrust";
/** The user kept or reverted a change applied unreviewed (issue 16): recorded for resume. */
export const CHANGE_OUTCOME = "agent/changeOutcome";
/** The texts of a recorded change (Review / Revert on a resumed file card). */
export const CHANGE_CONTENT = "agent/changeContent";
/** The whole of a tool output longer than a page (issue 16, item 4). */
export const TOOL_OUTPUT = "agent/toolOutput";
/** The model picker (issue 27, item 3): the choices, and a session's pick. */
export const MODELS = "agent/models";
export const SET_MODEL = "agent/setModel";
/** Checkpoints and rewind (issue 40): a session's checkpoints, back to before a prompt, undo that. */
export const CHECKPOINTS = "agent/checkpoints";
export const REWIND = "agent/rewind";
export const REDO = "agent/redo";
export const SANDBOX_GRANTS = "agent/sandboxGrants";
export const SET_SANDBOX_GRANT = "agent/setSandboxGrant";
/** Background jobs (issue 41): what runs in a session (or every session), and the user's Stop. */
export const JOBS = "agent/jobs";
export const STOP_JOB = "agent/stopJob";

// client -> server notifications ------------------------------------------------------------
/** The editor's own workspace trust changed (VS Code: onDidGrantWorkspaceTrust). */
export const EDITOR_TRUST = "agent/editorTrust";

// server -> client notifications ------------------------------------------------------------
export const EVENT = "agent/event";
export const MCP_STATUS_CHANGED = "mcp/statusChanged";
/** A session's background job started, ended or changed status (all of its jobs now). */
export const JOBS_CHANGED = "agent/jobsChanged";

// server -> client requests -----------------------------------------------------------------
export const APPROVE = "agent/approve";
export const TRUST_SERVER = "mcp/trustServer";
/** A workspace folder's settings ask for things that need trust. */
export const TRUST_WORKSPACE = "agent/trustWorkspace";
export const ELICIT = "mcp/elicit";
/** MCP sampling consent (a server without it never sends it). */
export const SAMPLE = "mcp/sample";
/** The agent wants to change a file: the client answers accept / reject / deferred (issue 16). */
export const REVIEW_EDIT = "agent/reviewEdit";
/** The editor's problems, definitions, references, workspace symbols, for the agent's tools (issue 27). */
export const EDITOR_INTELLIGENCE = "agent/editorIntelligence";

// workspace/executeCommand commands (carried by the server's code actions) -------------------
export const CMD_ASK = "agent-ls.ask";
export const CMD_RUN_TOOL_ACTION = "agent-ls.runToolAction";
export const CMD_RUN_MCP_PROMPT = "agent-ls.runMcpPrompt";
/** Ask again about the folders, then the workspace MCP servers, that wait for trust (for editors without agent/trustWorkspace / mcp/trustServer). */
export const CMD_TRUST_WORKSPACE = "agent-ls.trustWorkspace";

export const COMMANDS = [CMD_ASK, CMD_RUN_TOOL_ACTION, CMD_RUN_MCP_PROMPT, CMD_TRUST_WORKSPACE] as const;

export const CLIENT_REQUESTS = [
  PROMPT, CANCEL, SESSIONS_LIST, SESSIONS_NEW, SESSIONS_RESUME, SESSIONS_DELETE, SESSIONS_RENAME, SERVER_INFO, MCP_STATUS,
  MCP_RESTART, MCP_SET_ENABLED, MCP_TRUST, MCP_RESOURCES_LIST, MCP_RESOURCES_READ, MCP_PROMPTS_LIST,
  MCP_PROMPTS_GET, MCP_CALL_TOOL, MCP_SIGN_IN, MCP_SIGN_OUT, SET_WORKSPACE_TRUST, CHANGE_OUTCOME, CHANGE_CONTENT,
  TOOL_OUTPUT, MODELS, SET_MODEL, CHECKPOINTS, REWIND, REDO, SANDBOX_GRANTS, SET_SANDBOX_GRANT, JOBS, STOP_JOB,
  APP_CALL_TOOL, APP_CONTEXT, APP_RESOURCE,
] as const;
export const CLIENT_NOTIFICATIONS = [EDITOR_TRUST] as const;
export const SERVER_REQUESTS = [APPROVE, TRUST_SERVER, TRUST_WORKSPACE, ELICIT, SAMPLE, REVIEW_EDIT, EDITOR_INTELLIGENCE] as const;
export const SERVER_NOTIFICATIONS = [EVENT, MCP_STATUS_CHANGED, JOBS_CHANGED] as const;

// JSON-RPC / LSP error codes the custom methods answer with ----------------------------------
/** JSON-RPC "method not found" (e.g. mcp/signIn on a server that predates OAuth). */
export const METHOD_NOT_FOUND = -32601;
/** The params do not have the documented shape (the message says which field and why). */
export const INVALID_PARAMS = -32602;
/** Well-formed, but it cannot be done: unknown session or server, server not connected, busy. */
export const REQUEST_FAILED = -32803;
/** The client cancelled the request with `$/cancelRequest`. */
export const REQUEST_CANCELLED = -32800;
/** A bug (the message names the exception). */
export const INTERNAL_ERROR = -32603;

// values ----------------------------------------------------------------------------------------
export const APPROVAL_ANSWERS = ["allow_once", "allow_session", "deny"] as const;
export const ELICIT_ACTIONS = ["accept", "decline", "cancel"] as const;
export const SAMPLING_ANSWERS = ["allow_once", "allow_session", "deny"] as const;
export type SamplingAnswer = (typeof SAMPLING_ANSWERS)[number];
export const WORKSPACE_TRUST_STATES = ["trusted", "restricted", "declined", "editor-restricted", "nothing-to-trust"] as const;
export type WorkspaceTrustState = (typeof WORKSPACE_TRUST_STATES)[number];
export const EVENT_TYPES = [
  "turn_started",
  "text",
  "thinking",
  "tool_call_started",
  "tool_call_progress",
  "approval_requested",
  "tool_call_finished",
  "file_change",
  "plan",
  "usage",
  "compaction",
  "hook",
  "error",
  "turn_finished",
  "subagent",
] as const;
export const REVIEW_DECISIONS = ["accept", "reject", "deferred"] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];
export const CHANGE_STATUSES = ["proposed", "accepted", "rejected", "failed", "written", "applied", "kept", "reverted"] as const;
export type ChangeStatus = (typeof CHANGE_STATUSES)[number];
export const CHANGE_OUTCOMES = ["kept", "reverted"] as const;
export type ChangeOutcome = (typeof CHANGE_OUTCOMES)[number];
export const PLAN_STATUSES = ["pending", "in_progress", "completed"] as const;
export type PlanStatus = (typeof PLAN_STATUSES)[number];
/** `capabilities.experimental.agentLs.reviewEdits: true`: this client answers agent/reviewEdit. */
export const REVIEW_CAPABILITY = "reviewEdits";
/** `capabilities.experimental.agentLs.intelligence: true`: this client answers agent/editorIntelligence. */
export const INTELLIGENCE_CAPABILITY = "intelligence";
/** `capabilities.experimental.agentLs.mcpApps: true`: this client renders MCP Apps. */
export const APPS_CAPABILITY = "mcpApps";
export const INTELLIGENCE_KINDS = ["diagnostics", "definition", "references", "symbols"] as const;
export type IntelligenceKind = (typeof INTELLIGENCE_KINDS)[number];
