/**
 * agent-ls protocol: the arguments and results of the agent-ls.* commands the server's code
 * actions carry. Mirrors agent_ls/server/protocol/commands.py.
 */
import type { LspRange } from "./prompt";

/** Result of agent-ls.ask and agent-ls.runMcpPrompt: a turn started in the background. */
export interface AskResult {
  sessionId: string;
  started: boolean;
  /** The user message the turn was started with. */
  text: string;
}

/** The object argument every agent-ls.* command carries (built by the server's code actions). */
export interface ActionArgs {
  uri: string;
  range: LspRange;
  text?: string;
  languageId?: string;
  /** agent-ls.ask: `ask`, `fix` or `explain`. */
  mode?: string;
  diagnostics?: string;
  /** agent-ls.ask, mode `ask`: the user's question (the extension asks for it when absent). */
  question?: string | null;
  /** Continue this chat session (a new one when absent). */
  sessionId?: string | null;
  server?: string | null;
  name?: string | null;
  argument?: string | null;
  index?: number | null;
  title?: string | null;
}

/** The optional argument of agent-ls.trustWorkspace: one folder to ask about (the argument may
 * also be the path itself). */
export interface TrustWorkspaceArgs {
  folder: string;
}

/** agent-ls.trustWorkspace: the user's answer about one folder (null: no decision). */
export interface FolderDecision {
  folder: string;
  trusted: boolean | null;
}

/** agent-ls.trustWorkspace: the user's answer about one workspace MCP server (null: no decision). */
export interface ServerDecision {
  server: string;
  folder: string;
  trusted: boolean | null;
}

/** Result of agent-ls.trustWorkspace: what was asked, and the answers. */
export interface TrustWorkspaceCommandResult {
  folders: FolderDecision[];
  servers: ServerDecision[];
}
