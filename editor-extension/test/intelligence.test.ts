/**
 * agent/editorIntelligence answered from the editor's providers (issue 27): VS Code's shapes mapped to
 * the protocol's (0-based severities and symbol kinds become LSP's, location links their target,
 * codes strings), and diagnostics after an edit waiting for the checkers to report on that version.
 */
import { describe, expect, it } from "vitest";
import { EditorIntelligence, QUIET_MS, problemKey, toDiagnostic, toLocation, toSymbol, type EditorApi } from "../src/intelligence";

const r = (line: number, character: number, end = character + 3) => ({
  start: { line, character },
  end: { line, character: end },
});
const uri = (s: string) => ({ toString: () => s });

class FakeApi implements EditorApi {
  diags = new Map<string, { range: ReturnType<typeof r>; message: string; severity?: number; source?: string; code?: unknown }[]>();
  versions = new Map<string, number>();
  asked: unknown[] = [];
  check?: (u: string) => Promise<string[] | undefined>;
  private listener: ((uris: readonly { toString(): string }[]) => void) | null = null;
  diagnostics(u: string) {
    return (this.diags.get(u) ?? []) as never;
  }
  allDiagnostics() {
    return [...this.diags].map(([u, list]) => [uri(u), list]) as never;
  }
  async definitions(u: string, p: { line: number; character: number }) {
    this.asked.push(["definition", u, p]);
    return [{ targetUri: uri("file:///w/math.ts"), targetRange: r(0, 0, 40), targetSelectionRange: r(1, 16) }];
  }
  async references(u: string, p: { line: number; character: number }) {
    this.asked.push(["references", u, p]);
    return [{ uri: uri("file:///w/main.ts"), range: r(1, 10) }];
  }
  async symbols(query: string) {
    this.asked.push(["symbols", query]);
    return [{ name: "add", kind: 11, containerName: "", location: { uri: uri("file:///w/math.ts"), range: r(1, 16) } }];
  }
  version(u: string) {
    return this.versions.get(u);
  }
  onDidChangeDiagnostics(listener: (uris: readonly { toString(): string }[]) => void) {
    this.listener = listener;
    return { dispose: () => (this.listener = null) };
  }
  report(u: string, version: number, list: { range: ReturnType<typeof r>; message: string; severity?: number; code?: unknown }[]) {
    this.versions.set(u, version);
    this.diags.set(u, list);
    this.listener?.([uri(u)]);
  }
}

describe("mapping VS Code's answers to the protocol", () => {
  it("turns severities, codes, symbol kinds and location links into LSP's terms", () => {
    expect(toDiagnostic("file:///w/a.ts", { range: r(4, 6), message: "bad", severity: 0, source: "ts", code: 2322 })).toEqual({
      uri: "file:///w/a.ts",
      range: r(4, 6),
      message: "bad",
      severity: 1,
      source: "ts",
      code: "2322",
    });
    expect(toDiagnostic("u", { range: r(0, 0), message: "m", severity: 3, code: { value: "no-x" } })).toMatchObject({
      severity: 4,
      source: null,
      code: "no-x",
    });
    expect(toDiagnostic("u", { range: r(0, 0), message: "m" })).toMatchObject({ severity: null, code: null });
    expect(toLocation({ targetUri: uri("file:///w/m.ts"), targetRange: r(0, 0, 9), targetSelectionRange: r(1, 16) })).toEqual({
      uri: "file:///w/m.ts",
      range: r(1, 16),
    });
    expect(toLocation({ targetUri: uri("file:///w/m.ts"), targetRange: r(2, 0, 9) }).range).toEqual(r(2, 0, 9));
    // VS Code's SymbolKind.Function is 11, LSP's 12
    expect(toSymbol({ name: "add", kind: 11, location: { uri: uri("file:///w/m.ts"), range: r(1, 16) } })).toEqual({
      name: "add",
      kind: 12,
      containerName: null,
      location: { uri: "file:///w/m.ts", range: r(1, 16) },
    });
  });

  it("answers each kind through the matching provider", async () => {
    const api = new FakeApi();
    api.diags.set("file:///w/a.ts", [{ range: r(0, 1), message: "x", severity: 1 }]);
    const intel = new EditorIntelligence(api);
    const pos = { line: 1, character: 16 };
    expect(await intel.answer({ kind: "definition", uri: "file:///w/main.ts", position: pos })).toEqual({
      locations: [{ uri: "file:///w/math.ts", range: r(1, 16) }],
    });
    expect((await intel.answer({ kind: "references", uri: "file:///w/math.ts", position: pos })).locations).toHaveLength(1);
    expect((await intel.answer({ kind: "symbols", query: "ad" })).symbols?.[0].kind).toBe(12);
    expect(await intel.answer({ kind: "diagnostics" })).toEqual({
      diagnostics: [{ uri: "file:///w/a.ts", range: r(0, 1), message: "x", severity: 2, source: null, code: null }],
    });
    expect(api.asked).toEqual([
      ["definition", "file:///w/main.ts", pos],
      ["references", "file:///w/math.ts", pos],
      ["symbols", "ad"],
    ]);
    await expect(intel.answer({ kind: "definition", uri: "file:///w/main.ts" })).rejects.toThrow("position is required");
    await expect(intel.answer({ kind: "hover" })).rejects.toThrow('unknown kind "hover"');
    intel.dispose();
  });
});

