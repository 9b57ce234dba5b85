/**
 * Review of the agent's file changes (issue 16): the server's `agent/reviewEdit` request, the
 * chat's file cards and their buttons, the diff editor and Revert.
 *
 * The setting `agentLs.edits.review` decides when the user reviews:
 * - `afterApply` (default): the request is answered `deferred` at once; the server applies the
 *   change to the buffer (undoable, unsaved) and the file card offers Review (diff), Keep and
 *   Revert (an edit that puts back the text before the change; undoable too);
 * - `beforeApply`: the card waits for Accept or Reject (Review shows the diff first); nothing is
 *   applied before Accept, and a Reject (with an optional reason) reaches the model.
 * "All" buttons act on every undecided file of the card's turn; Accept all / Reject all also
 * answer the rest of that turn's changes as they come.
 *
 * The "before" (and the proposed "after") side of a diff is a virtual document of the scheme
 * `agent-ls-change`, served from the texts the request carried (or, for a resumed session, from
 * `agent/changeContent`).
 */
import * as vscode from "vscode";
import type { StaticFeature } from "vscode-languageclient/node";
import { agentLsCapability } from "../capability";
import type { FileChangeAction } from "../../shared/messages";
import type { ChangesItem, ChatAction, ChatState, FileChangeRow } from "../../shared/state";
import { errorText } from "../errors";
import { fact } from "../factLog";
import * as P from "../protocol";
import type { Cancellation } from "./sampling";

export const CHANGE_SCHEME = "agent-ls-change";
export const REVIEW_SETTING = "review";
export type ReviewMode = "beforeApply" | "afterApply";

/** Advertises `experimental.agentLs.reviewEdits`: the server then asks before each change. */
export function reviewCapabilityFeature(): StaticFeature {
  return agentLsCapability(P.REVIEW_CAPABILITY);
}

/** The differing middle of `a` and `b` (UTF-16 offsets): a[start:endA] became b[start:endB]. */
export function minimalChange(a: string, b: string): { start: number; endA: number; endB: number } {
  const n = Math.min(a.length, b.length);
  let start = 0;
  while (start < n && a.charCodeAt(start) === b.charCodeAt(start)) start++;
  let end = 0;
  while (end < a.length - start && end < b.length - start && a.charCodeAt(a.length - 1 - end) === b.charCodeAt(b.length - 1 - end)) end++;
  return { start, endA: a.length - end, endB: b.length - end };
}

const CONTEXT = 80;

/**
 * The edit that puts back `before` where the agent's change (before -> after) is in `current`:
 * replace current[start:end] by text. When the user changed the file since, the agent's change
 * is found by its surrounding text (it must occur exactly once); null when it cannot be found.
 */
export function revertEdit(current: string, before: string, after: string): { start: number; end: number; text: string } | null {
  const m = minimalChange(after, before);
  const text = before.slice(m.start, m.endB);
  if (current === after) return { start: m.start, end: m.endA, text };
  const left = Math.max(0, m.start - CONTEXT);
  const right = Math.min(after.length, m.endA + CONTEXT);
  const needle = after.slice(left, right);
  if (!needle) return null;
  const at = current.indexOf(needle);
  if (at < 0 || current.indexOf(needle, at + 1) >= 0) return null;
  const start = at + (m.start - left);
  return { start, end: start + (m.endA - m.start), text };
}

interface Texts {
  uri: string;
  path: string;
  before: string;
  after: string;
  created: boolean;
  sessionId: string | null;
}

interface Waiting {
  resolve: (result: P.ReviewEditResult) => void;
  key: string;
}

/** What the review needs from the chat controller and the editor. */
export interface ReviewHost {
  dispatch(action: ChatAction): void;
  /** Shows the chat (a card waits for the user). */
  show(): void;
  state(): ChatState;
  request<R>(method: string, params: unknown): Promise<R>;
  /** `agentLs.edits.review` for this file. */
  mode(uri: string): ReviewMode;
}

const baseName = (path: string) => path.split(/[\\/]/).pop() || "file";

export class EditReviews implements vscode.TextDocumentContentProvider {
  private readonly texts = new Map<string, Texts>();
  private readonly waiting = new Map<string, Waiting>();
  /** Accept all / Reject all: the answer for the rest of a turn (`<sessionId>#<turn>`). */
  private readonly auto = new Map<string, "accept" | "reject">();

  constructor(private readonly host: ReviewHost) {}

