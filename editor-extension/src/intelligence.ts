/**
 * The editor's language intelligence for the agent (issue 27): answers the server's
 * `agent/editorIntelligence` with what VS Code's own language features know, through its
 * providers: `languages.getDiagnostics`, `vscode.executeDefinitionProvider`,
 * `vscode.executeReferenceProvider`, `vscode.executeWorkspaceSymbolProvider`. Advertises
 * `experimental.agentLs.intelligence` so that the server offers the agent its tools.
 *
 * After an edit the server asks for a document's diagnostics with the document's `version`: the
 * answer waits (at most `waitMs`) until the checkers reported on that version or a later one
 * (an `onDidChangeDiagnostics` for the document while it had that version) and then stayed quiet
 * for a moment; `settled: false` when they did not. A checker whose problems did not change
 * sends no event at all (VS Code's TypeScript after an edit of a clean file): where the editor
 * can ask the document's checker directly ({@link EditorApi.check}: TypeScript's
 * `semanticDiagnosticsSync`/`syntacticDiagnosticsSync` through `typescript.tsserverRequest`),
 * the answer is also settled once that check of the current text found exactly the errors and
 * warnings VS Code already shows for it, and no event came for QUIET_MS after it.
 *
 * The editor API is behind {@link EditorApi} so that the mapping and the waiting are unit-tested
 * with a stand-in (test/intelligence.test.ts).
 */
import * as vscode from "vscode";
import type { LanguageClient, StaticFeature } from "vscode-languageclient/node";
import { agentLsCapability } from "./capability";
import { fact } from "./factLog";
import * as P from "./protocol";

/** Answers list at most this many diagnostics (the server pages what it shows the model). */
export const MAX_DIAGNOSTICS = 5000;
/** After the checkers reported on a version: how long they must stay quiet. */
export const QUIET_MS = 300;

interface PositionLike {
  line: number;
  character: number;
}
interface RangeLike {
  start: PositionLike;
  end: PositionLike;
}
interface UriLike {
  toString(): string;
}
export interface LocationLike {
  uri: UriLike;
  range: RangeLike;
}
export interface LocationLinkLike {
  targetUri: UriLike;
  targetRange: RangeLike;
  targetSelectionRange?: RangeLike;
}
export interface DiagnosticLike {
  range: RangeLike;
  message: string;
  /** VS Code's DiagnosticSeverity: 0 error .. 3 hint. */
  severity?: number;
  source?: string;
  code?: string | number | { value: string | number } | null;
}
export interface SymbolLike {
  name: string;
  /** VS Code's SymbolKind (0-based: LSP's minus one). */
  kind: number;
  containerName?: string;
  location: LocationLike;
}

/** The part of the editor API the answers use. */
export interface EditorApi {
  diagnostics(uri: string): DiagnosticLike[];
  allDiagnostics(): [UriLike, DiagnosticLike[]][];
  definitions(uri: string, position: PositionLike): Promise<(LocationLike | LocationLinkLike)[]>;
  references(uri: string, position: PositionLike): Promise<LocationLike[]>;
  symbols(query: string): Promise<SymbolLike[]>;
  /** The version of the open document, or undefined. */
  version(uri: string): number | undefined;
  onDidChangeDiagnostics(listener: (uris: readonly UriLike[]) => void): { dispose(): unknown };
  /** The editor's spelling of a URI (the server's may encode characters differently). */
  normalize?(uri: string): string;
  /** Asks the document's checker for the errors and warnings of its current text (keys of
   * {@link problemKey}), or undefined when the editor cannot ask it (another language, no
   * such command, an error). */
  check?(uri: string): Promise<string[] | undefined>;
}

/** What makes a checker's problem the same in its own answer and in VS Code's list. */
export function problemKey(line: number, code: string | number | undefined | null, message: string): string {
  return `${line}:${code ?? ""}:${message}`;
}

function shownKeys(list: DiagnosticLike[], source: string): string[] {
  return list
    .filter((d) => d.source === source && (d.severity ?? 0) <= 1)
    .map((d) => problemKey(d.range.start.line, typeof d.code === "object" && d.code !== null ? d.code.value : d.code, d.message))
    .sort();
}

/** The source VS Code's TypeScript support gives its diagnostics. */
export const TS_SOURCE = "ts";

function range(r: RangeLike): P.LspRange {
  return { start: { line: r.start.line, character: r.start.character }, end: { line: r.end.line, character: r.end.character } };
}

