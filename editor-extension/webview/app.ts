/**
 * The chat webview: renders the shared ChatState (incrementally, item by item) and turns the
 * user's clicks into messages for the extension host. DOM hooks (data-testid) follow
 * editor-extension/CONTRACT.md. Its parts: ./header (New session, server line, restricted
 * banner, sessions), ./planView (the agent's plan, a checklist), ./jobsStrip (the Running strip), ./transcript (the items, the pinned questions, the focus), ./composer (the
 * input, attachments, slash commands, Send and Stop), ./itemActions (what the items' buttons
 * do); the items themselves render in ./messageView, ./toolCards, ./questions and ./fileChanges.
 */
import type { FromWebview, ToWebview } from "../shared/messages";
import { initialState, reduce, type ChatState } from "../shared/state";
import { AppViews } from "./appView";
import { Composer } from "./composer";
import { closestTo } from "./dom";
import { Header } from "./header";
import { PlanView } from "./planView";
import { JobsStrip } from "./jobsStrip";
import { ItemActions } from "./itemActions";
import { SandboxNote } from "./sandboxMark";
import { Conversation } from "./transcript";

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

export class ChatApp {
  state: ChatState;
  private readonly collapsed = new Set<string>();
  private readonly expanded = new Set<string>();
  private readonly header: Header;
  private readonly conversation: Conversation;
  private readonly composer: Composer;
  private readonly actions: ItemActions;
  private readonly plan: PlanView;
  /** The header's note when commands do not run in an OS sandbox (issue 47). */
  private readonly sandboxNote: SandboxNote;
  private readonly jobs: JobsStrip;
  /** The MCP Apps' frames and bridges (main.ts routes their messages here first). */
  readonly apps: AppViews;

  readonly transcript: HTMLElement;
  /** Pinned questions (approval, trust, elicitation, sampling) waiting for an answer. */
  readonly pending: HTMLElement;
  readonly input: HTMLTextAreaElement;
  readonly sendButton: HTMLButtonElement;
  readonly stopButton: HTMLButtonElement;

  constructor(
    root: HTMLElement,
    private readonly host: HostApi,
  ) {
    const d = root.ownerDocument;
    const saved = host.getState() as Partial<Saved> | undefined;
    this.state = saved?.state && Array.isArray(saved.state.items) ? saved.state : initialState();
    for (const id of saved?.collapsed ?? []) this.collapsed.add(id);
    for (const id of saved?.expanded ?? []) this.expanded.add(id);

    root.textContent = "";
    root.className = "chat";
    // the whole chat is the page's main landmark (screen readers jump to it)
    root.setAttribute("role", "main");
    root.setAttribute("aria-label", "Agent chat");

    const post = (m: FromWebview) => this.host.post(m);
    // "Review and trust" opens the pending workspace trust card under the banner (the host is
    // asked only when none waits: it shows the folder's details another way)
    this.header = new Header(d, post, (folder) => this.conversation.toggleTrustDetails(folder));
    this.composer = new Composer(d, { post, state: () => this.state, save: () => this.save() }, saved?.draft ?? "");
    this.input = this.composer.input;
    this.sendButton = this.composer.sendButton;
    this.stopButton = this.composer.stopButton;
    this.actions = new ItemActions(post, () => this.state, this.input);
    this.apps = new AppViews(post);
    this.conversation = new Conversation(d, {
      apps: this.apps,
      input: this.input,
      cards: { collapsed: this.collapsed, expanded: this.expanded, save: () => this.save() },
      submitElicit: (item, form) => this.actions.submitElicit(item, form),
      sandboxGrants: () => this.state.sandboxGrants,
    });
    this.transcript = this.conversation.transcript;
    this.pending = this.conversation.pending;

    this.plan = new PlanView(d);
    this.sandboxNote = new SandboxNote(d);
    this.jobs = new JobsStrip(d, post);
    const c = this.conversation;
    c.onTrustToggle = () => this.header.render(this.state, this.pendingTrust());
    root.append(this.header.top, this.sandboxNote.element, this.header.banner, c.trustDetails, this.header.sessionsBox, this.plan.element, this.jobs.element, c.transcript, c.busyHost, c.pending, this.composer.element);
    // the items' buttons (answers, file decisions, code blocks, full output)
    c.transcript.addEventListener("click", (e) => this.onItemClick(e));
    c.pending.addEventListener("click", (e) => this.onItemClick(e));
    c.pending.addEventListener("keydown", (e) => this.actions.onPendingKey(e));
    c.trustDetails.addEventListener("click", (e) => this.onItemClick(e));
    c.trustDetails.addEventListener("keydown", (e) => this.actions.onPendingKey(e));

    this.render();
  }

  // host messages ----------------------------------------------------------------------------------
  receive(message: ToWebview): void {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- posted messages are not checked on the way in
    if (!message || typeof message !== "object") return;
    if (message.type === "state") {
      this.state = message.state;
      this.render();
    } else if (message.type === "action") {
      this.state = reduce(this.state, message.action);
      this.render();
    } else if (message.type === "setInput") {
      this.composer.setText(message.text, message.focus === true);
    } else if (message.type === "appReply") {
      this.apps.reply(message.requestId, message.result, message.error);
    } else {
      this.conversation.focusItem(message.id);
    }
  }

  /** Sends the prompt in the input (what Enter and the Send button do). */
  send(): void {
    this.composer.send();
  }

  private onItemClick(e: Event): void {
    const button = closestTo(e.target, "button");
    if (button instanceof HTMLButtonElement && !button.disabled) this.actions.onButton(button);
  }

  // rendering ---------------------------------------------------------------------------------------
  private save(): void {
    const saved: Saved = { state: this.state, draft: this.input.value, collapsed: [...this.collapsed], expanded: [...this.expanded] };
    this.host.setState(saved);
  }

  /** The folders whose workspace trust question waits, and whether its card is open. */
  private pendingTrust(): { folders: string[]; open: boolean } {
    const folders = this.state.items.flatMap((i) => (i.kind === "workspaceTrust" && i.answer === null ? [i.folder] : []));
    return { folders, open: this.conversation.trustDetailsOpen };
  }

  render(): void {
    this.conversation.render(this.state);
    this.plan.render(this.state);
    this.jobs.render(this.state);
    this.composer.render();
    this.header.render(this.state, this.pendingTrust());
    this.sandboxNote.render(this.state.sandboxGrants);
    this.save();
  }
}
