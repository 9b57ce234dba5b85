/** The file card of a turn: the files the agent changed (or wants to change), each with its
 * +/- line counts, its state in words and what the user may do (review, accept, reject, keep,
 * revert), and the buttons that decide every file of the turn at once (issue 16). */
import type { FileChangeAction } from "../shared/messages";
import type { ChangesItem } from "../shared/state";
import { el } from "./dom";

/** A file card row's state in words (what happened, or what the user must decide). */
const CHANGE_STATUS_LABELS: Record<string, string> = {
  pending: "Waiting for your review: not applied yet",
  proposed: "Applying…",
  applied: "Applied in the editor (not saved): keep or revert",
  accepted: "Accepted and applied",
  rejected: "Rejected: not applied",
  failed: "Not applied",
  written: "Written to disk",
  kept: "Kept",
  reverted: "Reverted",
};

/** The files a turn changed: each with +/- line counts, its outcome and what the user may do. */
export function renderChanges(d: Document, item: ChangesItem): HTMLElement {
  const pending = item.files.filter((f) => f.status === "pending").length;
  const undecided = item.files.filter((f) => f.status === "applied" || f.status === "written").length;
  const box = el(d, "div", { "data-testid": "file-changes", class: "approval file-changes", "data-turn": String(item.turn), role: "group" });
  if (pending === 0 && undecided === 0) box.dataset.answered = "true";
  const added = item.files.reduce((n, f) => n + f.added, 0);
  const removed = item.files.reduce((n, f) => n + f.removed, 0);
  const n = item.files.length;
  const files = `${n} file${n === 1 ? "" : "s"}`;
  const title = pending ? `The agent wants to change ${files}: review before it is applied` : `The agent changed ${files}`;
  const head = el(d, "div", { class: "head" });
  head.append(el(d, "b", {}, title), d.createTextNode(` (+${added} −${removed} lines)`));
  box.setAttribute("aria-label", `${title}, ${added} lines added, ${removed} removed`);
  box.append(head);
  const list = el(d, "ul", { class: "file-change-list" });
  for (const f of item.files) {
    const li = el(d, "li", {
      "data-testid": "file-change",
      "data-change-id": f.changeId,
      "data-status": f.status,
      "data-path": f.path,
      class: "file-change",
    });
    const line = el(d, "div", { class: "row" });
    line.append(
      el(d, "code", { class: "path", title: f.uri ?? f.path }, f.path),
      el(d, "span", { class: "counts", "aria-label": `${f.added} lines added, ${f.removed} removed` }, `+${f.added} −${f.removed}`),
    );
    if (f.created) line.append(el(d, "span", { class: "muted" }, "new file"));
    li.append(line);
    let status = CHANGE_STATUS_LABELS[f.status] ?? f.status;
    if (f.withdrawn) status = "Withdrawn: the turn was stopped, nothing was applied";
    if (f.reason && (f.status === "rejected" || f.status === "failed")) status += ` (${f.reason})`;
    li.append(el(d, "div", { "data-testid": "file-change-status", class: "reason" }, status));
    const buttons = el(d, "div", { class: "buttons" });
    const add = (action: FileChangeAction, label: string, secondary: boolean, hint: string) =>
      buttons.append(el(d, "button", { "data-change-action": action, class: secondary ? "secondary" : "", title: hint, "aria-label": `${label}: ${f.path}` }, label));
    if (f.reviewable && f.status !== "proposed") add("review", "Review", true, "Compare before and after in the diff editor");
    if (f.status === "pending") {
      add("accept", "Accept", false, "Apply this change to the editor's buffer (undoable)");
      add("reject", "Reject", true, "Do not apply it; the agent is told (with your reason)");
    }
    if (f.status === "applied" || f.status === "written") {
      add("keep", "Keep", false, "Keep this change");
      add("revert", "Revert", true, "Put back the text from before this change (undoable)");
    } else if (f.status === "accepted" || f.status === "kept") {
      add("revert", "Revert", true, "Put back the text from before this change (undoable)");
    }
    if (buttons.childElementCount) li.append(buttons);
    list.append(li);
  }
  box.append(list);
  if (pending) {
    box.append(
      el(d, "input", {
        type: "text",
        "data-testid": "reject-reason",
        class: "reject-reason",
        placeholder: "Reason for rejecting (optional, told to the agent)",
        "aria-label": "Reason for rejecting (optional, told to the agent)",
      }),
    );
  }
  // Accept all / Reject all also answer the turn's changes still to come.
  if (pending || (n > 1 && undecided > 1)) {
    const all = el(d, "div", { class: "buttons" });
    const add = (action: FileChangeAction, label: string, secondary: boolean) =>
      all.append(el(d, "button", { "data-change-all": action, class: secondary ? "secondary" : "" }, label));
    if (pending) {
      add("accept", "Accept all in this turn", false);
      add("reject", "Reject all in this turn", true);
    } else {
      add("keep", "Keep all", false);
      add("revert", "Revert all", true);
    }
    box.append(all);
  }
  return box;
}
