/**
 * Server code actions as the extension runs them, and what their results show in the chat
 * (pure helpers: unit-tested).
 *
 * "Ask agent" (agent-ls.ask, mode `ask`) carries no question: the extension asks the user
 * for one (an input box) before it executes the command, and adds it as `question`.
 */
import { attachmentLabel } from "../shared/labels";
import type { ChatAction } from "../shared/state";
import * as P from "./protocol";

function firstArg(args: readonly unknown[]): Record<string, unknown> | null {
  const first = args[0];
  return first && typeof first === "object" && !Array.isArray(first) ? (first as Record<string, unknown>) : null;
}

/** Whether this command is "Ask agent" without a question (the user must be asked for one). */
export function needsQuestion(command: string, args: readonly unknown[]): boolean {
  if (command !== P.CMD_ASK || args.length !== 1) return false;
  const a = firstArg(args);
  if (!a) return false;
  const mode = a.mode ?? "ask";
  return mode === "ask" && (typeof a.question !== "string" || !a.question.trim());
}

/**
 * The arguments with the user's answer: `undefined` (the input box was dismissed) means do not
 * run the action (null is returned); an empty answer keeps the server's default question.
 */
export function withQuestion(args: readonly unknown[], answer: string | undefined): unknown[] | null {
  if (answer === undefined) return null;
  const a = firstArg(args);
  if (!a || !answer.trim()) return [...args];
  return [{ ...a, question: answer.trim() } satisfies Partial<P.ActionArgs>, ...args.slice(1)];
}

/** Whether a range the server sent has the line numbers a chip shows. */
function isLineRange(r: unknown): r is P.LspRange {
  if (!r || typeof r !== "object") return false;
  const { start, end } = r as { start?: { line?: unknown }; end?: { line?: unknown } };
  return typeof start?.line === "number" && typeof end?.line === "number";
}

/** The chip of the selection a code action carries (`main.py:2-3`), or none. */
export function selectionChips(args: readonly unknown[]): string[] {
  const a = firstArg(args);
  if (!a || typeof a.uri !== "string") return [];
  return [attachmentLabel({ kind: "selection", uri: a.uri, range: isLineRange(a.range) ? a.range : null })];
}

/**
 * Arguments for a server command run from a code action: agent-ls.ask (and agent-ls.runMcpPrompt)
 * continue `sessionId`, the chat's current session when it is idle (null: a new session), so the
 * answer lands in the conversation the user sees; arguments that name a session keep it.
 */
export function argsWithSession(command: string, args: unknown[], sessionId: string | null): unknown[] {
  if ((command !== P.CMD_ASK && command !== P.CMD_RUN_MCP_PROMPT) || !sessionId) return args;
  const first = args[0];
  if (!first || typeof first !== "object" || Array.isArray(first) || "sessionId" in first) return args;
  return [{ ...(first as Record<string, unknown>), sessionId }, ...args.slice(1)];
}

/**
 * What a code action's command result shows in the chat: the actions to dispatch, and the text
 * of a prompt to run (an older server's agent-ls.runMcpPrompt returned the prompt's messages).
 * `streamed`: the command's tool call already has its card (it streamed as events).
 */
export function codeActionOutcome(
  title: string,
  command: string,
  result: unknown,
  streamed: boolean,
  noticeId: string | null,
  args: readonly unknown[],
): { actions: ChatAction[]; prompt: string | null } {
  const actions: ChatAction[] = [];
  if (!result || typeof result !== "object") return { actions, prompt: null };
  const r = result as Partial<P.ToolResultPayload> & Partial<P.AskResult> & { messages?: P.PromptMessage[] };
  if (command === P.CMD_RUN_TOOL_ACTION && typeof r.isError === "boolean") {
    // Without `apply` the call streamed as events (its card is already there); with `apply`
    // it did not: show its result as a card.
    if (!streamed) actions.push({ type: "toolResult", title: r.title || title, server: null, result: r as P.ToolResultPayload });
    if (r.applied === true) actions.push({ type: "notice", text: `${r.title || title}: applied to the editor` });
    if (r.applied === false) actions.push({ type: "notice", role: "error", text: `${r.title || title}: the editor did not apply the edit` });
  } else if (r.started === true) {
    // agent-ls.ask / agent-ls.runMcpPrompt: the turn streams as agent/event notifications.
    // Its user message goes right after the "Code action" notice, as a resumed session shows it.
    if (typeof r.text === "string" && r.text.trim()) {
      const chips = command === P.CMD_ASK ? selectionChips(args) : [];
      actions.push({ type: "codeActionPrompt", afterId: noticeId, text: r.text, attachments: chips });
    }
  } else if (command === P.CMD_RUN_MCP_PROMPT && Array.isArray(r.messages)) {
    // Older servers returned the prompt's messages instead of starting a turn.
    const text = r.messages.map((m) => m.text).join("\n\n");
    if (text.trim()) return { actions, prompt: text };
  }
  return { actions, prompt: null };
}
