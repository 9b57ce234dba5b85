/**
 * Rewind in the chat (issue 40), the pure part: which prompt of the session a user message is,
 * the three choices (code, conversation, both), and the plan shown before the user confirms
 * (what happens to each file, the files changed by the user since and left alone, what the
 * checkpoint did not keep, protected files, open editors with unsaved text). Unit-tested; the
 * extension host's side is src/chat/rewind.ts.
 */
import type { CheckpointPayload, FileActionPayload, RewindResult } from "../src/protocol";
import type { ChatItem } from "./items";

export type RewindMode = "both" | "code" | "conversation";

export const REWIND_MODES: readonly { mode: RewindMode; label: string; detail: string }[] = [
  { mode: "both", label: "Code and conversation", detail: "Put the files back and take the conversation back to before this prompt" },
  { mode: "code", label: "Code only", detail: "Put the files back; the conversation stays as it is" },
  { mode: "conversation", label: "Conversation only", detail: "Take the conversation back; the files stay as they are" },
];

export function modeFlags(mode: RewindMode): { code: boolean; conversation: boolean } {
  return { code: mode !== "conversation", conversation: mode !== "code" };
}

/** The prompt index (0: the session's first user message) of the user message `itemId` in the
 * chat's items, or null when it is not a user message. */
export function promptOrdinal(items: readonly ChatItem[], itemId: string): number | null {
  let n = 0;
  for (const it of items) {
    if (it.kind !== "message" || it.role !== "user") continue;
    if (it.id === itemId) return n;
    n++;
  }
  return null;
}

/**
 * The checkpoint of the user message `text`, the prompt `index` of the session: the one with
 * that index, unless its prompt does not hold the message's words while another's does (the
 * chat may show a message the session did not keep, e.g. one a hook blocked, which shifts the
 * count); then the one holding them nearest to `index`. The checkpoint keeps the text the model
 * got, which holds what the user typed (attachments and notes are added around it).
 */
export function checkpointFor(checkpoints: readonly CheckpointPayload[], index: number, text: string): CheckpointPayload | undefined {
  const words = text.trim().slice(0, 200);
  const holds = (c: CheckpointPayload) => words !== "" && c.prompt.includes(words);
  const byIndex = checkpoints.find((c) => c.promptIndex === index);
  if (byIndex && (holds(byIndex) || !words)) return byIndex;
  const holding = checkpoints.filter(holds).sort((a, b) => Math.abs(a.promptIndex - index) - Math.abs(b.promptIndex - index));
  return holding[0] ?? byIndex;
}

/** An edit of the agent that went into an editor buffer (its file card's row). */
export interface AgentEdit {
  changeId: string;
  /** The file's URI (file:...). */
  uri: string;
  /** Relative to its workspace folder. */
  path: string;
}

/** The agent's edits that went into editor buffers (applied, accepted or kept: not known to be
 * saved) in the turns from the prompt `promptIndex` on: the latest first (the order to revert). */
export function laterAgentEdits(items: readonly ChatItem[], promptIndex: number): AgentEdit[] {
  let n = -1;
  const out: AgentEdit[] = [];
  for (const it of items) {
    if (it.kind === "message" && it.role === "user") n++;
    if (n < promptIndex || it.kind !== "changes") continue;
    for (const f of it.files) {
      if (f.uri && (f.status === "applied" || f.status === "accepted" || f.status === "kept")) {
        out.push({ changeId: f.changeId, uri: f.uri, path: f.path });
      }
    }
  }
  return out.reverse();
}

/** A path as the user reads it: relative to its workspace folder when it is inside one. */
export function shownPath(path: string, roots: readonly string[]): string {
  for (const r of roots) {
    const root = r.endsWith("/") ? r : `${r}/`;
    if (path.startsWith(root)) return path.slice(root.length);
  }
  return path;
}

const ACTION_TEXT: Record<string, string> = {
  restore: "put back as it was",
  recreate: "created again (the agent deleted it)",
  delete: "deleted (the agent created it)",
};

/** The one-line title of a checkpoint (quick picks, the plan's question). */
export function checkpointTitle(cp: CheckpointPayload): string {
  const words = cp.prompt.replace(/\s+/g, " ").trim();
  return `prompt ${cp.promptIndex + 1} ("${words.length > 60 ? `${words.slice(0, 59)}…` : words}")`;
}

export interface PlanShown {
  /** The question (the modal's message). */
  message: string;
  /** Each file and what happens to it, the rest of the plan (the modal's detail). */
  detail: string;
  /** Files changed by the user since (left alone unless the user asks to overwrite them). */
  conflicts: string[];
  /** Anything to do at all. */
  empty: boolean;
}

const MAX_LINES = 25;

function section(out: string[], title: string, rows: string[]): void {
  if (!rows.length) return;
  out.push(`${title} (${rows.length}):`);
  for (const r of rows.slice(0, MAX_LINES)) out.push(`  ${r}`);
  if (rows.length > MAX_LINES) out.push(`  … and ${rows.length - MAX_LINES} more`);
  out.push("");
}

/**
 * The plan of a rewind preview as the user reads it before confirming. `unsaved`: the files of
 * the plan open in an editor with unsaved changes (their text stays in the editor).
 */
