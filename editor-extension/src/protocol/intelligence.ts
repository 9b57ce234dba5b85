/**
 * The editor's language intelligence for the agent (issue 27): the server's
 * `agent/editorIntelligence` request, asked only of clients that advertise
 * `capabilities.experimental.agentLs.intelligence: true`.
 * Mirrors agent_ls/server/protocol/intelligence.py.
 */
import type { LspRange } from "./prompt";

/** An LSP position: zero-based line, UTF-16 character. */
export interface IntelligencePosition {
  line: number;
  character: number;
}

/** `agent/editorIntelligence` (server -> client). */
export interface EditorIntelligenceParams {
  /** One of INTELLIGENCE_KINDS. */
  kind: string;
  /** definition, references; diagnostics for one document (null: every document). */
  uri?: string | null;
  position?: IntelligencePosition | null;
  /** symbols: the workspace-symbol query. */
  query?: string | null;
  /** diagnostics after an edit: the document's version once the edit was applied. */
  version?: number | null;
  /** diagnostics with version: how long to wait for the checkers to report on it. */
  waitMs?: number | null;
}

export interface IntelligenceLocation {
  uri: string;
  range: LspRange;
}

export interface IntelligenceDiagnostic {
  uri: string;
  range: LspRange;
  message: string;
  /** LSP DiagnosticSeverity: 1 error, 2 warning, 3 information, 4 hint. */
  severity?: number | null;
  source?: string | null;
  code?: string | null;
}

export interface IntelligenceSymbol {
  name: string;
  /** LSP SymbolKind (12 function, 5 class, ...): VS Code's SymbolKind + 1. */
  kind: number;
  location: IntelligenceLocation;
  containerName?: string | null;
}

/** The answer: the list the kind asks for. */
export interface EditorIntelligenceResult {
  locations?: IntelligenceLocation[];
  diagnostics?: IntelligenceDiagnostic[];
  symbols?: IntelligenceSymbol[];
  /** diagnostics with version: false when the checkers had not reported within waitMs. */
  settled?: boolean;
}
