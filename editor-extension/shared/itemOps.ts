/**
 * The small immutable steps the chat's reducer is made of: new item ids, adding and updating
 * items (each update bumps the item's rev, so the webview re-renders it).
 */
import type { ChangesItem, ChatItem, ChatState, MessageItem, Role, ToolItem, ToolStatus } from "./items";

/** The next item id with `prefix` (`m-3`), and the counter after it. */
export function newId(state: ChatState, prefix: string): [string, number] {
  return [`${prefix}-${state.nextId}`, state.nextId + 1];
}

/** `item` appended to the chat. */
export function pushItem(state: ChatState, item: ChatItem, nextId: number): ChatState {
  return { ...state, items: [...state.items, item], nextId };
}

/** Every item `match` accepts changed by `change` (its rev bumped); the same state when none matches. */
export function updateItem<T extends ChatItem>(
  state: ChatState,
  match: (item: ChatItem) => item is T,
  change: (item: T) => Partial<T>,
): ChatState {
  let changed = false;
  const items: ChatItem[] = [];
  for (const it of state.items) {
    if (match(it)) {
      items.push({ ...it, ...change(it), rev: it.rev + 1 });
      changed = true;
    } else {
      items.push(it);
    }
  }
  return changed ? { ...state, items } : state;
}

/** A new message item (it ends the streaming of the assistant's text). */
export function addMessage(state: ChatState, role: Role, text: string, attachments?: string[]): ChatState {
  const [id, nextId] = newId(state, "m");
  const item: MessageItem = { kind: "message", id, rev: 0, role, text };
  if (attachments && attachments.length) item.attachments = attachments;
  return { ...pushItem(state, item, nextId), streamingId: null };
}

/** A finished tool call's status. */
export function toolStatus(isError: boolean, denied: boolean | undefined): ToolStatus {
  if (denied) return "denied";
  return isError ? "error" : "done";
}

/** Matches the tool card of `callId`. */
export function isTool(callId: string) {
  return (it: ChatItem): it is ToolItem => it.kind === "tool" && it.callId === callId;
}

/** The text of the last item when it is an error message (not to show the same error twice). */
export function lastErrorText(state: ChatState): string | null {
  const last = state.items.at(-1);
  return last && last.kind === "message" && last.role === "error" ? last.text : null;
}

/** A file card. */
export function isChanges(it: ChatItem): it is ChangesItem {
  return it.kind === "changes";
}
