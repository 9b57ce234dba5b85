/** Error helpers with no vscode import (unit tests load them). */
import { readableErrorText } from "../shared/labels";

/** JSON-RPC "internal error": a bug in the agent-ls server, not something the user can fix. */
const INTERNAL_ERROR = -32603;

/** An error's message as it came (exception class names, tracebacks and all): for logs only. */
export function rawErrorText(e: unknown): string {
  if (e instanceof Error) return e.message;
  if (e && typeof e === "object" && "message" in e && typeof e.message === "string") return e.message;
  return String(e);
}

/**
 * An error's message as the user reads it (notifications, the chat, the status bar): one line,
 * no traceback or exception class names; an internal error of the server says where the details are.
 */
export function errorText(e: unknown): string {
  const text = readableErrorText(rawErrorText(e), 1000);
  return errorCode(e) === INTERNAL_ERROR ? `${text} (an internal error of the agent-ls server: details are in the Agent output)` : text;
}

export function errorCode(e: unknown): number | undefined {
  if (e && typeof e === "object" && "code" in e && typeof e.code === "number") return e.code;
  return undefined;
}
