/**
 * The chat's state and its reducer: pure, shared by the extension host (which owns the state
 * and broadcasts actions) and the webview (which applies the same actions and renders).
 */
import type {
  AgentEvent,
  ApprovalAnswer,
  ChangeStatus,
  FileChangeEvent,
  FileChangePayload,
  ReviewEditParams,
  ApproveParams,
  ElicitParams,
  McpPrompt,
  PromptResult,
  SampleParams,
  SamplingAnswer,
  SessionInfo,
  StoredMessage,
  ToolResultPayload,
  TrustServerParams,
  TrustWorkspaceParams,
  WorkspaceSettingPayload,
  WorkspaceStatusPayload,
} from "../src/protocol";
import { attachmentLabel, readableErrorText } from "./labels";

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
  answer: ApprovalAnswer | null;
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
}

export function trustEntry(p: TrustServerParams): TrustEntry {
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
    source: String(p.source ?? ""),
    cwd: p.cwd ?? null,
    env: map(p.env),
    url: p.url ?? null,
    headers: map(p.headers),
    variables: strings(p.variables),
    changes: strings(p.changes),
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

export type ChatItem = MessageItem | ToolItem | ApprovalItem | TrustItem | WorkspaceTrustItem | ElicitItem | SamplingItem | ChangesItem;

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
}

export type ChatAction =
  | { type: "reset"; sessionId: string | null }
  | { type: "userPrompt"; text: string; attachments?: string[] }
  | { type: "event"; sessionId: string | null; event: AgentEvent }
  | { type: "promptFinished"; result: PromptResult }
  | { type: "promptFailed"; message: string; cancelled?: boolean }
  | { type: "approvalRequest"; params: ApproveParams }
  | { type: "approvalAnswered"; requestId: string; answer: ApprovalAnswer; withdrawn?: boolean }
  | { type: "trustRequest"; id: string; params: TrustServerParams }
  | { type: "trustAnswered"; id: string; answer: "trust" | "deny" | "dismissed"; withdrawn?: boolean }
  | { type: "workspaceTrustRequest"; id: string; params: TrustWorkspaceParams }
  | { type: "workspaceTrustAnswered"; id: string; answer: WorkspaceTrustAnswer; withdrawn?: boolean }
  /** The trust state of the workspace folders changed (from mcp/status, mcp/statusChanged). */
  | { type: "workspaces"; workspaces: WorkspaceStatusPayload[] }
  | { type: "elicitRequest"; id: string; params: ElicitParams }
  | { type: "samplingRequest"; id: string; params: SampleParams }
  | { type: "samplingAnswered"; id: string; answer: SamplingAnswer; withdrawn?: boolean }
  | { type: "elicitAnswered"; id: string; answer: "accept" | "decline" | "cancel"; content?: Record<string, unknown> | null; withdrawn?: boolean }
  /** The user message of a turn a code action started, shown right after the item `afterId`
   * (its "Code action: <title>" notice), before the turn's streamed output. */
  | { type: "codeActionPrompt"; afterId: string | null; text: string; attachments?: string[] }
  | { type: "history"; sessionId: string; messages: StoredMessage[]; changes?: FileChangePayload[] }
  /** agent/reviewEdit arrived: `pending` when the user decides before it is applied. */
  | { type: "reviewRequest"; params: ReviewEditParams; pending: boolean }
  /** The user decided about a change (or the server withdrew its review). */
  | { type: "changeStatus"; changeId: string; status: ChangeStatus; reason?: string | null; withdrawn?: boolean }
  | { type: "sessions"; sessions: SessionInfo[] }
  | { type: "attachments"; attachments: AttachmentChip[] }
  | { type: "prompts"; prompts: McpPrompt[] }
  | { type: "notice"; text: string; role?: Role }
  | { type: "toolResult"; title: string; server: string | null; result: ToolResultPayload }
  | { type: "server"; state: ServerConnection; error?: string | null }
  | { type: "busy"; busy: boolean };

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
  };
}

/** The states in which a folder's settings are not in effect. */
export const RESTRICTED_STATES = ["restricted", "declined", "editor-restricted"];

