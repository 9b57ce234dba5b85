/**
 * The chat's state after one streamed agent event (agent/event): text deltas, the model's
 * reasoning (thinking blocks), tool cards, file changes, errors, the turn's start and end.
 */
import type { AgentEvent, McpAppPayload, ToolCallFinishedEvent, ToolCallStartedEvent, Wire } from "../src/protocol";
import { changeRow, upsertChange } from "./fileChanges";
import { addHook } from "./hooks";
import { addMessage, isTool, newId, pushItem, toolStatus, updateItem } from "./itemOps";
import { PLAN_TOOL, planSteps, type AppItem, type ChatItem, type ChatState, type MessageItem, type ThinkingItem, type ToolItem } from "./items";
import { compactionLabel, readableErrorText } from "./labels";
import { sandboxMark } from "./sandbox";
import { AGENT_TOOL, applySubagent, newSubagent } from "./subagents";

/** A thinking block still streaming. */
const isOpenThinking = (it: ChatItem): it is ThinkingItem => it.kind === "thinking" && !it.done;

/** The open thinking block (at most one: every other event closes it). */
function openThinking(state: ChatState): ThinkingItem | undefined {
  for (let i = state.items.length - 1; i >= 0; i--) {
    const it = state.items[i];
    if (isOpenThinking(it)) return it;
  }
  return undefined;
}

/** The thinking phase is over (reply text, a tool call, the end of the turn): its block closes
 * and keeps how long it took. The same state when no block is open. */
export function endThinking(state: ChatState, now: number = Date.now()): ChatState {
  if (!openThinking(state)) return state;
  return updateItem(state, isOpenThinking, (it) => ({
    done: true,
    durationMs: it.startedAt !== null ? Math.max(0, now - it.startedAt) : null,
  }));
}

/** A piece of the model's reasoning: appended to the open thinking block, else a new block
 * (a new phase: after reply text or a tool call). */
function addThinking(state: ChatState, text: string, now: number): ChatState {
  const open = openThinking(state);
  if (open) {
    const next = updateItem(state, (it): it is ThinkingItem => it.id === open.id, (it) => ({ text: it.text + text }));
    return { ...next, streamingId: open.id };
  }
  const [id, nextId] = newId(state, "k");
  const item: ThinkingItem = { kind: "thinking", id, rev: 0, text, startedAt: now, done: false, durationMs: null };
  // streamingId on the block: the reply text that follows starts its own message after it
  return { ...pushItem(state, item, nextId), streamingId: id };
}

/** The wire `app` of a tool_call_finished, as the extension host passes it on: the HTML is
 * replaced by the frame it registered (`frameId`, `frameUrl`). */
export type AppWire = McpAppPayload & { frameId?: string | null; frameUrl?: string | null };

/** The permissions an app's resource asked for, known names only, in a fixed order. */
function askedPermissions(raw: unknown): string[] {
  if (!raw || typeof raw !== "object" || Array.isArray(raw)) return [];
  return APP_PERMISSIONS.filter((p) => p in raw);
}

const APP_PERMISSIONS = ["camera", "microphone", "geolocation", "clipboardWrite"];

/** A tool call's MCP App, right under its card (no app: the same state). */
export function addApp(state: ChatState, sessionId: string | null, event: ToolCallFinishedEvent): ChatState {
  return addAppItem(state, sessionId, event.callId, event.app);
}

/** The app `raw` (an {@link AppWire}) of the call `callId`, right under its card (a resumed call's
 * too); no app, no card: the same state. */
export function addAppItem(state: ChatState, sessionId: string | null, callId: string, raw: unknown): ChatState {
  const app = raw as Wire<AppWire> | null | undefined;
  if (!app || typeof app !== "object" || typeof app.server !== "string") return state;
  const at = state.items.findIndex((it) => it.kind === "tool" && it.callId === callId);
  if (at < 0) return state;
  const [id, nextId] = newId(state, "a");
  const shown = typeof app.frameUrl === "string" && typeof app.frameId === "string";
  const notice = shown
    ? null
    : app.error
      ? `This tool's app cannot be shown: ${app.error}`
      : "This tool has an app that this chat cannot show; its text result is above.";
  const item: AppItem = {
    kind: "app", id, rev: 0, callId, sessionId: sessionId ?? state.sessionId,
    server: app.server, tool: app.tool ?? "", resourceUri: app.resourceUri ?? "",
    frameId: shown ? (app.frameId ?? null) : null, frameUrl: shown ? (app.frameUrl ?? null) : null,
    arguments: app.arguments ?? {},
    result: app.result ?? null,
    prefersBorder: app.prefersBorder !== false, notice, context: null,
    permissions: shown ? askedPermissions(app.permissions) : [],
  };
  const items = [...state.items.slice(0, at + 1), item, ...state.items.slice(at + 1)];
  return { ...state, items, nextId };
}

