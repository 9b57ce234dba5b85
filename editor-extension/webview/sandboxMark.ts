/**
 * The OS sandbox on a command's tool card (issue 47): a mark on the summary line saying where it
 * ran (sandboxed with its network, or outside the sandbox after your approval), and under the
 * output what the sandbox refused, each with "Allow for this workspace" (kept as your decision
 * outside the workspace) or, once allowed, "Undo". Words and a glyph, never colour alone; real
 * buttons, so Tab and Enter reach them.
 */
import type { SandboxMark } from "../src/protocol";
import type { SandboxGrants } from "../shared/items";
import { sandboxLabel, sandboxRefusals } from "../shared/sandbox";
import { el } from "./dom";

/** The summary line's mark: ` · sandboxed · network via proxy` (the tooltip says it in full). */
export function renderSandboxSummary(d: Document, mark: SandboxMark): HTMLElement {
  const label = sandboxLabel(mark);
  const span = el(d, "span", {
    "data-testid": "tool-sandbox",
    "data-mode": mark.mode,
    class: `tool-sandbox ${mark.mode}`,
    title: label.long,
  }, " · ");
  // the glyph is decoration: the words say it (a screen reader reads the label)
  span.append(el(d, "span", { class: "tool-sandbox-icon", "aria-hidden": "true" }, mark.mode === "sandboxed" ? "⛉" : "⚠"),
    ` ${label.short}`);
  span.setAttribute("aria-label", label.long);
  return span;
}

/** What the sandbox refused during the call, each with its one-click grant (null: nothing refused). */
export function renderSandboxRefusals(d: Document, mark: SandboxMark, grants: SandboxGrants | null | undefined): HTMLElement | null {
  const refusals = sandboxRefusals(mark, grants);
  if (!refusals.length) return null;
  const box = el(d, "div", { "data-testid": "sandbox-refusals", class: "sandbox-refusals", role: "group", "aria-label": "Refused by the sandbox" });
  for (const r of refusals) {
    const row = el(d, "div", { class: "sandbox-refusal", "data-kind": r.kind, "data-value": r.value });
    row.append(el(d, "span", { class: "sandbox-refusal-text" }, r.text));
    const what = r.kind === "writes" ? `writing in ${r.value}` : `connections to ${r.value}`;
    if (r.granted) {
      row.append(
        el(d, "span", { class: "sandbox-granted", "data-testid": "sandbox-granted" }, " · Allowed for this workspace"),
        el(d, "button", { class: "secondary", "data-testid": "sandbox-undo", "data-kind": r.kind, "data-value": r.value,
          "aria-label": `Undo: stop allowing ${what} in this workspace` }, "Undo"),
      );
    } else {
      row.append(el(d, "button", { class: "secondary", "data-testid": "sandbox-allow", "data-kind": r.kind, "data-value": r.value,
        "aria-label": `Allow ${what} for this workspace (kept in your agent-ls data, not in the workspace)`,
        title: "Kept as your decision outside the workspace; undo it here or with Agent: Sandbox Permissions" },
      "Allow for this workspace"));
    }
    box.append(row);
  }
  return box;
}

/** The chat header's note, once, when commands do not run in an OS sandbox (off in the settings,
 * or no mechanism here): every command asks first. Hidden otherwise. */
export class SandboxNote {
  readonly element: HTMLElement;
  private readonly text: HTMLElement;

  constructor(d: Document) {
    // the look of the trust banner's lines (theme colours of a warning), words only
    this.element = el(d, "div", { "data-testid": "sandbox-note", class: "banner sandbox-note", role: "status" });
    const line = el(d, "div", { class: "banner-line" });
    this.text = el(d, "span", { class: "banner-text" });
    line.append(this.text);
    this.element.append(line);
    this.element.hidden = true;
  }

  render(grants: SandboxGrants | null | undefined): void {
    const note = grants?.note ?? "";
    if (this.text.textContent !== note) this.text.textContent = note;
    this.element.hidden = !note;
  }
}