function newId(state: ChatState, prefix: string): [string, number] {
  return [`${prefix}-${state.nextId}`, state.nextId + 1];
}

function pushItem(state: ChatState, item: ChatItem, nextId: number): ChatState {
  return { ...state, items: [...state.items, item], nextId };
}

function updateItem<T extends ChatItem>(
  state: ChatState,
  match: (item: ChatItem) => item is T,
  change: (item: T) => Partial<T>,
): ChatState {
  let changed = false;
  const items = state.items.map((it) => {
    if (!match(it)) return it;
    changed = true;
    return { ...it, ...change(it), rev: it.rev + 1 };
  });
  return changed ? { ...state, items } : state;
}

function addMessage(state: ChatState, role: Role, text: string, attachments?: string[]): ChatState {
  const [id, nextId] = newId(state, "m");
  const item: MessageItem = { kind: "message", id, rev: 0, role, text };
  if (attachments && attachments.length) item.attachments = attachments;
  return { ...pushItem(state, item, nextId), streamingId: null };
}

function toolStatus(isError: boolean, denied: boolean | undefined): ToolStatus {
  if (denied) return "denied";
  return isError ? "error" : "done";
}

function isTool(callId: string) {
  return (it: ChatItem): it is ToolItem => it.kind === "tool" && it.callId === callId;
}

function lastErrorText(state: ChatState): string | null {
  const last = state.items[state.items.length - 1];
  return last && last.kind === "message" && last.role === "error" ? last.text : null;
}

export function applyEvent(state: ChatState, sessionId: string | null, event: AgentEvent): ChatState {
  // Events of a session other than the current one (e.g. a code action started while the
  // chat was idle) switch the chat to that session; events without a session (a tool action
  // run from a code action) leave the session as it is.
  if (sessionId && sessionId !== state.sessionId) {
    state = { ...state, sessionId, streamingId: null };
  }
  switch (event.type) {
    case "turn_started":
      return { ...state, busy: true, streamingId: null };
    case "text": {
      if (!event.text) return state;
      const sid = state.streamingId;
      if (sid !== null) {
        const next = updateItem(
          state,
          (it): it is MessageItem => it.id === sid && it.kind === "message",
          (it) => ({ text: it.text + event.text }),
        );
        if (next !== state) return next;
      }
      const [id, nextId] = newId(state, "m");
      const item: MessageItem = { kind: "message", id, rev: 0, role: "assistant", text: event.text };
      return { ...pushItem(state, item, nextId), streamingId: id };
    }
    case "tool_call_started": {
      const [id, nextId] = newId(state, "t");
      const item: ToolItem = {
        kind: "tool",
        id,
        rev: 0,
        callId: event.callId,
        tool: event.name,
        server: event.server ?? null,
        displayName: event.displayName ?? null,
        args: event.arguments ?? {},
        status: "running",
        awaitingApproval: false,
        result: null,
        durationMs: null,
      };
      return { ...pushItem(state, item, nextId), streamingId: null };
    }
    case "approval_requested":
      return updateItem(state, isTool(event.callId), () => ({ awaitingApproval: true }));
    case "tool_call_finished": {
      const status = toolStatus(event.isError, event.denied);
      const next = updateItem(state, isTool(event.callId), () => ({
        status,
        awaitingApproval: false,
        result: event.content ?? "",
        durationMs: typeof event.durationMs === "number" ? event.durationMs : null,
        output: typeof event.outputHandle === "string" && sessionId ? { sessionId, handle: event.outputHandle } : null,
      }));
      if (next !== state) return { ...next, streamingId: null };
      // A finish without a start (should not happen): show a finished card anyway.
      const [id, nextId] = newId(state, "t");
      const item: ToolItem = {
        kind: "tool",
        id,
        rev: 0,
        callId: event.callId,
        tool: event.name,
        server: null,
        displayName: null,
        args: {},
        status,
        awaitingApproval: false,
        result: event.content ?? "",
        durationMs: event.durationMs ?? null,
      };
      return { ...pushItem(state, item, nextId), streamingId: null };
    }
    case "file_change":
      return upsertChange(state, sessionId ?? state.sessionId, event.turn ?? 0, changeRow(event));
    case "error":
      // One readable line: no exception class names or tracebacks (issue 17).
      return addMessage(state, "error", readableErrorText(event.message || event.kind, 1000));
    case "turn_finished":
      return { ...state, busy: false, streamingId: null };
    case "usage":
      return state;
    default:
      return state;
  }
}

