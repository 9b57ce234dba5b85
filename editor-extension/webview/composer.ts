/**
 * The composer at the bottom of the chat: the prompt input (Enter sends, Shift+Enter for a new
 * line), the attachment chips, the list of MCP prompts while the input starts with "/" (slash
 * commands), and the attach, Stop and Send buttons.
 */
import type { FromWebview } from "../shared/messages";
import { matchPrompts, slashName } from "../shared/slash";
import type { ChatState } from "../shared/state";
import { closestTo, el } from "./dom";

/** What the composer needs from the chat. */
export interface ComposerHost {
  post(message: FromWebview): void;
  state(): ChatState;
  /** Persists the webview's state (the draft is part of it). */
  save(): void;
}

export class Composer {
  readonly element: HTMLElement;
  readonly input: HTMLTextAreaElement;
  readonly sendButton: HTMLButtonElement;
  readonly stopButton: HTMLButtonElement;
  private readonly attachmentsBox: HTMLElement;
  private readonly slashList: HTMLElement;
  /** Escape closed the slash list (until the input changes). */
  private slashClosed = false;
  private slashIndex = 0;

  constructor(
    private readonly doc: Document,
    private readonly host: ComposerHost,
    draft: string,
  ) {
    const d = doc;
    this.element = el(d, "div", { class: "composer" });
    this.attachmentsBox = el(d, "div", { class: "attachments" });
    this.slashList = el(d, "ul", { class: "slash", role: "listbox" });
    this.input = el(d, "textarea", {
      "data-testid": "prompt-input",
      rows: "3",
      placeholder: "Ask the agent… (Enter to send, Shift+Enter for a new line, / for MCP prompts)",
      "aria-label": "Message to the agent (Enter to send, Shift+Enter for a new line, / for MCP prompts)",
    });
    this.input.value = draft;
    const row = el(d, "div", { class: "row" });
    const attachSel = el(d, "button", { "data-testid": "attach-selection", class: "secondary", title: "Attach the editor's selection" }, "+ Selection");
    const attachFile = el(d, "button", { "data-testid": "attach-file", class: "secondary", title: "Attach the current file" }, "+ File");
    const attachRes = el(d, "button", { "data-testid": "attach-resource", class: "secondary", title: "Attach an MCP resource" }, "+ Resource");
    const spacer = el(d, "span", { class: "spacer" });
    this.stopButton = el(d, "button", { "data-testid": "stop", class: "secondary", title: "Stop the agent" }, "Stop");
    this.sendButton = el(d, "button", { "data-testid": "send", title: "Send" }, "Send");
    row.append(attachSel, attachFile, attachRes, spacer, this.stopButton, this.sendButton);
    this.element.append(this.attachmentsBox, this.slashList, this.input, row);

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
      this.host.save();
    });
    this.element.addEventListener("click", (e) => this.onClick(e));
  }

  /** Sends the prompt in the input (not while the agent answers) and clears the input. */
  send(): void {
    const text = this.input.value;
    if (!text.trim() || this.host.state().busy) return;
    this.host.post({ type: "send", text });
    this.input.value = "";
    this.renderSlash();
    this.host.save();
  }

  /** The host sets the input's text (a code action, a slash command picked elsewhere). */
  setText(text: string, focus: boolean): void {
    this.input.value = text;
    if (focus) this.input.focus();
    this.renderSlash();
    this.host.save();
  }

  render(): void {
    const s = this.host.state();
    this.stopButton.disabled = !s.busy;
    this.sendButton.disabled = s.busy || s.server !== "running";
    this.renderAttachments();
    this.renderSlash();
  }

  private onClick(e: Event): void {
    const remove = closestTo(e.target, "[data-testid=remove-attachment]");
    if (remove instanceof HTMLButtonElement && !remove.disabled) {
      this.host.post({ type: "removeAttachment", index: Number(remove.dataset.index) });
      return;
    }
    const slash = closestTo(e.target, "[data-testid=slash-item]");
    if (slash?.dataset.name) this.pickSlash(slash.dataset.name);
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

  private pickSlash(name: string): void {
    this.input.value = `/${name} `;
    this.input.focus();
    this.renderSlash();
    this.host.save();
  }

  private renderAttachments(): void {
    const box = this.attachmentsBox;
    box.textContent = "";
    this.host.state().attachments.forEach((a, i) => {
      const chip = el(this.doc, "span", { "data-testid": "attachment", "data-kind": a.kind, class: "chip" });
      chip.append(el(this.doc, "span", {}, a.label));
      chip.append(el(this.doc, "button", { "data-testid": "remove-attachment", "data-index": String(i), class: "icon", title: "Remove", "aria-label": `Remove ${a.label}` }, "×"));
      box.appendChild(chip);
    });
  }

  private slashMatches() {
    if (this.slashClosed) return [];
    return matchPrompts(this.input.value, this.host.state().prompts);
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
    if (matches.length === 0) {
      const none = this.host.state().prompts.length === 0 ? "No MCP server offers prompts." : "No matching MCP prompt.";
      list.appendChild(el(this.doc, "li", { class: "muted", role: "option", "aria-disabled": "true" }, none));
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
      // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- a server may list a prompt without arguments
      const args = (p.arguments ?? []).map((a) => (a.required ? a.name : `[${a.name}]`)).join(" ");
      li.append(el(this.doc, "span", { class: "name" }, `/${name}`), el(this.doc, "span", { class: "meta" }, ` ${args} ${p.description ?? ""}`));
      list.appendChild(li);
    });
  }
}
