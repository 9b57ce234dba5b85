/**
 * The chat webview: renders the shared ChatState (incrementally, item by item) and turns the
 * user's clicks into messages for the extension host. DOM hooks (data-testid) follow
 * editor-extension/CONTRACT.md.
 */
import { commandLine, pairLines, visible } from "../shared/commandLine";
import { sessionLabel, toolStatusLabel } from "../shared/labels";
import type { FileChangeAction, FromWebview, ToWebview } from "../shared/messages";
import { matchPrompts, slashName } from "../shared/slash";
import {
  initialState,
  reduce,
  type ApprovalItem,
  type ChangesItem,
  type ChatItem,
  type ChatState,
  type ElicitItem,
  type MessageItem,
  type SamplingItem,
  type ToolItem,
  type TrustEntry,
  type TrustItem,
  type WorkspaceTrustItem,
} from "../shared/state";
import { renderMarkdown } from "./markdown";
import { buildFields, collectValues, readFields, schemaFields } from "./schemaForm";

export interface HostApi {
  post(message: FromWebview): void;
  getState(): unknown;
  setState(state: unknown): void;
}

/** What the webview persists with setState (survives the view being hidden and shown). */
interface Saved {
  state: ChatState;
  draft: string;
  collapsed: string[];
  /** Long tool cards the user opened (they start collapsed). */
  expanded?: string[];
}

/** A question the agent waits on (approval, trust, elicitation, sampling consent): pinned above
 * the input, outside the scrolling transcript, until it is answered (issue 17). */
export function isPending(item: ChatItem): boolean {
  switch (item.kind) {
    case "approval":
    case "trust":
    case "workspaceTrust":
    case "elicit":
    case "sampling":
      return item.answer === null;
    default:
      return false;
  }
}

/** Lines and characters past which a tool card starts collapsed (its summary line stays). */
const LONG_LINES = 12;
const LONG_CHARS = 800;

/** A tool card too long to show open by default: a long result or long arguments, or output kept by the server. */
export function isLongTool(item: ToolItem): boolean {
  if (item.output) return true;
  const long = (text: string) => text.length > LONG_CHARS || text.split("\n").length > LONG_LINES;
  return (item.result !== null && long(item.result)) || long(json(item.args));
}

