/**
 * Issue 44: on a machine without a usable Python, the extension says within seconds which Python it
 * needs and how to get it, and offers the agentLs.server.pythonPath setting, instead of an install
 * offer that cannot work. Real subprocesses: an empty PATH, and stub "pythons" that never answer
 * (their own child keeps the pipes open, as installer stubs do).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import * as vscode from "vscode";
import { findPython } from "../src/provision";
import { GET_PYTHON_ACTION, INSTALL_ACTION, PYTHON_PATH_ACTION, ServerProvisioning } from "../src/provisionUi";

let tmp: string;
let savedPath: string | undefined;
const saved = { error: vscode.window.showErrorMessage, info: vscode.window.showInformationMessage, exec: vscode.commands.executeCommand };

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ls-nopython-"));
  savedPath = process.env.PATH;
});
afterEach(() => {
  process.env.PATH = savedPath;
  vscode.window.showErrorMessage = saved.error;
  vscode.window.showInformationMessage = saved.info;
  vscode.commands.executeCommand = saved.exec;
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A "python3" that never answers: a shell script whose `sleep` outlives it and holds its output open. */
function silentStub(dir: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const p = path.join(dir, "python3");
  fs.writeFileSync(p, "#!/bin/sh\n/bin/sleep 30\n", { mode: 0o755 });
  return p;
}

describe("a machine without a usable Python (issue 44)", () => {
  it("says which Python it needs and how to get it, offers agentLs.server.pythonPath, and no install", async () => {
    process.env.PATH = ""; // nothing on PATH; the only "well-known" interpreter is a stub that never answers
    const extensionDir = path.join(tmp, "ext");
    fs.mkdirSync(path.join(extensionDir, "server"), { recursive: true });
    fs.writeFileSync(path.join(extensionDir, "server", "agent_ls-9.9.9-py3-none-any.whl"), "not really a wheel");
    const shown: unknown[][] = [];
    const offered: unknown[][] = [];
    const executed: unknown[][] = [];
    let picked!: () => void;
    const done = new Promise<void>((r) => (picked = r));
    vscode.window.showErrorMessage = async (...args: unknown[]) => {
      shown.push(args);
      return PYTHON_PATH_ACTION;
    };
    vscode.window.showInformationMessage = async (...args: unknown[]) => {
      offered.push(args);
      return undefined;
    };
    vscode.commands.executeCommand = (async (...args: unknown[]) => {
      executed.push(args);
      picked();
      return undefined;
    }) as typeof vscode.commands.executeCommand;
    const output = vscode.window.createOutputChannel("Agent") as unknown as vscode.LogOutputChannel;
    const stub = silentStub(path.join(tmp, "stub"));
    const provisioning = new ServerProvisioning(path.join(tmp, "storage"), extensionDir, output, async () => undefined, {
      wellKnown: [stub],
      timeoutMs: 1000,
    });
    const t0 = Date.now();
    const result = await provisioning.resolve();
    const seconds = (Date.now() - t0) / 1000;
    expect(result.kind).toBe("none");
    expect(shown).toHaveLength(1);
    const [message, ...buttons] = shown[0] as string[];
    expect(message).toMatch(/needs Python 3\.11 or newer/);
    expect(message).toContain(`${stub} (a well-known location): did not answer within 1.0 s`);
    expect(message).toMatch(/python\.org/);
    expect(message).toContain("agentLs.server.pythonPath");
    expect(buttons).toEqual([GET_PYTHON_ACTION, PYTHON_PATH_ACTION, "Show Log"]);
    expect(offered.filter((a) => a.includes(INSTALL_ACTION))).toEqual([]); // no install that cannot run
    expect(result.kind === "none" && result.message).toBe(message); // the status says the same
    expect(seconds).toBeLessThan(20); // generous: the stub alone would take 30 s
    await done;
    expect(executed).toEqual([["workbench.action.openSettings", "agentLs.server.pythonPath"]]);
  }, 40000);

  it("stubs that never answer cost a bounded wait: each probe is cut, and the rest are not tried past the budget", async () => {
    const stubs = ["a", "b", "c"].map((d) => silentStub(path.join(tmp, d)));
    const t0 = Date.now();
    const { found, tried } = await findPython(
      stubs.map((p) => ({ path: p, source: "PATH" })),
      { cwd: path.join(tmp, "storage"), env: { PATH: "" }, workspaceFolders: [], timeoutMs: 1000, budgetMs: 1500 },
    );
    expect(found).toBeNull();
    expect(tried.map((t) => t.problem)).toEqual([
      "did not answer within 1.0 s",
      expect.stringMatching(/^did not answer within 0\.\d s$/),
      "not tried (looking for Python took too long)",
    ]);
    expect((Date.now() - t0) / 1000).toBeLessThan(20); // generous: one stub alone would take 30 s
  }, 40000);
});