  // the server's request ----------------------------------------------------------------------
  /** `agent/reviewEdit`: answered at once (afterApply, or an "all" answer for the turn), or when the user decides. */
  request(params: P.ReviewEditParams, token?: Cancellation): Promise<P.ReviewEditResult> {
    const wire: P.Wire<P.ReviewEditParams> = params;
    const changeId = String(wire.changeId);
    const sessionId = params.sessionId ?? null;
    this.texts.set(changeId, {
      uri: String(wire.uri),
      path: String(wire.path),
      /* eslint-disable @typescript-eslint/no-unnecessary-type-conversion -- a server may send a non-string: kept as text */
      before: String(wire.before ?? ""),
      after: String(wire.after ?? ""),
      /* eslint-enable @typescript-eslint/no-unnecessary-type-conversion */
      created: wire.created === true,
      sessionId,
    });
    const key = `${sessionId ?? ""}#${params.turn ?? 0}`;
    const auto = this.auto.get(key);
    if (auto) {
      this.host.dispatch({ type: "reviewRequest", params, pending: false });
      this.host.dispatch({ type: "changeStatus", changeId, status: auto === "accept" ? "accepted" : "rejected" });
      fact(`review ${auto} ${params.path}`);
      return Promise.resolve({ decision: auto });
    }
    if (this.host.mode(String(wire.uri)) !== "beforeApply") {
      this.host.dispatch({ type: "reviewRequest", params, pending: false });
      fact(`review deferred ${params.path}`);
      return Promise.resolve({ decision: "deferred" });
    }
    return new Promise((resolve) => {
      this.waiting.set(changeId, { resolve, key });
      this.host.dispatch({ type: "reviewRequest", params, pending: true });
      this.host.show();
      fact(`review pending ${params.path}`);
      token?.onCancellationRequested(() => this.withdraw(changeId));
    });
  }

  /** The user's Accept / Reject of a waiting change. */
  answer(changeId: string, decision: "accept" | "reject", reason?: string): void {
    const w = this.waiting.get(changeId);
    if (!w) return;
    this.waiting.delete(changeId);
    const why = reason?.trim() || undefined;
    fact(`review ${decision} ${this.texts.get(changeId)?.path ?? changeId}`);
    this.host.dispatch({ type: "changeStatus", changeId, status: decision === "accept" ? "accepted" : "rejected", reason: why ?? null });
    w.resolve(why ? { decision, reason: why } : { decision });
  }

  /** The server no longer waits (its turn was stopped): the card says so. */
  private withdraw(changeId: string): void {
    const w = this.waiting.get(changeId);
    if (!w) return;
    this.waiting.delete(changeId);
    fact("review withdrawn");
    this.host.dispatch({ type: "changeStatus", changeId, status: "proposed", withdrawn: true });
    w.resolve({ decision: "reject", reason: "withdrawn" });
  }

  /** The server went away: nobody waits for the answers. */
  withdrawAll(): void {
    for (const id of [...this.waiting.keys()]) this.withdraw(id);
  }

  get pending(): number {
    return this.waiting.size;
  }

  // the card's buttons -------------------------------------------------------------------------
  async act(changeId: string, action: FileChangeAction, all = false, reason?: string): Promise<void> {
    const found = this.find(changeId);
    if (!found) return;
    const [card, row] = found;
    if (action === "review") return this.review(card, row);
    if (action === "accept" || action === "reject") {
      if (all) this.auto.set(`${card.sessionId ?? ""}#${card.turn}`, action);
      const rows = all ? card.files.filter((f) => f.status === "pending") : [row];
      for (const f of rows) this.answer(f.changeId, action, reason);
      return;
    }
    const can = action === "keep" ? canKeep : canRevert;
    const rows = all ? card.files.filter((f) => can(f.status)) : can(row.status) ? [row] : [];
    if (action === "revert") rows.reverse(); // the latest change first
    for (const f of rows) {
      if (action === "keep") await this.keep(card, f);
      else if (!(await this.revert(card, f))) break;
    }
  }

  private find(changeId: string): [ChangesItem, FileChangeRow] | null {
    for (const it of this.host.state().items) {
      if (it.kind !== "changes") continue;
      const row = it.files.find((f) => f.changeId === changeId);
      if (row) return [it, row];
    }
    return null;
  }

  /** The texts of a change: from its request, or (a resumed session) from the server. */
  private async textsOf(card: ChangesItem, row: FileChangeRow): Promise<Texts | null> {
    const known = this.texts.get(row.changeId);
    if (known) return known;
    if (!card.sessionId || !row.reviewable) return null;
    const r = await this.host.request<P.ChangeContentResult>(P.CHANGE_CONTENT, {
      sessionId: card.sessionId,
      changeId: row.changeId,
    } satisfies P.ChangeContentParams);
    if (r.before === null || r.after === null) return null;
    const texts: Texts = {
      uri: r.change.uri ?? vscode.Uri.file(r.change.path).toString(),
      path: r.change.shown,
      before: r.before,
      after: r.after,
      created: r.change.created,
      sessionId: card.sessionId,
    };
    this.texts.set(row.changeId, texts);
    return texts;
  }

  private changeUri(changeId: string, side: "before" | "after", path: string): vscode.Uri {
    return vscode.Uri.parse(`${CHANGE_SCHEME}:/${changeId}/${side}/${encodeURIComponent(baseName(path))}`);
  }

