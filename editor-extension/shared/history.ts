/**
 * A resumed session's stored messages as chat items, shown as they were live: the typed text and
 * attachment chips of user messages, tool cards with how each call ran.
 */
import type { ResumedApp, StoredMessage } from "../src/protocol";
import { toolStatus } from "./itemOps";
import { PLAN_TOOL, type ChatItem, type MessageItem, type ToolItem } from "./items";
import { attachmentLabel } from "./labels";
import { subagentFromRun } from "./subagents";

/** A stored session's messages as chat items (text, tool calls and their results). */
export function historyItems(messages: StoredMessage[], startId: number): [ChatItem[], number] {
  const items: ChatItem[] = [];
  let n = startId;
  const tools = new Map<string, ToolItem>();
  for (const m of messages) {
    const text = contentText(m.content);
    const display = m.role === "user" ? messageDisplay(m.display) : null;
    if (display) {
      // Shown as it was live: the typed text and the attachment chips, not the text the
      // model got (attachments rendered into it, a slash command expanded).
      const item: MessageItem = { kind: "message", id: `m-${n++}`, rev: 0, role: "user", text: display.text };
      if (display.attachments.length) item.attachments = display.attachments;
      items.push(item);
    } else if (m.role === "user" && text) {
      items.push({ kind: "message", id: `m-${n++}`, rev: 0, role: "user", text });
    } else if (m.role === "assistant") {
      if (text) items.push({ kind: "message", id: `m-${n++}`, rev: 0, role: "assistant", text });
      for (const call of m.tool_calls ?? []) {
        let args: Record<string, unknown> = {};
        try {
          const parsed: unknown = JSON.parse(call.function?.arguments || "{}");
          if (parsed && typeof parsed === "object") args = parsed as Record<string, unknown>;
        } catch {
          args = { arguments: call.function?.arguments ?? "" };
        }
        const item: ToolItem = {
          kind: "tool",
          id: `t-${n++}`,
          rev: 0,
          callId: call.id ?? `call-${n}`,
          tool: call.function?.name ?? "?",
          server: null,
          displayName: null,
          args,
          status: "done",
          awaitingApproval: false,
          result: null,
          durationMs: null,
        };
        tools.set(item.callId, item);
        items.push(item);
      }
    } else if (m.role === "tool" && m.tool_call_id) {
      const item = tools.get(m.tool_call_id);
      if (item) {
        item.result = text;
        applyToolRun(item, m.run);
      }
    }
  }
  // the plan tool's calls show as the checklist, not as cards (a failed one keeps its card)
  return [items.filter((it) => !(it.kind === "tool" && it.tool === PLAN_TOOL && it.status === "done")), n];
}

/** How a resumed tool call ran (`run` of its result: server, duration, outcome), onto its card,
 * so that it looks as it did live. Older servers send no `run`: the card keeps "done". */
function applyToolRun(item: ToolItem, raw: unknown): void {
  if (!raw || typeof raw !== "object") return;
  const r = raw as { server?: unknown; displayName?: unknown; durationMs?: unknown; isError?: unknown; denied?: unknown; subagent?: unknown };
  if (typeof r.server === "string") item.server = r.server;
  if (typeof r.displayName === "string") item.displayName = r.displayName;
  if (typeof r.durationMs === "number" && Number.isFinite(r.durationMs)) item.durationMs = r.durationMs;
  item.status = toolStatus(r.isError === true, r.denied === true);
  const child = subagentFromRun(item.args, r.subagent); // an agent call: its subagent's card (issue 42)
  if (child) item.subagent = child;
}

/** A resumed message's `display` ({text, attachments}) as text and chip labels; null when absent or malformed. */
export function messageDisplay(raw: unknown): { text: string; attachments: string[] } | null {
  if (!raw || typeof raw !== "object") return null;
  const d = raw as { text?: unknown; attachments?: unknown };
  if (typeof d.text !== "string") return null;
  const attachments = Array.isArray(d.attachments)
    ? d.attachments
        .filter((a): a is Record<string, unknown> => !!a && typeof a === "object" && typeof (a as { kind?: unknown }).kind === "string")
        .map((a) =>
          attachmentLabel({
            kind: a.kind as string,
            uri: typeof a.uri === "string" ? a.uri : null,
            server: typeof a.server === "string" ? a.server : null,
            range: validRange(a.range),
          }),
        )
    : [];
  return { text: d.text, attachments };
}

function validRange(r: unknown): { start: { line: number }; end: { line: number } } | null {
  if (!r || typeof r !== "object") return null;
  const { start, end } = r as { start?: { line?: unknown }; end?: { line?: unknown } };
  return typeof start?.line === "number" && typeof end?.line === "number" ? { start: { line: start.line }, end: { line: end.line } } : null;
}

function contentText(content: unknown): string {
  if (typeof content === "string") return content;
  if (Array.isArray(content)) {
    return content
      .map((p) => (p && typeof p === "object" && typeof (p as { text?: unknown }).text === "string" ? (p as { text: string }).text : ""))
      .filter(Boolean)
      .join("\n");
  }
  return "";
}

/** The MCP Apps of a resumed session's tool calls (`run.app`), oldest first, each with the result
 * its app is given: the kept CallToolResult, else the call's text result. */
export function resumedApps(messages: StoredMessage[]): { callId: string; app: ResumedApp }[] {
  const out: { callId: string; app: ResumedApp }[] = [];
  for (const m of messages) {
    const callId = m.role === "tool" ? m.tool_call_id : undefined;
    const raw = callId && m.run && typeof m.run === "object" ? (m.run as { app?: unknown }).app : null;
    if (!callId || !raw || typeof raw !== "object") continue;
    const a = raw as Record<string, unknown>;
    if (typeof a.server !== "string" || typeof a.tool !== "string") continue;
    const obj = (v: unknown) => (v && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : null);
    out.push({
      callId,
      app: {
        server: a.server,
        tool: a.tool,
        resourceUri: typeof a.resourceUri === "string" ? a.resourceUri : "",
        arguments: obj(a.arguments) ?? {},
        result: obj(a.result) ?? { content: [{ type: "text", text: contentText(m.content) }] },
      },
    });
  }
  return out;
}
