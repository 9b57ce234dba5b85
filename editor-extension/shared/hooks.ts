/**
 * Hook runs in the chat (issue 43): each `hook` event of a turn becomes a hook line of its own,
 * in the order it came (a tool hook's line follows its call's card). Not stored by the server:
 * a resumed session has none.
 */
import type { HookEvent, HookOutcome, Wire } from "../src/protocol";
import { newId, pushItem } from "./itemOps";
import type { ChatState, HookItem } from "./items";

const OUTCOMES: readonly HookOutcome[] = ["ran", "blocked", "error"];

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** The chat after a `hook` event: a new hook line (a malformed event still shows, as far as it can). */
export function addHook(state: ChatState, event: Wire<HookEvent>): ChatState {
  const [id, nextId] = newId(state, "h");
  const outcome = (OUTCOMES as readonly unknown[]).includes(event.outcome) ? (event.outcome as HookOutcome) : "error";
  const item: HookItem = {
    kind: "hook",
    id,
    rev: 0,
    event: str(event.event) || "hook",
    command: str(event.command),
    outcome,
    durationMs: typeof event.durationMs === "number" ? event.durationMs : null,
    message: str(event.message),
    output: str(event.output),
    decision: typeof event.decision === "string" ? event.decision : null,
    callId: typeof event.callId === "string" ? event.callId : null,
    tool: typeof event.tool === "string" ? event.tool : null,
  };
  return { ...pushItem(state, item, nextId), streamingId: null };
}

/** The outcome in words, as the line says it: "ran", "ran, allowed", "blocked", "error". */
export function hookOutcomeText(item: Pick<HookItem, "outcome" | "decision">): string {
  if (item.outcome === "blocked") return "blocked";
  if (item.outcome === "error") return "error";
  if (item.decision === "allow") return "ran, allowed";
  if (item.decision === "ask") return "ran, asks you";
  return "ran";
}
