/**
 * The custom LSP protocol of agent-ls: method names and payload types.
 *
 * Mirrors agent_ls/server/protocol.py (the source of truth; documented in docs/protocol.md).
 * Every field is camelCase on the wire. Keep the two files in step.
 */

// client -> server requests ---------------------------------------------------------------
export const PROMPT = "agent/prompt";
/** Stops a session's running turn, also one a code action started in the background. */
export const CANCEL = "agent/cancel";
export const SESSIONS_LIST = "agent/sessions/list";
export const SESSIONS_NEW = "agent/sessions/new";
export const SESSIONS_RESUME = "agent/sessions/resume";
export const SESSIONS_DELETE = "agent/sessions/delete";
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

// client -> server notifications ------------------------------------------------------------
/** The editor's own workspace trust changed (VS Code: onDidGrantWorkspaceTrust). */
export const EDITOR_TRUST = "agent/editorTrust";

// server -> client notifications ------------------------------------------------------------
export const EVENT = "agent/event";
export const MCP_STATUS_CHANGED = "mcp/statusChanged";

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

// workspace/executeCommand commands (carried by the server's code actions) -------------------
export const CMD_ASK = "agent-ls.ask";
export const CMD_RUN_TOOL_ACTION = "agent-ls.runToolAction";
export const CMD_RUN_MCP_PROMPT = "agent-ls.runMcpPrompt";

export const COMMANDS = [CMD_ASK, CMD_RUN_TOOL_ACTION, CMD_RUN_MCP_PROMPT] as const;

export const CLIENT_REQUESTS = [
  PROMPT, CANCEL, SESSIONS_LIST, SESSIONS_NEW, SESSIONS_RESUME, SESSIONS_DELETE, SERVER_INFO, MCP_STATUS,
  MCP_RESTART, MCP_SET_ENABLED, MCP_TRUST, MCP_RESOURCES_LIST, MCP_RESOURCES_READ, MCP_PROMPTS_LIST,
  MCP_PROMPTS_GET, MCP_CALL_TOOL, MCP_SIGN_IN, MCP_SIGN_OUT, SET_WORKSPACE_TRUST, CHANGE_OUTCOME, CHANGE_CONTENT,
  TOOL_OUTPUT,
] as const;
export const CLIENT_NOTIFICATIONS = [EDITOR_TRUST] as const;
export const SERVER_REQUESTS = [APPROVE, TRUST_SERVER, TRUST_WORKSPACE, ELICIT, SAMPLE, REVIEW_EDIT] as const;
export const SERVER_NOTIFICATIONS = [EVENT, MCP_STATUS_CHANGED] as const;

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
export const WORKSPACE_TRUST_STATES = ["trusted", "restricted", "declined", "editor-restricted", "nothing-to-trust"] as const;
export type WorkspaceTrustState = (typeof WORKSPACE_TRUST_STATES)[number];
export const EVENT_TYPES = [
  "turn_started",
  "text",
  "thinking",
  "tool_call_started",
  "approval_requested",
  "tool_call_finished",
  "file_change",
  "usage",
  "error",
  "turn_finished",
] as const;
export const REVIEW_DECISIONS = ["accept", "reject", "deferred"] as const;
export type ReviewDecision = (typeof REVIEW_DECISIONS)[number];
export const CHANGE_STATUSES = ["proposed", "accepted", "rejected", "failed", "written", "applied", "kept", "reverted"] as const;
export type ChangeStatus = (typeof CHANGE_STATUSES)[number];
export const CHANGE_OUTCOMES = ["kept", "reverted"] as const;
export type ChangeOutcome = (typeof CHANGE_OUTCOMES)[number];
/** `capabilities.experimental.agentLs.reviewEdits: true`: this client answers agent/reviewEdit. */
export const REVIEW_CAPABILITY = "reviewEdits";

// payloads ------------------------------------------------------------------------------------

export interface LspPosition {
  line: number;
  character: number;
}

export interface LspRange {
  start: LspPosition;
  end: LspPosition;
}

/** Context attached to a prompt. */
export interface Attachment {
  /** `selection`, `file` or `resource`. */
  kind: "selection" | "file" | "resource";
  /** File URI (selection, file) or resource URI. */
  uri?: string | null;
  /** The text (selection), or null to let the server read it (file, resource). */
  text?: string | null;
  /** For `resource`: the MCP server that has it. */
  server?: string | null;
  /** For `selection`: the LSP range. */
  range?: LspRange | null;
  languageId?: string | null;
}

