/** Pure formatting helpers (no vscode import, so unit tests can load them). */
import * as os from "os";
import * as path from "path";
import { commandLine, pairLines, visible } from "../shared/commandLine";
import type * as P from "./protocol";

import { agentStateLabel, readableErrorText, serverProblemSentence, serverStarting, serverStateLabel } from "../shared/labels";

export { attachmentLabel, serverProblemSentence, serverStateLabel } from "../shared/labels";

/** The state in words (lower case, as VS Code's descriptions are), then the tool count when it
 * connected: `connected · 3 tools`, `waiting for your trust`, `starting…`. */
export function serverDescription(s: P.ServerStatus): string {
  const label = serverStateLabel(s.state);
  const words = label[0].toLowerCase() + label.slice(1);
  // a stdio server in the OS sandbox is marked (issue 47); the tooltip says how it is confined
  const boxed = typeof s.sandbox === "string" && s.sandbox ? " · sandboxed" : "";
  if (s.state !== "connected" && s.state !== "connected-listing-failed") return words + boxed;
  const n = typeof s.toolCount === "number" ? s.toolCount : (s.tools?.length ?? 0);
  return `${words} · ${n} tool${n === 1 ? "" : "s"}${boxed}`;
}

export function serverContextValue(s: P.ServerStatus): string {
  let v = `server.${s.state}`;
  if (s.state === "awaiting-trust" || s.state === "untrusted") v += ".untrusted";
  if (s.auth?.state) v += `.auth-${s.auth.state}`;
  const auth = authActions(s);
  if (auth.signIn) v += ".can-sign-in";
  if (auth.signOut) v += ".can-sign-out";
  return v;
}

/** A server's last error as one line: `phase: message (errno 2)`. */
export function serverErrorText(e: P.ServerError | string | null | undefined): string {
  if (!e) return "";
  if (typeof e === "string") return e;
  const extra: string[] = [];
  // (a JSON null reads as absent)
  const wire: P.Wire<P.ServerError> = e;
  if (wire.errno != null) extra.push(`errno ${String(wire.errno)}`);
  if (wire.exitCode != null) extra.push(`exit code ${wire.exitCode}`);
  if (wire.httpStatus != null) extra.push(`HTTP ${wire.httpStatus}`);
  const msg = typeof e.message === "string" ? e.message : JSON.stringify(e);
  return `${e.phase ? `${e.phase}: ` : ""}${msg}${extra.length ? ` (${extra.join(", ")})` : ""}`;
}

/** `signed-in (until 2026-12-01 10:00 UTC)`, `needs-sign-in (the token was revoked)`. */
export function authText(a: P.AuthStatus): string {
  const parts: string[] = [];
  if (typeof a.expiresAt === "number" && Number.isFinite(a.expiresAt)) {
    parts.push(`until ${new Date(a.expiresAt * 1000).toISOString().replace("T", " ").slice(0, 16)} UTC`);
  }
  if (a.reason) parts.push(a.reason);
  return `${a.state}${parts.length ? ` (${parts.join("; ")})` : ""}`;
}

/** Which of Sign in / Sign out a server offers, by its state and OAuth state. */
export function authActions(s: P.ServerStatus): { signIn: boolean; signOut: boolean } {
  const auth = s.auth?.state;
  return {
    signIn: s.state === "needs-sign-in" || auth === "needs-sign-in" || auth === "failed",
    signOut: auth === "signed-in" || auth === "failed",
  };
}

/** Whether the servers view shows a server's last error as a row of its own (it is not connected). */
export function serverErrorRow(s: P.ServerStatus): boolean {
  return !!s.error && s.state !== "connected";
}

/** Whether the servers view opens a server's row to show what is wrong (and the fixes). */
export function serverNeedsAttention(s: P.ServerStatus): boolean {
  return serverErrorRow(s) || s.state === "needs-sign-in";
}

/**
 * The line above the servers view while something is on its way: the agent-ls server itself
 * starting, or MCP servers starting (`Starting 2 servers… (github, time)`); undefined otherwise.
 */
