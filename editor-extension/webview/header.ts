/**
 * The top of the chat: "New session", the line that says when the agent-ls server is not
 * running, the model picker (./modelPicker), the banner while a workspace folder's settings wait for trust, and the list of
 * saved sessions (click, Enter or Space resumes one).
 *
 * The banner is where the workspace trust question lives (issue 30): one line per folder;
 * "Review and trust" opens the pending question's card right under it (and closes it again),
 * or, when no question waits, asks the host (which shows the details another way).
 */
import { visible } from "../shared/commandLine";
import { contextDetail, contextLabel, sessionLabel } from "../shared/labels";
import type { FromWebview } from "../shared/messages";
import type { ChatState } from "../shared/state";
import { closestTo, el } from "./dom";
import { ModelPicker } from "./modelPicker";

export class Header {
  /** "New session" and the server line. */
  readonly top: HTMLElement;
  readonly banner: HTMLElement;
  readonly sessionsBox: HTMLDetailsElement;
  private readonly serverLine: HTMLElement;
  private readonly meter: HTMLElement;
  private readonly sessionsList: HTMLElement;
  private readonly model: ModelPicker;

  constructor(
    private readonly doc: Document,
    private readonly post: (message: FromWebview) => void,
    /** Opens or closes the pending trust card of a folder; false when none waits. */
    private readonly review: (folder: string) => boolean = () => false,
  ) {
    const d = doc;
    this.top = el(d, "div", { class: "top" });
    const newSession = el(d, "button", { "data-testid": "new-session", class: "secondary", title: "Start a new session" }, "New session");
    this.serverLine = el(d, "span", { class: "server-line" });
    // the context meter: how much of the model's window the conversation uses (issue 26)
    this.meter = el(d, "span", { class: "context-meter", "data-testid": "context-meter", role: "status" });
    this.model = new ModelPicker(d, post);
    this.top.append(newSession, this.serverLine, this.meter, this.model.element);
    this.sessionsBox = el(d, "details", { class: "sessions-box" });
    const sessionsSummary = el(d, "summary", {}, "Sessions");
    this.sessionsList = el(d, "ul", { "data-testid": "sessions", class: "sessions" });
    this.sessionsBox.append(sessionsSummary, this.sessionsList);
    this.sessionsBox.open = true;
    this.banner = el(d, "div", { "data-testid": "restricted-banner", class: "banner", role: "status" });

    newSession.addEventListener("click", () => this.post({ type: "newSession" }));
    this.sessionsBox.addEventListener("toggle", () => {
      if (this.sessionsBox.open) this.post({ type: "listSessions" });
    });
    this.sessionsList.addEventListener("click", (e) => {
      const session = this.sessionOf(e);
      if (session) this.post({ type: "resumeSession", sessionId: session });
    });
    this.sessionsList.addEventListener("keydown", (e) => {
      // A session row is operated like a button: Enter or Space resumes it.
      if (e.key !== "Enter" && e.key !== " ") return;
      const session = this.sessionOf(e);
      if (!session) return;
      e.preventDefault();
      this.post({ type: "resumeSession", sessionId: session });
    });
    this.banner.addEventListener("click", (e) => {
      const button = closestTo(e.target, "[data-testid=banner-trust]");
      if (!(button instanceof HTMLButtonElement) || button.disabled) return;
      if (button.dataset.folder !== undefined && button.dataset.state !== "editor-restricted" && this.review(button.dataset.folder)) return;
      this.post({ type: "trustWorkspaceCommand" });
    });
  }

  private sessionOf(e: Event): string | undefined {
    const row = closestTo(e.target, "[data-testid=session-item]");
    return row?.dataset.sessionId || undefined;
  }

  render(state: ChatState, trust: { folders: string[]; open: boolean } = { folders: [], open: false }): void {
    this.renderBanner(state, trust);
    const serverText =
      state.server === "running" ? "" : state.server === "starting" ? "Starting the agent-ls server…" : state.serverError || "The agent-ls server is not running.";
    this.serverLine.textContent = serverText;
    this.serverLine.className = `server-line ${state.server}`;
    const label = contextLabel(state.context);
    this.meter.hidden = label === null;
    this.meter.textContent = label ?? "";
    const detail = contextDetail(state.context);
    this.meter.title = detail;
    if (detail) this.meter.setAttribute("aria-label", `${label ?? ""}: ${detail}`);
    else this.meter.removeAttribute("aria-label");
    this.renderSessions(state);
    this.model.render(state);
  }

  /** While a folder's settings are not in effect: one line per folder, with a way to trust it. */
  private renderBanner(state: ChatState, trust: { folders: string[]; open: boolean }): void {
    const box = this.banner;
    // the banner is drawn anew: a focused button keeps the focus (keyboard users toggle the card)
    const active = this.doc.activeElement;
    const focusedFolder = active instanceof HTMLElement && box.contains(active) ? active.dataset.folder : undefined;
    box.textContent = "";
    const restricted = [...(state.restricted ?? [])];
    // a question that came before the status saying the folder is restricted gets its line too
    for (const folder of trust.folders) {
      if (!restricted.some((w) => w.folder === folder)) {
        restricted.push({ folder, state: "restricted", message: "This workspace is restricted: its agent-ls settings and MCP servers are ignored until you trust it." });
      }
    }
    box.hidden = restricted.length === 0;
    for (const w of restricted) {
      // the whole message, wrapped (issue 44: never cut to "This workspace is ..."); the folder in the tooltip
      const line = el(this.doc, "div", { class: "banner-line", "data-state": w.state, title: `${visible(w.folder)} (state: ${w.state})` });
      line.append(el(this.doc, "span", { class: "banner-text" }, w.message));
      const label = w.state === "editor-restricted" ? "Manage workspace trust" : "Review and trust";
      const button = el(this.doc, "button", { "data-testid": "banner-trust", class: "secondary", "data-folder": w.folder, "data-state": w.state }, label);
      if (w.state !== "editor-restricted" && trust.folders.includes(w.folder)) {
        // the question waits: the button opens (and closes) its card, right under the banner
        button.setAttribute("aria-expanded", trust.open ? "true" : "false");
        button.setAttribute("aria-controls", "trust-details");
      }
      line.append(button);
      box.append(line);
      if (focusedFolder === w.folder) button.focus({ preventScroll: true });
    }
  }

  private renderSessions(state: ChatState): void {
    const list = this.sessionsList;
    list.textContent = "";
    const sessions = [...state.sessions].sort((a, b) => b.updated - a.updated).slice(0, 30);
    if (sessions.length === 0) {
      list.appendChild(el(this.doc, "li", { class: "muted" }, "No saved sessions yet."));
      return;
    }
    for (const s of sessions) {
      const li = el(this.doc, "li", {
        "data-testid": "session-item",
        "data-session-id": s.id,
        class: s.id === state.sessionId ? "session current" : "session",
        "aria-current": s.id === state.sessionId ? "true" : "false",
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
}
