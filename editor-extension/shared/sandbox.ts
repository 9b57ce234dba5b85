/**
 * The OS sandbox in the chat (issue 47): the mark on a command's tool card (where it ran, its
 * network), what the sandbox refused, and the user's grants for the workspace ("Allow for this
 * workspace", undone with "Undo"). Shared by the extension host and the webview.
 */
import type { SandboxGrantsResult, SandboxMark } from "../src/protocol";
import type { SandboxGrants } from "./items";

/** A tool_call_finished's `sandbox` as the card shows it (a malformed one is dropped: the server is a separate process). */
export function sandboxMark(raw: unknown): SandboxMark | null {
  if (!raw || typeof raw !== "object") return null;
  const m = raw as Record<string, unknown>;
  if (m.mode !== "sandboxed" && m.mode !== "outside" && m.mode !== "unsandboxed") return null;
  const strings = (v: unknown) => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
  return {
    mode: m.mode,
    mechanism: typeof m.mechanism === "string" ? m.mechanism : "",
    network: typeof m.network === "string" ? m.network : "",
    hosts: strings(m.hosts),
    paths: strings(m.paths),
  };
}

/** The mark in words (never colour alone): a short label for the card's summary line, and the
 * sentence a screen reader and the tooltip give. */
export function sandboxLabel(mark: SandboxMark): { short: string; long: string } {
  switch (mark.mode) {
    case "outside":
      return { short: "outside the sandbox", long: "Ran outside the OS sandbox, with your full rights, as you approved" };
    case "unsandboxed":
      return { short: "no sandbox", long: "Ran without an OS sandbox (none is available here), as you approved" };
    default: {
      const network = mark.network === "off" ? "network off" : "network via proxy";
      const how = mark.mechanism ? ` (${mark.mechanism})` : "";
      return {
        short: `sandboxed · ${network}`,
        long: `Ran in the OS sandbox${how}: writes only in the workspace, temp and caches; ${
          mark.network === "off" ? "no network" : "network only through agent-ls's proxy"}`,
      };
    }
  }
}

/** One thing the sandbox refused during a call, with what a grant would allow. */
export interface SandboxRefusal {
  kind: "hosts" | "writes";
  value: string;
  /** The refusal in words: `Writing in /home/me/.config was refused`. */
  text: string;
  /** The user already allowed it for this workspace (the card offers Undo). */
  granted: boolean;
}

/** What the sandbox refused during a call (the card offers "Allow for this workspace" on each). */
export function sandboxRefusals(mark: SandboxMark | null | undefined, grants: SandboxGrants | null | undefined): SandboxRefusal[] {
  if (!mark || mark.mode !== "sandboxed") return [];
  const has = (list: string[] | undefined, v: string) => (list ?? []).includes(v);
  return [
    ...mark.paths.map((p): SandboxRefusal => ({ kind: "writes", value: p, text: `Writing in ${p} was refused by the sandbox`, granted: has(grants?.writes, p) })),
    // with the network off there is no proxy to let a host through: nothing to offer
    ...(mark.network === "off" ? [] : mark.hosts).map((h): SandboxRefusal => ({ kind: "hosts", value: h, text: `The connection to ${h} was refused by the sandbox`, granted: has(grants?.hosts, h) })),
  ];
}

/** The grants of every workspace folder, together, and the header's note when commands do not
 * run in a sandbox (agent/sandboxGrants). */
export function mergedGrants(r: SandboxGrantsResult): SandboxGrants {
  const uniq = (xs: string[]) => [...new Set(xs)];
  const unconfined = r.enabled === false || r.mechanism === "none";
  const note = unconfined ? (r.message ? r.message[0].toUpperCase() + r.message.slice(1) : "Commands do not run in an OS sandbox.") : null;
  return { hosts: uniq(r.folders.flatMap((f) => f.hosts)), writes: uniq(r.folders.flatMap((f) => f.writes)), note };
}