describe("diagnostics after an edit", () => {
  it("waits until the checkers reported on the edited version and went quiet", async () => {
    const api = new FakeApi();
    const intel = new EditorIntelligence(api);
    const u = "file:///w/a.ts";
    api.report(u, 1, []); // an old report, for the version before the edit
    const started = Date.now();
    const answer = intel.answer({ kind: "diagnostics", uri: u, version: 2, waitMs: 3000 });
    setTimeout(() => api.report(u, 2, [{ range: r(1, 6), message: "Type 'string' is not assignable", severity: 0, code: 2322 }]), 50);
    const result = await answer;
    expect(result.settled).toBe(true);
    expect(result.diagnostics?.map((d) => d.code)).toEqual(["2322"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(50 + QUIET_MS - 5);
    intel.dispose();
  });

  it("a report on the old version after the question does not count: the late one on the edited version does (issue 44)", async () => {
    const api = new FakeApi();
    const intel = new EditorIntelligence(api);
    const u = "file:///w/late.ts";
    const started = Date.now();
    const answer = intel.answer({ kind: "diagnostics", uri: u, version: 2, waitMs: 3000 });
    // the checker first publishes for the text before the edit (the document still at version 1 for it) ...
    setTimeout(() => api.report(u, 1, []), 20);
    // ... and for the edited version well after QUIET_MS
    setTimeout(() => api.report(u, 2, [{ range: r(0, 6), message: "Type 'string' is not assignable", severity: 0, code: 2322 }]), 900);
    const result = await answer;
    expect(result.settled).toBe(true);
    expect(result.diagnostics?.map((d) => d.code)).toEqual(["2322"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900 + QUIET_MS - 5);
    intel.dispose();
  });

  it("says it is not settled when nothing was reported within waitMs", async () => {
    const api = new FakeApi();
    const intel = new EditorIntelligence(api);
    const result = await intel.answer({ kind: "diagnostics", uri: "file:///w/b.ts", version: 5, waitMs: 100 });
    expect(result).toEqual({ diagnostics: [], settled: false });
    intel.dispose();
  });

  it("a clean edit with no event is settled once the checker's own check found what VS Code shows", async () => {
    const api = new FakeApi();
    api.check = async () => {
      await new Promise((r) => setTimeout(r, 50));
      return [];
    };
    const intel = new EditorIntelligence(api);
    const started = Date.now();
    const result = await intel.answer({ kind: "diagnostics", uri: "file:///w/c.ts", version: 3, waitMs: 3000 });
    expect(result).toEqual({ diagnostics: [], settled: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(50 + QUIET_MS - 5);
    expect(Date.now() - started).toBeLessThan(1500);
    intel.dispose();
  });

  it("an unchanged error VS Code already shows agrees with the check too", async () => {
    const api = new FakeApi();
    const u = "file:///w/e.ts";
    const old = { range: r(4, 6), message: "Cannot find name 'x'.", severity: 0, source: "ts", code: 2304 };
    api.report(u, 1, [old]);
    api.check = async () => [problemKey(4, 2304, "Cannot find name 'x'.")];
    const intel = new EditorIntelligence(api);
    const result = await intel.answer({ kind: "diagnostics", uri: u, version: 2, waitMs: 3000 });
    expect(result.settled).toBe(true);
    expect(result.diagnostics?.map((d) => d.code)).toEqual(["2304"]);
    intel.dispose();
  });

  it("when the check found an error VS Code does not show yet, waits for its report", async () => {
    const api = new FakeApi();
    const u = "file:///w/d.ts";
    api.check = async () => [problemKey(1, 2322, "Type 'string' is not assignable")];
    const intel = new EditorIntelligence(api);
    const started = Date.now();
    const answer = intel.answer({ kind: "diagnostics", uri: u, version: 2, waitMs: 3000 });
    setTimeout(
      () => api.report(u, 2, [{ range: r(1, 6), message: "Type 'string' is not assignable", severity: 0, code: 2322 }]),
      700,
    );
    const result = await answer;
    expect(result.settled).toBe(true);
    expect(result.diagnostics?.map((d) => d.code)).toEqual(["2322"]);
    expect(Date.now() - started).toBeGreaterThanOrEqual(700 + QUIET_MS - 5);
    intel.dispose();
  });

  it("without a check (another language) a clean edit still waits the whole waitMs", async () => {
    const api = new FakeApi();
    api.check = async () => undefined;
    const intel = new EditorIntelligence(api);
    const result = await intel.answer({ kind: "diagnostics", uri: "file:///w/f.py", version: 2, waitMs: 400 });
    expect(result).toEqual({ diagnostics: [], settled: false });
    intel.dispose();
  });
});
