/**
 * Markdown to safe HTML: marked (GFM) then DOMPurify. Raw HTML in the model's text is
 * sanitized away (scripts, event handlers, javascript: URLs, iframes, forms).
 */
import DOMPurify from "dompurify";
import { Marked } from "marked";

const marked = new Marked({ gfm: true, breaks: false, async: false });

let purifier: ReturnType<typeof DOMPurify> | null = null;

function purify(): ReturnType<typeof DOMPurify> {
  if (!purifier) {
    // Bind to the current window (the webview's, or the test DOM's).
    purifier = DOMPurify(window);
  }
  return purifier;
}

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

export function renderMarkdown(text: string): string {
  const p = purify();
  // Without a working sanitizer, never pass HTML through: show the text as text.
  if (!p.isSupported) return `<pre>${escapeHtml(text)}</pre>`;
  const html = marked.parse(text) as string;
  return p.sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS: ["style", "form", "input", "button", "textarea", "select", "iframe", "object", "embed"],
    FORBID_ATTR: ["style", "data-testid"],
  });
}
