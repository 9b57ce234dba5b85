/**
 * How AgentClient starts the language server (issue 14): in the extension's storage folder,
 * never a workspace folder; with VS Code's workspace trust in the initialization options; and
 * `agent/editorTrust` when VS Code grants it later. The LanguageClient is a stand-in that records
 * what it was given; `vscode` is test/fakes/vscode.ts (vitest.config.ts).
 */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { AgentClient } from "../src/client";
import * as P from "../src/protocol";
import * as vscode from "./fakes/vscode";

interface Recorded {
  serverOptions: { command: string; args: string[]; options: { cwd: string; env: Record<string, string> } };
  clientOptions: { initializationOptions: unknown };
  notifications: [string, unknown][];
}

const lc = vi.hoisted(() => {
  const State = { Stopped: 1, Running: 2, Starting: 3 } as const;
  const created: unknown[] = [];
  class LanguageClient {
    state: number = State.Stopped;
    readonly notifications: [string, unknown][] = [];
    private readonly listeners: ((e: { oldState: number; newState: number }) => void)[] = [];
    constructor(
      readonly id: string,
      readonly name: string,
      readonly serverOptions: unknown,
      readonly clientOptions: unknown,
    ) {
      created.push(this);
    }
    onDidChangeState(fn: (e: { oldState: number; newState: number }) => void) {
      this.listeners.push(fn);
      return { dispose: () => undefined };
    }
    private move(newState: number) {
      const oldState = this.state;
      this.state = newState;
      for (const l of this.listeners) l({ oldState, newState });
    }
    async start() {
      this.move(State.Starting);
      this.move(State.Running);
    }
    async sendNotification(method: string, params: unknown) {
      this.notifications.push([method, params]);
    }
    async sendRequest() {
      throw Object.assign(new Error("method not found"), { code: -32601 });
    }
    async stop() {
      this.move(State.Stopped);
    }
    async dispose() {}
  }
  return { State, LanguageClient, created };
});

vi.mock("vscode-languageclient/node", () => ({ LanguageClient: lc.LanguageClient, State: lc.State }));

const last = () => lc.created[lc.created.length - 1] as Recorded;

let tmp: string;
let ws: string;
const clients: AgentClient[] = [];

function newClient(storage: string): AgentClient {
  const c = new AgentClient(storage);
  clients.push(c);
  return c;
}

beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ls-client-"));
  ws = path.join(tmp, "ws");
  fs.mkdirSync(ws);
  fs.writeFileSync(path.join(ws, "json.py"), "raise SystemExit('imported')\n");
  vscode.workspace.workspaceFolders = [{ uri: vscode.Uri.file(ws), name: "ws", index: 0 }];
  vscode.workspace.isTrusted = true;
  vscode.workspace.getConfiguration = () => ({
    get: (key: string): unknown => (key === "command" ? ["/opt/agent-ls/bin/agent-ls", "serve"] : undefined),
  });
  lc.created.length = 0;
});

afterEach(() => {
  for (const c of clients.splice(0)) c.dispose();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("the server process", () => {
  it("starts in the extension's storage folder (created), never in the workspace folder", async () => {
    const storage = path.join(tmp, "globalStorage", "agent-ls.agent-ls");
    const client = newClient(storage);
    await client.start();
    expect(client.state).toBe("running");
    const { serverOptions } = last();
    expect(serverOptions.command).toBe("/opt/agent-ls/bin/agent-ls");
    expect(serverOptions.args).toEqual(["serve"]);
    expect(serverOptions.options.cwd).toBe(storage);
    expect(serverOptions.options.cwd).not.toBe(ws);
    expect(fs.statSync(storage).isDirectory()).toBe(true);
  });

  it("falls back to the temp folder when the storage folder cannot be created", async () => {
    const blocker = path.join(tmp, "a-file");
    fs.writeFileSync(blocker, "");
    const client = newClient(path.join(blocker, "storage"));
    await client.start();
    expect(last().serverOptions.options.cwd).toBe(os.tmpdir());
  });
});

describe("VS Code's workspace trust", () => {
  it("is sent in the initialization options, read when the client initializes", async () => {
    vscode.workspace.isTrusted = false;
    const client = newClient(path.join(tmp, "s"));
    await client.start();
    const init = last().clientOptions.initializationOptions;
    expect(typeof init).toBe("function");
    expect((init as () => unknown)()).toEqual({ workspaceTrusted: false });
    vscode.workspace.isTrusted = true;
    expect((init as () => unknown)()).toEqual({ workspaceTrusted: true });
  });

  it("a grant is told to the running server with agent/editorTrust", async () => {
    vscode.workspace.isTrusted = false;
    const client = newClient(path.join(tmp, "s"));
    vscode.trustGranted.fire(); // not started yet: nothing to tell (the start reads isTrusted)
    await client.start();
    expect(last().notifications).toEqual([]);
    vscode.workspace.isTrusted = true;
    vscode.trustGranted.fire();
    await Promise.resolve();
    expect(last().notifications).toEqual([[P.EDITOR_TRUST, { trusted: true }]]);
  });

  it("a stopped client sends nothing (its next start reads isTrusted again)", async () => {
    const client = newClient(path.join(tmp, "s"));
    await client.start();
    const first = last();
    await client.stop();
    vscode.trustGranted.fire();
    await Promise.resolve();
    expect(first.notifications).toEqual([]);
  });
});

describe("the output channel", () => {
  it("names the variables agentLs.server.env sets, never their values", async () => {
    const lines: string[] = [];
    const saved = vscode.window.createOutputChannel;
    vscode.window.createOutputChannel = () => ({ ...saved(), info: (...args: unknown[]) => void lines.push(String(args[0])) });
    vscode.workspace.getConfiguration = () => ({
      get: (key: string): unknown =>
        key === "pythonPath" ? process.execPath : key === "env" ? { OPENAI_API_KEY: "sk-secret", AGENT_LS_MODEL: "m" } : undefined,
    });
    try {
      await newClient(path.join(tmp, "s")).start();
    } finally {
      vscode.window.createOutputChannel = saved;
    }
    const start = lines.find((l) => l.startsWith("starting the language server"))!;
    expect(start).toBe(`starting the language server (agentLs.server.pythonPath): ${process.execPath} -P -m agent_ls serve; agentLs.server.env sets OPENAI_API_KEY, AGENT_LS_MODEL`);
    expect(lines.join("\n")).not.toContain("sk-secret");
  });
});
