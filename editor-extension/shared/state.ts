/**
 * The chat's state and its reducer: pure, shared by the extension host (which owns the state
 * and broadcasts actions) and the webview (which applies the same actions and renders).
 * The item types live in ./items, the reducer's parts in ./agentEvents, ./fileChanges and
 * ./history; everything the chat's users need is exported from here.
 */
import { jobRows } from "./jobs";
import type {
  AgentEvent,
  ApprovalAnswer,
  ApproveParams,
  ChangeStatus,
  ElicitParams,
  FileChangePayload,
  JobPayload,
  McpPrompt,
  ModelsResult,
  PlanEntryPayload,
  PromptResult,
  ReviewEditParams,
  SampleMessage,
  SampleParams,
  SamplingAnswer,
  SessionInfo,
  StoredMessage,
  ToolResultPayload,
  TrustServerParams,
  TrustWorkspaceParams,
  Wire,
  WorkspaceSettingPayload,
  WorkspaceStatusPayload,
} from "../src/protocol";
import { addAppItem, applyEvent, endThinking, type AppWire } from "./agentEvents";
import { upsertChange, withChanges } from "./fileChanges";
import { historyItems } from "./history";
import {
  addMessage,
  isChanges,
  isTool,
  lastErrorText,
  newId,
  pushItem,
  toolStatus,
  updateItem,
} from "./itemOps";
import {
  planSteps,
  trustEntry,
  type AppItem,
  type ApprovalItem,
  type AttachmentChip,
  type ChangesItem,
  type ChatItem,
  type ChatState,
  type ElicitItem,
  type FileChangeRow,
  type MessageItem,
  type Role,
  type SamplingItem,
  type SandboxGrants,
  type ServerConnection,
  type ToolItem,
  type TrustItem,
  type WorkspaceTrustAnswer,
  type WorkspaceTrustItem,
} from "./items";
import { readableErrorText } from "./labels";
import { hasSubagentCall } from "./subagents";

export * from "./items";
export { applyEvent } from "./agentEvents";
export { upsertChange, withChanges } from "./fileChanges";
export { historyItems, messageDisplay } from "./history";

export type ChatAction =
  | { type: "reset"; sessionId: string | null }
  | { type: "userPrompt"; text: string; attachments?: string[] }
  | { type: "event"; sessionId: string | null; event: AgentEvent }
  | { type: "promptFinished"; result: PromptResult }
  | { type: "promptFailed"; message: string; cancelled?: boolean }
  | { type: "approvalRequest"; params: ApproveParams }
  | { type: "approvalAnswered"; requestId: string; answer: ApprovalAnswer; withdrawn?: boolean; scope?: string }
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
  | { type: "history"; sessionId: string; messages: StoredMessage[]; changes?: FileChangePayload[]; plan?: PlanEntryPayload[] }
  /** agent/reviewEdit arrived: `pending` when the user decides before it is applied. */
  | { type: "reviewRequest"; params: ReviewEditParams; pending: boolean }
  /** The user decided about a change (or the server withdrew its review). */
  | { type: "changeStatus"; changeId: string; status: ChangeStatus; reason?: string | null; withdrawn?: boolean }
  | { type: "sessions"; sessions: SessionInfo[] }
  /** The model choices (agent/models, agent/setModel); a session the picker created becomes the chat's. */
  | { type: "models"; models: ModelsResult }
  | { type: "attachments"; attachments: AttachmentChip[] }
  | { type: "prompts"; prompts: McpPrompt[] }
  | { type: "notice"; text: string; role?: Role }
  | { type: "toolResult"; title: string; server: string | null; result: ToolResultPayload }
  | { type: "server"; state: ServerConnection; error?: string | null }
  | { type: "busy"; busy: boolean }
  /** The user's sandbox grants for the workspace (agent/sandboxGrants, agent/setSandboxGrant). */
  | { type: "sandboxGrants"; grants: SandboxGrants }
  /** The background jobs of `sessionId` now (agent/jobs, agent/jobsChanged). */
  | { type: "jobs"; sessionId: string; jobs: JobPayload[] }
  /** An MCP App set context for the model (ui/update-model-context): shown in its card. */
  | { type: "appContext"; frameId: string; text: string }
  /** A resumed call's MCP App, read again (agent/appResource) or why not: under its card. */
  | { type: "app"; sessionId: string; callId: string; app: AppWire };

/** The states in which a folder's settings are not in effect. */
export const RESTRICTED_STATES = ["restricted", "declined", "editor-restricted"];