export interface PromptParams {
  text: string;
  /** Continue this session; a new one is created when absent. */
  sessionId?: string | null;
  attachments?: Attachment[];
  /** Override the configured model for this prompt. */
  model?: string | null;
  /** What the chat shows as the message when it differs from `text` (a slash command the
   * client expanded); kept for resume, never sent to the model. */
  displayText?: string | null;
}

/** `agent/cancel`: stop the running turn of a session, whoever started it. */
export interface CancelParams {
  sessionId: string;
}

export interface CancelResult {
  /** True when a turn was running and has ended; false when the session runs none. */
  cancelled: boolean;
}

export interface Usage {
  inputTokens?: number;
  outputTokens?: number;
  cacheReadTokens?: number;
  cacheWriteTokens?: number;
}

export interface PromptResult {
  sessionId: string;
  /** `end`, `max_steps` or `error` (see `error`); a cancelled prompt gets the
   * REQUEST_CANCELLED error response instead. */
  stopReason: string;
  text: string;
  usage: Usage;
  error?: { kind: string; message: string } | null;
}

export interface TurnStartedEvent {
  type: "turn_started";
  sessionId?: string;
  turn: number;
}
/** A piece of the model's reasoning (models that think aloud); not part of the reply. */
export interface ThinkingEvent {
  type: "thinking";
  text: string;
}

export interface TextEvent {
  type: "text";
  text: string;
}
export interface ToolCallStartedEvent {
  type: "tool_call_started";
  callId: string;
  /** Model-facing tool name. */
  name: string;
  arguments: Record<string, unknown>;
  server?: string | null;
  displayName?: string | null;
}
export interface ApprovalRequestedEvent {
  type: "approval_requested";
  callId: string;
  name: string;
  arguments: Record<string, unknown>;
  reason: string;
}
export interface ToolCallFinishedEvent {
  type: "tool_call_finished";
  callId: string;
  name: string;
  isError: boolean;
  content: string;
  durationMs: number;
  denied?: boolean;
  attachments?: ToolAttachment[];
  /** The output was longer than a page: kept whole under this handle (`content` is its first page). */
  outputHandle?: string | null;
}

/** Non-text content of a tool result: images, audio, resources. */
export interface ToolAttachment {
  kind: string;
  mimeType?: string | null;
  /** Base64 (images, audio, blobs). */
  data?: string | null;
  text?: string | null;
  uri?: string | null;
  name?: string | null;
}
/** An agent change to a file and what became of it (the chat's file card). */
export interface FileChangeEvent {
  type: "file_change";
  changeId: string;
  callId: string | null;
  /** The absolute path. */
  path: string;
  /** The path relative to its workspace folder. */
  shown: string;
  added: number;
  removed: number;
  /** `applied`, `accepted`, `rejected`, `failed` or `written`. */
  status: ChangeStatus;
  created?: boolean;
  reason?: string | null;
  turn?: number;
  uri?: string | null;
}
export interface UsageEvent extends Usage {
  type: "usage";
}
export interface ErrorEvent {
  type: "error";
  kind: string;
  message: string;
}
export interface TurnFinishedEvent {
  type: "turn_finished";
  /** `end`, `max_steps`, `error` or `cancelled`. */
  stopReason: string;
  /** The turn's totals (camelCase, as the `usage` event). */
  usage?: Usage;
  steps?: number;
  text?: string;
}

export type AgentEvent =
  | TurnStartedEvent
  | TextEvent
  | ThinkingEvent
  | ToolCallStartedEvent
  | ApprovalRequestedEvent
  | ToolCallFinishedEvent
  | FileChangeEvent
  | UsageEvent
  | ErrorEvent
  | TurnFinishedEvent;

/** `agent/event`: one streamed event of a running prompt. */
export interface EventParams {
  /** The session; null for events outside any session (a tool action run from a code action). */
  sessionId: string | null;
  event: AgentEvent;
}

export interface SessionParams {
  sessionId: string;
}

export interface NewSessionParams {
  title?: string | null;
}

export interface NewSessionResult {
  sessionId: string;
}

export interface SessionInfo {
  id: string;
  title: string | null;
  /** Seconds since the epoch. */
  created: number;
  updated: number;
  model: string | null;
  messageCount: number;
}

export interface SessionsListResult {
  sessions: SessionInfo[];
}