export function planShown(
  preview: RewindResult,
  mode: RewindMode,
  roots: readonly string[],
  unsaved: readonly string[] = [],
  /** The agent's edits still unsaved in editor buffers (no checkpoint has them): reverted there. */
  agentUnsaved: readonly string[] = [],
): PlanShown {
  const { code, conversation } = modeFlags(mode);
  const show = (p: string) => shownPath(p, roots);
  const flag = (a: FileActionPayload) => (a.protected ? ` [protected: ${a.protected}]` : "");
  const acts = preview.actions;
  const changing = code ? acts.filter((a) => a.action in ACTION_TEXT) : [];
  const conflicts = code ? acts.filter((a) => a.action === "conflict") : [];
  const notKept = code ? acts.filter((a) => a.action === "not-kept") : [];
  const out: string[] = [];
  section(out, "Files the rewind changes", changing.map((a) => `${show(a.path)}: ${ACTION_TEXT[a.action]}${flag(a)}`));
  section(out, "Changed by you since: left alone, not overwritten", conflicts.map((a) => `${show(a.path)}${flag(a)}`));
  section(out, "Not kept by the checkpoint (too large or unreadable): left alone", notKept.map((a) => show(a.path)));
  const protectedCount = changing.filter((a) => a.protected).length;
  if (protectedCount) {
    out.push(`${protectedCount} of the files to change ${protectedCount === 1 ? "is a protected file" : "are protected files"} (marked above): the rewind puts back what ${protectedCount === 1 ? "it was" : "they were"} before the agent's turn.`, "");
  }
  const unsavedHere = code ? unsaved.filter((p) => changing.some((a) => a.path === p)) : [];
  section(out, "Open with unsaved changes: your unsaved text stays in the editor (the file on disk is rewound)", unsavedHere.map(show));
  const bufferEdits = code ? [...new Set(agentUnsaved)] : [];
  section(out, "The agent's unsaved edits in open editors (not on disk, so in no checkpoint): reverted in the editor (Undo brings them back)", bufferEdits);
  if (code && !changing.length && !conflicts.length && !notKept.length && !bufferEdits.length) out.push("Files: nothing to change.", "");
  if (conversation) out.push(`Conversation: back to before this prompt (kept: Redo brings it back until your next prompt).`);
  else out.push("Conversation: stays as it is.");
  const cp = preview.checkpoint;
  return {
    message: `Rewind to before ${checkpointTitle(cp)}?`,
    detail: out.join("\n").trim(),
    conflicts: conflicts.map((a) => a.path),
    empty: !changing.length && !conversation && !(code && conflicts.length) && !bufferEdits.length,
  };
}

const REDO_TEXT: Record<string, string> = {
  restore: "back to what the rewind replaced",
  recreate: "created again (the rewind deleted it)",
  delete: "deleted again (the rewind put it back)",
};

/**
 * The plan of a redo preview (agent/redo with `preview`) as the user reads it before confirming:
 * what it puts back, the files changed since the rewind (left alone), and the conversation.
 */
export function redoPlanShown(preview: RewindResult, roots: readonly string[], unsaved: readonly string[] = []): PlanShown {
  const show = (p: string) => shownPath(p, roots);
  const flag = (a: FileActionPayload) => (a.protected ? ` [protected: ${a.protected}]` : "");
  const changing = preview.actions.filter((a) => a.action in REDO_TEXT);
  const conflicts = preview.actions.filter((a) => a.action === "conflict");
  const out: string[] = [];
  section(out, "Files the redo puts back", changing.map((a) => `${show(a.path)}: ${REDO_TEXT[a.action]}${flag(a)}`));
  section(out, "Changed since the rewind: left alone, not overwritten", conflicts.map((a) => `${show(a.path)}${flag(a)}`));
  section(out, "Open with unsaved changes: your unsaved text stays in the editor (the file on disk is put back)",
    unsaved.filter((p) => changing.some((a) => a.path === p)).map(show));
  if (!changing.length && !conflicts.length) out.push("Files: nothing to change.", "");
  out.push(preview.conversation ? "Conversation: put back as it was before the rewind." : "Conversation: stays as it is.");
  return {
    message: `Redo the rewind to before ${checkpointTitle(preview.checkpoint)}?`,
    detail: out.join("\n").trim(),
    conflicts: conflicts.map((a) => a.path),
    empty: !changing.length && !conflicts.length && !preview.conversation,
  };
}

/** What a done rewind (or redo) did, for the chat's notice. */
export function doneText(result: RewindResult, redo: boolean): string {
  const files = result.changed?.length ?? 0;
  const parts = [`${files} file${files === 1 ? "" : "s"} ${redo ? "put back" : "restored"}`];
  if (result.conversation) parts.push(redo ? "the conversation put back" : "the conversation taken back");
  const left = result.leftAlone?.length ?? 0;
  if (left) parts.push(`${left} left alone (changed by you since, or not kept)`);
  return redo
    ? `Redo: ${parts.join("; ")}.`
    : `Rewound to before ${checkpointTitle(result.checkpoint)}: ${parts.join("; ")}. "Agent: Redo Rewind" undoes it until your next prompt.`;
}
