/** DOM building blocks shared by the chat webview's parts. */

/** An element with attributes (`class` sets the class name) and, optionally, its text. */
export function el<K extends keyof HTMLElementTagNameMap>(
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

/** A value as indented JSON (its String() when it cannot be serialised). */
export function json(value: unknown): string {
  try {
    // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition -- JSON.stringify(undefined) is undefined
    return JSON.stringify(value, null, 2) ?? "";
  } catch {
    return String(value);
  }
}

/** Disables every button in `container` (an answer is given once). A pinned question keeps the
 * keyboard focus: a focused button that gets disabled would drop it to the page (Chrome), so
 * the focus moves to its question first. */
export function disableButtons(container: HTMLElement | null): void {
  if (!container) return;
  const active = container.ownerDocument.activeElement;
  if (active && active !== container && container.contains(active)) {
    const question = container.closest<HTMLElement>("[data-item-id]");
    if (question?.hasAttribute("tabindex")) question.focus();
  }
  container.querySelectorAll("button").forEach((b) => {
    b.disabled = true;
  });
}

/** The element an event happened in, or its closest ancestor, that matches `selector`. */
export function closestTo(target: EventTarget | null, selector: string): HTMLElement | null {
  return target instanceof Element ? target.closest<HTMLElement>(selector) : null;
}

/**
 * Scroll the region `node` is in (its parent: the transcript or the pending questions) so that
 * `node` shows: its top at the region's top ("start"), or just into view ("nearest"). Only that
 * region scrolls: Element.scrollIntoView would scroll the editor's page around the webview too.
 */
export function scrollIntoView(node: HTMLElement, block: "start" | "nearest"): void {
  const box = node.parentElement;
  if (!box) return;
  const b = box.getBoundingClientRect();
  const n = node.getBoundingClientRect();
  if (block === "start" || n.top < b.top) box.scrollTop += n.top - b.top;
  else if (n.bottom > b.bottom) box.scrollTop += Math.min(n.bottom - b.bottom, n.top - b.top);
}
