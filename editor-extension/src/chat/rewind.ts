/**
 * Rewind and redo in the chat (issue 40): "Rewind to here" on a user message, and the command
 * palette's "Agent: Rewind" (pick a checkpoint) and "Agent: Redo Rewind". Both ask what to take
 * back (code, conversation or both), show the plan (agent/rewind with `preview`: each file and
 * what happens to it, the files changed by the user since, left alone, what the checkpoint did
 * not keep, protected files, open editors with unsaved text) in a modal and rewind only when the
 * user confirms; then the chat reloads the conversation, open buffers follow (./openBuffers), and
 * a Redo is offered; a Redo shows its plan too (agent/redo with `preview`: what it puts back,
 * the files changed since the rewind, left alone, and whether the conversation comes back) and
 * redoes only when the user confirms. Only the existing requests: agent/checkpoints, agent/rewind,
 * agent/redo.
 */
import * as vscode from "vscode";
import type { ChatState } from "../../shared/state";
import {
  REWIND_MODES,
  checkpointFor,
  checkpointTitle,
  laterAgentEdits,
  doneText,
  modeFlags,
  planShown,
  promptOrdinal,
  redoPlanShown,
  shownPath,
  type PlanShown,
  type RewindMode,
} from "../../shared/rewind";
import { errorText } from "../errors";
import { fact } from "../factLog";
import * as P from "../protocol";
import { buffersText, dirtyAmong, settleBuffers, vscodeBuffers, type BufferDeps } from "./openBuffers";

export const REWIND_BUTTON = "Rewind";
export const REDO_BUTTON = "Redo";

export interface RewindHost {
  request<R>(method: string, params: unknown): Promise<R>;
  state(): ChatState;
  notice(text: string, role?: "notice" | "error"): void;
  /** Shows the session's conversation as the store has it now (agent/sessions/resume). */
  reload(sessionId: string): Promise<void>;
  /** The workspace folders (paths are shown relative to them). */
  roots(): string[];
  buffers?: BufferDeps;
  /** Reverts an agent edit in its editor buffer (the file card's Revert: an undoable edit). */
  revertEdit?(changeId: string): Promise<void>;
}

/** The plan in a modal: `button` goes ahead; when files changed since, a second button (its label
 * from `overwriteLabel("1 file")`) goes ahead and overwrites them too. Undefined: cancelled. */
async function confirm(shown: PlanShown, button: string, overwriteLabel: (files: string) => string): Promise<{ overwrite: boolean } | undefined> {
  const n = shown.conflicts.length;
  const overwrite = n ? overwriteLabel(`${n} file${n === 1 ? "" : "s"}`) : null;
  const answer = await vscode.window.showWarningMessage(shown.message, { modal: true, detail: shown.detail }, button, ...(overwrite ? [overwrite] : []));
  return answer ? { overwrite: answer === overwrite } : undefined;
}

export class ChatRewind {
  private readonly buffers: BufferDeps;

  constructor(private readonly host: RewindHost) {
    this.buffers = host.buffers ?? vscodeBuffers();
  }

  /** "Rewind to here" on the user message `itemId` of the chat. */
  async fromMessage(itemId: string): Promise<void> {
    const s = this.host.state();
    const index = promptOrdinal(s.items, itemId);
    if (index === null || !s.sessionId) return;
    if (s.busy) {
      this.host.notice("The agent is still answering: stop it before rewinding.");
      return;
    }
    const r = await this.host.request<P.CheckpointsResult>(P.CHECKPOINTS, { sessionId: s.sessionId } satisfies P.CheckpointsParams);
    const item = s.items.find((i) => i.id === itemId);
    const cp = checkpointFor(r.checkpoints, index, item?.kind === "message" ? item.text : "");
    if (!cp) {
      this.host.notice(`There is no checkpoint before prompt ${index + 1} of this session (it was dropped to keep the storage bounded, or checkpoints were off then).`, "error");
      return;
    }
    await this.rewindTo(cp);
  }

  /** "Agent: Rewind": pick a checkpoint of the chat's session (of every session when it has none). */
  async command(): Promise<void> {
    await this.guard(async () => {
      const sessionId = this.host.state().sessionId;
      const r = await this.host.request<P.CheckpointsResult>(P.CHECKPOINTS, { sessionId } satisfies P.CheckpointsParams);
      if (!r.checkpoints.length) {
        void vscode.window.showInformationMessage("No checkpoints yet: one is taken before each prompt.");
        return;
      }
      const picks = [...r.checkpoints].reverse().map((cp) => ({
        label: checkpointTitle(cp),
        description: `${cp.changed.length} file${cp.changed.length === 1 ? "" : "s"} changed · ${new Date(cp.created * 1000).toLocaleTimeString()}`,
        detail: sessionId ? undefined : `session ${cp.sessionId.slice(0, 8)}`,
        cp,
      }));
      const pick = await vscode.window.showQuickPick(picks, {
        title: "Agent: Rewind",
        placeHolder: "Go back to before which prompt?",
        matchOnDescription: true,
      });
      if (pick) await this.rewindTo(pick.cp);
    });
  }