export function reduce(state: ChatState, action: ChatAction): ChatState {
  switch (action.type) {
    case "reset":
      // Questions still waiting for the user stay: the server waits for their answers.
      return { ...state, sessionId: action.sessionId, items: pendingItems(state), busy: false, streamingId: null, context: null, plan: [], jobs: [] };
    case "jobs":
      return action.sessionId === state.sessionId ? { ...state, jobs: jobRows(action.jobs) } : state;
    case "app":
      return action.sessionId === state.sessionId ? addAppItem(state, action.sessionId, action.callId, action.app) : state;
    case "appContext":
      return updateItem(state, (it): it is AppItem => it.kind === "app" && it.frameId === action.frameId,
        () => ({ context: action.text || null }));
    case "userPrompt":
      return { ...addMessage(state, "user", action.text, action.attachments), busy: true };
    case "event":
      return applyEvent(state, action.sessionId, action.event);
    case "promptFinished": {
      // (the turn is over: a thinking block still open closes, here and in promptFailed and busy: false)
      let next: ChatState = { ...endThinking(state), busy: false, streamingId: null, sessionId: action.result.sessionId || state.sessionId };
      const err = action.result.error;
      // /compact that found nothing to do has no compaction event: its result says so
      if (action.result.stopReason === "compacted" && !state.items.some((it) => it.kind === "message" && it.role === "notice" && it.text.startsWith("Compacted on /compact"))) {
        next = addMessage(next, "notice", action.result.text);
      }
      const shown = err && err.message ? readableErrorText(err.message, 1000) : "";
      if (shown && lastErrorText(next) !== shown) next = addMessage(next, "error", shown);
      return next;
    }
    case "promptFailed": {
      const next: ChatState = { ...endThinking(state), busy: false, streamingId: null };
      if (action.cancelled) return addMessage(next, "notice", action.message || "Stopped.");
      if (lastErrorText(next) === action.message) return next;
      return addMessage(next, "error", action.message);
    }
    case "approvalRequest": {
      const p: Wire<ApproveParams> = action.params;
      const [id, nextId] = newId(state, "a");
      const item: ApprovalItem = {
        kind: "approval",
        id,
        rev: 0,
        requestId: action.params.callId,
        tool: action.params.tool,
        server: p.server ?? null,
        displayName: p.displayName ?? null,
        args: p.arguments ?? {},
        reason: p.reason ?? "",
        scopes: Array.isArray(p.scopes)
          ? p.scopes.filter((s) => typeof s.id === "string" && typeof s.label === "string")
          : null,
        sensitive: typeof p.sensitive === "string" ? p.sensitive : null,
        answer: null,
      };
      return { ...beforeToolCard(state, item, nextId), streamingId: null };
    }
    case "approvalAnswered":
      return updateItem(
        state,
        (it): it is ApprovalItem => it.kind === "approval" && it.requestId === action.requestId && it.answer === null,
        (it) => {
          if (action.withdrawn) return { answer: action.answer, withdrawn: true };
          const label = it.scopes?.find((s) => s.id === action.scope)?.label ?? it.scopes?.[0]?.label;
          return action.answer === "allow_session" && label ? { answer: action.answer, scopeLabel: label } : { answer: action.answer };
        },
      );
    case "trustRequest": {
      const item: TrustItem = { kind: "trust", id: action.id, rev: 0, ...trustEntry(action.params), answer: null };
      return { ...state, items: [...state.items, item], streamingId: null };
    }
    case "workspaceTrustRequest": {
      const p: Wire<TrustWorkspaceParams> = action.params;
      const item: WorkspaceTrustItem = {
        kind: "workspaceTrust",
        id: action.id,
        rev: 0,
        folder: String(p.folder),
        servers: (p.servers ?? []).map(trustEntry),
        settings: (p.settings ?? []).map((x: Wire<WorkspaceSettingPayload>) => ({ source: String(x.source), key: String(x.key), value: String(x.value), why: String(x.why) })),
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
      const p: Wire<ElicitParams> = action.params;
      const item: ElicitItem = {
        kind: "elicit",
        id: action.id,
        rev: 0,
        server: action.params.server,
        message: action.params.message,
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
        messages: Array.isArray(p.messages) ? p.messages.map((m: Wire<SampleMessage>) => ({ role: String(m.role), text: String(m.text) })) : [],
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
      const plan = planSteps(action.plan);
      const [items, nextId] = withChanges(messages, action.changes ?? [], afterMessages);
      for (const it of items) if (it.kind === "changes") it.sessionId = action.sessionId;
      return { ...state, sessionId: action.sessionId, items: [...items, ...pendingItems(state)], nextId, busy: false, streamingId: null, plan };
    }
    case "reviewRequest": {
      const p: Wire<ReviewEditParams> = action.params;
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
    case "models":
      return { ...state, models: action.models, sessionId: state.sessionId ?? action.models.sessionId ?? null };
    case "attachments":
      return { ...state, attachments: action.attachments };
    case "prompts":
      return { ...state, prompts: action.prompts };
    case "notice":
      return addMessage(state, action.role ?? "notice", action.text);
    case "toolResult": {
      const r: Wire<ToolResultPayload> = action.result;
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
        status: toolStatus(action.result.isError, action.result.denied),
        awaitingApproval: false,
        result: r.content ?? "",
        durationMs: null,
      };
      return { ...pushItem(state, item, nextId), streamingId: null };
    }
    case "server":
      return { ...state, server: action.state, serverError: action.error ?? null };
    case "busy":
      return { ...(action.busy ? state : endThinking(state)), busy: action.busy };
    case "sandboxGrants": {
      // the cards that show a refusal are drawn again (Allow becomes Undo and back)
      const refused = (it: ChatItem): it is ToolItem => it.kind === "tool" && !!it.sandbox && (it.sandbox.paths.length > 0 || it.sandbox.hosts.length > 0);
      return { ...updateItem(state, refused, () => ({})), sandboxGrants: action.grants };
    }
    default:
      return state;
  }
}

/**
 * `item` (an approval) added right before the tool card of its call, else at the end: the
 * transcript then reads in the order things happened (issue 44), the question and its answer
 * ("Allow add from healthy? Allow once") above the call's result, not after it.
 */
function beforeToolCard(state: ChatState, item: ApprovalItem, nextId: number): ChatState {
  const own = isTool(item.requestId);
  const child = hasSubagentCall(item.requestId); // a subagent's call: before its agent card
  const isCard = (it: ChatItem) => own(it) || child(it);
  let at = state.items.length - 1;
  while (at >= 0 && !isCard(state.items[at])) at--;
  if (at < 0) return pushItem(state, item, nextId);
  return { ...state, items: [...state.items.slice(0, at), item, ...state.items.slice(at)], nextId };
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