export function serversViewMessage(agentState: string | undefined, servers: readonly P.ServerStatus[]): string | undefined {
  if (agentState === "starting") return "Starting the agent-ls server…";
  const starting = servers.filter((s) => serverStarting(s.state)).map((s) => s.name).sort((a, b) => a.localeCompare(b));
  if (starting.length === 0) return undefined;
  const names = starting.length <= 3 ? starting.join(", ") : `${starting.slice(0, 3).join(", ")} and ${starting.length - 3} more`;
  return `Starting ${starting.length} server${starting.length === 1 ? "" : "s"}… (${names})`;
}

/** A command on a failed server's row that helps fix it (the servers view shows them as child rows). */
export interface ServerFix {
  command: string;
  title: string;
  icon: string;
}

/**
 * What the user can do about a server that is not (fully) usable, most useful first, by the
 * phase that failed: sign in, trust, edit its entry, run the doctor, read its log, restart.
 */
export function serverFixes(s: P.ServerStatus): ServerFix[] {
  if (!serverNeedsAttention(s)) return [];
  const e = typeof s.error === "object" && s.error ? s.error : null;
  const phase = e?.phase ?? (s.state === "needs-sign-in" ? "auth" : undefined);
  const http = typeof e?.httpStatus === "number" ? e.httpStatus : null;
  const out: ServerFix[] = [];
  const add = (command: string, title: string, icon: string) => {
    if (!out.some((f) => f.command === command)) out.push({ command, title, icon });
  };
  if (authActions(s).signIn || phase === "auth" || http === 401 || http === 403) add("agentLs.signIn", "Sign in to this server", "sign-in");
  if (s.state === "awaiting-trust" || s.state === "untrusted") add("agentLs.trustServer", "Review and trust this server…", "shield");
  if (phase !== "trust" && phase !== "auth") add("agentLs.serverDoctor", "Run the doctor on this server", "debug-console");
  if (s.source) add("agentLs.editServerConfig", "Edit its configuration", "edit");
  if (phase !== "config" && phase !== "trust") add("agentLs.showServerLog", "Show the server log", "output");
  if (phase === "running" || phase === "handshake" || phase === "listing" || phase === "spawn") add("agentLs.restartServer", "Restart the server", "debug-restart");
  return out;
}

export function serverTooltip(s: P.ServerStatus): string {
  const lines = [`${s.name}: ${serverStateLabel(s.state)} (state: ${s.state})`];
  if (serverNeedsAttention(s)) lines.push(serverProblemSentence(s.error, s.state));
  if (s.transport) lines.push(`transport: ${s.transport}${s.scope ? ` (${s.scope} scope)` : ""}`);
  if (s.source) lines.push(`defined in: ${s.source}`);
  if (typeof s.serverInfo === "string" && s.serverInfo) lines.push(`server: ${s.serverInfo}`);
  if (s.protocolVersion) lines.push(`protocol: MCP ${s.protocolVersion}`);
  if (s.auth) lines.push(`auth: ${authText(s.auth)}`);
  if (typeof s.sandbox === "string" && s.sandbox) lines.push(`OS sandbox: ${s.sandbox}`);
  if (s.error) lines.push(`last error: ${serverErrorText(s.error)}`);
  const tail = (s.stderrTail ?? []).slice(-5);
  if (tail.length) lines.push("stderr (last lines):", ...tail.map((l) => `  ${l}`));
  return lines.join("\n");
}

export function statusText(opts: { client: string; busy: boolean; connected: number; total: number }): string {
  if (opts.client === "failed") return "$(error) Agent";
  if (opts.client === "starting") return "$(loading~spin) Agent";
  if (opts.client === "stopped") return "$(circle-slash) Agent";
  const mcp = `MCP ${opts.connected}/${opts.total}`;
  return opts.busy ? `$(loading~spin) Agent working · ${mcp}` : `$(hubot) ${mcp}`;
}

/**
 * The status bar's tooltip: the agent-ls server's state and each MCP server's state in words
 * (a failed one with its reason in one sentence); raw state names and exception text stay out.
 */
