/**
 * agent-ls protocol: what the server asks the user (agent/approve, mcp/trustServer,
 * agent/trustWorkspace, mcp/elicit, mcp/sample) and workspace trust the client sets.
 * Mirrors agent_ls/server/protocol/questions.py.
 */
import type { WorkspaceSettingPayload } from "./mcp";
import type { SamplingAnswer } from "./methods";

/** `agent/approve` (server -> client). */
export interface ApproveParams {
  /** The tool call's id (the `callId` of its events); `direct-<request id>` / `action-<request id>` for direct calls. With `sessionId` it names the call. */
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
  /** The session choices to offer, narrowest first; empty: only allow once or deny. */
  scopes?: ApprovalScope[];
  /** Why the call touches a protected file (`.git/`, `.vscode/`, ...): the card shows it. */
  sensitive?: string | null;
}

/** One "allow for this session" choice of an `agent/approve` question. */
export interface ApprovalScope {
  /** `exact` (this shell command), `prefix` (commands starting with the label's words) or `tool`. */
  id: string;
  /** The button's text, naming the scope in full. */
  label: string;
}

export type ApprovalAnswer = "allow_once" | "allow_session" | "deny";

export interface ApproveResult {
  answer: ApprovalAnswer;
  /** With `allow_session`: the id of the chosen scope (missing: the narrowest offered). */
  scope?: string | null;
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
  /** Every `oauth` setting (`idp` flattened), as written; credentials `***` unless a variable. */
  oauth?: Record<string, string>;
  /** Every other non-cosmetic key (`protocol`, other hosts' keys), as written. */
  options?: Record<string, string>;
  /** `oauth` settings a workspace file may not set (credentials, files read for them): the server does not start. */
  refused?: string[];
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


export interface SampleResult {
  /** `allow_session`: no more questions for this server until the language server restarts. */
  answer: SamplingAnswer;
}