function changeRow(c: FileChangeEvent | FileChangePayload, reviewable = false): FileChangeRow {
  return {
    changeId: String(c.changeId),
    callId: c.callId ?? null,
    path: String(c.shown ?? c.path),
    uri: c.uri ?? null,
    added: typeof c.added === "number" ? c.added : 0,
    removed: typeof c.removed === "number" ? c.removed : 0,
    created: c.created === true,
    status: c.status,
    reason: c.reason ?? null,
    reviewable: reviewable || ("hasContent" in c && c.hasContent === true),
  };
}

function isChanges(it: ChatItem): it is ChangesItem {
  return it.kind === "changes";
}

/**
 * A change's row: updated where it is, or added to its turn's card, which then moves to the
 * end of the chat (what the user must decide stays in view), or a new card for the turn.
 */
export function upsertChange(state: ChatState, sessionId: string | null, turn: number, row: FileChangeRow): ChatState {
  const holder = state.items.find((it): it is ChangesItem => isChanges(it) && it.files.some((f) => f.changeId === row.changeId));
  if (holder) {
    return updateItem(
      state,
      (it): it is ChangesItem => it === holder,
      (it) => ({
        files: it.files.map((f) =>
          f.changeId === row.changeId
            ? { ...f, ...row, reviewable: f.reviewable || row.reviewable, callId: row.callId ?? f.callId, uri: row.uri ?? f.uri }
            : f,
        ),
      }),
    );
  }
  const card = [...state.items].reverse().find((it): it is ChangesItem => isChanges(it) && it.sessionId === sessionId && it.turn === turn);
  if (card) {
    const moved: ChangesItem = { ...card, files: [...card.files, row], rev: card.rev + 1 };
    return { ...state, items: [...state.items.filter((it) => it !== card), moved], streamingId: null };
  }
  const [id, nextId] = newId(state, "c");
  const item: ChangesItem = { kind: "changes", id, rev: 0, sessionId, turn, files: [row] };
  return { ...pushItem(state, item, nextId), streamingId: null };
}

/** The changes of a resumed session as file cards, one per turn, after the last tool card of its calls. */
export function withChanges(items: ChatItem[], changes: FileChangePayload[], startId: number): [ChatItem[], number] {
  let n = startId;
  const byTurn = new Map<number, FileChangeRow[]>();
  for (const c of changes) {
    if (!c || typeof c !== "object" || typeof c.changeId !== "string") continue;
    const turn = typeof c.turn === "number" ? c.turn : 0;
    byTurn.set(turn, [...(byTurn.get(turn) ?? []), changeRow(c)]);
  }
  const out = [...items];
  for (const [turn, files] of byTurn) {
    const card: ChangesItem = { kind: "changes", id: `c-${n++}`, rev: 0, sessionId: null, turn, files };
    const calls = new Set(files.map((f) => f.callId));
    let at = -1;
    out.forEach((it, i) => {
      if (it.kind === "tool" && calls.has(it.callId)) at = i;
    });
    out.splice(at < 0 ? out.length : at + 1, 0, card);
  }
  return [out, n];
}