export function statusTooltip(opts: {
  client: string;
  error?: string | null;
  busy: boolean;
  servers: readonly P.ServerStatus[];
}): string {
  if (opts.client === "failed") {
    const why = readableErrorText(opts.error || "see the Agent output");
    return `agent-ls server: ${agentStateLabel("failed")}. ${why[0].toUpperCase()}${why.slice(1)}`;
  }
  const head = `agent-ls server: ${agentStateLabel(opts.client)}${opts.busy ? ", the agent is working" : ""}`;
  const lines = opts.servers.map((s) => {
    const why = serverNeedsAttention(s) ? serverProblemSentence(s.error, s.state) : "";
    return `${s.name}: ${serverDescription(s)}${why ? `. ${why}` : ""}`;
  });
  return [head, ...lines].join("\n");
}

/** The user settings file, as the server computes it (platformdirs' user config dir). */
export function userSettingsPath(env: NodeJS.ProcessEnv, platform = process.platform, home = os.homedir()): string {
  if (env.AGENT_LS_USER_SETTINGS) return env.AGENT_LS_USER_SETTINGS;
  if (env.AGENT_LS_CONFIG_DIR) return path.join(env.AGENT_LS_CONFIG_DIR, "settings.json");
  let dir: string;
  if (platform === "darwin") dir = path.join(home, "Library", "Application Support", "agent-ls");
  else if (platform === "win32") dir = path.join(env.LOCALAPPDATA || path.join(home, "AppData", "Local"), "agent-ls", "agent-ls");
  else dir = path.join(env.XDG_CONFIG_HOME || path.join(home, ".config"), "agent-ls");
  return path.join(dir, "settings.json");
}


/** Whether a folder's settings are not in effect (the servers view and the chat show it). */
export function workspaceRestricted(w: P.WorkspaceStatusPayload): boolean {
  return w.state === "restricted" || w.state === "declined" || w.state === "editor-restricted";
}

const WORKSPACE_STATE_TEXT: Record<string, string> = {
  trusted: "trusted",
  restricted: "waiting for your decision",
  declined: "you kept it restricted",
  "editor-restricted": "VS Code has not trusted this folder",
  "nothing-to-trust": "nothing needs trust",
};

/** A workspace trust state in words (the raw state goes in the tooltip only). */
export function workspaceStateText(state: string): string {
  return WORKSPACE_STATE_TEXT[state] ?? state;
}

const WORKSPACE_STATE_SHORT: Record<string, string> = {
  restricted: "needs your trust",
  declined: "kept restricted",
  "editor-restricted": "restricted by VS Code",
};

/** The servers view's row of a folder whose settings are not in effect: short, so that it fits a
 * narrow side bar (issue 44); what it means and what to do are the rows under it. */
export function workspaceRowLabel(w: P.WorkspaceStatusPayload): string {
  return `Workspace ${path.basename(w.folder) || w.folder}`;
}

/** The short state next to the folder's row (`needs your trust`, `kept restricted`). */
export function workspaceRowDescription(state: string): string {
  return WORKSPACE_STATE_SHORT[state] ?? workspaceStateText(state);
}

/**
 * Issue 44: the servers view is a tree whose rows do not wrap (one line each, cut with an ellipsis
 * when wider than the side bar). A sentence the user must read is laid out on rows of at most
 * `width` characters (a side bar at its default ~300 px holds about 34 on a nested row), broken
 * between words only: a word longer than `width` gets a row of its own, whole.
 */
export const TREE_LINE_WIDTH = 30;

export function wrapWords(text: string, width = TREE_LINE_WIDTH): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/).filter((w) => w.length > 0)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else {
      line = line ? `${line} ${word}` : word;
    }
  }
  if (line) lines.push(line);
  return lines;
}

/**
 * What the server itself said when it failed (issue 44: the reason quotes it): the last line it
 * wrote to stderr (`BROKEN_API_KEY is not set`), else the stderr agent-ls kept in the error's
 * message; null when it said nothing (the reason sentence and the log are all there is).
 */
export function serverOwnMessage(s: Pick<P.ServerStatus, "error" | "stderrTail">): string | null {
  const fromTail = (s.stderrTail ?? []).map((l) => l.trim()).filter((l) => l.length > 0 && !/^Traceback \(most recent call last\)/.test(l));
  let last = fromTail.at(-1);
  if (!last) {
    const msg = typeof s.error === "string" ? s.error : typeof s.error?.message === "string" ? s.error.message : "";
    const said = msg.split(" | stderr: ").at(1);
    last = said?.split(" / ").map((l) => l.trim()).filter((l) => l.length > 0).at(-1);
  }
  if (!last) return null;
  return last.length > 300 ? `${last.slice(0, 299)}…` : last;
}

