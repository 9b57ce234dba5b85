/**
 * A thinking block: the model's reasoning for one phase of a turn (the `thinking` events before
 * the reply text or tool call they precede). While the model thinks it is open, headed
 * "Thinking…", and its text streams in; once the phase ends it collapses to one line, "Thought
 * for N s", that the user opens with the mouse or the keyboard (a native <details>: Enter /
 * Space on the summary). The text is plain text, never HTML.
 *
 * A streaming block is updated in place (the delta appended to its text node) rather than
 * rebuilt: the user's focus on its summary, its scroll position and whether it is open survive
 * every delta.
 */
import type { ThinkingItem } from "../shared/state";
import { el } from "./dom";
import type { CardChoices } from "./toolCards";

/** The block's one-line heading: "Thinking…" while it streams, then how long it took. */
export function thinkingLabel(item: ThinkingItem): string {
  if (!item.done) return "Thinking…";
  if (item.durationMs === null) return "Thought";
  const total = Math.max(1, Math.round(item.durationMs / 1000));
  if (total < 60) return `Thought for ${total} s`;
  return `Thought for ${Math.floor(total / 60)} min ${total % 60} s`;
}

/** Open by default only while it streams. */
const defaultOpen = (item: ThinkingItem) => !item.done;

/** Whether the block shows open: its default, unless the user chose otherwise. */
function shownOpen(item: ThinkingItem, choices: CardChoices): boolean {
  return defaultOpen(item) ? !choices.collapsed.has(item.id) : choices.expanded.has(item.id);
}

/** The thinking block of `item`: `previous` (its element from the last render) updated in
 * place when there is one, else a new element. */
export function renderThinking(d: Document, item: ThinkingItem, choices: CardChoices, previous?: HTMLElement): HTMLElement {
  if (previous?.tagName === "DETAILS" && previous.dataset.testid === "thinking") {
    update(previous as HTMLDetailsElement, item, choices);
    return previous;
  }
  const block = el(d, "details", { "data-testid": "thinking", class: "thinking" });
  const summary = el(d, "summary", { "data-testid": "thinking-summary" });
  summary.append(el(d, "span", { class: "spinner", "aria-hidden": "true" }), el(d, "span", { class: "thinking-label" }));
  // A long reasoning scrolls inside the block: reachable by keyboard to scroll it.
  const body = el(d, "div", { "data-testid": "thinking-text", class: "thinking-text", tabindex: "0", role: "region", "aria-label": "The model's reasoning" });
  body.appendChild(d.createTextNode(""));
  block.append(summary, body);
  // The user's choice survives re-renders and reloads (the same record as the tool cards').
  block.addEventListener("toggle", () => {
    const def = block.dataset.state !== "done";
    choices.collapsed.delete(item.id);
    choices.expanded.delete(item.id);
    if (block.open !== def) (block.open ? choices.expanded : choices.collapsed).add(item.id);
    choices.save();
  });
  update(block, item, choices);
  return block;
}

function update(block: HTMLDetailsElement, item: ThinkingItem, choices: CardChoices): void {
  const state = item.done ? "done" : "streaming";
  if (block.dataset.state !== state) {
    // new, or the phase just ended: open while streaming, collapsed once done (unless the user chose)
    block.dataset.state = state;
    block.open = shownOpen(item, choices);
    if (item.done) block.querySelector(".spinner")?.remove();
  }
  const label = block.querySelector<HTMLElement>(".thinking-label");
  const text = thinkingLabel(item);
  if (label && label.textContent !== text) label.textContent = text;
  const body = block.querySelector<HTMLElement>(".thinking-text");
  if (!body) return;
  const first = body.firstChild;
  if (first?.nodeType !== 3 /* Node.TEXT_NODE */) {
    body.textContent = item.text;
    return;
  }
  const node = first as Text;
  // Follow the stream inside the block unless the user scrolled up in it to read.
  const atBottom = body.scrollHeight - body.scrollTop - body.clientHeight < 20;
  const shown = node.data;
  // Text only grows while it streams: append what is new (plain text: a text node, never HTML).
  if (item.text.length >= shown.length && item.text.startsWith(shown)) node.appendData(item.text.slice(shown.length));
  else node.data = item.text;
  if (atBottom && !item.done) body.scrollTop = body.scrollHeight;
}