  /** "Agent: Redo Rewind" (and the Redo button after a rewind): undo the session's latest rewind. */
  async redo(sessionId?: string | null): Promise<void> {
    await this.guard(async () => {
      const sid = sessionId ?? this.host.state().sessionId;
      if (!sid) {
        void vscode.window.showInformationMessage("Nothing to redo: the chat has no session.");
        return;
      }
      const preview = await this.host.request<P.RewindResult>(P.REDO, { sessionId: sid, preview: true } satisfies P.RedoParams);
      const roots = this.host.roots();
      const shown = redoPlanShown(preview, roots, dirtyAmong(preview.actions.map((a) => a.path), this.buffers));
      fact(`redo-plan ${preview.checkpoint.id} ${preview.actions.map((a) => `${a.action}:${shownPath(a.path, roots)}`).join(" ")} conversation=${preview.conversation === true}`);
      const choice = await confirm(shown, REDO_BUTTON, (files) => `Redo, also overwrite the ${files} changed since`);
      if (!choice) {
        fact(`redo-cancelled ${preview.checkpoint.id}`);
        return;
      }
      const result = await this.host.request<P.RewindResult>(P.REDO, { sessionId: sid, overwrite: choice.overwrite } satisfies P.RedoParams);
      fact(`redone ${result.checkpoint.id} changed=${result.changed?.length ?? 0}`);
      await this.afterwards(result, sid, true);
    });
  }

  private async guard(fn: () => Promise<void>): Promise<void> {
    try {
      await fn();
    } catch (e) {
      const text = errorText(e);
      fact(`error ${text}`);
      this.host.notice(text, "error");
      void vscode.window.showErrorMessage(text);
    }
  }

  private async pickMode(): Promise<RewindMode | undefined> {
    const pick = await vscode.window.showQuickPick(
      REWIND_MODES.map((m) => ({ label: m.label, detail: m.detail, mode: m.mode })),
      { title: "Rewind: what to take back", placeHolder: "Code, conversation or both" },
    );
    return pick?.mode;
  }

  /** The three choices, the plan, the question, the rewind and what follows it. */
  private async rewindTo(cp: P.CheckpointPayload): Promise<void> {
    const mode = await this.pickMode();
    if (!mode) return;
    const { code, conversation } = modeFlags(mode);
    const params = { checkpointId: cp.id, code, conversation } satisfies P.RewindParams;
    const preview = await this.host.request<P.RewindResult>(P.REWIND, { ...params, preview: true });
    const roots = this.host.roots();
    // the agent's edits still unsaved in buffers (the chat's file cards of the later turns): no
    // checkpoint has them, so they are reverted in the editor, as the card's Revert does
    const s = this.host.state();
    const candidates = code && this.host.revertEdit && s.sessionId === cp.sessionId ? laterAgentEdits(s.items, cp.promptIndex) : [];
    const dirty = new Set(dirtyAmong(candidates.map((e) => vscode.Uri.parse(e.uri).fsPath), this.buffers));
    const bufferEdits = candidates.filter((e) => dirty.has(vscode.Uri.parse(e.uri).fsPath));
    const shown = planShown(preview, mode, roots, dirtyAmong(preview.actions.map((a) => a.path), this.buffers), bufferEdits.map((e) => e.path));
    fact(`rewind-plan ${cp.id} ${mode} ${preview.actions.map((a) => `${a.action}:${shownPath(a.path, roots)}${a.protected ? ":protected" : ""}`).join(" ")}`);
    const choice = await confirm(shown, REWIND_BUTTON, (files) => `Rewind, also overwrite the ${files} you changed`);
    if (!choice) {
      fact(`rewind-cancelled ${cp.id}`);
      return;
    }
    for (const e of bufferEdits) await this.host.revertEdit?.(e.changeId);
    if (bufferEdits.length) fact(`rewind-reverted-in-editor ${bufferEdits.length}`);
    const result = await this.host.request<P.RewindResult>(P.REWIND, { ...params, overwrite: choice.overwrite });
    fact(`rewound ${cp.id} ${mode} changed=${result.changed?.length ?? 0} conversation=${result.conversation === true}`);
    await this.afterwards(result, cp.sessionId, false, bufferEdits.length);
  }

  private async afterwards(result: P.RewindResult, sessionId: string, redo: boolean, reverted = 0): Promise<void> {
    // the chat shows the conversation as it is now (back to the rewound point, or put back)
    if (result.conversation || this.host.state().sessionId === sessionId) await this.host.reload(sessionId);
    const after = await settleBuffers(result.changed ?? [], this.buffers);
    const roots = this.host.roots();
    fact(`rewind-buffers reloaded=${after.reloaded.length} unsaved=${after.unsaved.length} removed=${after.removed.length} stale=${after.stale.length}`);
    const text = doneText(result, redo);
    const inEditor = reverted ? [`${reverted} unsaved edit${reverted === 1 ? "" : "s"} of the agent reverted in the editor (Undo brings ${reverted === 1 ? "it" : "them"} back).`] : [];
    this.host.notice([text, ...inEditor, ...buffersText(after, (p) => shownPath(p, roots))].join(" "));
    if (redo) return;
    void vscode.window.showInformationMessage(text, REDO_BUTTON).then((a) => {
      if (a === REDO_BUTTON) void this.redo(sessionId);
    });
  }
}
