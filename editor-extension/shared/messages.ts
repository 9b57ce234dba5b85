/** Messages between the extension host and the chat webview (both directions). */
import type { ApprovalAnswer, SamplingAnswer } from "../src/protocol";
import type { ChatAction, ChatState } from "./state";

/** Host -> webview. */
export type ToWebview =
  | { type: "state"; state: ChatState }
  | { type: "action"; action: ChatAction }
  | { type: "setInput"; text: string; focus?: boolean }
  /** Scroll to an item and focus its first button (a pending prompt the user asked to see). */
  | { type: "focusItem"; id: string }
  /** The answer to an MCP App's request the webview passed on (appCall, appMessage, appContext, appOpenLink). */
  | { type: "appReply"; requestId: string; result?: Record<string, unknown>; error?: string };

/** Webview -> host. */
export type FromWebview =
  | { type: "ready" }
  | { type: "send"; text: string }
  | { type: "stop" }
  | { type: "newSession" }
  | { type: "listSessions" }
  | { type: "resumeSession"; sessionId: string }
  /** The model picker: this model for the session's next requests (one of `state.models.models`). */
  | { type: "setModel"; model: string }
  /** `scope`: with allow_session, the id of the chosen session scope. */
  | { type: "approve"; requestId: string; answer: ApprovalAnswer; scope?: string }
  | { type: "trust"; id: string; answer: "trust" | "deny" }
  | { type: "workspaceTrust"; id: string; answer: "trust" | "restricted" }
  /** The banner's button: run "Trust Workspace Settings". */
  | { type: "trustWorkspaceCommand" }
  | { type: "elicit"; id: string; action: "accept" | "decline" | "cancel"; content?: Record<string, unknown> }
  | { type: "sample"; id: string; answer: SamplingAnswer }
  | { type: "attach"; kind: "selection" | "file" | "resource" }
  | { type: "removeAttachment"; index: number }
  | { type: "copy"; text: string }
  | { type: "insert"; text: string }
  | { type: "listPrompts" }
  /** A file card's button: Review (diff), Accept / Reject (before it is applied), Keep / Revert
   * (after); `all`: every undecided file of the card's turn. */
  | { type: "fileChange"; changeId: string; action: FileChangeAction; all?: boolean; reason?: string }
  /** A tool card's "Open full output" (an output longer than a page, kept by the server). */
  | { type: "openOutput"; sessionId: string; handle: string }
  /** A user message's "Rewind to here" (issue 40): back to before that prompt (asked first). */
  | { type: "rewindTo"; itemId: string }
  /** A tool card's "Allow for this workspace" (granted) or "Undo" on something the sandbox refused. */
  | { type: "sandboxGrant"; kind: "hosts" | "writes"; value: string; granted: boolean }
  /** The Running strip's Stop: a background job of the chat's session. */
  | { type: "stopJob"; jobId: string }
  /** An MCP App's request, passed on by the chat's bridge for the frame `frameId` (the host knows
   * the frame's session and server): tools/call, ui/message, ui/update-model-context. */
  | { type: "appCall"; frameId: string; requestId: string; tool: string; arguments: Record<string, unknown> }
  | { type: "appMessage"; frameId: string; requestId: string; text: string }
  | { type: "appContext"; frameId: string; requestId: string; text: string }
  /** An app's ui/open-link: the host asks the user (modal, the app's server and the full URL) first. */
  | { type: "appOpenLink"; frameId: string; requestId: string; url: string };

export const FILE_CHANGE_ACTIONS = ["review", "accept", "reject", "keep", "revert"] as const;
export type FileChangeAction = (typeof FILE_CHANGE_ACTIONS)[number];

const FROM_TYPES = new Set([
  "ready", "send", "stop", "newSession", "listSessions", "resumeSession", "approve", "trust", "elicit",
  "attach", "removeAttachment", "copy", "insert", "listPrompts", "sample", "workspaceTrust", "trustWorkspaceCommand",
  "fileChange", "openOutput", "setModel", "rewindTo", "sandboxGrant", "stopJob", "appCall", "appMessage", "appContext",
  "appOpenLink",
]);

/** A webview message as a typed value, or null when it is not one (the webview is untrusted input). */
export function parseFromWebview(raw: unknown): FromWebview | null {
  if (!raw || typeof raw !== "object") return null;
  const m = raw as Record<string, unknown>;
  if (typeof m.type !== "string" || !FROM_TYPES.has(m.type)) return null;
  const str = (k: string) => typeof m[k] === "string";
  switch (m.type) {
    case "send":
    case "copy":
    case "insert":
      return str("text") ? (m as FromWebview) : null;
    case "resumeSession":
      return str("sessionId") ? (m as FromWebview) : null;
    case "setModel":
      return str("model") ? (m as FromWebview) : null;
    case "approve":
      return str("requestId") && ["allow_once", "allow_session", "deny"].includes(m.answer as string) &&
        (m.scope === undefined || typeof m.scope === "string") ? (m as FromWebview) : null;
    case "sample":
      return str("id") && ["allow_once", "allow_session", "deny"].includes(m.answer as string) ? (m as FromWebview) : null;
    case "trust":
      return str("id") && ["trust", "deny"].includes(m.answer as string) ? (m as FromWebview) : null;
    case "workspaceTrust":
      return str("id") && ["trust", "restricted"].includes(m.answer as string) ? (m as FromWebview) : null;
    case "elicit":
      if (m.content !== undefined && (typeof m.content !== "object" || m.content === null || Array.isArray(m.content))) return null;
      return str("id") && ["accept", "decline", "cancel"].includes(m.action as string) ? (m as FromWebview) : null;
    case "attach":
      return ["selection", "file", "resource"].includes(m.kind as string) ? (m as FromWebview) : null;
    case "removeAttachment":
      return typeof m.index === "number" ? (m as FromWebview) : null;
    case "openOutput":
      return str("sessionId") && str("handle") ? (m as FromWebview) : null;
    case "rewindTo":
      return str("itemId") ? (m as FromWebview) : null;
    case "sandboxGrant":
      return (m.kind === "hosts" || m.kind === "writes") && str("value") && typeof m.granted === "boolean" ? (m as FromWebview) : null;
    case "stopJob":
      return str("jobId") ? (m as FromWebview) : null;
    case "appCall":
      return str("frameId") && str("requestId") && str("tool") && !!m.arguments && typeof m.arguments === "object" &&
        !Array.isArray(m.arguments) ? (m as FromWebview) : null;
    case "appMessage":
    case "appContext":
      return str("frameId") && str("requestId") && str("text") ? (m as FromWebview) : null;
    case "appOpenLink":
      return str("frameId") && str("requestId") && str("url") ? (m as FromWebview) : null;
    case "fileChange":
      if (m.all !== undefined && typeof m.all !== "boolean") return null;
      if (m.reason !== undefined && typeof m.reason !== "string") return null;
      return str("changeId") && (FILE_CHANGE_ACTIONS as readonly string[]).includes(m.action as string) ? (m as FromWebview) : null;
    default:
      return m as FromWebview;
  }
}