/** A stored session's messages as chat items (text, tool calls and their results). */
export function historyItems(messages: StoredMessage[], startId: number): [ChatItem[], number] {
  const items: ChatItem[] = [];
  let n = startId;
  const tools = new Map<string, ToolItem>();
  for (const m of messages) {
    const text = contentText(m.content);
    const display = m.role === "user" ? messageDisplay(m.display) : null;
    if (display) {
      // Shown as it was live: the typed text and the attachment chips, not the text the
      // model got (attachments rendered into it, a slash command expanded).
      const item: MessageItem = { kind: "message", id: `m-${n++}`, rev: 0, role: "user", text: display.text };
      if (display.attachments.length) item.attachments = display.attachments;
      items.push(item);
    } else if (m.role === "user" && text) {
      items.push({ kind: "message", id: `m-${n++}`, rev: 0, role: "user", text });
    } else if (m.role === "assistant") {
      if (text) items.push({ kind: "message", id: `m-${n++}`, rev: 0, role: "assistant", text });
      for (const call of m.tool_calls ?? []) {
        let args: Record<string, unknown> = {};
        try {
          const parsed: unknown = JSON.parse(call.function?.arguments || "{}");
          if (parsed && typeof parsed === "object") args = parsed as Record<string, unknown>;
        } catch {
          args = { arguments: call.function?.arguments ?? "" };
        }
        const item: ToolItem = {
          kind: "tool",
          id: `t-${n++}`,
          rev: 0,
          callId: call.id ?? `call-${n}`,
          tool: call.function?.name ?? "?",
          server: null,
          displayName: null,
          args,
          status: "done",
          awaitingApproval: false,
          result: null,
          durationMs: null,
        };
        tools.set(item.callId, item);
        items.push(item);
      }
    } else if (m.role === "tool" && m.tool_call_id) {
      const item = tools.get(m.tool_call_id);
      if (item) {
        item.result = text;
        applyToolRun(item, m.run);
      }
    }
  }
  return [items, n];
}

/** How a resumed tool call ran (`run` of its result: server, duration, outcome), onto its card,
 * so that it looks as it did live. Older servers send no `run`: the card keeps "done". */
function applyToolRun(item: ToolItem, raw: unknown): void {
  if (!raw || typeof raw !== "object") return;
  const r = raw as { server?: unknown; displayName?: unknown; durationMs?: unknown; isError?: unknown; denied?: unknown };
  if (typeof r.server === "string") item.server = r.server;
  if (typeof r.displayName === "string") item.displayName = r.displayName;
  if (typeof r.durationMs === "number" && Number.isFinite(r.durationMs)) item.durationMs = r.durationMs;
  item.status = toolStatus(r.isError === true, r.denied === true);
}

/** A resumed message's `display` ({text, attachments}) as text and chip labels; null when absent or malformed. */
export function messageDisplay(raw: unknown): { text: string; attachments: string[] } | null {
  if (!raw || typeof raw !== "object") return null;
  const d = raw as { text?: unknown; attachments?: unknown };
  if (typeof d.text !== "string") return null;
  const attachments = Array.isArray(d.attachments)
    ? d.attachments
        .filter((a): a is Record<string, unknown> => !!a && typeof a === "object" && typeof (a as { kind?: unknown }).kind === "string")
        .map((a) =>
          attachmentLabel({
            kind: a.kind as string,
            uri: typeof a.uri === "string" ? a.uri : null,
            server: typeof a.server === "string" ? a.server : null,
            range: validRange(a.range),
          }),
        )
    : [];
  return { text: d.text, attachments };
}

function validRange(r: unknown): { start: { line: number }; end: { line: number } } | null {
  if (!r || typeof r !== "object") return null;
  const { start, end } = r as { start?: { line?: unknown }; end?: { line?: unknown } };
  return typeof start?.line === "number" && typeof end?.line === "number" ? { start: { line: start.line }, end: { line: end.line } } : null;
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (p && typeof p === "object" && typeof (p as { text?: unknown }).text === "string" ? (p as { text: string }).text : ""))
      .filter(Boolean)
      .join("\n");
  }
  return "";
}