export function toLocation(l: LocationLike | LocationLinkLike): P.IntelligenceLocation {
  if ("targetUri" in l) return { uri: l.targetUri.toString(), range: range(l.targetSelectionRange ?? l.targetRange) };
  return { uri: l.uri.toString(), range: range(l.range) };
}

export function toDiagnostic(uri: string, d: DiagnosticLike): P.IntelligenceDiagnostic {
  const code = d.code === undefined || d.code === null ? null : typeof d.code === "object" ? d.code.value : d.code;
  return {
    uri,
    range: range(d.range),
    message: d.message,
    severity: typeof d.severity === "number" ? d.severity + 1 : null,
    source: d.source ?? null,
    code: code === null ? null : String(code),
  };
}

export function toSymbol(s: SymbolLike): P.IntelligenceSymbol {
  return { name: s.name, kind: s.kind + 1, location: toLocation(s.location), containerName: s.containerName || null };
}

/** Where the checkers last reported on each document (and at which version of it). */
class DiagnosticsWatch {
  private readonly last = new Map<string, { version: number | undefined; at: number }>();
  private readonly waiters = new Set<() => void>();

  constructor(private readonly api: EditorApi) {}

  changed(uris: readonly UriLike[]): void {
    const now = Date.now();
    for (const uri of uris) {
      const key = uri.toString();
      this.last.set(key, { version: this.api.version(key), at: now });
    }
    for (const wake of [...this.waiters]) wake();
  }

  /** True once the checkers reported on `version` (or later) of `uri` and were quiet for QUIET_MS,
   * or once the document's checker (EditorApi.check) found what VS Code already shows and no
   * report came for QUIET_MS after that. */
  async settled(uri: string, version: number, waitMs: number, token?: vscode.CancellationToken): Promise<boolean> {
    const deadline = Date.now() + Math.max(0, waitMs);
    let agreedAt: number | undefined;
    const checking = this.api.check?.(uri).then(
      (found) => {
        if (found !== undefined && found.sort().join("\n") === shownKeys(this.api.diagnostics(uri), TS_SOURCE).join("\n")) {
          agreedAt = Date.now();
        }
        for (const wake of [...this.waiters]) wake();
      },
      () => undefined,
    );
    void checking;
    for (;;) {
      if (token?.isCancellationRequested) return false;
      const now = Date.now();
      const last = this.last.get(uri);
      const reported = last !== undefined && last.version !== undefined && last.version >= version;
      if (reported && now - last.at >= QUIET_MS) return true;
      const agreed = !reported && agreedAt !== undefined && (last === undefined || last.at <= agreedAt) ? agreedAt : undefined;
      if (agreed !== undefined && now - agreed >= QUIET_MS) return true;
      if (now >= deadline) return reported;
      const quietFrom = reported ? last.at : agreed;
      const until = quietFrom !== undefined ? Math.min(quietFrom + QUIET_MS, deadline) : deadline;
      await new Promise<void>((resolve) => {
        const wake = (): void => {
          clearTimeout(timer);
          this.waiters.delete(wake);
          resolve();
        };
        const timer = setTimeout(wake, Math.max(1, until - now));
        this.waiters.add(wake);
      });
    }
  }
}

/** Answers `agent/editorIntelligence`. */
export class EditorIntelligence {
  private readonly watch: DiagnosticsWatch;
  private readonly subscription: { dispose(): unknown };

  constructor(private readonly api: EditorApi = vscodeApi()) {
    this.watch = new DiagnosticsWatch(api);
    this.subscription = api.onDidChangeDiagnostics((uris) => this.watch.changed(uris));
  }

  async answer(params: P.EditorIntelligenceParams, token?: vscode.CancellationToken): Promise<P.EditorIntelligenceResult> {
    const started = Date.now();
    const result = await this.ask(params, token);
    const count = (result.locations ?? result.diagnostics ?? result.symbols ?? []).length;
    fact(`intelligence ${params.kind} ${count} ${Date.now() - started}ms`);
    return result;
  }