/** A stored message (the LLM's message format). */
export interface StoredMessage {
  role: string;
  content?: unknown;
  tool_calls?: { id?: string; function?: { name?: string; arguments?: string } }[];
  tool_call_id?: string;
  name?: string;
  /** User messages whose model-facing text is not what the user typed (attachments rendered
   * into it, a slash command expanded): how the chat shows them. Added by the server on resume. */
  display?: MessageDisplay | null;
  /** Tool results: how the call ran (added by the server on resume; never sent to the model). */
  run?: ToolRunInfo | null;
}

/** `run` of a resumed tool result: what the chat's tool card shows besides the call and result. */
export interface ToolRunInfo {
  server: string | null;
  displayName: string | null;
  durationMs: number | null;
  isError: boolean;
  denied: boolean;
}

/** An attachment as the chat shows it (a chip): what it was, without its content. */
export interface DisplayAttachment {
  kind: "selection" | "file" | "resource";
  uri?: string | null;
  server?: string | null;
  range?: LspRange | null;
  languageId?: string | null;
}

/** The typed text and the attachment chips of a user message. */
export interface MessageDisplay {
  text: string;
  attachments: DisplayAttachment[];
}

export interface SessionsResumeResult {
  sessionId: string;
  messages: StoredMessage[];
  /** The agent's file changes in the session with their outcome (older servers: absent). */
  changes?: FileChangePayload[];
}

/** A recorded file change (a resumed session's file cards). */
export interface FileChangePayload {
  changeId: string;
  callId: string | null;
  path: string;
  shown: string;
  added: number;
  removed: number;
  created: boolean;
  status: ChangeStatus;
  turn?: number;
  uri?: string | null;
  reason?: string | null;
  /** agent/changeContent has its texts. */
  hasContent?: boolean;
}

/** `agent/changeOutcome`: the user kept or reverted an applied change (result: the updated FileChangePayload). */
export interface ChangeOutcomeParams {
  sessionId: string;
  changeId: string;
  outcome: ChangeOutcome;
}

/** `agent/changeContent`. */
export interface ChangeContentParams {
  sessionId: string;
  changeId: string;
}

export interface ChangeContentResult {
  change: FileChangePayload;
  /** Null when the texts were not kept (too long). */
  before: string | null;
  after: string | null;
}

/** `agent/toolOutput`: the whole of a tool output (the `outputHandle` of its tool_call_finished). */
export interface ToolOutputParams {
  sessionId: string;
  handle: string;
}

export interface ToolOutputResult {
  handle: string;
  /** The tool that produced it (model-facing name). */
  tool: string;
  text: string;
  /** The tool's whole output (more than `text` only when it exceeded the session's store). */
  totalChars: number;
}

/** `agent/reviewEdit` (server -> client): the agent wants to change a file. */
export interface ReviewEditParams {
  changeId: string;
  uri: string;
  /** The path relative to its workspace folder. */
  path: string;
  /** The current text (the buffer, unsaved changes included; empty for a new file). */
  before: string;
  after: string;
  added: number;
  removed: number;
  created: boolean;
  sessionId?: string | null;
  /** The tool call making the change. */
  callId?: string | null;
  turn?: number;
}

export interface ReviewEditResult {
  /** `deferred`: apply it now, the user reviews it afterwards (Keep / Revert). */
  decision: ReviewDecision;
  /** Why the user rejected it (the model is told). */
  reason?: string | null;
}

export interface DeleteResult {
  deleted: boolean;
}

/** `agent/serverInfo`: facts about the server process (for diagnostics and tests). */
export interface ServerInfoResult {
  name: string;
  version: string;
  pid: number;
  python: string;
  /** Whether the heavy dependencies are imported yet: `litellm`, `mcp`. */
  loadedModules: Record<string, boolean>;
  /** The same, recorded while `initialize` was answered. */
  loadedAtInitialize: Record<string, boolean>;
  workspaceFolders: string[];
}

export interface ServerParams {
  /** A server name; all servers when absent (restart). */
  server?: string | null;
}

export interface SetEnabledParams {
  server: string;
  enabled: boolean;
}

export interface TrustParams {
  server: string;
  trusted: boolean;
}

/** `mcp/signIn` and `mcp/signOut`: an HTTP server that uses OAuth. */
export interface SignInParams {
  server: string;
}

export interface ResourcesListParams {
  /** Only this server's resources; every connected server's when absent. */
  server?: string | null;
}

export interface PromptsListParams {
  server?: string | null;
}

export interface ReadResourceParams {
  server: string;
  uri: string;
}

export interface GetPromptParams {
  server: string;
  name: string;
  arguments?: Record<string, string>;
}