export function reduce(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case "reset":
      // Questions still waiting for the user stay: the server waits for their answers.
      return { ...state, sessionId: action.sessionId, items: pendingItems(state), busy: false, streamingId: null };
    case "userPrompt":
      return { ...addMessage(state, "user", action.text, action.attachments), busy: true };
    case "event":
      return applyEvent(state, action.sessionId, action.event);
    case "promptFinished": {
      let next: ChatState = { ...state, busy: false, streamingId: null, sessionId: action.result.sessionId || state.sessionId };
      const err = action.result.error;
      const shown = err && err.message ? readableErrorText(err.message, 1000) : "";
      if (shown && lastErrorText(next) !== shown) next = addMessage(next, "error", shown);
      return next;
    }
    case "promptFailed": {
      const next: ChatState = { ...state, busy: false, streamingId: null };
      if (action.cancelled) return addMessage(next, "notice", action.message || "Stopped.");
      if (lastErrorText(next) === action.message) return next;
      return addMessage(next, "error", action.message);
    }
    case "approvalRequest": {
      const p = action.params;
      const [id, nextId] = newId(state, "a");
      const item: ApprovalItem = {
        kind: "approval",
        id,
        rev: 0,
        requestId: p.callId,
        tool: p.tool,
        server: p.server ?? null,
        displayName: p.displayName ?? null,
        args: p.arguments ?? {},
        reason: p.reason ?? "",
        answer: null,
      };
      return { ...pushItem(state, item, nextId), streamingId: null };
    }
    case "approvalAnswered":
      return updateItem(
        state,
        (it): it is ApprovalItem => it.kind === "approval" && it.requestId === action.requestId && it.answer === null,
        () => (action.withdrawn ? { answer: action.answer, withdrawn: true } : { answer: action.answer }),
      );
    case "trustRequest": {
      const item: TrustItem = { kind: "trust", id: action.id, rev: 0, ...trustEntry(action.params), answer: null };
      return { ...state, items: [...state.items, item], streamingId: null };
    }
    case "workspaceTrustRequest": {
      const p = action.params;
      const item: WorkspaceTrustItem = {
        kind: "workspaceTrust",
        id: action.id,
        rev: 0,
        folder: String(p.folder),
        servers: (p.servers ?? []).map(trustEntry),
        settings: (p.settings ?? []).map((x) => ({ source: String(x.source), key: String(x.key), value: String(x.value), why: String(x.why) })),
        changes: (p.changes ?? []).map(String),
        previouslyTrusted: p.previouslyTrusted === true,
        answer: null,
      };
      return { ...state, items: [...state.items, item], streamingId: null };
    }
    case "workspaceTrustAnswered":
      return updateItem(
        state,
        (it): it is WorkspaceTrustItem => it.kind === "workspaceTrust" && it.id === action.id && it.answer === null,
        () => (action.withdrawn ? { answer: action.answer, withdrawn: true } : { answer: action.answer }),
      );
    case "workspaces":
      return {
        ...state,
        restricted: action.workspaces
          .filter((w) => RESTRICTED_STATES.includes(w.state))
          .map((w) => ({ folder: w.folder, state: w.state, message: w.message })),
      };
    case "trustAnswered":
      return updateItem(
        state,
        (it): it is TrustItem => it.kind === "trust" && it.id === action.id && it.answer === null,
        () => (action.withdrawn ? { answer: action.answer, withdrawn: true } : { answer: action.answer }),
      );
    case "elicitRequest": {
      const p = action.params;
      const item: ElicitItem = {
        kind: "elicit",
        id: action.id,
        rev: 0,
        server: p.server,
        message: p.message,
        schema: p.requestedSchema ?? {},
        answer: null,
        content: null,
      };
      return { ...state, items: [...state.items, item], streamingId: null };
    }
    case "elicitAnswered":
      return updateItem(
        state,
        (it): it is ElicitItem => it.kind === "elicit" && it.id === action.id && it.answer === null,
        () => ({ answer: action.answer, content: action.content ?? null, ...(action.withdrawn ? { withdrawn: true } : {}) }),
      );
    case "codeActionPrompt": {
      const [id, nextId] = newId(state, "m");
      const item: MessageItem = { kind: "message", id, rev: 0, role: "user", text: action.text };
      if (action.attachments && action.attachments.length) item.attachments = action.attachments;
      const at = action.afterId === null ? -1 : state.items.findIndex((it) => it.id === action.afterId);
      const items = [...state.items];
      items.splice(at < 0 ? items.length : at + 1, 0, item);
      return { ...state, items, nextId };
    }
    case "samplingRequest": {
      const p = action.params;
      const item: SamplingItem = {
        kind: "sampling",
        id: action.id,
        rev: 0,
        server: p.server,
        model: p.model,
        maxTokens: p.maxTokens,
        systemPrompt: p.systemPrompt ?? null,
        messages: Array.isArray(p.messages) ? p.messages.map((m) => ({ role: String(m.role), text: String(m.text) })) : [],
        omittedMessages: p.omittedMessages ?? 0,
        endpoint: p.endpoint ?? null,
        answer: null,
      };
      return { ...state, items: [...state.items, item], streamingId: null };
    }
    case "samplingAnswered":
      return updateItem(
        state,
        (it): it is SamplingItem => it.kind === "sampling" && it.id === action.id && it.answer === null,
        () => (action.withdrawn ? { answer: action.answer, withdrawn: true } : { answer: action.answer }),
      );
    case "history": {
      const [messages, afterMessages] = historyItems(action.messages, state.nextId);
      const [items, nextId] = withChanges(messages, action.changes ?? [], afterMessages);
      for (const it of items) if (it.kind === "changes") it.sessionId = action.sessionId;
      return { ...state, sessionId: action.sessionId, items: [...items, ...pendingItems(state)], nextId, busy: false, streamingId: null };
    }
    case "reviewRequest": {
      const p = action.params;
      const row: FileChangeRow = {
        changeId: String(p.changeId),
        callId: p.callId ?? null,
        path: String(p.path),
        uri: p.uri ?? null,
        added: typeof p.added === "number" ? p.added : 0,
        removed: typeof p.removed === "number" ? p.removed : 0,
        created: p.created === true,
        status: action.pending ? "pending" : "proposed",
        reason: null,
        reviewable: true,
      };
      // its tool call waits for this review now, not for an approval (one answered at once)
      const next = p.callId ? updateItem(state, isTool(p.callId), () => ({ awaitingApproval: false })) : state;
      return upsertChange(next, p.sessionId ?? state.sessionId, p.turn ?? 0, row);
    }
    case "changeStatus":
      return updateItem(
        state,
        (it): it is ChangesItem => isChanges(it) && it.files.some((f) => f.changeId === action.changeId),
        (it) => ({
          files: it.files.map((f) =>
            f.changeId === action.changeId
              ? { ...f, status: action.status, reason: action.reason ?? f.reason, ...(action.withdrawn ? { withdrawn: true } : {}) }
              : f,
          ),
        }),
      );
    case "sessions":
      return { ...state, sessions: action.sessions };
    case "attachments":
      return { ...state, attachments: action.attachments };
    case "prompts":
      return { ...state, prompts: action.prompts };
    case "notice":
      return addMessage(state, action.role ?? "notice", action.text);
    case "toolResult": {
      const r = action.result;
      const [id, nextId] = newId(state, "t");
      const item: ToolItem = {
        kind: "tool",
        id,
        rev: 0,
        callId: id,
        tool: action.title,
        server: action.server,
        displayName: action.title,
        args: {},
        status: toolStatus(r.isError, r.denied),
        awaitingApproval: false,
        result: r.content ?? "",
        durationMs: null,
      };
      return { ...pushItem(state, item, nextId), streamingId: null };
    }
    case "server":
      return { ...state, server: action.state, serverError: action.error ?? null };
    case "busy":
      return { ...state, busy: action.busy };
    default:
      return state;
  }
}

/** Items that wait for the user (approval, trust, workspace trust, elicitation, sampling) and are still unanswered. */
export function pendingItems(state: ChatState): ChatItem[] {
  return state.items.filter(
    (it) =>
      (it.kind === "changes" && it.files.some((f) => f.status === "pending")) ||
      ((it.kind === "approval" || it.kind === "trust" || it.kind === "workspaceTrust" || it.kind === "elicit" || it.kind === "sampling") &&
        it.answer === null),
  );
}
