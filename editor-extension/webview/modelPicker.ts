/**
 * The model picker in the chat's header (issue 27, item 3): "Model" and a select over the
 * settings' `model` and `models` (agent/models) with the session's current model chosen; picking
 * one posts `setModel` (the host sends agent/setModel). With one model, or none configured, it
 * shows the model's name only. A native select: Tab reaches it, the arrow keys and Enter pick,
 * the theme colours it; it is updated in place, so it keeps the focus while the chat redraws.
 */
import type { FromWebview } from "../shared/messages";
import type { ChatState } from "../shared/state";
import { el } from "./dom";

export class ModelPicker {
  readonly element: HTMLElement;
  private readonly select: HTMLSelectElement;
  private readonly name: HTMLElement;
  private shownChoices = "";

  constructor(doc: Document, post: (message: FromWebview) => void) {
    this.element = el(doc, "span", { class: "model-picker", "data-testid": "model" });
    const label = el(doc, "label", { for: "model-select", class: "model-label" }, "Model");
    this.select = el(doc, "select", {
      id: "model-select",
      "data-testid": "model-select",
      title: "The model that answers this session's next messages",
    });
    this.name = el(doc, "span", { class: "model-name", "data-testid": "model-name", id: "model-name" });
    this.element.append(label, this.select, this.name);
    this.select.addEventListener("change", () => {
      if (this.select.value) post({ type: "setModel", model: this.select.value });
    });
  }

  render(state: ChatState): void {
    const m = state.models;
    this.element.hidden = !m;
    if (!m) return;
    const pick = m.models.length > 1;
    this.select.hidden = !pick;
    this.name.hidden = pick;
    const label = this.element.querySelector("label");
    if (label) label.htmlFor = pick ? "model-select" : "";
    if (!pick) {
      setBreakable(this.name, m.current ?? (m.models.length > 0 ? m.models[0] : "not configured"));
      this.name.title = m.current ? "Add more in \"models\" in the agent-ls settings to switch" : "Set \"model\" in the agent-ls settings";
      return;
    }
    const key = JSON.stringify([m.models, m.default]);
    if (key !== this.shownChoices) {
      this.shownChoices = key;
      this.select.textContent = "";
      for (const model of m.models) {
        const text = model === m.default ? `${model} (default)` : model;
        this.select.append(el(this.element.ownerDocument, "option", { value: model }, text));
      }
    }
    this.select.value = m.current ?? m.default ?? "";
  }
}

/**
 * `text` in `node`, with a line break opportunity (<wbr>) after each "/" (issue 44): in a narrow
 * header a model name such as "openai/scripted" wraps as "openai/" + "scripted", never inside a word.
 */
export function setBreakable(node: HTMLElement, text: string): void {
  const d = node.ownerDocument;
  const parts = text.split(/(?<=\/)/);
  node.textContent = "";
  parts.forEach((part, i) => {
    if (i > 0) node.append(d.createElement("wbr"));
    node.append(d.createTextNode(part));
  });
}
