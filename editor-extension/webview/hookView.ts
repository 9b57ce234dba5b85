/**
 * A hook line (issue 43): one quiet line per hook run, "Hook · PreToolUse · ./check.sh · blocked
 * (12 ms)", that opens on what the hook said and printed (a native <details>: Enter / Space on
 * the line, or a click). The outcome is a glyph and a word, never colour alone; the text is plain
 * text, never HTML. Closed by default; the user's choice survives re-renders and reloads (the
 * tool cards' record).
 */
import { hookOutcomeText } from "../shared/hooks";
import type { HookItem } from "../shared/state";
import { el } from "./dom";
import { formatDuration, type CardChoices } from "./toolCards";

const ICONS: Record<HookItem["outcome"], string> = { ran: "✓", blocked: "⊘", error: "✕" };

/** The line as words: what a screen reader reads on the summary. */
export function hookLabel(item: HookItem): string {
  const time = item.durationMs !== null ? ` (${formatDuration(item.durationMs)})` : "";
  return `Hook · ${item.event} · ${item.command || "(no command)"} · ${hookOutcomeText(item)}${time}`;
}

export function renderHook(d: Document, item: HookItem, choices: CardChoices): HTMLElement {
  const line = el(d, "details", { "data-testid": "hook", "data-outcome": item.outcome, "data-event": item.event, class: `hook-line ${item.outcome}` });
  line.open = choices.expanded.has(item.id);
  line.addEventListener("toggle", () => {
    choices.collapsed.delete(item.id);
    choices.expanded.delete(item.id);
    if (line.open) choices.expanded.add(item.id);
    choices.save();
  });
  const time = item.durationMs !== null ? ` (${formatDuration(item.durationMs)})` : "";
  const first = item.message.trim().split("\n")[0];
  const summary = el(d, "summary", { "data-testid": "hook-summary", "aria-label": hookLabel(item) + (first ? `: ${first}` : "") });
  summary.append(
    el(d, "span", { class: "hook-kind" }, "Hook"),
    el(d, "span", { class: "hook-event" }, ` · ${item.event}`),
    el(d, "span", { class: "hook-command" }, ` · ${item.command}`),
    el(d, "span", { class: "hook-outcome" }, " · "),
  );
  const outcome = summary.lastElementChild as HTMLElement;
  outcome.append(el(d, "span", { class: "hook-icon", "aria-hidden": "true" }, ICONS[item.outcome]), ` ${hookOutcomeText(item)}${time}`);
  if (first) summary.append(el(d, "span", { class: "hook-message" }, `: ${first}`));
  const body = el(d, "div", { "data-testid": "hook-body", class: "hook-body" });
  if (item.message.trim()) body.append(el(d, "div", { "data-testid": "hook-text", class: "hook-text" }, item.message));
  if (item.output.trim()) {
    // A long output scrolls inside the line: reachable by keyboard to scroll it.
    body.append(el(d, "pre", { "data-testid": "hook-output", tabindex: "0", role: "region", "aria-label": `Output of the ${item.event} hook ${item.command}` }, item.output));
  }
  if (!body.childElementCount) body.append(el(d, "div", { class: "hook-text" }, "It printed nothing."));
  line.append(summary, body);
  return line;
}
