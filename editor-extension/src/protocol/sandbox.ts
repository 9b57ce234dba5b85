/**
 * The sandbox's workspace grants (issue 47): `agent/sandboxGrants` and `agent/setSandboxGrant`.
 * Mirrors agent_ls/server/protocol/sandbox.py. A grant is the user's decision, kept outside the
 * workspace (host-state.json): a host the network proxy lets through, or a folder sandboxed
 * commands may write.
 */

/** `agent/setSandboxGrant`: add (`granted`) or remove one grant for a workspace folder. */
export interface SetSandboxGrantParams {
  /** "hosts" (a host name or `*.domain` pattern) or "writes" (an absolute folder). */
  kind: "hosts" | "writes";
  value: string;
  granted: boolean;
  /** The workspace folder (a path); default the first one. */
  folder?: string | null;
}

/** The grants of one workspace folder. */
export interface SandboxGrantsPayload {
  folder: string;
  hosts: string[];
  writes: string[];
}

/** `agent/sandboxGrants` and `agent/setSandboxGrant`: every folder's grants, and whether commands
 * run in the sandbox at all (the chat's header says so when they do not). */
export interface SandboxGrantsResult {
  folders: SandboxGrantsPayload[];
  /** `agent.sandbox.enabled` (false: the user turned it off). */
  enabled?: boolean;
  /** "bubblewrap", "landlock", "sandbox-exec" or "none" (no mechanism works here). */
  mechanism?: string;
  /** The sandbox's state in one sentence. */
  message?: string;
}

/** Where a command ran (`tool_call_finished`'s `sandbox`), for the mark on its card. */
export interface SandboxMark {
  /** "sandboxed", "outside" (outside the sandbox, as the user approved) or "unsandboxed" (no mechanism here). */
  mode: "sandboxed" | "outside" | "unsandboxed";
  mechanism: string;
  /** "off" (no network) or "proxy" (only through agent-ls's proxy), when sandboxed. */
  network: string;
  /** Hosts the proxy refused during the call. */
  hosts: string[];
  /** Folders the command failed to write (read-only in the sandbox). */
  paths: string[];
}
