/**
 * The conversation: the chat's items rendered incrementally (an item is rebuilt only when its
 * revision changes) into three places, each in item order: the scrolling transcript; the
 * pending region above the input where the questions the agent waits on are pinned until they
 * are answered (issue 17); and, under the restricted banner, the workspace trust card, shown
 * only when the user opens it ("Review and trust": the question lives in the banner, issue 30).
 * In the pending region only the newest question is shown whole; older ones collapse to their
 * heading line (a "Show" button opens one). Also the busy line, and where the keyboard focus
 * goes when a question arrives or is answered.
 */
import type { AppItem } from "../shared/items";
import type { ChatItem, ChatState, ElicitItem, SandboxGrants } from "../shared/state";
import type { AppViews } from "./appView";
import { closestTo, el, scrollIntoView } from "./dom";
import { renderChanges } from "./fileChanges";
import { renderHook } from "./hookView";
import { renderMessage } from "./messageView";
import { isPending, renderApproval, renderElicit, renderSampling, renderTrust, renderWorkspaceTrust } from "./questions";
import { renderThinking } from "./thinkingView";
import { renderTool, type CardChoices } from "./toolCards";

export interface ConversationDeps {
  /** The prompt input: a question does not take the focus from it while the user types. */
  input: HTMLTextAreaElement;
  /** The tool cards the user opened or closed. */
  cards: CardChoices;
  /** An elicitation form was submitted. */
  submitElicit(item: ElicitItem, form: HTMLFormElement): void;
  /** The user's sandbox grants for the workspace (a refusal on a tool card offers Allow or Undo). */
  sandboxGrants?: () => SandboxGrants | null | undefined;
  /** The MCP Apps' frames (none: an app item shows its notice only). */
  apps?: AppViews;
}

export class Conversation {
  readonly transcript: HTMLElement;
  /** Pinned questions (approval, trust, elicitation, sampling) waiting for an answer. */
  readonly pending: HTMLElement;
  readonly busyHost: HTMLElement;
  /** The pending workspace trust card(s), under the banner: hidden until the user opens them. */
  readonly trustDetails: HTMLElement;
  private trustOpen = false;
  /** Older pinned questions the user opened again (the newest is always whole). */
  private readonly opened = new Set<string>();
  private readonly emptyHint: HTMLElement;
  private readonly rendered = new Map<string, { rev: number; el: HTMLElement }>();
  /** Ids of the items pinned in the pending region at the last render. */
  private pinned = new Set<string>();

  constructor(
    private readonly doc: Document,
    private readonly deps: ConversationDeps,
  ) {
    const d = doc;
    // The log announces what is added (completed messages: aria-busy while text streams, so a
    // screen reader does not read every delta); tabindex: the scrollable log is reachable by keyboard.
    this.transcript = el(d, "div", { class: "transcript", role: "log", "aria-live": "polite", "aria-relevant": "additions", "aria-label": "Conversation", tabindex: "0" });
    this.pending = el(d, "div", { "data-testid": "pending", class: "pending", role: "region", "aria-live": "assertive", "aria-label": "Waiting for your answer" });
    this.pending.hidden = true;
    this.trustDetails = el(d, "div", { "data-testid": "trust-details", id: "trust-details", class: "trust-details", role: "region", "aria-label": "What the workspace asks you to trust" });
    this.trustDetails.hidden = true;
    this.pending.addEventListener("click", (e) => {
      const toggle = closestTo(e.target, ".pin-toggle");
      const box = toggle?.closest<HTMLElement>("[data-item-id]");
      if (!toggle || !box?.dataset.itemId) return;
      const id = box.dataset.itemId;
      if (this.opened.has(id)) this.opened.delete(id);
      else this.opened.add(id);
      this.collapseOlder();
      (box.querySelector<HTMLElement>(".pin-toggle") ?? box).focus();
    });
    this.emptyHint = el(d, "div", { class: "empty" }, "Ask the agent anything. Type / for MCP prompts.");
    this.busyHost = el(d, "div", { class: "busy-host" });
  }

  /** The rendered element of an item (undefined when it is not shown). */
  element(id: string): HTMLElement | undefined {
    return this.rendered.get(id)?.el;
  }

  /** The host asks for the focus on an item (a workspace trust card the user asked to see). */
  focusItem(id: string): void {
    // The prompt itself takes the focus (a screen reader reads its label; Tab reaches its
    // buttons): never a button, so that a stray Enter cannot answer it.
    const node = this.element(id);
    if (!node) return;
    if (this.trustDetails.contains(node)) this.setTrustOpen(true);
    node.tabIndex = -1;
    scrollIntoView(node, "start");
    node.focus({ preventScroll: true });
  }

  /** Whether the workspace trust card is open under the banner. */
  get trustDetailsOpen(): boolean {
    return this.trustOpen && !this.trustDetails.hidden;
  }