export interface CallToolParams {
  server: string;
  /** The tool's name on its server (or its model-facing name). */
  tool: string;
  arguments?: Record<string, unknown>;
}

export interface ToolResultPayload {
  isError: boolean;
  content: string;
  structured?: unknown;
  truncatedChars?: number;
  attachments?: Record<string, unknown>[];
  denied: boolean;
  /** agent-ls.runToolAction: the action's title. */
  title?: string | null;
  /** agent-ls.runToolAction with `apply`: whether the editor applied the edit. */
  applied?: boolean | null;
}

export interface StatusTool {
  /** Model-facing name (`mcp__<server>__<tool>`). */
  name: string;
  /** The name on the MCP server. */
  original: string;
  /** `read`, `write`, `network` or `unknown`. */
  capability: string;
  description?: string | null;
}

/** Why a server failed: the phase plus errno / exit code / HTTP status when known. */
export interface ServerError {
  /** `config`, `spawn`, `handshake`, `listing`, `running`, `trust`, `auth`. */
  phase?: string;
  message: string;
  errno?: number | string;
  exitCode?: number;
  httpStatus?: number;
  [key: string]: unknown;
}

/** OAuth state of an HTTP server (`auth` of a status entry; null when it does not use OAuth). */
export interface AuthStatus {
  state: "needs-sign-in" | "signed-in" | "failed" | "signing-in";
  /** Epoch seconds. */
  expiresAt?: number;
  reason?: string;
}

export interface ServerStatus {
  name: string;
  /** `starting`, `connected`, `connected-listing-failed`, `restarting`, `failed`, `disabled`,
   * `awaiting-trust`, `untrusted`, `needs-sign-in`. */
  state: string;
  transport?: string;
  scope?: string;
  source?: string | null;
  toolCount: number;
  promptCount?: number;
  resourceCount?: number;
  /** An object since the typed payloads; a plain string from older servers. */
  error?: ServerError | string | null;
  stderrTail?: string[];
  serverInfo?: unknown;
  protocolVersion?: string | null;
  restarts?: number;
  pid?: number | null;
  tools?: StatusTool[];
  /** OAuth (issue 7); absent on servers that predate it. */
  auth?: AuthStatus | null;
}

/** One setting of a workspace file that needs the user's trust (shown as written). */
export interface WorkspaceSettingPayload {
  /** The settings file. */
  source: string;
  /** Where in the file, as a JSON path (`apiBase`, `permissions.allow`). */
  key: string;
  /** The value as written (compact JSON), never clipped. */
  value: string;
  /** Why it needs trust, one sentence. */
  why: string;
}

/** The trust state of one workspace folder. */
export interface WorkspaceStatusPayload {
  folder: string;
  state: WorkspaceTrustState;
  /** One sentence for the user. */
  message: string;
  /** Settings ignored while the folder is not trusted. */
  ignored?: WorkspaceSettingPayload[];
  /** The MCP servers its files define, as the trust prompt shows them (while not trusted). */
  servers?: TrustServerParams[];
}

export interface StatusResult {
  servers: ServerStatus[];
  diagnostics?: string[];
  workspaces?: WorkspaceStatusPayload[];
}

export interface StatusChangedParams {
  servers: ServerStatus[];
  workspaces?: WorkspaceStatusPayload[];
}

export interface McpResource {
  server: string;
  uri: string;
  name?: string | null;
  mimeType?: string | null;
  description?: string | null;
}

export interface ResourceTemplate {
  server: string;
  uriTemplate: string;
  name?: string | null;
  mimeType?: string | null;
  description?: string | null;
}

export interface ResourcesListResult {
  resources: McpResource[];
  templates?: ResourceTemplate[];
}

export interface ReadResourceResult {
  /** MCP resource contents: `{uri, mimeType, text}` or `{uri, mimeType, blob}` (base64). */
  contents: Record<string, unknown>[];
}

export interface McpPromptArgument {
  name: string;
  description?: string | null;
  required?: boolean;
}

export interface McpPrompt {
  server: string;
  name: string;
  description?: string | null;
  arguments: McpPromptArgument[];
}

export interface PromptsListResult {
  prompts: McpPrompt[];
}

export interface PromptMessage {
  role: string;
  text: string;
}

export interface PromptsGetResult {
  description?: string | null;
  messages: PromptMessage[];
}

