/**
 * agent-ls protocol: the MCP servers (mcp/status, mcp/restart, mcp/setEnabled, mcp/trust, sign-in),
 * their tools, resources and prompts. Mirrors agent_ls/server/protocol/mcp.py.
 */
import type { WorkspaceTrustState } from "./methods";
import type { TrustServerParams } from "./questions";

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

/** agent/appCallTool: a tools/call an MCP App asks for (sent by the chat's bridge). */
export interface AppCallToolParams {
  sessionId: string;
  /** The app's server as the bridge recorded its frame (never what the app says). */
  server: string;
  tool: string;
  arguments?: Record<string, unknown>;
  callId?: string | null;
}

/** agent/appContext: an MCP App's ui/update-model-context (its text). */
export interface AppContextParams {
  sessionId: string;
  server: string;
  resourceUri: string;
  text: string;
}

/** agent/appResource: the app of a resumed tool call, read from its server again. */
export interface AppResourceParams {
  server: string;
  /** The tool's name on that server (the transcript's `run.app`). */
  tool: string;
}

/** The answer to agent/appResource: the app as tool_call_finished's `app` carries it. */
export interface AppResourcePayload {
  resourceUri: string;
  html: string;
  csp: Record<string, string[]>;
  permissions: Record<string, unknown>;
  prefersBorder: boolean | null;
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
  /** A stdio server in the OS sandbox: the mechanism and its network in words (null: not sandboxed). */
  sandbox?: string | null;
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