  /** The diff editor: before | after (the file itself while the change is applied and undecided). */
  private async review(card: ChangesItem, row: FileChangeRow): Promise<void> {
    const texts = await this.textsOf(card, row);
    if (!texts) {
      void vscode.window.showInformationMessage(`The texts of this change to ${row.path} were not kept (too long): nothing to compare.`);
      return;
    }
    const left = this.changeUri(row.changeId, "before", texts.path);
    const live = row.status === "applied" || row.status === "written";
    const right = live ? vscode.Uri.parse(texts.uri) : this.changeUri(row.changeId, "after", texts.path);
    const what = row.status === "pending" ? "proposed change" : "change";
    fact(`review-diff ${texts.path}`);
    await vscode.commands.executeCommand("vscode.diff", left, right, `${texts.path}: the agent's ${what} (before ↔ after)`, {
      preview: true,
    });
  }

  provideTextDocumentContent(uri: vscode.Uri): string {
    // /<changeId>/<side>
    const parts = uri.path.split("/");
    const texts = this.texts.get(parts.at(1) ?? "");
    if (!texts) return "";
    return parts.at(2) === "before" ? texts.before : texts.after;
  }

  private async record(card: ChangesItem, row: FileChangeRow, outcome: P.ChangeOutcome): Promise<void> {
    const sessionId = card.sessionId ?? this.texts.get(row.changeId)?.sessionId ?? null;
    this.host.dispatch({ type: "changeStatus", changeId: row.changeId, status: outcome });
    fact(`change ${outcome} ${row.path}`);
    if (!sessionId) return;
    try {
      await this.host.request(P.CHANGE_OUTCOME, { sessionId, changeId: row.changeId, outcome } satisfies P.ChangeOutcomeParams);
    } catch (e) {
      // the editor already did it; only the record for a later resume is missing
      fact(`error recording ${outcome}: ${errorText(e)}`);
    }
  }

  private async keep(card: ChangesItem, row: FileChangeRow): Promise<void> {
    await this.record(card, row, "kept");
  }

  /** Puts the text before the change back with an edit (undoable); false when it could not. */
  private async revert(card: ChangesItem, row: FileChangeRow): Promise<boolean> {
    const texts = await this.textsOf(card, row);
    if (!texts) {
      void vscode.window.showWarningMessage(`Cannot revert the change to ${row.path}: its texts were not kept (too long). Use Undo in its editor.`);
      return false;
    }
    const uri = vscode.Uri.parse(texts.uri);
    const doc = await vscode.workspace.openTextDocument(uri);
    const current = doc.getText();
    const edit = new vscode.WorkspaceEdit();
    if (texts.created) {
      if (current !== texts.after) {
        return this.cannotRevert(row, "the file changed since the agent created it");
      }
      edit.deleteFile(uri, { ignoreIfNotExists: true });
    } else {
      const r = revertEdit(current, texts.before, texts.after);
      if (!r) return this.cannotRevert(row, "the file changed where the agent edited it");
      edit.replace(uri, new vscode.Range(doc.positionAt(r.start), doc.positionAt(r.end)), r.text);
    }
    const ok = await vscode.workspace.applyEdit(edit);
    if (!ok) return this.cannotRevert(row, "the editor did not apply the edit");
    await this.record(card, row, "reverted");
    return true;
  }

  private cannotRevert(row: FileChangeRow, why: string): false {
    const text = `Cannot revert the agent's change to ${row.path}: ${why}. Review the diff and change it by hand, or use Undo.`;
    fact(`error ${text}`);
    void vscode.window.showWarningMessage(text);
    return false;
  }
}

const canKeep = (s: FileChangeRow["status"]) => s === "applied" || s === "written";
const canRevert = (s: FileChangeRow["status"]) => s === "applied" || s === "written" || s === "accepted" || s === "kept";

/** `agentLs.edits.review` for a file (a workspace folder may set its own). */
export function reviewMode(uri: string): ReviewMode {
  let scope: vscode.Uri | undefined;
  try {
    scope = vscode.Uri.parse(uri);
  } catch {
    scope = undefined;
  }
  const value = vscode.workspace.getConfiguration("agentLs.edits", scope).get<string>(REVIEW_SETTING);
  return value === "beforeApply" ? "beforeApply" : "afterApply";
}

/** `agentLs.edits.review` is `beforeApply` for the window and for every workspace folder (so
 * any file a call may change is reviewed before it applies). */
export function reviewsBeforeApplyEverywhere(): boolean {
  const folders = (vscode.workspace.workspaceFolders ?? []) as readonly { uri: vscode.Uri }[];
  const scopes: (vscode.Uri | undefined)[] = [undefined, ...folders.map((f) => f.uri)];
  return scopes.every((scope) => vscode.workspace.getConfiguration("agentLs.edits", scope).get<string>(REVIEW_SETTING) === "beforeApply");
}
