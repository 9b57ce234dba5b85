/**
 * agent-ls protocol: a prompt (agent/prompt, agent/cancel) and the events its turn streams
 * (agent/event). Mirrors agent_ls/server/protocol/prompt.py.
 */
import type { SandboxMark } from "./sandbox";
import type { ChangeStatus, PlanStatus } from "./methods";

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
  /** Tokens of the conversation in the model's context after the response (0: not known). */
  contextTokens?: number;
  /** The model's context window in tokens (0: not known). */
  contextWindow?: number;
  /** Where `contextTokens` comes from: `provider` (the provider's usage of the response) or `estimate` (agent-ls's
   * count: before the first answer, after `/compact`, or when the provider reports no usage). */
  contextSource?: ContextSource | "";
}

export type ContextSource = "provider" | "estimate";

export interface PromptResult {
  sessionId: string;
  /** `end`, `max_steps`, `compacted` (the text was `/compact`) or `error` (see `error`); a cancelled prompt gets the
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
/** What a running call is doing (e.g. waiting for an MCP server that is still starting). */
export interface ToolCallProgressEvent {
  type: "tool_call_progress";
  callId: string;
  name: string;
  message: string;
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
  /** Where a command ran (bash): sandboxed or not, and what the sandbox refused. */
  sandbox?: SandboxMark | null;
  /** The call's MCP App (html null: this client does not render it, or `error` says why not). */
  app?: McpAppPayload | null;
}

/** An MCP App shown with a tool call's result (io.modelcontextprotocol/ui). */
export interface McpAppPayload {
  server: string;
  /** The tool's name on its server. */
  tool: string;
  resourceUri: string;
  arguments: Record<string, unknown>;
  html: string | null;
  /** Declared domains: connectDomains, resourceDomains, frameDomains, baseUriDomains. */
  csp: Record<string, string[]> | null;
  permissions: Record<string, unknown> | null;
  prefersBorder: boolean | null;
  /** The CallToolResult as JSON (ui/notifications/tool-result). */
  result: Record<string, unknown> | null;
  error: string | null;
  /** What a client that does not show the app says (null when `html` is given). */
  notice?: string | null;
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
/** A step of the agent's plan. */
export interface PlanEntryPayload {
  content: string;
  /** `pending`, `in_progress` or `completed`. */
  status: PlanStatus;
  /** `high`, `medium` or `low`. */
  priority?: string;
}
/** The session's plan changed (the model's `update_plan`): the whole list (empty: cleared). */
export interface PlanEvent {
  type: "plan";
  entries: PlanEntryPayload[];
}
export interface UsageEvent extends Usage {
  type: "usage";
}
/** The conversation was compacted to fit the context window; nothing is lost (issue 26). */
export interface CompactionEvent {
  type: "compaction";
  /** `auto`, `overflow`, `manual` (`/compact`) or `notice` (only `note` says something). */
  reason: string;
  /** Tool results replaced by a stub naming their output handle. */
  cleared: number;
  /** Older messages replaced by a summary. */
  summarized: number;
  /** The output handles the compacted part keeps (`read_output` reads them). */
  handles: string[];
  tokensBefore: number;
  tokensAfter: number;
  contextWindow: number;
  note?: string;
}
/** A hook ran (issue 43): the chat's hook line (docs/hooks.md). */
export interface HookEvent {
  type: "hook";
  /** The hook event: `PreToolUse`, `UserPromptSubmit`, `PreCompact`... */
  event: string;
  /** The command's first words. */
  command: string;
  /** `ran`, `blocked` (what it stopped did not happen) or `error` (it failed; the work went on). */
  outcome: HookOutcome;
  durationMs: number;
  /** Why it blocked, its error, or its message for the user (may be empty or several lines). */
  message?: string;
  /** What it printed (stdout then stderr), cut with a marker. */
  output?: string;
  /** `allow`, `ask` or `deny` (PreToolUse, PermissionRequest), else null. */
  decision?: string | null;
  /** The tool call it ran for (null: a conversation event). */
  callId?: string | null;
  tool?: string | null;
}
export type HookOutcome = "ran" | "blocked" | "error";
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
  /** The tokens of the turn's subagents (already in `usage`), when it ran any. */
  subagents?: Usage | null;
}

/** A subagent's event (issue 42): the child the `agent` call `callId` runs. */
export interface SubagentEvent {
  type: "subagent";
  /** The parent's `agent` call (its card). */
  callId: string;
  /** The agent's name (`explore`, `general`, a custom agent's). */
  agent: string;
  /** The task in a few words, as the model described it. */
  description: string;
  /** The child's own event: its tool calls, usage and `turn_finished`. */
  event: AgentEvent;
}

export type AgentEvent =
  | SubagentEvent
  | TurnStartedEvent
  | TextEvent
  | ThinkingEvent
  | ToolCallStartedEvent
  | ToolCallProgressEvent
  | ApprovalRequestedEvent
  | ToolCallFinishedEvent
  | FileChangeEvent
  | PlanEvent
  | UsageEvent
  | CompactionEvent
  | HookEvent
  | ErrorEvent
  | TurnFinishedEvent;

/** `agent/event`: one streamed event of a running prompt. */
export interface EventParams {
  /** The session; null for events outside any session (a tool action run from a code action). */
  sessionId: string | null;
  event: AgentEvent;
}