  /** "Review and trust" in the banner: opens the pending workspace trust card (of `folder`) and
   * moves the focus to it, or closes it again. False when no card waits (the host decides). */
  toggleTrustDetails(folder?: string): boolean {
    const cards = Array.from(this.trustDetails.children) as HTMLElement[];
    const card = cards.find((c) => folder === undefined || c.dataset.folder === folder) ?? cards.at(0);
    if (!card) return false;
    if (this.trustDetailsOpen) {
      this.setTrustOpen(false);
      return true;
    }
    this.setTrustOpen(true);
    card.tabIndex = -1;
    this.trustDetails.scrollTop = 0;
    card.focus({ preventScroll: true });
    return true;
  }

  private setTrustOpen(open: boolean): void {
    this.trustOpen = open;
    this.trustDetails.hidden = !open || this.trustDetails.childElementCount === 0;
    this.onTrustToggle?.();
  }

  /** Called when the trust card opens or closes (the banner's button says which). */
  onTrustToggle: (() => void) | undefined;

  render(s: ChatState): void {
    // items, incrementally
    const t = this.transcript;
    const atBottom = t.scrollHeight - t.scrollTop - t.clientHeight < 40;
    const active = this.doc.activeElement;
    const focusWasPinned = !!active && this.pending.contains(active);
    const focusWasOnTrust = !!active && this.trustDetails.contains(active);
    const seen = new Set<string>();
    const pinned = new Set<string>();
    const newlyPinned: HTMLElement[] = [];
    // Three places, each in item order: the transcript, the pending region above the input, and
    // the workspace trust card under the banner.
    let prevT = null as Element | null;
    let prevP = null as Element | null;
    let prevW = null as Element | null;
    let inTranscript = 0;
    for (const item of s.items) {
      seen.add(item.id);
      const known = this.rendered.get(item.id);
      let node: HTMLElement;
      if (known && known.rev === item.rev) {
        node = known.el;
      } else {
        // (a streaming thinking block is updated in place: the same element comes back)
        node = this.renderItem(item, known?.el);
        if (known && known.el !== node) known.el.replaceWith(node);
        this.rendered.set(item.id, { rev: item.rev, el: node });
      }
      const isPinned = isPending(item);
      // the workspace trust question lives under the banner, not among the pinned questions
      const underBanner = isPinned && item.kind === "workspaceTrust";
      const box = underBanner ? this.trustDetails : isPinned ? this.pending : t;
      const prev: Element | null = underBanner ? prevW : isPinned ? prevP : prevT;
      const expectedNext: Element | null = prev ? prev.nextElementSibling : box.firstElementChild;
      if (expectedNext !== node) {
        if (prev) prev.after(node);
        else box.prepend(node);
      }
      if (underBanner) {
        prevW = node;
      } else if (isPinned) {
        prevP = node;
        pinned.add(item.id);
        if (!this.pinned.has(item.id)) newlyPinned.push(node);
      } else {
        prevT = node;
        inTranscript++;
      }
    }
    for (const [id, r] of this.rendered) {
      if (!seen.has(id)) {
        this.rendered.delete(id);
        if (this.deps.apps?.has(id)) {
          // an app leaves the chat: asked to wind down first (ui/resource-teardown), hidden meanwhile
          r.el.hidden = true;
          void this.deps.apps.teardown(id).finally(() => r.el.remove());
        } else {
          r.el.remove();
        }
      }
    }
    if (inTranscript === 0) {
      if (!this.emptyHint.isConnected) this.transcript.appendChild(this.emptyHint);
    } else if (this.emptyHint.isConnected) {
      this.emptyHint.remove();
    }
    // Follow the stream unless the user scrolled up to read.
    if (inTranscript && atBottom) t.scrollTop = t.scrollHeight;
    // While an answer (or the model's reasoning) streams the log is busy: a screen reader reads it once it is complete.
    const last = s.items.at(-1);
    const streaming = s.busy && ((last?.kind === "message" && last.role === "assistant") || (last?.kind === "thinking" && !last.done));
    t.setAttribute("aria-busy", streaming ? "true" : "false");
    for (const id of this.opened) if (!pinned.has(id)) this.opened.delete(id);
    this.collapseOlder();
    if (this.trustDetails.childElementCount === 0) this.trustOpen = false;
    const wasHidden = this.trustDetails.hidden;
    this.trustDetails.hidden = !this.trustOpen;
    if (wasHidden !== this.trustDetails.hidden) this.onTrustToggle?.();
    // the card was answered (or withdrawn) while the focus was on it: back to the input
    if (focusWasOnTrust && !this.trustDetails.contains(this.doc.activeElement)) this.deps.input.focus();
    this.renderPending(pinned, newlyPinned, focusWasPinned);
    this.renderBusy(s.busy);
  }

