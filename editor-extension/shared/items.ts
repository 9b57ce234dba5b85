/**
 * What the chat shows: its items (messages, tool cards, the questions waiting for the user, file
 * change cards) and the state that holds them, shared by the extension host and the webview;
 * the reducer that changes it is in ./state.
 */
import type { JobRow } from "./jobs";
import {
  PLAN_STATUSES,
  type ApprovalAnswer,
  type ApprovalScope,
  type ChangeStatus,
  type ContextSource,
  type HookOutcome,
  type McpPrompt,
  type ModelsResult,
  type PlanStatus,
  type SamplingAnswer,
  type SandboxMark,
  type SessionInfo,
  type TrustServerParams,
  type Wire,
  type WorkspaceSettingPayload,
} from "../src/protocol";

/** The context meter's figure (issue 26), and whose count it is (issue 44). */
export interface ContextMeter {
  used: number;
  window: number;
  /** `provider`: the provider's usage of the last response; `estimate`: agent-ls's count; absent: not said. */
  source?: ContextSource;
}

export type Role = "user" | "assistant" | "error" | "notice";
export type ToolStatus = "running" | "done" | "error" | "denied";

interface ItemBase {
  id: string;
  /** Bumped on every change: the webview re-renders an item only when its rev changes. */
  rev: number;
}

export interface MessageItem extends ItemBase {
  kind: "message";
  role: Role;
  text: string;
  /** Labels of the attachments sent with a user message. */
  attachments?: string[];
}

/** One phase of the model's reasoning (`thinking` events) before the reply text or tool call it
 * precedes: shown as plain text, never stored by the server, never sent back. */
export interface ThinkingItem extends ItemBase {
  kind: "thinking";
  text: string;
  /** When its first piece arrived (ms since the epoch, the clock of whoever applied the event). */
  startedAt: number | null;
  /** The phase ended: reply text, a tool call, another event or the end of the turn. */
  done: boolean;
  /** How long the model thought (ms), once done; null: not known. */
  durationMs: number | null;
}

export interface ToolItem extends ItemBase {
  kind: "tool";
  callId: string;
  /** Model-facing tool name. */
  tool: string;
  server: string | null;
  displayName: string | null;
  args: Record<string, unknown>;
  status: ToolStatus;
  awaitingApproval: boolean;
  result: string | null;
  durationMs: number | null;
  /** The result was longer than a page: the server keeps it whole (agent/toolOutput). */
  output?: { sessionId: string; handle: string } | null;
  /** What the running call is doing (tool_call_progress), e.g. waiting for an MCP server to start. */
  progress?: string | null;
  /** Where a command ran (bash): sandboxed or not, and what the sandbox refused (issue 47). */
  sandbox?: SandboxMark | null;
  /** The subagent an `agent` call runs (issue 42), its tool calls nested in the card. */
  subagent?: SubagentCard | null;
}

/** One tool call of a subagent, shown inside its `agent` card. */
export interface SubagentCall {
  callId: string;
  tool: string;
  args: Record<string, unknown>;
  status: ToolStatus;
  awaitingApproval: boolean;
  durationMs: number | null;
  result: string | null;
}

/** What a subagent did so far: its name and task, its tool calls, its tokens and how it ended. */
export interface SubagentCard {
  agent: string;
  description: string;
  /** When the card learned of it (ms since the epoch); the elapsed time counts from here. */
  startedAt: number | null;
  /** When it ended (null: still running). */
  finishedAt: number | null;
  /** Input + output tokens of its responses so far. */
  tokens: number;
  /** `end`, `max_steps`, `error` or `cancelled` once it ended. */
  stopReason: string | null;
  calls: SubagentCall[];
}

export interface ApprovalItem extends ItemBase {
  kind: "approval";
  /** The callId of the agent/approve request. */
  requestId: string;
  tool: string;
  server: string | null;
  displayName: string | null;
  args: Record<string, unknown>;
  reason: string;
  /** The session choices the server offers (null: an older server, one "Allow for session"). */
  scopes: ApprovalScope[] | null;
  /** Why the call touches a protected file, shown on the card. */
  sensitive: string | null;
  answer: ApprovalAnswer | null;
  /** The label of the session scope the user chose. */
  scopeLabel?: string;
  /** The server withdrew the question ($/cancelRequest: its turn was stopped or ended). */
  withdrawn?: boolean;
}

/** An MCP server entry of a workspace file as the trust prompts show it: everything that
 * decides what runs or where data goes, as written. */
