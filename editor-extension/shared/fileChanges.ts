/**
 * The chat's file cards (issue 16): one card per turn listing the files the agent changed, live
 * (file_change events, agent/reviewEdit) or from a resumed session.
 */
import type { FileChangeEvent, FileChangePayload, Wire } from "../src/protocol";
import { isChanges, newId, pushItem, updateItem } from "./itemOps";
import type { ChangesItem, ChatItem, ChatState, FileChangeRow } from "./items";

/** A file change (a live event or a recorded one) as its card's row. */
export function changeRow(c: FileChangeEvent | FileChangePayload, reviewable = false): FileChangeRow {
  const wire: Wire<FileChangeEvent> | Wire<FileChangePayload> = c;
  return {
    changeId: String(wire.changeId),
    callId: c.callId ?? null,
    path: String(wire.shown ?? wire.path),
    uri: c.uri ?? null,
    added: typeof c.added === "number" ? c.added : 0,
    removed: typeof c.removed === "number" ? c.removed : 0,
    created: c.created === true,
    status: c.status,
    reason: c.reason ?? null,
    reviewable: reviewable || ("hasContent" in c && c.hasContent === true),
  };
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
    if (!isRecordedChange(c)) continue;
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

/** Whether a recorded change the server sent can be shown (an object with an id). */
function isRecordedChange(c: unknown): boolean {
  return !!c && typeof c === "object" && typeof (c as { changeId?: unknown }).changeId === "string";
}