  private async ask(params: P.EditorIntelligenceParams, token?: vscode.CancellationToken): Promise<P.EditorIntelligenceResult> {
    switch (params.kind) {
      case "diagnostics": {
        if (!params.uri) {
          const out: P.IntelligenceDiagnostic[] = [];
          for (const [uri, list] of this.api.allDiagnostics()) {
            for (const d of list) if (out.length < MAX_DIAGNOSTICS) out.push(toDiagnostic(uri.toString(), d));
          }
          return { diagnostics: out };
        }
        const uri = params.uri;
        const settled =
          typeof params.version === "number"
            ? await this.watch.settled(this.api.normalize?.(uri) ?? uri, params.version, params.waitMs ?? 3000, token)
            : true;
        return { diagnostics: this.api.diagnostics(uri).slice(0, MAX_DIAGNOSTICS).map((d) => toDiagnostic(uri, d)), settled };
      }
      case "definition":
        return { locations: (await this.api.definitions(need(params.uri, "uri"), need(params.position, "position"))).map(toLocation) };
      case "references":
        return { locations: (await this.api.references(need(params.uri, "uri"), need(params.position, "position"))).map(toLocation) };
      case "symbols":
        return { symbols: (await this.api.symbols(params.query ?? "")).map(toSymbol) };
      default:
        throw new Error(`unknown kind ${JSON.stringify(params.kind)} (expected one of ${P.INTELLIGENCE_KINDS.join(", ")})`);
    }
  }

  /** Registers the request and the capability on a new client. */
  bind(client: LanguageClient): vscode.Disposable[] {
    (client as Partial<Pick<LanguageClient, "registerFeature">>).registerFeature?.(intelligenceCapabilityFeature());
    return [
      client.onRequest(P.EDITOR_INTELLIGENCE, (params: P.EditorIntelligenceParams, token: vscode.CancellationToken) =>
        this.answer(params, token),
      ),
    ];
  }

  dispose(): void {
    this.subscription.dispose();
  }
}

function need<T>(value: T | null | undefined, name: string): T {
  if (value === null || value === undefined) throw new Error(`${name} is required for this kind`);
  return value;
}

/** Advertises `experimental.agentLs.intelligence`. */
export function intelligenceCapabilityFeature(): StaticFeature {
  return agentLsCapability(P.INTELLIGENCE_CAPABILITY);
}

/** The real editor API. */
export function vscodeApi(): EditorApi {
  const uriOf = (uri: string): vscode.Uri => vscode.Uri.parse(uri);
  const pos = (p: PositionLike): vscode.Position => new vscode.Position(p.line, p.character);
  return {
    diagnostics: (uri) => vscode.languages.getDiagnostics(uriOf(uri)),
    allDiagnostics: () => vscode.languages.getDiagnostics(),
    definitions: async (uri, p) =>
      (await vscode.commands.executeCommand<(vscode.Location | vscode.LocationLink)[] | undefined>(
        "vscode.executeDefinitionProvider",
        uriOf(uri),
        pos(p),
      )) ?? [],
    references: async (uri, p) =>
      (await vscode.commands.executeCommand<vscode.Location[] | undefined>("vscode.executeReferenceProvider", uriOf(uri), pos(p))) ?? [],
    symbols: async (query) =>
      (await vscode.commands.executeCommand<vscode.SymbolInformation[] | undefined>("vscode.executeWorkspaceSymbolProvider", query)) ?? [],
    version: (uri) => vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri)?.version,
    normalize: (uri) => uriOf(uri).toString(),
    onDidChangeDiagnostics: (listener) => vscode.languages.onDidChangeDiagnostics((e) => listener(e.uris)),
    check: (uri) => typescriptCheck(uriOf(uri)),
  };
}

const TS_LANGUAGES = new Set(["typescript", "typescriptreact", "javascript", "javascriptreact"]);

interface TsDiagnostic {
  start: { line: number; offset: number };
  text: string;
  code?: number;
  category: string;
}

/** TypeScript's own check of an open TypeScript/JavaScript document's current text (the
 * TypeScript extension sends the document's changes before any request): its errors and
 * warnings, or undefined. */
async function typescriptCheck(uri: vscode.Uri): Promise<string[] | undefined> {
  const doc = vscode.workspace.textDocuments.find((d) => d.uri.toString() === uri.toString());
  if (!doc || !TS_LANGUAGES.has(doc.languageId)) return undefined;
  try {
    const keys: string[] = [];
    for (const command of ["syntacticDiagnosticsSync", "semanticDiagnosticsSync"]) {
      const response = await vscode.commands.executeCommand<{ type?: string; success?: boolean; body?: TsDiagnostic[] } | undefined>(
        "typescript.tsserverRequest",
        command,
        { file: uri, includeLinePosition: false },
      );
      if (!response || response.type !== "response" || !response.success || !Array.isArray(response.body)) return undefined;
      for (const d of response.body) {
        if (d.category === "error" || d.category === "warning") keys.push(problemKey(d.start.line - 1, d.code, d.text));
      }
    }
    return keys;
  } catch {
    return undefined;
  }
}