export interface TrustEntry {
  server: string;
  /** `stdio`, `http` or `sse`. */
  transport: string;
  command: string;
  args: string[];
  source: string;
  /** The directory the server would run in (null: its workspace folder). */
  cwd: string | null;
  env: Record<string, string>;
  url: string | null;
  headers: Record<string, string>;
  /** Environment variables whose values it would receive. */
  variables: string[];
  /** What changed since the user trusted it (empty: new). */
  changes: string[];
  /** Every `oauth` setting (`grant`, `clientId`, `assertionFile`, `issuer`, `idp.tokenEndpoint`...): which
   * files are read and where credentials go; credentials `***` unless they name a variable. */
  oauth: Record<string, string>;
  /** Every other non-cosmetic key (`protocol`, other hosts' keys), as written. */
  options: Record<string, string>;
  /** Its `oauth` settings a workspace file may not set: the server does not start. */
  refused: string[];
}

export function trustEntry(p: Wire<TrustServerParams>): TrustEntry {
  const strings = (v: unknown): string[] => (Array.isArray(v) ? v.map((x) => String(x)) : []);
  const map = (v: unknown): Record<string, string> =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v as Record<string, unknown>).map(([k, x]) => [k, String(x)]))
      : {};
  return {
    server: String(p.server),
    transport: p.transport ?? (p.url ? "http" : "stdio"),
    command: p.command ?? "",
    args: strings(p.args),
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-conversion -- a server may send a non-string: shown as text
    source: String(p.source ?? ""),
    cwd: p.cwd ?? null,
    env: map(p.env),
    url: p.url ?? null,
    headers: map(p.headers),
    variables: strings(p.variables),
    changes: strings(p.changes),
    oauth: map(p.oauth),
    options: map(p.options),
    refused: strings(p.refused),
  };
}

export interface TrustItem extends ItemBase, TrustEntry {
  kind: "trust";
  answer: "trust" | "deny" | "dismissed" | null;
  withdrawn?: boolean;
}

export type WorkspaceTrustAnswer = "trust" | "restricted" | "dismissed";

/** A workspace folder's settings ask for things that need trust (agent/trustWorkspace). */
export interface WorkspaceTrustItem extends ItemBase {
  kind: "workspaceTrust";
  folder: string;
  servers: TrustEntry[];
  settings: WorkspaceSettingPayload[];
  /** What changed in those settings since the folder was last trusted. */
  changes: string[];
  previouslyTrusted: boolean;
  answer: WorkspaceTrustAnswer | null;
  withdrawn?: boolean;
}

/** A workspace folder whose settings are not in effect (the chat's banner). */
export interface RestrictedWorkspace {
  folder: string;
  state: string;
  message: string;
}

export interface ElicitItem extends ItemBase {
  kind: "elicit";
  server: string;
  message: string;
  schema: Record<string, unknown>;
  answer: "accept" | "decline" | "cancel" | null;
  content: Record<string, unknown> | null;
  withdrawn?: boolean;
}

/** An MCP server asks to use the model (MCP sampling): the user allows it or not. */
export interface SamplingItem extends ItemBase {
  kind: "sampling";
  server: string;
  model: string;
  maxTokens: number;
  systemPrompt: string | null;
  messages: { role: string; text: string }[];
  omittedMessages: number;
  /** The API base the request goes to (null: the provider's default). */
  endpoint: string | null;
  answer: SamplingAnswer | null;
  /** The server withdrew the question ($/cancelRequest) or went away. */
  withdrawn?: boolean;
}

/** One file the agent changed (or wants to change), as its card's row shows it. */
export interface FileChangeRow {
  changeId: string;
  callId: string | null;
  /** The path relative to its workspace folder. */
  path: string;
  uri: string | null;
  added: number;
  removed: number;
  created: boolean;
  /** `pending`: waiting for the user's Accept / Reject (agent/reviewEdit is open). */
  status: ChangeStatus | "pending";
  reason: string | null;
  /** The texts before and after are known (live) or kept by the server: Review / Revert work. */
  reviewable: boolean;
  /** The server withdrew the review (the turn was stopped). */
  withdrawn?: boolean;
}

/** The files one turn changed, with what became of each (issue 16: review in the editor). */
export interface ChangesItem extends ItemBase {
  kind: "changes";
  sessionId: string | null;
  turn: number;
  files: FileChangeRow[];
}

