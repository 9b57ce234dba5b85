/**
 * Server code actions as the extension runs them (pure helpers: unit-tested).
 *
 * "Ask agent" (agent-ls.ask, mode `ask`) carries no question: the extension asks the user
 * for one (an input box) before it executes the command, and adds it as `question`.
 */
import { attachmentLabel } from "../shared/labels";
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

/** The chip of the selection a code action carries (`main.py:2-3`), or none. */
export function selectionChips(args: readonly unknown[]): string[] {
  const a = firstArg(args);
  if (!a || typeof a.uri !== "string") return [];
  const range = a.range as P.LspRange | undefined;
  const valid = range && typeof range.start?.line === "number" && typeof range.end?.line === "number";
  return [attachmentLabel({ kind: "selection", uri: a.uri, range: valid ? range : null })];
}