/** `now`: the time the event arrived (ms since the epoch), for how long the model thought. */
export function applyEvent(state: ChatState, sessionId: string | null, event: AgentEvent, now: number = Date.now()): ChatState {
  // Events of a session other than the current one (e.g. a code action started while the
  // chat was idle) switch the chat to that session; events without a session (a tool action
  // run from a code action) leave the session as it is.
  if (sessionId && sessionId !== state.sessionId) {
    state = { ...state, sessionId, streamingId: null };
  }
  // Any other event (but an empty text piece) ends the thinking phase: its block collapses.
  if (event.type !== "thinking" && !(event.type === "text" && !event.text)) state = endThinking(state, now);
  switch (event.type) {
    case "thinking": {
      // (a server may send a non-string: nothing to show)
      const text: unknown = event.text;
      return typeof text === "string" && text ? addThinking(state, text, now) : state;
    }
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
      // the plan tool's calls update the checklist (a failed one gets its card when it ends)
      if (event.name === PLAN_TOOL) return { ...state, streamingId: null };
      const wire: Wire<ToolCallStartedEvent> = event;
      // started again once a tool not known at first was found (its MCP server started): the same card
      if (state.items.some(isTool(event.callId))) {
        return updateItem(state, isTool(event.callId), () => ({ server: event.server ?? null, displayName: event.displayName ?? null }));
      }
      const [id, nextId] = newId(state, "t");
      const item: ToolItem = {
        kind: "tool",
        id,
        rev: 0,
        callId: event.callId,
        tool: event.name,
        server: event.server ?? null,
        displayName: event.displayName ?? null,
        args: wire.arguments ?? {},
        status: "running",
        awaitingApproval: false,
        result: null,
        durationMs: null,
      };
      if (event.name === AGENT_TOOL) item.subagent = newSubagent(item.args, now);
      return { ...pushItem(state, item, nextId), streamingId: null };
    }
    case "subagent":
      return applySubagent(state, event, now);
    case "tool_call_progress":
      // shown on the running call's card until it ends (e.g. waiting for an MCP server to start)
      return updateItem(state, isTool(event.callId), () => ({ progress: typeof event.message === "string" ? event.message : null }));
    case "approval_requested":
      return updateItem(state, isTool(event.callId), () => ({ awaitingApproval: true }));
    case "tool_call_finished": {
      const wire: Wire<ToolCallFinishedEvent> = event;
      const status = toolStatus(event.isError, event.denied);
      const next = updateItem(state, isTool(event.callId), () => ({
        status,
        awaitingApproval: false,
        progress: null,
        result: wire.content ?? "",
        durationMs: typeof event.durationMs === "number" ? event.durationMs : null,
        output: typeof event.outputHandle === "string" && sessionId ? { sessionId, handle: event.outputHandle } : null,
        sandbox: sandboxMark(wire.sandbox),
      }));
      if (next !== state) return { ...addApp(next, sessionId, event), streamingId: null };
      if (event.name === PLAN_TOOL && !event.isError) return { ...state, streamingId: null };
      // A finish without a start (a failed plan update; else should not happen): show a finished card anyway.
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
        result: wire.content ?? "",
        durationMs: wire.durationMs ?? null,
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
    case "plan":
      // the checklist changes in place: no new item in the transcript
      return { ...state, plan: planSteps((event as Wire<typeof event>).entries) };
    case "usage":
      // the context meter (issue 26): the last response's context in use and the window
      if (typeof event.contextWindow === "number" && event.contextWindow > 0) {
        const source = event.contextSource === "provider" || event.contextSource === "estimate" ? event.contextSource : undefined;
        return { ...state, context: { used: event.contextTokens ?? 0, window: event.contextWindow, ...(source ? { source } : {}) } };
      }
      return state;
    case "compaction":
      return { ...addMessage(state, "notice", compactionLabel(event)), streamingId: null };
    case "hook":
      return addHook(state, event);
    default:
      return state;
  }
}