/** A hook ran (issue 43): one line (event, command, outcome, time) that opens on its output. */
export interface HookItem extends ItemBase {
  kind: "hook";
  /** The hook event (`PreToolUse`, `UserPromptSubmit`...). */
  event: string;
  /** The command's first words. */
  command: string;
  outcome: HookOutcome;
  durationMs: number | null;
  /** Why it blocked, its error or its message (may be empty). */
  message: string;
  /** What it printed (may be empty). */
  output: string;
  decision: string | null;
  /** The tool call it ran for (null: a conversation event). */
  callId: string | null;
  tool: string | null;
}

/** An MCP App shown under its tool call's card (MCP Apps): a sandboxed frame, or why it is not shown. */
export interface AppItem extends ItemBase {
  kind: "app";
  callId: string;
  sessionId: string | null;
  server: string;
  /** The tool's name on its server. */
  tool: string;
  resourceUri: string;
  /** The host's record of the frame (its session and server: the app's word is never asked). */
  frameId: string | null;
  /** Where the frame loads the app's document from (null: not shown). */
  frameUrl: string | null;
  arguments: Record<string, unknown>;
  result: Record<string, unknown> | null;
  prefersBorder: boolean;
  /** Why the app is not shown (null: it is). */
  notice: string | null;
  /** What the app last set for the model with ui/update-model-context (shown in the card). */
  context: string | null;
  /** The browser permissions its resource asked for (`_meta.ui.permissions`: camera, microphone,
   * geolocation, clipboardWrite): never granted, said in the card. */
  permissions?: string[];
}

export type ChatItem = MessageItem | ThinkingItem | ToolItem | ApprovalItem | TrustItem | WorkspaceTrustItem | ElicitItem | SamplingItem | ChangesItem | HookItem | AppItem;

export interface AttachmentChip {
  kind: "selection" | "file" | "resource";
  label: string;
}

export type ServerConnection = "starting" | "running" | "stopped" | "failed";

export interface ChatState {
  sessionId: string | null;
  busy: boolean;
  items: ChatItem[];
  sessions: SessionInfo[];
  attachments: AttachmentChip[];
  prompts: McpPrompt[];
  server: ServerConnection;
  serverError: string | null;
  /** Id of the assistant message that text deltas append to (null: the next delta starts one). */
  streamingId: string | null;
  nextId: number;
  /** Workspace folders whose settings are not in effect (restricted), for the banner. */
  restricted?: RestrictedWorkspace[];
  /** The context meter: tokens of the conversation in the model's context, and its window
   * (from the last `usage` event that carried them; null: not known yet); `source`: the provider's
   * count or agent-ls's estimate (issue 44). */
  context?: ContextMeter | null;
  /** The session's plan (the model's `update_plan` checklist), updated in place; empty: none. */
  plan?: PlanStep[];
  /** The model picker (agent/models): the choices and the session's current model. */
  models?: ModelsResult | null;
  /** The session's background jobs (agent/jobs, agent/jobsChanged): the Running strip. */
  jobs?: JobRow[];
  /** What the user allowed the OS sandbox in this workspace (agent/sandboxGrants): the tool
   * cards offer "Allow for this workspace" and, once allowed, "Undo". */
  sandboxGrants?: SandboxGrants | null;
}

/** The user's sandbox grants of the workspace folders, together. */
export interface SandboxGrants {
  hosts: string[];
  writes: string[];
  /** Set when commands do not run in an OS sandbox (off in the settings, or no mechanism here):
   * the chat's header says so, once, in this sentence. */
  note?: string | null;
}

/** A step of the agent's plan, as the checklist shows it. */
export interface PlanStep {
  content: string;
  status: PlanStatus;
}

/** The model's plan tool: its calls update the checklist instead of adding tool cards. */
export const PLAN_TOOL = "update_plan";

/** A plan as the server sent it (`plan` event, a resumed session's `plan`), malformed steps left out. */
export function planSteps(raw: unknown): PlanStep[] {
  if (!Array.isArray(raw)) return [];
  return raw.flatMap((s: unknown) => {
    if (!s || typeof s !== "object") return [];
    const { content, status } = s as { content?: unknown; status?: unknown };
    if (typeof content !== "string" || !content) return [];
    return [{ content, status: (PLAN_STATUSES as readonly unknown[]).includes(status) ? (status as PlanStatus) : "pending" }];
  });
}

export function initialState(): ChatState {
  return {
    sessionId: null,
    busy: false,
    items: [],
    sessions: [],
    attachments: [],
    prompts: [],
    server: "starting",
    serverError: null,
    streamingId: null,
    nextId: 1,
    restricted: [],
    context: null,
    plan: [],
    models: null,
  };
}
