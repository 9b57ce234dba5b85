/** Tool call cards: what ran, on which server, how it ended and how long it took; long cards
 * start collapsed to their summary line (issue 17). */
import { toolStatusLabel } from "../shared/labels";
import type { SandboxGrants, SubagentCard, ToolItem } from "../shared/state";
import { el, json } from "./dom";
import { renderSandboxRefusals, renderSandboxSummary } from "./sandboxMark";

/** Lines and characters past which a tool card starts collapsed (its summary line stays). */
const LONG_LINES = 12;
const LONG_CHARS = 800;

const isLong = (text: string) => text.length > LONG_CHARS || text.split("\n").length > LONG_LINES;

/** A tool card too long to show open by default: a long result or long arguments, or output kept by the server. */
export function isLongTool(item: ToolItem): boolean {
  if (item.output) return true;
  return (item.result !== null && isLong(item.result)) || isLong(json(item.args));
}

/** A duration as people read it: "850 ms", "1.2 s", "2 min 5 s". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const total = Math.round(ms / 1000);
  return `${Math.floor(total / 60)} min ${total % 60} s`;
}

/** The cards the user opened or closed against their default (kept across re-renders and reloads). */
export interface CardChoices {
  /** Cards open by default that the user closed. */
  readonly collapsed: Set<string>;
  /** Long cards (closed by default) that the user opened. */
  readonly expanded: Set<string>;
  /** Persists the choices. */
  save(): void;
}

export function renderTool(d: Document, item: ToolItem, choices: CardChoices, grants?: SandboxGrants | null): HTMLElement {
  const card = el(d, "details", {
    "data-testid": "tool-card",
    "data-tool": item.tool,
    "data-server": item.server ?? "",
    "data-status": item.status,
    class: `tool-card ${item.status}`,
  });
  // Long cards start collapsed (the summary line says what ran and how it ended); the user's
  // choice for a card survives re-renders. Enter / Space on the summary toggles it.
  const defaultOpen = !isLongTool(item);
  card.open = choices.expanded.has(item.id) || (defaultOpen && !choices.collapsed.has(item.id));
  card.addEventListener("toggle", () => {
    choices.collapsed.delete(item.id);
    choices.expanded.delete(item.id);
    if (card.open !== defaultOpen) (card.open ? choices.expanded : choices.collapsed).add(item.id);
    choices.save();
  });
  const summary = el(d, "summary");
  // The outcome in words with a glyph, in the text colour: never colour alone (issue 17).
  const status = toolStatusLabel(item.status, item.awaitingApproval);
  const child = item.subagent ?? null;
  if (child) card.setAttribute("data-agent", child.agent);
  summary.append(
    el(d, "span", { class: "tool-name" }, child ? subagentTitle(child) : item.displayName || item.tool),
    el(d, "span", { class: "tool-server" }, item.server ? ` · ${item.server}` : ""),
    el(d, "span", { class: "tool-status" }, " · "),
  );
  const statusEl = summary.lastElementChild as HTMLElement;
  statusEl.append(
    el(d, "span", { class: "tool-status-icon", "aria-hidden": "true" }, status.icon),
    ` ${status.text}${item.durationMs !== null ? ` (${formatDuration(item.durationMs)})` : ""}`,
  );
  if (item.sandbox) summary.append(renderSandboxSummary(d, item.sandbox));
  if (!defaultOpen && item.result !== null) {
    const lines = item.result.split("\n").length;
    summary.append(el(d, "span", { class: "tool-size" }, ` · ${lines} line${lines === 1 ? "" : "s"} of output`));
  }
  if (item.status === "running" && item.progress) {
    // what the call waits for, in words (e.g. an MCP server still starting): read by screen readers as it changes
    summary.append(el(d, "span", { "data-testid": "tool-progress", class: "tool-progress", role: "status" }, ` · ${item.progress}`));
  }
  const args = el(d, "div", { "data-testid": "tool-args", class: "tool-args" });
  args.appendChild(el(d, "pre", {}, json(item.args)));
  const result = el(d, "div", { "data-testid": "tool-result", class: "tool-result" });
  if (item.result !== null) {
    // A long output scrolls inside the card: reachable by keyboard to scroll it (issue 17).
    const scrolls = isLong(item.result);
    result.appendChild(el(d, "pre", scrolls ? { tabindex: "0", role: "region", "aria-label": `Output of ${item.displayName || item.tool}` } : {}, item.result));
  }
  if (item.output) {
    // the card (and the model) got the first page; the server keeps the whole output
    const open = el(d, "button", { "data-testid": "tool-full-output", class: "secondary", title: "Open the whole output in an editor" }, "Open full output");
    const row = el(d, "div", { class: "buttons" });
    row.append(open);
    result.appendChild(row);
  }
  const refused = item.sandbox ? renderSandboxRefusals(d, item.sandbox, grants) : null;
  if (refused) result.appendChild(refused);
  card.append(summary, el(d, "div", { class: "label" }, item.tool), args);
  if (child) card.append(renderSubagent(d, child, item.durationMs));
  card.append(result);
  return card;
}

