/**
 * Subagents in the chat (issue 42): the card of an `agent` call becomes the card of the child it
 * runs. Its `subagent` events (the child's own events, wrapped with the parent's call id) add the
 * child's tool calls to the card, count its tokens and say when and how it ended; the card shows
 * them live (webview/toolCards.ts). A resumed session's card gets the same from the stored record
 * (`subagentFromRun`).
 */
import type { AgentEvent, SubagentEvent, Wire } from "../src/protocol";
import { isTool, toolStatus, updateItem } from "./itemOps";
import type { ChatItem, ChatState, SubagentCall, SubagentCard, ToolItem } from "./items";

/** The model-facing name of the tool that runs a subagent. */
export const AGENT_TOOL = "agent";

/** A new card for an `agent` call with these arguments (its agent and task as the model gave them). */
export function newSubagent(args: Record<string, unknown>, now: number | null): SubagentCard {
  return {
    agent: typeof args.agent === "string" && args.agent ? args.agent : "general",
    description: typeof args.description === "string" ? args.description : "",
    startedAt: now,
    finishedAt: null,
    tokens: 0,
    stopReason: null,
    calls: [],
  };
}

function withCall(card: SubagentCard, callId: string, change: (c: SubagentCall) => Partial<SubagentCall>): SubagentCard {
  return { ...card, calls: card.calls.map((c) => (c.callId === callId ? { ...c, ...change(c) } : c)) };
}

/** The card after one of the child's events. */
export function nextCard(card: SubagentCard, event: AgentEvent, now: number): SubagentCard {
  switch (event.type) {
    case "tool_call_started": {
      if (card.calls.some((c) => c.callId === event.callId)) return card;
      const call: SubagentCall = {
        callId: event.callId,
        tool: event.displayName || event.name,
        args: (event as Wire<typeof event>).arguments ?? {},
        status: "running",
        awaitingApproval: false,
        durationMs: null,
        result: null,
      };
      return { ...card, calls: [...card.calls, call] };
    }
    case "approval_requested":
      return withCall(card, event.callId, () => ({ awaitingApproval: true }));
    case "tool_call_finished":
      return withCall(card, event.callId, () => ({
        status: toolStatus(event.isError, event.denied),
        awaitingApproval: false,
        durationMs: typeof event.durationMs === "number" ? event.durationMs : null,
        result: typeof event.content === "string" ? event.content : "",
      }));
    case "usage":
      return { ...card, tokens: card.tokens + (event.inputTokens ?? 0) + (event.outputTokens ?? 0) };
    case "turn_finished": {
      const u = event.usage;
      const tokens = u ? (u.inputTokens ?? 0) + (u.outputTokens ?? 0) : card.tokens;
      return { ...card, tokens: Math.max(tokens, card.tokens), finishedAt: now, stopReason: event.stopReason };
    }
    default:
      return card;
  }
}

/** A `subagent` event applied to the card of its `agent` call (nothing when there is no such card). */
export function applySubagent(state: ChatState, event: SubagentEvent, now: number): ChatState {
  const inner: unknown = event.event;
  if (!inner || typeof inner !== "object" || typeof event.callId !== "string") return state;
  return updateItem(state, isTool(event.callId), (it: ToolItem) => {
    const base = it.subagent ?? newSubagent({ agent: event.agent, description: event.description }, now);
    const card = { ...base, agent: event.agent || base.agent, description: event.description || base.description };
    return { subagent: nextCard(card, event.event, now) };
  });
}

/** The item with the subagent call `callId` in its card (an approval of a child's call goes before it). */
export function hasSubagentCall(callId: string) {
  return (it: ChatItem): it is ToolItem => it.kind === "tool" && !!it.subagent?.calls.some((c) => c.callId === callId);
}

/** A resumed `agent` call's card from the record the server keeps with its result (`run.subagent`). */
export function subagentFromRun(args: Record<string, unknown>, record: unknown): SubagentCard | null {
  if (!record || typeof record !== "object") return null;
  const r = record as Record<string, unknown>;
  const calls = Array.isArray(r.calls) ? r.calls : [];
  const card = newSubagent({ agent: r.agent ?? args.agent, description: r.description ?? args.description }, null);
  return {
    ...card,
    tokens: typeof r.tokens === "number" ? r.tokens : 0,
    stopReason: typeof r.stopReason === "string" ? r.stopReason : null,
    calls: calls
      .filter((c): c is Record<string, unknown> => !!c && typeof c === "object" && typeof (c as { callId?: unknown }).callId === "string")
      .map((c) => ({
        callId: c.callId as string,
        tool: typeof c.tool === "string" ? c.tool : "",
        args: c.args && typeof c.args === "object" ? (c.args as Record<string, unknown>) : {},
        status: c.isError ? "error" : "done",
        awaitingApproval: false,
        durationMs: null,
        result: typeof c.result === "string" ? c.result : null,
      })),
  };
}