/**
 * Issue 44: what in the servers view needs the user (a server that failed, waits for trust or for a
 * sign-in), as stable keys. The view starts collapsed (the chat gets the height) and is revealed
 * when a key appears that was not there before. A folder whose settings wait for a trust decision
 * is not one, nor are its servers waiting for that answer: the question lives in the chat's banner
 * (the view would take the card's height).
 */
export function attentionKeys(servers: readonly P.ServerStatus[], workspaces: readonly P.WorkspaceStatusPayload[] = []): string[] {
  const keys: string[] = [];
  // while a folder's trust question waits in the chat's banner, its servers wait for that answer
  const askedInChat = workspaces.some((w) => w.state === "restricted");
  for (const s of servers) {
    // (a server on its way again keeps its last error: it needs the user once it failed again)
    const failed = serverNeedsAttention(s) && !serverStarting(s.state) && s.state !== "awaiting-trust";
    if (failed || (s.state === "awaiting-trust" && !askedInChat)) keys.push(`server:${s.name}`);
  }
  return keys;
}

/** The keys of `now` that were not in `before` (what newly needs the user). */
export function newAttention(before: ReadonlySet<string>, now: readonly string[]): string[] {
  return now.filter((k) => !before.has(k));
}

/** One MCP server entry as lines of text: the full command line or URL, cwd, env, headers, every
 * `oauth` setting and every other non-cosmetic key. */
export function trustEntryLines(e: P.TrustServerParams): string[] {
  const lines = [`${visible(e.server)} (${visible(e.transport ?? "stdio")}) from ${visible(e.source)}`];
  const wire: P.Wire<P.TrustServerParams> = e;
  if (e.command) lines.push(`  runs: ${commandLine(e.command, wire.args ?? [])}`);
  if (e.cwd) lines.push(`  in: ${visible(e.cwd)}`);
  if (e.url) lines.push(`  connects to: ${visible(e.url)}`);
  for (const line of pairLines(e.env ?? {}, "=")) lines.push(`  env: ${line}`);
  for (const line of pairLines(e.headers ?? {}, ": ")) lines.push(`  header: ${line}`);
  for (const line of pairLines(e.oauth ?? {}, ": ")) lines.push(`  oauth.${line}`);
  if (e.refused?.length) lines.push(`  refused in a workspace file (the server does not start): ${e.refused.map((k) => `oauth.${visible(k)}`).join(", ")}`);
  for (const line of pairLines(e.options ?? {}, ": ")) lines.push(`  ${line}`);
  if (e.variables?.length) lines.push(`  receives the values of: ${e.variables.map(visible).join(", ")}`);
  for (const c of e.changes ?? []) lines.push(`  changed since you trusted it: ${visible(c)}`);
  return lines;
}

/** The detail of the "Trust the workspace?" dialog: everything the folders ask for. */
export function workspaceTrustDetail(workspaces: readonly P.WorkspaceStatusPayload[]): string {
  const out: string[] = [];
  for (const w of workspaces) {
    out.push(`${visible(w.folder)}: ${w.message}`);
    if (w.servers?.length) {
      out.push("", "MCP servers it defines (they start when you trust it):");
      for (const e of w.servers) out.push(...trustEntryLines(e));
    }
    if (w.ignored?.length) {
      out.push("", "Settings that need your trust:");
      for (const s of w.ignored) out.push(`  ${visible(s.key)} = ${visible(s.value)} (${s.why}; ${visible(s.source)})`);
    }
    out.push("");
  }
  return out.join("\n").trim();
}

/** Where a server's entry (`"<name>": {`) starts in a settings file's text; -1 when not found. */
export function serverEntryOffset(text: string, name: string): number {
  const key = JSON.stringify(name).replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
  const m = new RegExp(`${key}\\s*:\\s*\\{`).exec(text);
  return m ? m.index : -1;
}
