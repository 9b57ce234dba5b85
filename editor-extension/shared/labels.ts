/** Labels shared by the extension host and the webview (no Node or vscode imports). */
import type { CompactionEvent } from "../src/protocol";

/** What an attachment chip needs: an attachment sent with a prompt, or one a resumed message lists. */
export interface AttachmentLike {
  kind: string;
  uri?: string | null;
  server?: string | null;
  range?: { start: { line: number; character?: number }; end: { line: number; character?: number } } | null;
}

/** `main.py:2-3` for a selection, the file name for a file, `server: uri` for a resource. */
export function attachmentLabel(a: AttachmentLike): string {
  let base: string = a.kind;
  if (a.uri) {
    const last = a.uri.replace(/^.*[\\/]/, "");
    try {
      base = decodeURIComponent(last);
    } catch {
      base = last;
    }
  }
  if (a.kind === "selection" && a.range) return `${base}:${a.range.start.line + 1}-${a.range.end.line + 1}`;
  if (a.kind === "resource") return `${a.server ?? "mcp"}: ${a.uri ?? ""}`;
  return base;
}

/* ---- States and errors in words (issue 17): raw state names and raw exception text stay in
 * tooltips and logs; what the user reads comes from here. ---- */

const SERVER_STATE_LABELS: Record<string, string> = {
  starting: "Starting…",
  restarting: "Restarting…",
  connected: "Connected",
  "connected-listing-failed": "Connected, but listing failed",
  failed: "Failed",
  disabled: "Disabled",
  "awaiting-trust": "Waiting for your trust",
  untrusted: "Not trusted (you declined it)",
  "needs-sign-in": "Needs you to sign in",
  stopped: "Stopped",
};

/** `some-state` as `Some state` (a state this version does not know yet). */
function humanize(state: string): string {
  const t = state.replace(/[-_]+/g, " ").trim();
  return t ? t[0].toUpperCase() + t.slice(1) : "Unknown";
}

/** An MCP server's state in words: `awaiting-trust` -> `Waiting for your trust`. */
export function serverStateLabel(state: string): string {
  return SERVER_STATE_LABELS[state] ?? humanize(state);
}

/** Whether a server is still on its way up (the servers view counts them: "Starting 2 servers…"). */
export function serverStarting(state: string): boolean {
  return state === "starting" || state === "restarting";
}

const AGENT_STATE_LABELS: Record<string, string> = {
  starting: "Starting…",
  running: "Running",
  stopped: "Stopped",
  failed: "Could not start",
};

/** The agent-ls language server's state (the extension's client) in words. */
export function agentStateLabel(state: string): string {
  return AGENT_STATE_LABELS[state] ?? humanize(state);
}

/** A Python or JavaScript exception class at the start of a message: `KeyError: `, `httpx.ConnectError: `. */
const EXCEPTION_PREFIX = /^(?:[A-Za-z_][\w]*\.)*(?:[A-Z]\w*)?(?:Error|Exception|Exit|Interrupt|Timeout|Failure|Group)(?:\[[^\]]*\])?:\s*/;

/**
 * An error message as the user reads it: one line, no traceback, no exception class names
 * (`RuntimeError: boom` -> `boom`), at most `max` characters (cut at a word). The raw text
 * stays in the logs.
 */