/** `agent/approve` (server -> client). */
export interface ApproveParams {
  /** The tool call's id (the `callId` of its events), or `direct-<n>` for direct calls. */
  callId: string;
  /** Model-facing tool name. */
  tool: string;
  arguments: Record<string, unknown>;
  reason: string;
  server?: string | null;
  displayName?: string | null;
  /** The session whose turn asks; null for direct calls (mcp/callTool, tool actions). */
  sessionId?: string | null;
  /** A built-in file tool whose every change goes to agent/reviewEdit before it is applied. */
  reviewedEdit?: boolean;
}

export type ApprovalAnswer = "allow_once" | "allow_session" | "deny";

export interface ApproveResult {
  answer: ApprovalAnswer;
}

/** `mcp/trustServer` (server -> client). */
export interface TrustServerParams {
  server: string;
  /** Empty for an HTTP server. */
  command: string;
  args: string[];
  /** The workspace file that defines the server. */
  source: string;
  cwd?: string | null;
  /** `stdio`, `http` or `sse`. */
  transport?: string;
  /** As written (literal values of secret-looking names masked). */
  env?: Record<string, string>;
  url?: string | null;
  headers?: Record<string, string>;
  /** Environment variables whose values the server would receive. */
  variables?: string[];
  /** What changed since the user last trusted this entry; empty for a new one. */
  changes?: string[];
}

export interface TrustServerResult {
  /** true / false remembers the decision; null asks again later. */
  trusted: boolean | null;
}

/** `agent/trustWorkspace` (server -> client). */
export interface TrustWorkspaceParams {
  folder: string;
  /** Every MCP server its files define (trusting the workspace trusts these entries). */
  servers?: TrustServerParams[];
  /** Every other setting that needs trust. */
  settings?: WorkspaceSettingPayload[];
  /** What changed in those settings since the folder was last trusted. */
  changes?: string[];
  previouslyTrusted?: boolean;
}

export interface TrustWorkspaceResult {
  /** true: trust; false: keep restricted (remembered); null: no decision. */
  trusted: boolean | null;
}

/** `agent/setWorkspaceTrust` (client -> server). */
export interface SetWorkspaceTrustParams {
  trusted: boolean;
  /** A workspace folder; absent: every folder. */
  folder?: string | null;
}

/** `agent/editorTrust` (client -> server notification). */
export interface EditorTrustParams {
  trusted: boolean;
}

/** `mcp/elicit` (server -> client). */
export interface ElicitParams {
  server: string;
  message: string;
  requestedSchema: Record<string, unknown>;
}

export interface ElicitResult {
  action: "accept" | "decline" | "cancel";
  content?: Record<string, unknown> | null;
}

/** One message of a sampling request, as the user is shown it. */
export interface SampleMessage {
  /** `user` or `assistant`. */
  role: string;
  /** The text (cut to 600 characters, marked); images as `[image image/png, 1.2 KB]`. */
  text: string;
}

/** `mcp/sample` (server -> client): an MCP server asks to use the model; the user consents or not. */
export interface SampleParams {
  server: string;
  /** The most recent messages (at most 20). */
  messages: SampleMessage[];
  /** The most the model may write (the server's request under `agent.sampling.maxTokens`). */
  maxTokens: number;
  /** The litellm model string the request would use. */
  model: string;
  systemPrompt?: string | null;
  /** What the MCP server asked for. */
  requestedMaxTokens?: number | null;
  /** Earlier messages not in `messages`. */
  omittedMessages?: number;
  /** The API base the request goes to (null: the provider's default endpoint). */
  endpoint?: string | null;
}

export type SamplingAnswer = (typeof SAMPLING_ANSWERS)[number];

export interface SampleResult {
  /** `allow_session`: no more questions for this server until the language server restarts. */
  answer: SamplingAnswer;
}

/** Result of agent-ls.ask and agent-ls.runMcpPrompt: a turn started in the background. */
export interface AskResult {
  sessionId: string;
  started: boolean;
  /** The user message the turn was started with. */
  text: string;
}

/** The object argument every agent-ls.* command carries (built by the server's code actions). */
export interface ActionArgs {
  uri: string;
  range: LspRange;
  text?: string;
  languageId?: string;
  /** agent-ls.ask: `ask`, `fix` or `explain`. */
  mode?: string;
  diagnostics?: string;
  /** agent-ls.ask, mode `ask`: the user's question (the extension asks for it when absent). */
  question?: string | null;
  /** Continue this chat session (a new one when absent). */
  sessionId?: string | null;
  server?: string | null;
  name?: string | null;
  argument?: string | null;
  index?: number | null;
  title?: string | null;
}
