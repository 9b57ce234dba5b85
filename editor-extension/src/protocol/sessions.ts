/**
 * agent-ls protocol: sessions (agent/sessions/*), their stored messages and file changes, the
 * review of a change (agent/reviewEdit), tool output (agent/toolOutput), and agent/serverInfo.
 * Mirrors agent_ls/server/protocol/sessions.py.
 */
import type { ChangeOutcome, ChangeStatus, ReviewDecision } from "./methods";
import type { LspRange, PlanEntryPayload } from "./prompt";

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
  /** An `agent` call's subagent (issue 42): its agent, task, tool calls (`{callId, tool, args, isError, result}`),
   * tokens and `stopReason`, for its card. */
  subagent?: SubagentRecord;
  /** The call's MCP App (issue 45): who serves it and the call's data, never its HTML (the chat
   * reads it from the server again with agent/appResource). */
  app?: ResumedApp | null;
}

/** `run.app` of a resumed tool result. */
export interface ResumedApp {
  server: string;
  tool: string;
  resourceUri: string;
  arguments: Record<string, unknown> | null;
  /** The CallToolResult as JSON (null: not kept; the chat gives the app the text result). */
  result: Record<string, unknown> | null;
}

/** What is kept of a finished subagent for its card on resume. */
export interface SubagentRecord {
  agent: string;
  description: string;
  tokens: number;
  stopReason: string;
  calls: { callId: string; tool: string; args: Record<string, unknown>; isError: boolean; result: string | null }[];
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
  /** The session's plan as last updated (empty: none). */
  plan?: PlanEntryPayload[];
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

/** `agent/models`: the model choices (without `sessionId`: a new session's). */
export interface ModelsParams {
  sessionId?: string | null;
}

/** `agent/setModel`: the model for the session's next requests, kept with the session. */
export interface SetModelParams {
  sessionId: string;
  /** One of `ModelsResult.models`. */
  model: string;
}

/** The model choice of a session (`agent/models`, `agent/setModel`). */
export interface ModelsResult {
  /** The settings' `model` (the default) first, then `models`; empty without a model. */
  models: string[];
  /** What the session's next request uses; null: no model configured. */
  current: string | null;
  default: string | null;
  sessionId?: string | null;
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

/** agent/sessions/rename: the session and its new title (empty or null clears it). */
export interface RenameParams {
  sessionId: string;
  title?: string | null;
}

/** agent/sessions/rename: the title kept (one line, at most 120 characters; null: none). */
export interface RenameResult {
  title: string | null;
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
  /** Where the model requests go: `host` (the user's model host), `process` (litellm in the server), `none` (not loaded yet). */
  modelLibrary: "host" | "process" | "none";
  /** The model host's process id while `modelLibrary` is `host`. */
  modelHostPid: number | null;
}

/** `agent/checkpoints`: a session's checkpoints (without `sessionId`: every session's). */
export interface CheckpointsParams {
  sessionId?: string | null;
}

/** A file a checkpoint did not keep (too large, past the file limit, unreadable). */
export interface NotKeptPayload {
  path: string;
  reason: string;
}

/** The workspace before one prompt of a session, and what that prompt's turn changed. */
export interface CheckpointPayload {
  id: string;
  sessionId: string;
  /** 0: the session's first user message. */
  promptIndex: number;
  prompt: string;
  created: number;
  /** When the turn's changes were recorded (null: not finished). */
  finished: number | null;
  /** Absolute paths the turn created, changed or deleted. */
  changed: string[];
  notKept: NotKeptPayload[];
}

export interface CheckpointsResult {
  checkpoints: CheckpointPayload[];
}

/** `agent/rewind`: back to before a checkpoint's prompt (files and/or conversation); `preview`: only the plan. */
export interface RewindParams {
  checkpointId: string;
  code?: boolean;
  conversation?: boolean;
  /** Also restore files the user changed since (default: left alone, listed). */
  overwrite?: boolean;
  preview?: boolean;
}

/** `agent/redo`: undo the session's latest rewind (until its next prompt). */
export interface RedoParams {
  sessionId: string;
  /** Also put back files changed since the rewind (default: left alone, listed). */
  overwrite?: boolean;
  /** Only say what would happen (each file, and whether the conversation comes back). */
  preview?: boolean;
}

export interface FileActionPayload {
  path: string;
  /** restore, recreate, delete, conflict, keep or not-kept. */
  action: string;
  /** Why the path is protected (.vscode/, .mcp.json, git hooks...): restored like any other file,
   * shown with this reason before the user confirms; null/absent when it is not. */
  protected?: string | null;
}

export interface RewindResult {
  checkpoint: CheckpointPayload;
  actions: FileActionPayload[];
  /** False for a preview. */
  done: boolean;
  changed?: string[];
  leftAlone?: string[];
  /** The conversation was taken back (or put back by a redo). */
  conversation?: boolean;
}