export function readableErrorText(text: string, max = 300): string {
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-condition, @typescript-eslint/no-unnecessary-type-conversion -- error texts come from the server: anything may arrive
  let t = String(text ?? "").replace(/\r/g, "");
  if (/Traceback \(most recent call last\)/.test(t)) {
    // The exception line of a traceback is its last non-indented line.
    const lines = t.split("\n").filter((l) => l.trim() && !/^\s/.test(l) && !l.startsWith("Traceback"));
    t = lines.length ? lines[lines.length - 1] : "";
  }
  t = t.split("\n").map((l) => l.trim()).filter(Boolean).join(" ");
  const before = t;
  let prev: string;
  do {
    prev = t;
    t = t.replace(EXCEPTION_PREFIX, "");
  } while (t !== prev);
  const stripped = t !== before;
  // A nested one in parentheses or after a colon: `failed (ValueError: x)` -> `failed (x)`.
  t = t.replace(/([(:]\s*)(?:[A-Za-z_][\w]*\.)*(?:[A-Z]\w*)?(?:Error|Exception):\s*/g, "$1");
  t = t.trim();
  if (!t) return "Something went wrong (details are in the Agent output).";
  if (t.length > max) {
    const cut = t.slice(0, max);
    const at = cut.lastIndexOf(" ");
    t = `${(at > max * 0.6 ? cut.slice(0, at) : cut).replace(/[\s,;:.]+$/, "")}…`;
  }
  // Text that had a class name in front starts a sentence now; our own sentences are kept as written.
  return stripped ? t[0].toUpperCase() + t.slice(1) : t;
}

/** What a status entry's `error` holds (the object since typed payloads, a string before). */
export interface ServerErrorLike {
  phase?: string;
  message?: string;
  errno?: number | string | null;
  exitCode?: number | null;
  httpStatus?: number | null;
}

function sentence(s: string): string {
  const t = s.trim();
  if (!t) return t;
  const first = t[0].toUpperCase() + t.slice(1);
  return /[.!?…]$/.test(first) ? first : `${first}.`;
}

function exitText(code: number): string {
  return code < 0 ? `was stopped by signal ${-code}` : `exited with code ${code}`;
}

/**
 * Why a server is not (fully) usable, in one sentence, from the phase that failed and its
 * codes (errno, exit code, HTTP status): never the raw exception text or the stderr tail
 * (the tooltip and the server's log have those).
 */
export function serverProblemSentence(error: ServerErrorLike | string | null | undefined, state = "failed"): string {
  if (!error) return state === "needs-sign-in" ? "Sign in to use this server." : "";
  if (typeof error === "string") return sentence(readableErrorText(error.split(" | stderr:")[0], 200));
  const msg = typeof error.message === "string" ? error.message.split(" | stderr:")[0] : "";
  const errno = error.errno === undefined || error.errno === null ? null : String(error.errno);
  const exit = typeof error.exitCode === "number" ? error.exitCode : null;
  const http = typeof error.httpStatus === "number" ? error.httpStatus : null;
  const timedOut = /did not finish within ([\d.]+) ?s/.exec(msg);
  switch (error.phase) {
    case "config":
      return sentence(`Its configuration is not valid: ${readableErrorText(msg, 200)}`);
    case "trust":
      return state === "untrusted"
        ? "You did not trust this workspace server; trust it to start it."
        : "It waits for your trust: it is defined by a workspace file and runs a command on your machine.";
    case "spawn": {
      if (/^working directory/.test(msg)) return "Its working directory (\"cwd\") does not exist.";
      const cmd = /command '([^']+)'/.exec(msg)?.[1] ?? /cannot start '([^']+)'/.exec(msg)?.[1];
      if (errno === "2" || errno === "ENOENT" || /not found/.test(msg)) {
        return `The command ${cmd ? `${cmd} ` : ""}was not found: check "command" in the settings, or the PATH the editor was started with.`;
      }
      if (errno === "13" || errno === "EACCES") return `The command ${cmd ? `${cmd} ` : ""}is not executable (permission denied).`;
      return `Its process could not be started${errno ? ` (error ${errno})` : ""}.`;
    }
    case "handshake":
      if (http === 401 || http === 403) return `The server refused the connection (HTTP ${http}): sign in, or check its headers.`;
      if (http !== null) return `The server answered HTTP ${http} when agent-ls connected.`;
      if (timedOut) return `The server did not finish the MCP handshake within ${timedOut[1]} s (connectTimeout).`;
      if (exit !== null) return `The server process ${exitText(exit)} during the MCP handshake.`;
      if (/^cannot connect to/.test(msg)) return "The server's URL could not be reached.";
      if (/no protocol version in common/.test(msg)) return "The server speaks no MCP protocol version that agent-ls supports.";
      return "The MCP handshake with the server failed.";
    case "auth":
      return state === "needs-sign-in" || /sign in to connect/.test(msg) ? "Sign in to use this server." : "Signing in to the server failed.";
    case "listing":
      if (timedOut) return `Listing its tools did not finish within ${timedOut[1]} s (connectTimeout).`;
      return "Connected, but listing its tools, prompts or resources failed.";
    case "running":
      if (/died \d+ times in a row/.test(msg)) return "The server kept crashing, so agent-ls stopped restarting it.";
      if (exit !== null) return `The server process ${exitText(exit)}.`;
      return "The connection to the server was lost.";
    default:
      return sentence(readableErrorText(msg || "the server failed", 200));
  }
}

/** A listed session's name: its title (the server titles it from the first user message);
 * an untitled one from an older store by its date, never by its id. */
export function sessionLabel(s: { title: string | null; created?: number; updated?: number }): string {
  const title = (s.title ?? "").trim();
  if (title) return title;
  const when = new Date((s.created ?? s.updated ?? 0) * 1000);
  return isNaN(when.getTime()) || !s.created ? "Untitled session" : `Untitled session of ${when.toLocaleString()}`;
}

const TOOL_STATUS_LABELS: Record<string, string> = {
  running: "Running…",
  done: "Done",
  error: "Failed",
  denied: "Denied",
};

/** A glyph for a tool card's status: its meaning does not rest on colour alone. */
const TOOL_STATUS_ICONS: Record<string, string> = {
  running: "⋯",
  done: "✓",
  error: "✕",
  denied: "⊘",
};

/** A tool card's status in words (`Done`, `Failed`, `Waiting for approval`) with its glyph. */
export function toolStatusLabel(status: string, awaitingApproval = false): { icon: string; text: string } {
  if (status === "running" && awaitingApproval) return { icon: "?", text: "Waiting for approval" };
  return { icon: TOOL_STATUS_ICONS[status] ?? "•", text: TOOL_STATUS_LABELS[status] ?? humanize(status) };
}

/** The context meter's label: "38% of context", "≈38% of context" for agent-ls's own estimate (null when the
 * window is not known). */
export function contextLabel(context: { used: number; window: number; source?: string } | null | undefined): string | null {
  if (!context || !(context.window > 0)) return null;
  const approx = context.source === "estimate" ? "≈" : "";
  return `${approx}${Math.min(100, Math.round((100 * Math.max(0, context.used)) / context.window))}% of context`;
}

/** The context meter's tooltip (and accessible name): the numbers and whose count they are (issue 44). */
export function contextDetail(context: { used: number; window: number; source?: string } | null | undefined): string {
  if (!contextLabel(context) || !context) return "";
  const whose =
    context.source === "provider"
      ? ", as reported by the provider for the last answer"
      : context.source === "estimate"
        ? ", estimated by agent-ls (the provider has not reported it for this request yet)"
        : "";
  return `${context.used} of ${context.window} tokens of the model's context window in use${whose}; /compact makes room`;
}

/** What a compaction did, as the chat's notice: what was cleared or summarized, and the handles kept. */
export function compactionLabel(e: Omit<CompactionEvent, "type">): string {
  const note = e.note ? ` Note: ${e.note}.` : "";
  if (e.reason === "notice") return `Note: ${e.note ?? ""}`;
  const parts: string[] = [];
  if (e.cleared) parts.push(`cleared ${e.cleared} old tool result${e.cleared === 1 ? "" : "s"}`);
  if (e.summarized) parts.push(`summarized ${e.summarized} earlier message${e.summarized === 1 ? "" : "s"}`);
  const shown = e.handles.slice(0, 8).join(", ") + (e.handles.length > 8 ? ", …" : "");
  const kept = e.handles.length ? ` Kept whole, readable by the agent: ${shown}.` : "";
  const before = contextLabel({ used: e.tokensBefore, window: e.contextWindow });
  const after = contextLabel({ used: e.tokensAfter, window: e.contextWindow });
  const meter = before && after ? ` Context ${before.replace(" of context", "")} → ${after}.` : "";
  const why = e.reason === "manual" ? "Compacted on /compact" : "Compacted the conversation to fit the model's context";
  return `${why}: ${parts.join(" and ") || "nothing to clear"}.${kept}${meter}${note}`;
}

const PERMISSION_LABELS: Record<string, string> = {
  camera: "the camera", microphone: "the microphone", geolocation: "your location", clipboardWrite: "writing to the clipboard",
};

/** The card's line for an MCP App that asked for browser permissions agent-ls never grants (null: none asked). */
export function appPermissionsLine(permissions: readonly string[] | undefined): string | null {
  const names = (permissions ?? []).map((p) => PERMISSION_LABELS[p]).filter((n): n is string => !!n);
  if (!names.length) return null;
  const list = names.length === 1 ? names[0] : `${names.slice(0, -1).join(", ")} and ${names[names.length - 1]}`;
  return `This app asked for ${list}; agent-ls does not grant ${names.length === 1 ? "it" : "them"} to apps, so the parts that need ${names.length === 1 ? "it" : "them"} will not work.`;
}
