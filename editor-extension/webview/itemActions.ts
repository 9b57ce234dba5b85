/**
 * What the buttons and keys on the chat's items do: answers to the questions the agent waits on
 * (approval, trust, workspace trust, sampling consent, elicitation), the file card's decisions,
 * a code block's Copy / Insert and a tool card's "Open full output". Each becomes a message for
 * the extension host; an answer is given once (its buttons are disabled until the state update
 * re-renders the card).
 */
import type { FileChangeAction, FromWebview } from "../shared/messages";
import type { ChangesItem, ChatState, ElicitItem } from "../shared/state";
import { closestTo, disableButtons } from "./dom";
import { collectValues, readFields, schemaFields } from "./schemaForm";

export class ItemActions {
  constructor(
    private readonly post: (message: FromWebview) => void,
    private readonly state: () => ChatState,
    /** The prompt input: Escape in a pinned question goes back to it. */
    private readonly input: HTMLTextAreaElement,
  ) {}

  /** A click on an enabled button of the chat's items. */
  onButton(button: HTMLButtonElement): void {
    const testid = button.dataset.testid;
    const itemEl = button.closest<HTMLElement>("[data-item-id]");
    const item = itemEl ? this.state().items.find((i) => i.id === itemEl.dataset.itemId) : undefined;
    if (testid === "code-copy" || testid === "code-insert") {
      const code = button.closest(".code-block")?.querySelector("code")?.textContent ?? "";
      this.post({ type: testid === "code-copy" ? "copy" : "insert", text: code });
      return;
    }
    if (item && item.kind === "tool" && testid === "tool-full-output" && item.output) {
      this.post({ type: "openOutput", sessionId: item.output.sessionId, handle: item.output.handle });
      return;
    }
    if (item && item.kind === "message" && testid === "message-rewind") {
      this.post({ type: "rewindTo", itemId: item.id });
      return;
    }
    if (item && item.kind === "tool" && (testid === "sandbox-allow" || testid === "sandbox-undo")) {
      const kind = button.dataset.kind;
      const value = button.dataset.value;
      if ((kind === "hosts" || kind === "writes") && value) {
        this.post({ type: "sandboxGrant", kind, value, granted: testid === "sandbox-allow" });
        button.disabled = true; // until the grants come back and the card is drawn again
      }
      return;
    }
    if (item && item.kind === "changes" && (button.dataset.changeAction || button.dataset.changeAll)) {
      this.onFileChangeButton(item, button, itemEl);
      return;
    }
    const answer = button.dataset.answer;
    if (item && item.kind === "approval" && answer && item.answer === null) {
      if (answer === "allow_once" || answer === "allow_session" || answer === "deny") {
        const scope = button.dataset.scope;
        this.post(scope ? { type: "approve", requestId: item.requestId, answer, scope } : { type: "approve", requestId: item.requestId, answer });
        disableButtons(itemEl);
      }
    } else if (item && item.kind === "workspaceTrust" && answer && item.answer === null) {
      if (answer === "trust" || answer === "restricted") {
        this.post({ type: "workspaceTrust", id: item.id, answer });
        disableButtons(itemEl);
      }
    } else if (item && item.kind === "trust" && answer && item.answer === null) {
      if (answer === "trust" || answer === "deny") {
        this.post({ type: "trust", id: item.id, answer });
        disableButtons(itemEl);
      }
    } else if (item && item.kind === "sampling" && answer && item.answer === null) {
      if (answer === "allow_once" || answer === "allow_session" || answer === "deny") {
        this.post({ type: "sample", id: item.id, answer });
        disableButtons(itemEl);
      }
    } else if (item && item.kind === "elicit" && item.answer === null && testid === "elicit-decline") {
      this.post({ type: "elicit", id: item.id, action: "decline" });
      disableButtons(itemEl);
    }
  }

  /** Escape in a pinned question: an elicitation is cancelled; any other question stays (it is
   * a decision, not dismissed by a stray key) and the focus goes back to the input. */
  onPendingKey(e: KeyboardEvent): void {
    if (e.key !== "Escape") return;
    const box = closestTo(e.target, "[data-item-id]");
    const item = box ? this.state().items.find((i) => i.id === box.dataset.itemId) : undefined;
    e.preventDefault();
    if (item && item.kind === "elicit" && item.answer === null) {
      this.post({ type: "elicit", id: item.id, action: "cancel" });
      disableButtons(box);
    }
    this.input.focus();
  }

  /** An elicitation form was submitted: its values, checked against the schema (errors show by their fields). */
  submitElicit(item: ElicitItem, form: HTMLFormElement): void {
    const fields = schemaFields(item.schema);
    const collected = collectValues(fields, readFields(form, fields));
    form.querySelectorAll(".field-error").forEach((e) => (e.textContent = ""));
    if (!collected.ok) {
      for (const [name, msg] of Object.entries(collected.errors)) {
        const row = form.querySelector(`[data-field="${name.replace(/["\\]/g, "\\$&")}"] .field-error`);
        if (row) row.textContent = msg;
      }
      return;
    }
    this.post({ type: "elicit", id: item.id, action: "accept", content: collected.content });
    disableButtons(form);
  }

  /** A file card's button: one file (`data-change-action`) or every undecided file of the turn (`data-change-all`). */
  private onFileChangeButton(item: ChangesItem, button: HTMLButtonElement, card: HTMLElement | null): void {
    const all = button.dataset.changeAll;
    const action = (all ?? button.dataset.changeAction) as FileChangeAction;
    const rowEl = button.closest<HTMLElement>("[data-change-id]");
    const target = all
      ? item.files.find((f) => (all === "accept" || all === "reject" ? f.status === "pending" : f.status === "applied" || f.status === "written"))
      : item.files.find((f) => f.changeId === rowEl?.dataset.changeId);
    if (!target) return;
    const reasonInput = card?.querySelector("[data-testid=reject-reason]") as HTMLInputElement | null;
    const message: FromWebview = { type: "fileChange", changeId: target.changeId, action };
    if (all) message.all = true;
    if (action === "reject" && reasonInput?.value.trim()) message.reason = reasonInput.value.trim();
    this.post(message);
    // An answer is given once: its buttons go (the state update re-renders the card).
    if (action === "accept" || action === "reject") disableButtons(all ? card : rowEl);
  }
}
