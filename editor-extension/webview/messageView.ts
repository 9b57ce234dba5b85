/** A chat message: the user's text, the agent's markdown (code blocks with Copy and Insert),
 * an error, or a notice. */
import type { MessageItem } from "../shared/state";
import { el } from "./dom";
import { renderMarkdown } from "./markdown";
import { rewindButton } from "./rewindButton";

export function renderMessage(d: Document, item: MessageItem): HTMLElement {
  if (item.role === "notice") {
    return el(d, "div", { "data-testid": "notice", class: "notice" }, item.text);
  }
  const node = el(d, "div", { "data-testid": "message", "data-role": item.role, class: `message ${item.role}` });
  if (item.role === "assistant") {
    const body = el(d, "div", { class: "markdown" });
    body.innerHTML = renderMarkdown(item.text);
    decorateCode(d, body);
    node.appendChild(body);
  } else {
    node.appendChild(el(d, "div", { class: "text" }, item.text));
  }
  if (item.attachments?.length) {
    const chips = el(d, "div", { class: "sent-attachments" });
    for (const a of item.attachments) chips.appendChild(el(d, "span", { class: "chip" }, a));
    node.appendChild(chips);
  }
  if (item.role === "user") node.appendChild(rewindButton(d));
  return node;
}

/** Code blocks get copy and insert-at-cursor buttons. */
function decorateCode(d: Document, body: HTMLElement): void {
  body.querySelectorAll("pre").forEach((pre) => {
    const wrap = el(d, "div", { class: "code-block" });
    const bar = el(d, "div", { class: "code-actions" });
    bar.append(
      el(d, "button", { "data-testid": "code-copy", class: "icon", title: "Copy" }, "Copy"),
      el(d, "button", { "data-testid": "code-insert", class: "icon", title: "Insert at cursor" }, "Insert"),
    );
    pre.replaceWith(wrap);
    wrap.append(bar, pre);
  });
}