/** An `agent` card's title: the agent and its task. */
function subagentTitle(child: SubagentCard): string {
  return child.description ? `${child.agent}: ${child.description}` : child.agent;
}

/** A call's arguments in one short line (the command, path or pattern when it has one). */
function brief(args: Record<string, unknown>): string {
  for (const key of ["command", "path", "pattern", "query"]) {
    const v = args[key];
    if (typeof v === "string" && v) return v.length > 80 ? `${v.slice(0, 77)}...` : v;
  }
  const text = json(args).replace(/\s+/g, " ");
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** What a subagent did (issue 42): its tool calls nested in its card, how long it ran, its tokens;
 * updated live as its events arrive (the result below is its answer). */
function renderSubagent(d: Document, child: SubagentCard, durationMs: number | null): HTMLElement {
  const box = el(d, "div", { "data-testid": "subagent", class: "subagent" });
  const calls = child.calls.length;
  const facts = (): string => {
    const elapsed = durationMs ?? (child.startedAt !== null ? (child.finishedAt ?? Date.now()) - child.startedAt : null);
    return [
      child.agent,
      `${calls} tool call${calls === 1 ? "" : "s"}`,
      ...(elapsed !== null ? [formatDuration(elapsed)] : []),
      `${child.tokens.toLocaleString("en-US")} tokens`,
      ...(child.stopReason && child.stopReason !== "end" ? [child.stopReason.replace("_", " ")] : []),
    ].join(" · ");
  };
  const meta = el(d, "div", { "data-testid": "subagent-meta", class: "label" }, facts());
  box.append(meta);
  if (durationMs === null && child.finishedAt === null && child.startedAt !== null) {
    // while it runs, its elapsed time counts on between its events (the card is drawn again on
    // each event: a replaced card's timer stops at its next tick)
    const tick = setInterval(() => {
      if (!meta.isConnected) clearInterval(tick);
      else meta.textContent = facts();
    }, 1000);
  }
  const list = el(d, "ul", { "data-testid": "subagent-calls", class: "subagent-calls", "aria-label": `Tool calls of ${child.agent}` });
  for (const call of child.calls) {
    const status = toolStatusLabel(call.status, call.awaitingApproval);
    const li = el(d, "li", { "data-testid": "subagent-call", "data-status": call.status, class: `subagent-call ${call.status}` });
    li.append(
      el(d, "span", { class: "tool-name" }, call.tool),
      ` ${brief(call.args)} · `,
      el(d, "span", { class: "tool-status-icon", "aria-hidden": "true" }, status.icon),
      ` ${status.text}${call.durationMs !== null ? ` (${formatDuration(call.durationMs)})` : ""}`,
    );
    list.append(li);
  }
  box.append(list);
  return box;
}