/** A duration as people read it: "850 ms", "1.2 s", "2 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const total = Math.round(ms / 1000);
  return `${Math.floor(total / 60)} min ${total % 60} s`;
}

const SAMPLING_LABELS: Record<string, string> = {
  allow_once: "Allow once",
  allow_session: "Allow for session",
  deny: "Deny",
};

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

const APPROVAL_LABELS: Record<string, string> = {
  allow_once: "Allow once",
  allow_session: "Allow for session",
  deny: "Deny",
};

function el<K extends keyof HTMLElementTagNameMap>(
  doc: Document,
  tag: K,
  attrs: Record<string, string> = {},
  text?: string,
): HTMLElementTagNameMap[K] {
  const e = doc.createElement(tag);
  for (const [k, v] of Object.entries(attrs)) {
    if (k === "class") e.className = v;
    else e.setAttribute(k, v);
  }
  if (text !== undefined) e.textContent = text;
  return e;
}

function json(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? "";
  } catch {
    return String(value);
  }
}

export class ChatApp {
  state: ChatState;
  private readonly doc: Document;
  private readonly rendered = new Map<string, { rev: number; el: HTMLElement }>();
  private readonly collapsed = new Set<string>();
  private readonly expanded = new Set<string>();
  /** Ids of the items pinned in the pending region at the last render. */
  private pinned = new Set<string>();
  /** Escape closed the slash list (until the input changes). */
  private slashClosed = false;
  private slashIndex = 0;

  readonly transcript: HTMLElement;
  /** Pinned questions (approval, trust, elicitation, sampling) waiting for an answer. */
  readonly pending: HTMLElement;
  readonly input: HTMLTextAreaElement;
  readonly sendButton: HTMLButtonElement;
  readonly stopButton: HTMLButtonElement;
  private readonly busyHost: HTMLElement;
  private readonly sessionsList: HTMLElement;
  private readonly attachmentsBox: HTMLElement;
  private readonly slashList: HTMLElement;
  private readonly serverLine: HTMLElement;
  private readonly emptyHint: HTMLElement;
  private readonly banner: HTMLElement;

  constructor(
    root: HTMLElement,
    private readonly host: HostApi,
  ) {
    this.doc = root.ownerDocument;
    const saved = host.getState() as Partial<Saved> | undefined;
    this.state = saved?.state && Array.isArray(saved.state.items) ? saved.state : initialState();
    for (const id of saved?.collapsed ?? []) this.collapsed.add(id);
    for (const id of saved?.expanded ?? []) this.expanded.add(id);

    const d = this.doc;
    root.textContent = "";
    root.className = "chat";
    // the whole chat is the page's main landmark (screen readers jump to it)
    root.setAttribute("role", "main");
    root.setAttribute("aria-label", "Agent chat");

    const top = el(d, "div", { class: "top" });
    const newSession = el(d, "button", { "data-testid": "new-session", class: "secondary", title: "Start a new session" }, "New session");
    this.serverLine = el(d, "span", { class: "server-line" });
    top.append(newSession, this.serverLine);
    const sessionsBox = el(d, "details", { class: "sessions-box" });
    const sessionsSummary = el(d, "summary", {}, "Sessions");
    this.sessionsList = el(d, "ul", { "data-testid": "sessions", class: "sessions" });
    sessionsBox.append(sessionsSummary, this.sessionsList);
    sessionsBox.open = true;

    this.banner = el(d, "div", { "data-testid": "restricted-banner", class: "banner", role: "status" });
    // The log announces what is added (completed messages: aria-busy while text streams, so a
    // screen reader does not read every delta); tabindex: the scrollable log is reachable by keyboard.
    this.transcript = el(d, "div", { class: "transcript", role: "log", "aria-live": "polite", "aria-relevant": "additions", "aria-label": "Conversation", tabindex: "0" });
    this.pending = el(d, "div", { "data-testid": "pending", class: "pending", role: "region", "aria-live": "assertive", "aria-label": "Waiting for your answer" });
    this.pending.hidden = true;
    this.emptyHint = el(d, "div", { class: "empty" }, "Ask the agent anything. Type / for MCP prompts.");
    this.busyHost = el(d, "div", { class: "busy-host" });

    const composer = el(d, "div", { class: "composer" });
    this.attachmentsBox = el(d, "div", { class: "attachments" });
    this.slashList = el(d, "ul", { class: "slash", role: "listbox" });
    this.input = el(d, "textarea", {
      "data-testid": "prompt-input",
      rows: "3",
      placeholder: "Ask the agent… (Enter to send, Shift+Enter for a new line, / for MCP prompts)",
      "aria-label": "Message to the agent (Enter to send, Shift+Enter for a new line, / for MCP prompts)",
    });
    this.input.value = saved?.draft ?? "";
    const row = el(d, "div", { class: "row" });
    const attachSel = el(d, "button", { "data-testid": "attach-selection", class: "secondary", title: "Attach the editor's selection" }, "+ Selection");
    const attachFile = el(d, "button", { "data-testid": "attach-file", class: "secondary", title: "Attach the current file" }, "+ File");
    const attachRes = el(d, "button", { "data-testid": "attach-resource", class: "secondary", title: "Attach an MCP resource" }, "+ Resource");
    const spacer = el(d, "span", { class: "spacer" });
    this.stopButton = el(d, "button", { "data-testid": "stop", class: "secondary", title: "Stop the agent" }, "Stop");
    this.sendButton = el(d, "button", { "data-testid": "send", title: "Send" }, "Send");
    row.append(attachSel, attachFile, attachRes, spacer, this.stopButton, this.sendButton);
    composer.append(this.attachmentsBox, this.slashList, this.input, row);

    root.append(top, this.banner, sessionsBox, this.transcript, this.busyHost, this.pending, composer);

    newSession.addEventListener("click", () => this.host.post({ type: "newSession" }));
    sessionsBox.addEventListener("toggle", () => {
      if (sessionsBox.open) this.host.post({ type: "listSessions" });
    });
    attachSel.addEventListener("click", () => this.host.post({ type: "attach", kind: "selection" }));
    attachFile.addEventListener("click", () => this.host.post({ type: "attach", kind: "file" }));
    attachRes.addEventListener("click", () => this.host.post({ type: "attach", kind: "resource" }));
    this.sendButton.addEventListener("click", () => this.send());
    this.stopButton.addEventListener("click", () => this.host.post({ type: "stop" }));
    this.input.addEventListener("keydown", (e) => this.onKey(e));
    this.input.addEventListener("input", () => {
      this.slashClosed = false;
      // Entering slash mode: ask the host for the current MCP prompts.
      if (this.input.value === "/") this.host.post({ type: "listPrompts" });
      this.slashIndex = 0;
      this.renderSlash();
      this.save();
    });
    root.addEventListener("click", (e) => this.onClick(e));
    this.pending.addEventListener("keydown", (e) => this.onPendingKey(e));
    this.sessionsList.addEventListener("keydown", (e) => {
      // A session row is operated like a button: Enter or Space resumes it.
      if (e.key !== "Enter" && e.key !== " ") return;
      const session = (e.target as HTMLElement | null)?.closest?.("[data-testid=session-item]") as HTMLElement | null;
      if (!session?.dataset.sessionId) return;
      e.preventDefault();
      this.host.post({ type: "resumeSession", sessionId: session.dataset.sessionId });
    });

    this.render();
  }

  // host messages ----------------------------------------------------------------------------------
  receive(message: ToWebview): void {
    if (!message || typeof message !== "object") return;
    if (message.type === "state") {
      this.state = message.state;
      this.render();
    } else if (message.type === "action") {
      this.state = reduce(this.state, message.action);
      this.render();
    } else if (message.type === "setInput") {
      this.input.value = message.text;
      if (message.focus) this.input.focus();
      this.renderSlash();
      this.save();
    } else if (message.type === "focusItem") {
      // The prompt itself takes the focus (a screen reader reads its label; Tab reaches its
      // buttons): never a button, so that a stray Enter cannot answer it.
      const node = this.rendered.get(message.id)?.el;
      if (!node) return;
      node.tabIndex = -1;
      node.scrollIntoView?.({ block: "start" });
      node.focus();
    }
  }

  // user actions -------------------------------------------------------------------------------------
  send(): void {
    const text = this.input.value;
    if (!text.trim() || this.state.busy) return;
    this.host.post({ type: "send", text });
    this.input.value = "";
    this.renderSlash();
    this.save();
  }

  private onKey(e: KeyboardEvent): void {
    if (e.key === "Escape" && !this.slashList.hidden) {
      e.preventDefault();
      this.slashClosed = true;
      this.renderSlash();
      return;
    }
    const matches = this.slashMatches();
    if (matches.length && (e.key === "ArrowDown" || e.key === "ArrowUp")) {
      e.preventDefault();
      this.slashIndex = (this.slashIndex + (e.key === "ArrowDown" ? 1 : matches.length - 1)) % matches.length;
      this.renderSlash();
      return;
    }
    if (matches.length && (e.key === "Tab" || (e.key === "Enter" && !e.shiftKey))) {
      e.preventDefault();
      this.pickSlash(slashName(matches[Math.min(this.slashIndex, matches.length - 1)]));
      return;
    }
    if (e.key === "Enter" && !e.shiftKey && !e.isComposing) {
      e.preventDefault();
      this.send();
    }
  }

  /** Escape in a pinned question: an elicitation is cancelled; any other question stays (it is
   * a decision, not dismissed by a stray key) and the focus goes back to the input. */
  private onPendingKey(e: KeyboardEvent): void {
    if (e.key !== "Escape") return;
    const box = (e.target as HTMLElement | null)?.closest?.("[data-item-id]") as HTMLElement | null;
    const item = box ? this.state.items.find((i) => i.id === box.dataset.itemId) : undefined;
    e.preventDefault();
    if (item && item.kind === "elicit" && item.answer === null) {
      this.host.post({ type: "elicit", id: item.id, action: "cancel" });
      this.disableButtons(box);
    }
    this.input.focus();
  }

  private pickSlash(name: string): void {
    this.input.value = `/${name} `;
    this.input.focus();
    this.renderSlash();
    this.save();
  }

  private onClick(e: Event): void {
    const target = e.target as HTMLElement | null;
    const button = target?.closest?.("button") as HTMLButtonElement | null;
    if (!button || button.disabled) {
      const slash = target?.closest?.("[data-testid=slash-item]") as HTMLElement | null;
      if (slash?.dataset.name) this.pickSlash(slash.dataset.name);
      const session = target?.closest?.("[data-testid=session-item]") as HTMLElement | null;
      if (session?.dataset.sessionId) this.host.post({ type: "resumeSession", sessionId: session.dataset.sessionId });
      return;
    }
    const testid = button.dataset.testid;
    const itemEl = button.closest("[data-item-id]") as HTMLElement | null;
    const item = itemEl ? this.state.items.find((i) => i.id === itemEl.dataset.itemId) : undefined;
    if (testid === "code-copy" || testid === "code-insert") {
      const code = button.closest(".code-block")?.querySelector("code")?.textContent ?? "";
      this.host.post({ type: testid === "code-copy" ? "copy" : "insert", text: code });
      return;
    }
    if (testid === "remove-attachment") {
      this.host.post({ type: "removeAttachment", index: Number(button.dataset.index) });
      return;
    }
    if (testid === "session-item" || button.closest("[data-testid=session-item]")) {
      const s = button.closest("[data-testid=session-item]") as HTMLElement;
      if (s.dataset.sessionId) this.host.post({ type: "resumeSession", sessionId: s.dataset.sessionId });
      return;
    }
    if (testid === "slash-item" && button.dataset.name) {
      this.pickSlash(button.dataset.name);
      return;
    }
    if (item && item.kind === "tool" && testid === "tool-full-output" && item.output) {
      this.host.post({ type: "openOutput", sessionId: item.output.sessionId, handle: item.output.handle });
      return;
    }
    if (item && item.kind === "changes" && (button.dataset.changeAction || button.dataset.changeAll)) {
      this.onFileChangeButton(item, button, itemEl);
      return;
    }
    const answer = button.dataset.answer;
    if (item && item.kind === "approval" && answer && item.answer === null) {
      if (answer === "allow_once" || answer === "allow_session" || answer === "deny") {
        this.host.post({ type: "approve", requestId: item.requestId, answer });
        this.disableButtons(itemEl);
      }
    } else if (testid === "banner-trust") {
      this.host.post({ type: "trustWorkspaceCommand" });
    } else if (item && item.kind === "workspaceTrust" && answer && item.answer === null) {
      if (answer === "trust" || answer === "restricted") {
        this.host.post({ type: "workspaceTrust", id: item.id, answer });
        this.disableButtons(itemEl);
      }
    } else if (item && item.kind === "trust" && answer && item.answer === null) {
      if (answer === "trust" || answer === "deny") {
        this.host.post({ type: "trust", id: item.id, answer });
        this.disableButtons(itemEl);
      }
    } else if (item && item.kind === "sampling" && answer && item.answer === null) {
      if (answer === "allow_once" || answer === "allow_session" || answer === "deny") {
        this.host.post({ type: "sample", id: item.id, answer });
        this.disableButtons(itemEl);
      }
    } else if (item && item.kind === "elicit" && item.answer === null && testid === "elicit-decline") {
      this.host.post({ type: "elicit", id: item.id, action: "decline" });
      this.disableButtons(itemEl);
    }
  }

  /** A file card's button: one file (`data-change-action`) or every undecided file of the turn (`data-change-all`). */
  private onFileChangeButton(item: ChangesItem, button: HTMLButtonElement, card: HTMLElement | null): void {
    const all = button.dataset.changeAll;
    const action = (all ?? button.dataset.changeAction) as FileChangeAction;
    const rowEl = button.closest("[data-change-id]") as HTMLElement | null;
    const target = all
      ? item.files.find((f) => (all === "accept" || all === "reject" ? f.status === "pending" : f.status === "applied" || f.status === "written"))
      : item.files.find((f) => f.changeId === rowEl?.dataset.changeId);
    if (!target) return;
    const reasonInput = card?.querySelector("[data-testid=reject-reason]") as HTMLInputElement | null;
    const message: FromWebview = { type: "fileChange", changeId: target.changeId, action };
    if (all) message.all = true;
    if (action === "reject" && reasonInput?.value.trim()) message.reason = reasonInput.value.trim();
    this.host.post(message);
    // An answer is given once: its buttons go (the state update re-renders the card).
    if (action === "accept" || action === "reject") this.disableButtons(all ? card : rowEl);
  }

  private disableButtons(container: HTMLElement | null): void {
    container?.querySelectorAll("button").forEach((b) => {
      (b as HTMLButtonElement).disabled = true;
    });
  }

  private submitElicit(item: ElicitItem, form: HTMLFormElement): void {
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
    this.host.post({ type: "elicit", id: item.id, action: "accept", content: collected.content });
    this.disableButtons(form);
  }

  // rendering ---------------------------------------------------------------------------------------
  private save(): void {
    const saved: Saved = { state: this.state, draft: this.input.value, collapsed: [...this.collapsed], expanded: [...this.expanded] };
    this.host.setState(saved);
  }

  render(): void {
    const s = this.state;
    // items, incrementally
    const t = this.transcript;
    const atBottom = t.scrollHeight - t.scrollTop - t.clientHeight < 40;
    const active = this.doc.activeElement;
    const focusWasPinned = !!active && this.pending.contains(active);
    const seen = new Set<string>();
    const pinned = new Set<string>();
    const newlyPinned: HTMLElement[] = [];
    // Two places, each in item order: the transcript, and the pending region above the input.
    let prevT = null as Element | null;
    let prevP = null as Element | null;
    let inTranscript = 0;
    for (const item of s.items) {
      seen.add(item.id);
      const known = this.rendered.get(item.id);
      let node: HTMLElement;
      if (known && known.rev === item.rev) {
        node = known.el;
      } else {
        node = this.renderItem(item);
        if (known) known.el.replaceWith(node);
        this.rendered.set(item.id, { rev: item.rev, el: node });
      }
      const isPinned = isPending(item);
      const box = isPinned ? this.pending : t;
      const prev: Element | null = isPinned ? prevP : prevT;
      const expectedNext: Element | null = prev ? prev.nextElementSibling : box.firstElementChild;
      if (expectedNext !== node) {
        if (prev) prev.after(node);
        else box.prepend(node);
      }
      if (isPinned) {
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
        r.el.remove();
        this.rendered.delete(id);
      }
    }
    if (inTranscript === 0) {
      if (!this.emptyHint.isConnected) this.transcript.appendChild(this.emptyHint);
    } else if (this.emptyHint.isConnected) {
      this.emptyHint.remove();
    }
    // Follow the stream unless the user scrolled up to read.
    if (inTranscript && atBottom) t.scrollTop = t.scrollHeight;
    // While an answer streams the log is busy: a screen reader reads the message once it is complete.
    const last = s.items[s.items.length - 1];
    const streaming = s.busy && last?.kind === "message" && last.role === "assistant";
    t.setAttribute("aria-busy", streaming ? "true" : "false");
    this.renderPending(pinned, newlyPinned, focusWasPinned);

    // busy, stop, send
    const busyEl = this.busyHost.querySelector("[data-testid=busy]");
    if (s.busy && !busyEl) {
      const b = el(this.doc, "div", { "data-testid": "busy", class: "busy", role: "status" });
      b.append(el(this.doc, "span", { class: "spinner" }), this.doc.createTextNode(" The agent is working…"));
      this.busyHost.appendChild(b);
    } else if (!s.busy && busyEl) {
      busyEl.remove();
    }
    this.stopButton.disabled = !s.busy;
    this.sendButton.disabled = s.busy || s.server !== "running";

    this.renderBanner();

    // server line
    const serverText =
      s.server === "running" ? "" : s.server === "starting" ? "Starting the agent-ls server…" : s.serverError || "The agent-ls server is not running.";
    this.serverLine.textContent = serverText;
    this.serverLine.className = `server-line ${s.server}`;

    this.renderSessions();
    this.renderAttachments();
    this.renderSlash();
    this.save();
  }

  /** The pending region: shown while a question waits. A new question is scrolled into view and
   * takes the focus unless the user is typing (a screen reader reads its label; Tab reaches its
   * buttons); once answered, the focus goes to the next question or back to the input. */
  private renderPending(pinned: Set<string>, newlyPinned: HTMLElement[], focusWasPinned: boolean): void {
    this.pinned = pinned;
    this.pending.hidden = pinned.size === 0;
    const active = this.doc.activeElement;
    const first = this.pending.firstElementChild as HTMLElement | null;
    if (newlyPinned.length) {
      const node = newlyPinned[0];
      const typing = active === this.input && this.input.value.trim() !== "";
      // already on a question (reading it, filling a form): it keeps the focus and stays in view
      const onQuestion = !!active && this.pending.contains(active);
      if (!onQuestion) node.scrollIntoView?.({ block: "nearest" });
      if (!typing && !onQuestion) node.focus();
    } else if (focusWasPinned && !(active && this.pending.contains(active))) {
      if (first) first.focus();
      else this.input.focus();
    }
  }

  /** While a folder's settings are not in effect: one line per folder, with a way to trust it. */
  private renderBanner(): void {
    const box = this.banner;
    box.textContent = "";
    const restricted = this.state.restricted ?? [];
    box.hidden = restricted.length === 0;
    for (const w of restricted) {
      // one line (the sidebar is short): the whole message in the tooltip, and for screen readers
      const line = el(this.doc, "div", { class: "banner-line", "data-state": w.state, title: `${w.message}\n${visible(w.folder)} (state: ${w.state})` });
      line.append(el(this.doc, "span", { class: "banner-text" }, w.message));
      const label = w.state === "editor-restricted" ? "Manage workspace trust" : "Review and trust";
      line.append(el(this.doc, "button", { "data-testid": "banner-trust", class: "secondary" }, label));
      box.append(line);
    }
  }

  private renderSessions(): void {
    const list = this.sessionsList;
    list.textContent = "";
    const sessions = [...this.state.sessions].sort((a, b) => b.updated - a.updated).slice(0, 30);
    if (sessions.length === 0) {
      list.appendChild(el(this.doc, "li", { class: "muted" }, "No saved sessions yet."));
      return;
    }
    for (const s of sessions) {
      const li = el(this.doc, "li", {
        "data-testid": "session-item",
        "data-session-id": s.id,
        class: s.id === this.state.sessionId ? "session current" : "session",
        "aria-current": s.id === this.state.sessionId ? "true" : "false",
        title: `Resume session ${s.id}`,
        tabindex: "0",
      });
      const when = new Date(s.updated * 1000);
      li.append(
        el(this.doc, "span", { class: "title" }, sessionLabel(s)),
        el(this.doc, "span", { class: "meta" }, `${s.messageCount} msgs · ${isNaN(when.getTime()) ? "" : when.toLocaleString()}`),
      );
      list.appendChild(li);
    }
  }

  private renderAttachments(): void {
    const box = this.attachmentsBox;
    box.textContent = "";
    this.state.attachments.forEach((a, i) => {
      const chip = el(this.doc, "span", { "data-testid": "attachment", "data-kind": a.kind, class: "chip" });
      chip.append(el(this.doc, "span", {}, a.label));
      chip.append(el(this.doc, "button", { "data-testid": "remove-attachment", "data-index": String(i), class: "icon", title: "Remove", "aria-label": `Remove ${a.label}` }, "×"));
      box.appendChild(chip);
    });
  }

  private slashMatches() {
    if (this.slashClosed) return [];
    return matchPrompts(this.input.value, this.state.prompts);
  }

  private renderSlash(): void {
    const list = this.slashList;
    list.textContent = "";
    const value = this.input.value;
    if (!value.startsWith("/") || /\s/.test(value) || this.slashClosed) {
      list.hidden = true;
      return;
    }
    const matches = this.slashMatches();
    list.hidden = false;
    if (this.state.prompts.length === 0) {
      list.appendChild(el(this.doc, "li", { class: "muted", role: "option", "aria-disabled": "true" }, "No MCP server offers prompts."));
      return;
    }
    if (matches.length === 0) {
      list.appendChild(el(this.doc, "li", { class: "muted", role: "option", "aria-disabled": "true" }, "No matching MCP prompt."));
      return;
    }
    matches.forEach((p, i) => {
      const name = slashName(p);
      const li = el(this.doc, "li", {
        "data-testid": "slash-item",
        "data-name": name,
        role: "option",
        class: i === this.slashIndex ? "selected" : "",
      });
      const args = (p.arguments ?? []).map((a) => (a.required ? a.name : `[${a.name}]`)).join(" ");
      li.append(el(this.doc, "span", { class: "name" }, `/${name}`), el(this.doc, "span", { class: "meta" }, ` ${args} ${p.description ?? ""}`));
      list.appendChild(li);
    });
  }

  private renderItem(item: ChatItem): HTMLElement {
    let node: HTMLElement;
    switch (item.kind) {
      case "message":
        node = this.renderMessage(item);
        break;
      case "tool":
        node = this.renderTool(item);
        break;
      case "approval":
        node = this.renderApproval(item);
        break;
      case "trust":
        node = this.renderTrust(item);
        break;
      case "workspaceTrust":
        node = this.renderWorkspaceTrust(item);
        break;
      case "elicit":
        node = this.renderElicit(item);
        break;
      case "sampling":
        node = this.renderSampling(item);
        break;
      case "changes":
        node = this.renderChanges(item);
        break;
    }
    node.dataset.itemId = item.id;
    if (isPending(item)) {
      // A question the agent waits on: a dialog the focus can move to, named by its heading.
      node.setAttribute("role", "alertdialog");
      node.tabIndex = -1;
      const head = node.querySelector(".head") as HTMLElement | null;
      if (head && !node.hasAttribute("aria-label")) {
        head.id = `head-${item.id}`;
        node.setAttribute("aria-labelledby", head.id);
      }
    }
    return node;
  }

  private renderMessage(item: MessageItem): HTMLElement {
    const d = this.doc;
    if (item.role === "notice") {
      return el(d, "div", { "data-testid": "notice", class: "notice" }, item.text);
    }
    const node = el(d, "div", { "data-testid": "message", "data-role": item.role, class: `message ${item.role}` });
    if (item.role === "assistant") {
      const body = el(d, "div", { class: "markdown" });
      body.innerHTML = renderMarkdown(item.text);
      this.decorateCode(body);
      node.appendChild(body);
    } else {
      node.appendChild(el(d, "div", { class: "text" }, item.text));
    }
    if (item.attachments?.length) {
      const chips = el(d, "div", { class: "sent-attachments" });
      for (const a of item.attachments) chips.appendChild(el(d, "span", { class: "chip" }, a));
      node.appendChild(chips);
    }
    return node;
  }

  /** Code blocks get copy and insert-at-cursor buttons. */
  private decorateCode(body: HTMLElement): void {
    body.querySelectorAll("pre").forEach((pre) => {
      const wrap = el(this.doc, "div", { class: "code-block" });
      const bar = el(this.doc, "div", { class: "code-actions" });
      bar.append(
        el(this.doc, "button", { "data-testid": "code-copy", class: "icon", title: "Copy" }, "Copy"),
        el(this.doc, "button", { "data-testid": "code-insert", class: "icon", title: "Insert at cursor" }, "Insert"),
      );
      pre.replaceWith(wrap);
      wrap.append(bar, pre);
    });
  }

  private renderTool(item: ToolItem): HTMLElement {
    const d = this.doc;
    const card = el(d, "details", {
      "data-testid": "tool-card",
      "data-tool": item.tool,
      "data-server": item.server ?? "",
      "data-status": item.status,
      class: `tool-card ${item.status}`,
    });
    // Long cards start collapsed (the summary line says what ran and how it ended); the user's
    // choice for a card survives re-renders. Enter / Space on the summary toggles it.
    const defaultOpen = !isLongTool(item);
    card.open = this.expanded.has(item.id) || (defaultOpen && !this.collapsed.has(item.id));
    card.addEventListener("toggle", () => {
      this.collapsed.delete(item.id);
      this.expanded.delete(item.id);
      if (card.open !== defaultOpen) (card.open ? this.expanded : this.collapsed).add(item.id);
      this.save();
    });
    const summary = el(d, "summary");
    // The outcome in words with a glyph, in the text colour: never colour alone (issue 17).
    const status = toolStatusLabel(item.status, item.awaitingApproval);
    summary.append(
      el(d, "span", { class: "tool-name" }, item.displayName || item.tool),
      el(d, "span", { class: "tool-server" }, item.server ? ` · ${item.server}` : ""),
      el(d, "span", { class: "tool-status" }, " · "),
    );
    const statusEl = summary.lastElementChild as HTMLElement;
    statusEl.append(
      el(d, "span", { class: "tool-status-icon", "aria-hidden": "true" }, status.icon),
      ` ${status.text}${item.durationMs !== null ? ` (${formatDuration(item.durationMs)})` : ""}`,
    );
    if (!defaultOpen && item.result !== null) {
      const lines = item.result.split("\n").length;
      summary.append(el(d, "span", { class: "tool-size" }, ` · ${lines} line${lines === 1 ? "" : "s"} of output`));
    }
    const args = el(d, "div", { "data-testid": "tool-args", class: "tool-args" });
    args.appendChild(el(d, "pre", {}, json(item.args)));
    const result = el(d, "div", { "data-testid": "tool-result", class: "tool-result" });
    if (item.result !== null) {
      // A long output scrolls inside the card: reachable by keyboard to scroll it (issue 17).
      const scrolls = item.result.length > LONG_CHARS || item.result.split("\n").length > LONG_LINES;
      result.appendChild(el(d, "pre", scrolls ? { tabindex: "0", role: "region", "aria-label": `Output of ${item.displayName || item.tool}` } : {}, item.result));
    }
    if (item.output) {
      // the card (and the model) got the first page; the server keeps the whole output
      const open = el(d, "button", { "data-testid": "tool-full-output", class: "secondary", title: "Open the whole output in an editor" }, "Open full output");
      const row = el(d, "div", { class: "buttons" });
      row.append(open);
      result.appendChild(row);
    }
    card.append(summary, el(d, "div", { class: "label" }, `${item.tool}`), args, result);
    return card;
  }

  private renderApproval(item: ApprovalItem): HTMLElement {
    const d = this.doc;
    const box = el(d, "div", { "data-testid": "approval", class: "approval" });
    if (item.answer) box.dataset.answered = item.answer;
    const head = el(d, "div", { class: "head" });
    head.append(
      d.createTextNode("Allow "),
      el(d, "b", {}, item.displayName || item.tool),
      d.createTextNode(item.server ? ` from ${item.server}?` : "?"),
    );
    box.append(head);
    if (item.answer === null) {
      if (item.reason) box.append(el(d, "div", { class: "reason" }, item.reason));
      // Every argument in full, wrapped (never clipped); characters that would not show are escapes.
      // (short arguments on one line: a pinned question in a short panel keeps its buttons in view)
      const compact = JSON.stringify(item.args) ?? "";
      const text = compact.length <= 60 ? compact : json(item.args);
      box.append(
        el(d, "div", { class: "label", title: item.tool }, "Arguments:"),
        el(d, "pre", { class: "args", "data-testid": "approval-args" }, text.split("\n").map(visible).join("\n")),
      );
      const row = el(d, "div", { class: "buttons" });
      for (const a of ["allow_once", "allow_session", "deny"] as const) {
        row.append(el(d, "button", { "data-answer": a, class: a === "deny" ? "secondary" : "" }, APPROVAL_LABELS[a]));
      }
      box.append(row);
    } else if (item.withdrawn) {
      box.dataset.withdrawn = "true";
      head.append(el(d, "span", { class: "answer" }, " Withdrawn (no longer needed)"));
    } else {
      head.append(el(d, "span", { class: "answer" }, ` ${APPROVAL_LABELS[item.answer] ?? item.answer}`));
    }
    return box;
  }

  /** The files a turn changed: each with +/- line counts, its outcome and what the user may do. */
  private renderChanges(item: ChangesItem): HTMLElement {
    const d = this.doc;
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

  /** An MCP server entry in full: what runs (wrapped, never clipped), where, with what, and
   * what changed since the user trusted it. */
  private renderEntry(entry: TrustEntry, withHead: boolean): HTMLElement {
    const d = this.doc;
    const box = el(d, "div", { class: "entry", "data-testid": "trust-entry", "data-server": entry.server });
    if (withHead) {
      const head = el(d, "div", { class: "entry-head" });
      head.append(el(d, "b", {}, visible(entry.server)), d.createTextNode(` (${visible(entry.transport)}) from ${visible(entry.source)}`));
      box.append(head);
    }
    // What changed since the user trusted it comes first: it is what this question is about.
    if (entry.changes.length) {
      const list = el(d, "ul", { class: "changes", "data-testid": "trust-changes", "aria-label": "Changed since you trusted it" });
      for (const c of entry.changes) list.append(el(d, "li", {}, visible(c)));
      box.append(el(d, "div", { class: "label" }, "Changed since you trusted it:"), list);
    }
    if (entry.command) {
      box.append(el(d, "div", { class: "label" }, "Runs:"), el(d, "pre", { class: "args", "data-testid": "trust-command" }, commandLine(entry.command, entry.args)));
    }
    if (entry.cwd) box.append(el(d, "div", { class: "reason", "data-testid": "trust-cwd" }, `in ${visible(entry.cwd)}`));
    if (entry.url) {
      box.append(el(d, "div", { class: "label" }, "Connects to:"), el(d, "pre", { class: "args", "data-testid": "trust-url" }, visible(entry.url)));
    }
    const pairs = (title: string, testid: string, values: Record<string, string>, sep: string) => {
      const lines = pairLines(values, sep);
      if (!lines.length) return;
      box.append(el(d, "div", { class: "label" }, title), el(d, "pre", { class: "args", "data-testid": testid }, lines.join("\n")));
    };
    pairs("Environment:", "trust-env", entry.env, "=");
    pairs("Headers:", "trust-headers", entry.headers, ": ");
    if (entry.variables.length) {
      box.append(el(d, "div", { class: "reason", "data-testid": "trust-variables" }, `Receives the values of: ${entry.variables.map(visible).join(", ")}`));
    }
    return box;
  }

  private renderTrust(item: TrustItem): HTMLElement {
    const d = this.doc;
    const box = el(d, "div", { "data-testid": "trust-prompt", class: "approval trust", role: "group", "aria-label": `Start the MCP server ${item.server}?` });
    if (item.answer) box.dataset.answered = item.answer;
    const head = el(d, "div", { class: "head" });
    const verb = item.changes.length ? "changed" : "defined";
    head.append(d.createTextNode("Start the MCP server "), el(d, "b", {}, visible(item.server)), d.createTextNode(` (${visible(item.transport)}) ${verb} by ${visible(item.source)}?`));
    box.append(head, this.renderEntry(item, false));
    if (item.answer === null) {
      const row = el(d, "div", { class: "buttons" });
      row.append(
        el(d, "button", { "data-answer": "trust" }, "Trust and start"),
        el(d, "button", { "data-answer": "deny", class: "secondary" }, "Don't start"),
      );
      box.append(row);
    } else {
      if (item.withdrawn) box.dataset.withdrawn = "true";
      const text = item.withdrawn ? "Withdrawn (no longer needed)" : item.answer === "trust" ? "Trusted" : item.answer === "deny" ? "Not trusted" : "No answer";
      box.append(el(d, "div", { class: "answer" }, text));
    }
    return box;
  }

  /** A workspace folder asks for trust: every server it defines and every setting that needs it. */
  private renderWorkspaceTrust(item: WorkspaceTrustItem): HTMLElement {
    const d = this.doc;
    const title = "Trust this workspace's agent settings?";
    const box = el(d, "div", { "data-testid": "workspace-trust-prompt", "data-folder": item.folder, class: "approval trust workspace-trust", role: "group", "aria-label": title });
    if (item.answer) box.dataset.answered = item.answer;
    const head = el(d, "div", { class: "head" });
    head.append(el(d, "b", {}, title), d.createTextNode(` ${visible(item.folder)}`));
    box.append(head);
    if (item.answer !== null) {
      if (item.withdrawn) box.dataset.withdrawn = "true";
      const text = item.withdrawn
        ? "Withdrawn (the settings changed, or the question is no longer needed)"
        : item.answer === "trust" ? "Trusted" : item.answer === "restricted" ? "Kept restricted" : "No answer";
      box.append(el(d, "div", { class: "answer" }, text));
      return box;
    }
    box.append(el(d, "div", { class: "reason" }, "Until you trust it, its settings files can only tighten: the MCP servers and settings below are ignored."));
    if (item.previouslyTrusted && item.changes.length) {
      const list = el(d, "ul", { class: "changes", "data-testid": "workspace-changes" });
      for (const c of item.changes) list.append(el(d, "li", {}, visible(c)));
      box.append(el(d, "div", { class: "label" }, "Changed since you trusted it:"), list);
    }
    if (item.servers.length) {
      box.append(el(d, "div", { class: "label" }, `MCP servers it defines (they start when you trust it):`));
      for (const entry of item.servers) box.append(this.renderEntry(entry, true));
    }
    if (item.settings.length) {
      box.append(el(d, "div", { class: "label" }, "Settings that need your trust:"));
      const list = el(d, "ul", { class: "settings", "data-testid": "workspace-settings" });
      for (const s of item.settings) {
        const li = el(d, "li", { "data-key": s.key });
        li.append(el(d, "code", {}, `${visible(s.key)} = ${visible(s.value)}`), el(d, "div", { class: "reason" }, `${s.why} (${visible(s.source)})`));
        list.append(li);
      }
      box.append(list);
    }
    const row = el(d, "div", { class: "buttons" });
    row.append(
      el(d, "button", { "data-answer": "trust" }, "Trust workspace"),
      el(d, "button", { "data-answer": "restricted", class: "secondary" }, "Keep restricted"),
    );
    box.append(row);
    return box;
  }

  /** MCP sampling consent: which server, which model, how much, and what it would send. */
  private renderSampling(item: SamplingItem): HTMLElement {
    const d = this.doc;
    const box = el(d, "div", { "data-testid": "sampling-prompt", "data-server": item.server, class: "approval sampling" });
    const head = el(d, "div", { class: "head" });
    head.append(
      el(d, "b", {}, item.server),
      d.createTextNode(" asks to use the model "),
      el(d, "code", {}, item.model),
      d.createTextNode(` (at most ${item.maxTokens} tokens)`),
    );
    if (item.endpoint) head.append(d.createTextNode(" at "), el(d, "code", { "data-testid": "sampling-endpoint" }, item.endpoint));
    box.append(head);
    if (item.answer !== null) {
      box.dataset.answered = item.answer;
      if (item.withdrawn) box.dataset.withdrawn = "true";
      const text = item.withdrawn ? "Withdrawn (no longer needed)" : SAMPLING_LABELS[item.answer] ?? item.answer;
      box.append(el(d, "div", { class: "answer" }, text));
      return box;
    }
    if (item.systemPrompt) box.append(el(d, "div", { class: "reason", "data-testid": "sampling-system" }, `System prompt: ${item.systemPrompt}`));
    const list = el(d, "div", { class: "sampling-messages", "data-testid": "sampling-messages", tabindex: "0", role: "group", "aria-label": "The messages it would send" });
    if (item.omittedMessages > 0) list.append(el(d, "div", { class: "muted" }, `${item.omittedMessages} earlier messages not shown`));
    for (const m of item.messages) {
      const row = el(d, "div", { class: "sampling-message", "data-role": m.role });
      row.append(el(d, "b", {}, `${m.role}: `), el(d, "pre", { class: "args" }, m.text));
      list.append(row);
    }
    box.append(list);
    const row = el(d, "div", { class: "buttons" });
    for (const a of ["allow_once", "allow_session", "deny"] as const) {
      row.append(el(d, "button", { "data-answer": a, class: a === "deny" ? "secondary" : "" }, SAMPLING_LABELS[a]));
    }
    box.append(row);
    return box;
  }

  private renderElicit(item: ElicitItem): HTMLElement {
    const d = this.doc;
    const box = el(d, "div", { class: "approval elicit" });
    const head = el(d, "div", { class: "head" });
    head.append(el(d, "b", {}, item.server), d.createTextNode(" asks: "), d.createTextNode(item.message));
    box.append(head);
    if (item.answer !== null) {
      box.dataset.answered = item.answer;
      if (item.withdrawn) box.dataset.withdrawn = "true";
      const text = item.withdrawn
        ? "Withdrawn (no longer needed)"
        : item.answer === "accept" ? `Sent: ${json(item.content ?? {})}` : item.answer === "decline" ? "Declined" : "Cancelled";
      box.append(el(d, "div", { class: "answer" }, text));
      return box;
    }
    const form = el(d, "form", { "data-testid": "elicitation-form" });
    const fields = schemaFields(item.schema);
    buildFields(d, form, fields);
    const row = el(d, "div", { class: "buttons" });
    row.append(
      el(d, "button", { "data-testid": "elicit-submit", type: "submit" }, "Submit"),
      el(d, "button", { "data-testid": "elicit-decline", type: "button", class: "secondary" }, "Decline"),
    );
    form.append(row);
    form.addEventListener("submit", (e) => {
      e.preventDefault();
      this.submitElicit(item, form);
    });
    box.append(form);
    return box;
  }
}