  /** Only the newest pinned question is whole: older ones collapse to their heading line, with a
   * "Show" button (the pending region stays about a third of the chat; issue 30). */
  private collapseOlder(): void {
    const cards = Array.from(this.pending.children) as HTMLElement[];
    cards.forEach((card, i) => {
      const id = card.dataset.itemId ?? "";
      const older = i < cards.length - 1;
      let toggle = card.querySelector<HTMLButtonElement>(":scope > .pin-toggle");
      if (!older) {
        toggle?.remove();
        delete card.dataset.collapsed;
        return;
      }
      const collapsed = !this.opened.has(id);
      if (collapsed) card.dataset.collapsed = "true";
      else delete card.dataset.collapsed;
      if (!toggle) {
        toggle = el(this.doc, "button", { class: "pin-toggle icon", "data-testid": "pinned-toggle" });
        card.prepend(toggle);
      }
      toggle.textContent = collapsed ? "Show" : "Hide";
      toggle.setAttribute("aria-expanded", collapsed ? "false" : "true");
      toggle.title = collapsed ? "Show this question whole" : "Collapse this question to one line";
    });
  }

  /** The pending region: shown while a question waits. A new question is scrolled into view and
   * takes the focus when the user is in this chat and not typing (a screen reader reads its
   * label; Tab reaches its buttons); once answered, the focus goes to the next question or back
   * to the input. */
  private renderPending(pinned: Set<string>, newlyPinned: HTMLElement[], focusWasPinned: boolean): void {
    this.pinned = pinned;
    this.pending.hidden = pinned.size === 0;
    const active = this.doc.activeElement;
    const newest = this.pending.lastElementChild as HTMLElement | null;
    const input = this.deps.input;
    if (newlyPinned.length) {
      const node = newlyPinned[0];
      const typing = active === input && input.value.trim() !== "";
      // already on a question (reading it, filling a form): it keeps the focus and stays in view
      // (unless that question just collapsed to a line: then the new one takes it)
      const collapsedCard = active instanceof HTMLElement ? active.closest<HTMLElement>("[data-collapsed]") : null;
      const onQuestion = !!active && this.pending.contains(active) && (!collapsedCard || active.classList.contains("pin-toggle"));
      if (!onQuestion) scrollIntoView(node, "nearest");
      // Only the chat the user is in takes the focus: focusing here while it does not have it
      // would pull the focus out of the editor the user types in, or out of the other chat (the
      // side bar view and an editor panel both show every question).
      if (this.doc.hasFocus() && !typing && !onQuestion) node.focus({ preventScroll: true });
    } else if (focusWasPinned && !(active && this.pending.contains(active))) {
      if (newest) newest.focus();
      else input.focus();
    }
  }

  private renderBusy(busy: boolean): void {
    const busyEl = this.busyHost.querySelector("[data-testid=busy]");
    if (busy && !busyEl) {
      const b = el(this.doc, "div", { "data-testid": "busy", class: "busy", role: "status" });
      b.append(el(this.doc, "span", { class: "spinner" }), this.doc.createTextNode(" The agent is working…"));
      this.busyHost.appendChild(b);
    } else if (!busy && busyEl) {
      busyEl.remove();
    }
  }

  private renderItem(item: ChatItem, previous?: HTMLElement): HTMLElement {
    const d = this.doc;
    let node: HTMLElement;
    switch (item.kind) {
      case "message":
        node = renderMessage(d, item);
        break;
      case "thinking":
        node = renderThinking(d, item, this.deps.cards, previous);
        break;
      case "tool":
        node = renderTool(d, item, this.deps.cards, this.deps.sandboxGrants?.());
        break;
      case "approval":
        node = renderApproval(d, item);
        break;
      case "trust":
        node = renderTrust(d, item);
        break;
      case "workspaceTrust":
        node = renderWorkspaceTrust(d, item);
        break;
      case "elicit":
        node = renderElicit(d, item, (it, form) => this.deps.submitElicit(it, form));
        break;
      case "sampling":
        node = renderSampling(d, item);
        break;
      case "changes":
        node = renderChanges(d, item);
        break;
      case "app":
        node = this.deps.apps ? this.deps.apps.render(d, item, previous) : renderAppNotice(d, item);
        break;
      case "hook":
        node = renderHook(d, item, this.deps.cards);
        break;
    }
    node.dataset.itemId = item.id;
    if (isPending(item)) {
      // A question the agent waits on: a dialog the focus can move to, named by its heading.
      node.setAttribute("role", "alertdialog");
      node.tabIndex = -1;
      const head = node.querySelector<HTMLElement>(".head");
      if (head && !node.hasAttribute("aria-label")) {
        head.id = `head-${item.id}`;
        node.setAttribute("aria-labelledby", head.id);
      }
    }
    return node;
  }
}

/** An app item where no frames are made: why it is not shown. */
function renderAppNotice(d: Document, item: AppItem): HTMLElement {
  const box = el(d, "div", { "data-testid": "app-card", class: "app-card" });
  box.append(el(d, "div", { "data-testid": "app-notice", class: "app-notice", role: "note" }, item.notice ?? "This tool has an app that is not shown here."));
  return box;
}
