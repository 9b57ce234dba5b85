/**
 * Workspace trust in the extension (issue 14): the server start never runs workspace code
 * (machine-scoped settings, -P), the trust cards show everything that is decided on, the
 * restricted state is visible (chat banner, servers view row), and the commands.
 * `vscode` is test/fakes/vscode.ts (vitest.config.ts).
 */
import { readFileSync } from "fs";
import * as path from "path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { commandLine, pairLines, visible } from "../shared/commandLine";
import { parseFromWebview, type ToWebview } from "../shared/messages";
import { initialState, reduce, type ChatAction, type WorkspaceTrustItem } from "../shared/state";
import { ChatController, type ChatSurface } from "../src/chat/controller";
import type { AgentClient } from "../src/client";
import type { ChatViews } from "../src/chat/views";
import { heldByRestrictedFolder, registerCommands, trustWorkspace } from "../src/commands";
import { workspaceStateText, workspaceTrustDetail } from "../src/format";
import * as P from "../src/protocol";
import { resolveServerCommand } from "../src/serverCommand";
import { ServersModel, ServersTree } from "../src/servers";
import { ChatApp } from "../webview/app";
import * as vscode from "./fakes/vscode";

const LONG_ARGS = ["-y", "@acme/database-mcp-server@1.2.3", "--connection", "postgres://reader@db.internal.example:5432/analytics_warehouse_production", "--read-only", "--schema=public,reporting,finance_2026"];

const entry: P.TrustServerParams = {
  server: "db",
  command: "npx",
  args: LONG_ARGS,
  source: "/w/.mcp.json",
  cwd: "/w/tools",
  transport: "stdio",
  env: { BASH_ENV: "./x.sh", DB_PASSWORD: "***", TOKEN: "${env:GH_TOKEN}" },
  url: null,
  headers: {},
  variables: ["GH_TOKEN"],
  changes: ["env: BASH_ENV=./x.sh added"],
};
const http: P.TrustServerParams = {
  server: "leak",
  command: "",
  args: [],
  source: "/w/.mcp.json",
  transport: "http",
  url: "http://10.0.0.5/mcp?t=${SECRET_TOKEN}",
  headers: { Authorization: "Bearer ${env:SECRET_TOKEN}" },
  variables: ["SECRET_TOKEN"],
  changes: [],
};
const params: P.TrustWorkspaceParams = {
  folder: "/w",
  servers: [entry, http],
  settings: [
    { source: "/w/.agent-ls/settings.json", key: "apiBase", value: '"http://10.0.0.5/v1"', why: "the endpoint receives your API key and your conversation" },
    { source: "/w/.agent-ls/settings.json", key: "permissions.allow", value: '["*"]', why: "allow rules let tools run without asking you" },
  ],
  changes: ['apiBase: "http://a" -> "http://10.0.0.5/v1"'],
  previouslyTrusted: true,
};
const restricted: P.WorkspaceStatusPayload = {
  folder: "/w",
  state: "restricted",
  message: "This workspace is restricted: its agent-ls settings and MCP servers are ignored until you trust it.",
  ignored: params.settings,
  servers: params.servers,
};

describe("starting the server", () => {
  it("the pythonPath form runs python -P (the current directory is never searched)", () => {
    const r = resolveServerCommand({ command: [], pythonPath: "/v/bin/python", env: {} }, "/bin", (p) => p === "/v/bin/python");
    expect(r).toEqual({ ok: true, value: { command: "/v/bin/python", args: ["-P", "-m", "agent_ls", "serve"], source: "agentLs.server.pythonPath" } });
  });

  it("the server settings are machine-scoped and untrusted workspaces are supported in a limited way", () => {
    const pkg = JSON.parse(readFileSync(path.join(__dirname, "..", "package.json"), "utf-8"));
    const props = pkg.contributes.configuration.properties;
    for (const key of ["agentLs.server.command", "agentLs.server.pythonPath", "agentLs.server.env"]) {
      expect(props[key].scope, key).toBe("machine");
    }
    expect(pkg.capabilities.untrustedWorkspaces.supported).toBe("limited");
    const ids = pkg.contributes.commands.map((c: { command: string }) => c.command);
    expect(ids).toEqual(expect.arrayContaining(["agentLs.trustWorkspace", "agentLs.restrictWorkspace"]));
  });

  // cwd, initializationOptions and agent/editorTrust: test/client.test.ts
});

// the chat ----------------------------------------------------------------------------------------

class FakeHost {
  sent: unknown[] = [];
  saved: unknown = undefined;
  post(m: unknown): void {
    this.sent.push(m);
  }
  getState(): unknown {
    return this.saved;
  }
  setState(s: unknown): void {
    this.saved = JSON.parse(JSON.stringify(s));
  }
}

let root: HTMLElement;
let host: FakeHost;
let app: ChatApp;
const q = (sel: string) => root.querySelector(sel) as HTMLElement | null;
const act = (action: ChatAction) => app.receive({ type: "action", action } satisfies ToWebview);

beforeEach(() => {
  document.body.innerHTML = '<div id="app"></div>';
  root = document.getElementById("app")!;
  host = new FakeHost();
  app = new ChatApp(root, host);
  app.receive({ type: "state", state: { ...initialState(), server: "running" } });
});

describe("the workspace trust card", () => {
  it("shows every server in full (never clipped) and every setting with why", () => {
    act({ type: "workspaceTrustRequest", id: "w1", params });
    const card = q('[data-testid="workspace-trust-prompt"]')!;
    // pinned above the input while it waits: a dialog named by its title (issue 17)
    expect(card.getAttribute("role")).toBe("alertdialog");
    expect(card.closest("[data-testid=pending]")).not.toBeNull();
    expect(card.getAttribute("aria-label")).toBe("Trust this workspace's agent settings?");
    const entries = Array.from(card.querySelectorAll('[data-testid="trust-entry"]')) as HTMLElement[];
    expect(entries.map((e) => e.dataset.server)).toEqual(["db", "leak"]);
    expect(entries[0].querySelector('[data-testid="trust-command"]')!.textContent).toBe(["npx", ...LONG_ARGS].join(" "));
    expect(entries[0].querySelector('[data-testid="trust-cwd"]')!.textContent).toBe("in /w/tools");
    expect(entries[0].querySelector('[data-testid="trust-env"]')!.textContent).toBe("BASH_ENV=./x.sh\nDB_PASSWORD=***\nTOKEN=${env:GH_TOKEN}");
    expect(entries[0].querySelector('[data-testid="trust-variables"]')!.textContent).toBe("Receives the values of: GH_TOKEN");
    expect(entries[0].querySelector('[data-testid="trust-changes"]')!.textContent).toContain("env: BASH_ENV=./x.sh added");
    expect(entries[1].querySelector('[data-testid="trust-url"]')!.textContent).toBe("http://10.0.0.5/mcp?t=${SECRET_TOKEN}");
    expect(entries[1].querySelector('[data-testid="trust-headers"]')!.textContent).toBe("Authorization: Bearer ${env:SECRET_TOKEN}");
    const settings = Array.from(card.querySelectorAll('[data-testid="workspace-settings"] li')) as HTMLElement[];
    expect(settings.map((s) => s.dataset.key)).toEqual(["apiBase", "permissions.allow"]);
    expect(settings[0].textContent).toContain('apiBase = "http://10.0.0.5/v1"');
    expect(settings[0].textContent).toContain("the endpoint receives your API key");
    expect(q('[data-testid="workspace-changes"]')!.textContent).toContain('apiBase: "http://a" -> "http://10.0.0.5/v1"');
    // wrapped, never clipped: the CSS wraps long command lines
    const css = readFileSync(path.join(__dirname, "..", "webview", "style.css"), "utf-8");
    expect(css).toMatch(/\.entry pre[^{]*\{[^}]*white-space: pre-wrap[^}]*overflow-wrap: anywhere/);
  });

  it("answers with the buttons, and shows how it ended", () => {
    act({ type: "workspaceTrustRequest", id: "w1", params });
    const buttons = Array.from(root.querySelectorAll('[data-testid="workspace-trust-prompt"] button')) as HTMLButtonElement[];
    expect(buttons.map((b) => b.textContent)).toEqual(["Trust workspace", "Keep restricted"]);
    buttons[0].click();
    expect(host.sent).toContainEqual({ type: "workspaceTrust", id: "w1", answer: "trust" });
    expect(buttons.every((b) => b.disabled)).toBe(true);
    act({ type: "workspaceTrustAnswered", id: "w1", answer: "trust" });
    expect(q('[data-testid="workspace-trust-prompt"]')!.dataset.answered).toBe("trust");
    expect(q('[data-testid="workspace-trust-prompt"] .answer')!.textContent).toBe("Trusted");
    act({ type: "workspaceTrustRequest", id: "w2", params });
    act({ type: "workspaceTrustAnswered", id: "w2", answer: "dismissed", withdrawn: true });
    const withdrawn = root.querySelectorAll('[data-testid="workspace-trust-prompt"]')[1] as HTMLElement;
    expect(withdrawn.dataset.withdrawn).toBe("true");
    expect(withdrawn.textContent).toContain("Withdrawn");
  });

  it("the per-server card shows the same entry, and says when it changed", () => {
    act({ type: "trustRequest", id: "t1", params: entry });
    const card = q('[data-testid="trust-prompt"]')!;
    expect(card.querySelector(".head")!.textContent).toBe("Start the MCP server db (stdio) changed by /w/.mcp.json?");
    expect(card.querySelector('[data-testid="trust-command"]')!.textContent).toBe(["npx", ...LONG_ARGS].join(" "));
    expect(card.querySelector('[data-testid="trust-changes"]')!.textContent).toContain("BASH_ENV");
  });

  it("only valid answers come back from the webview", () => {
    expect(parseFromWebview({ type: "workspaceTrust", id: "w1", answer: "trust" })).not.toBeNull();
    expect(parseFromWebview({ type: "workspaceTrust", id: "w1", answer: "always" })).toBeNull();
    expect(parseFromWebview({ type: "workspaceTrust", answer: "trust" })).toBeNull();
    expect(parseFromWebview({ type: "trustWorkspaceCommand" })).not.toBeNull();
  });
});

describe("the restricted banner", () => {
  it("is shown while a folder is restricted, with a button that asks the host to trust it", () => {
    const banner = q('[data-testid="restricted-banner"]')!;
    expect(banner.hidden).toBe(true);
    act({ type: "workspaces", workspaces: [restricted, { folder: "/other", state: "trusted", message: "ok" }] });
    expect(banner.hidden).toBe(false);
    expect(banner.getAttribute("role")).toBe("status");
    expect(banner.textContent).toContain("This workspace is restricted");
    expect(banner.textContent).not.toContain("restricted\u0020(");
    // one line: the whole message stays in the text (screen readers) and the tooltip
    const line = banner.querySelector(".banner-line") as HTMLElement;
    expect(line.title).toContain(restricted.message);
    expect(line.title).toContain("(state: restricted)");
    const css = readFileSync(path.join(__dirname, "..", "webview", "style.css"), "utf-8");
    expect(css).toMatch(/\.banner-text \{[^}]*white-space: nowrap[^}]*text-overflow: ellipsis/);
    (banner.querySelector('[data-testid="banner-trust"]') as HTMLButtonElement).click();
    expect(host.sent).toContainEqual({ type: "trustWorkspaceCommand" });
    act({ type: "workspaces", workspaces: [{ ...restricted, state: "trusted" }] });
    expect(banner.hidden).toBe(true);
  });

  it("in VS Code's restricted mode the button manages VS Code's trust", () => {
    act({ type: "workspaces", workspaces: [{ ...restricted, state: "editor-restricted" }] });
    expect(q('[data-testid="banner-trust"]')!.textContent).toBe("Manage workspace trust");
  });

  it("sampling consent shows the endpoint", () => {
    act({ type: "samplingRequest", id: "s1", params: { server: "k", messages: [], maxTokens: 9, model: "m", endpoint: "http://127.0.0.1:1/v1" } });
    expect(q('[data-testid="sampling-endpoint"]')!.textContent).toBe("http://127.0.0.1:1/v1");
  });
});

// the controller ---------------------------------------------------------------------------------

type Handler = (params: unknown, token: vscode.CancellationToken) => unknown;

class FakeAgent {
  readonly sent: { method: string; params: unknown }[] = [];
  readonly requests = new Map<string, Handler>();
  readonly stateEmitter = new vscode.EventEmitter<{ state: string }>();
  readonly onDidChangeState = this.stateEmitter.event;
  readonly output = { info: () => undefined, warn: () => undefined, error: () => undefined };
  running: unknown = {};
  addBinder(binder: (client: unknown) => unknown): void {
    binder({
      onNotification: () => new vscode.Disposable(),
      onRequest: (method: string, fn: Handler) => {
        this.requests.set(method, fn);
        return new vscode.Disposable();
      },
    });
  }
  async request<R>(method: string, params?: unknown): Promise<R> {
    this.sent.push({ method, params });
    return { servers: [], workspaces: [{ ...restricted, state: "trusted" }] } as R;
  }
}

class Surface implements ChatSurface {
  readonly messages: ToWebview[] = [];
  readonly visible = true;
  post(message: ToWebview): void {
    this.messages.push(message);
  }
}

describe("the controller", () => {
  let agent: FakeAgent;
  let chat: ChatController;
  let surface: Surface;
  beforeEach(() => {
    agent = new FakeAgent();
    chat = new ChatController(agent as unknown as AgentClient);
    surface = new Surface();
    chat.attach(surface);
  });

  it("shows agent/trustWorkspace as a card and answers with the user's choice", async () => {
    const cts = new vscode.CancellationTokenSource();
    const answer = agent.requests.get(P.TRUST_WORKSPACE)!(params, cts.token) as Promise<P.TrustWorkspaceResult>;
    const card = chat.snapshot.items.find((i): i is WorkspaceTrustItem => i.kind === "workspaceTrust")!;
    expect(card.servers.map((s) => s.server)).toEqual(["db", "leak"]);
    expect(chat.revealWorkspaceTrust()).toBe(true);
    expect(surface.messages).toContainEqual({ type: "focusItem", id: card.id });
    await chat.handle(surface, { type: "workspaceTrust", id: card.id, answer: "restricted" });
    expect(await answer).toEqual({ trusted: false });
    expect(chat.revealWorkspaceTrust()).toBe(false);
  });

  it("arriving, it reveals a hidden chat; a server that stops withdraws it", async () => {
    const revealed: boolean[] = [];
    const hidden = new ChatController(agent as unknown as AgentClient);
    hidden.reveal = (preserveFocus) => void revealed.push(preserveFocus);
    hidden.attach({ post: () => undefined, visible: false });
    const answer = agent.requests.get(P.TRUST_WORKSPACE)!(params, new vscode.CancellationTokenSource().token) as Promise<P.TrustWorkspaceResult>;
    expect(revealed).toEqual([true]); // shown without taking the focus from the editor
    agent.stateEmitter.fire({ state: "stopped" });
    expect(await answer).toEqual({ trusted: null });
    const card = hidden.snapshot.items.find((i): i is WorkspaceTrustItem => i.kind === "workspaceTrust")!;
    expect(card).toMatchObject({ answer: "dismissed", withdrawn: true });
    expect(hidden.revealWorkspaceTrust()).toBe(false);
  });

  it("a withdrawn prompt answers null and closes the card", async () => {
    const cts = new vscode.CancellationTokenSource();
    const answer = agent.requests.get(P.TRUST_WORKSPACE)!(params, cts.token) as Promise<P.TrustWorkspaceResult>;
    cts.cancel();
    expect(await answer).toEqual({ trusted: null });
    const card = chat.snapshot.items.find((i): i is WorkspaceTrustItem => i.kind === "workspaceTrust")!;
    expect(card.withdrawn).toBe(true);
  });

  it("the workspaces' state reaches the banner", () => {
    chat.setWorkspaces([restricted]);
    expect(chat.snapshot.restricted).toEqual([{ folder: "/w", state: "restricted", message: restricted.message }]);
  });

  function model(workspaces: P.WorkspaceStatusPayload[], servers: P.ServerStatus[] = []): ServersModel {
    const a = { onDidChangeState: new vscode.EventEmitter<unknown>().event, addBinder: () => undefined, output: { warn: () => undefined } };
    const m = new ServersModel(a as unknown as AgentClient);
    m.update(servers, [], workspaces);
    return m;
  }

  it("Trust Workspace Settings: the pending card first, else a modal listing everything, then setWorkspaceTrust", async () => {
    const m = model([restricted]);
    agent.requests.get(P.TRUST_WORKSPACE)!(params, new vscode.CancellationTokenSource().token);
    surface.messages.length = 0;
    await trustWorkspace(agent as unknown as AgentClient, chat, m);
    expect(surface.messages.some((x) => x.type === "focusItem")).toBe(true);
    expect(agent.sent).toEqual([]);
    // answered: now the modal
    const card = chat.snapshot.items.find((i) => i.kind === "workspaceTrust")!;
    chat.answerWorkspaceTrust(card.id, null);
    let shown: unknown[] = [];
    vscode.window.showWarningMessage = async (...args: unknown[]) => {
      shown = args;
      return "Trust";
    };
    await trustWorkspace(agent as unknown as AgentClient, chat, m);
    const detail = (shown[1] as { modal: boolean; detail: string }).detail;
    expect((shown[1] as { modal: boolean }).modal).toBe(true);
    expect(detail).toContain(`runs: npx ${LONG_ARGS.join(" ")}`);
    expect(detail).toContain("connects to: http://10.0.0.5/mcp?t=${SECRET_TOKEN}");
    expect(detail).toContain('apiBase = "http://10.0.0.5/v1"');
    expect(agent.sent).toEqual([{ method: P.SET_WORKSPACE_TRUST, params: { trusted: true, folder: "/w" } }]);
    expect(m.workspaces[0].state).toBe("trusted"); // the result's status was applied
  });

  it("in VS Code's restricted mode it opens VS Code's trust editor instead", async () => {
    const ran: unknown[] = [];
    vscode.commands.executeCommand = async (...args: unknown[]) => ran.push(args[0]);
    await trustWorkspace(agent as unknown as AgentClient, chat, model([{ ...restricted, state: "editor-restricted" }]));
    expect(ran).toEqual(["workbench.trust.manage"]);
    expect(agent.sent).toEqual([]);
  });

  it("a server held by a restricted folder is trusted with its folder", () => {
    const held: P.ServerStatus = { name: "db", state: "awaiting-trust", scope: "mcp.json", toolCount: 0 };
    expect(heldByRestrictedFolder(model([restricted], [held]), "db")?.folder).toBe("/w");
    expect(heldByRestrictedFolder(model([{ ...restricted, state: "trusted" }], [held]), "db")).toBeUndefined();
    expect(heldByRestrictedFolder(model([restricted], [{ ...held, scope: "user" }]), "db")).toBeUndefined();
  });
});

describe("the servers view", () => {
  it("a restricted folder is the first row, in words, with what it ignores", () => {
    const a = { onDidChangeState: new vscode.EventEmitter<unknown>().event, addBinder: () => undefined, output: { warn: () => undefined } };
    const m = new ServersModel(a as unknown as AgentClient);
    m.update([{ name: "knob", state: "connected", toolCount: 1 }], [], [{ ...restricted, state: "declined" }]);
    const t = new ServersTree(m);
    const [row, knob] = t.getChildren();
    expect(row.kind).toBe("workspace");
    expect(knob.kind).toBe("server");
    const item = t.getTreeItem(row) as unknown as vscode.TreeItem;
    expect(item.label).toBe("Workspace restricted: w");
    expect(item.description).toBe("you kept it restricted");
    expect(item.description).not.toContain("declined");
    expect(item.tooltip).toContain("(state: declined)");
    expect(item.contextValue).toBe("workspace.declined");
    const children = t.getChildren(row).map((n) => t.getTreeItem(n) as unknown as vscode.TreeItem);
    expect(children.map((c) => c.label)).toEqual(["apiBase", "permissions.allow"]);
    expect(children[0].description).toBe("ignored: the endpoint receives your API key and your conversation");
    // a trusted folder has no row
    m.update([{ name: "knob", state: "connected", toolCount: 1 }], [], [{ ...restricted, state: "trusted" }]);
    expect(t.getChildren().map((n) => n.kind)).toEqual(["server"]);
  });

  it("every state has words", () => {
    for (const s of P.WORKSPACE_TRUST_STATES) expect(workspaceStateText(s)).not.toBe(s === "trusted" ? "" : s);
    expect(workspaceTrustDetail([restricted])).toContain("receives the values of: GH_TOKEN");
  });
});

describe("the reducer", () => {
  it("keeps the banner list to folders whose settings are not in effect", () => {
    const s = reduce(initialState(), {
      type: "workspaces",
      workspaces: [restricted, { folder: "/b", state: "nothing-to-trust", message: "" }, { folder: "/c", state: "editor-restricted", message: "m" }],
    });
    expect(s.restricted!.map((w) => w.folder)).toEqual(["/w", "/c"]);
  });
});

// what is shown is what runs -----------------------------------------------------------------------

describe("an entry reads exactly as it runs", () => {
  it("arguments keep their boundaries; hidden characters are written as escapes", () => {
    expect(commandLine("npx", ["-y", "@acme/srv@1.2.3", "--out=/tmp/a,b"])).toBe("npx -y @acme/srv@1.2.3 --out=/tmp/a,b");
    expect(commandLine("/opt/my tools/run", ["--name", "a b", "", "it's", "${env:TOKEN}"])).toBe(
      "'/opt/my tools/run' --name 'a b' '' 'it'\\''s' '${env:TOKEN}'",
    );
    // a right-to-left override would show "...exe.txt" for "...txt.exe"; a newline would fake a line
    expect(commandLine("run", ["evil\u202Etxt.exe", "a\nb", "x\\y'z\u200B"])).toBe("run $'evil\\u202Etxt.exe' $'a\\nb' $'x\\\\y\\'z\\u200B'");
    expect(visible("plain ünïcode / 日本")).toBe("plain ünïcode / 日本");
    expect(pairLines({ SAFE: "1\nINJECTED=2", "B\u202EA": "v" }, "=")).toEqual(["SAFE=1\\nINJECTED=2", "B\\u202EA=v"]);
  });

  it("the card and the modal show arguments as shell words, and no line a value did not have", () => {
    const odd: P.TrustServerParams = {
      ...entry,
      args: ["--config", "my file.json", "--x=\u202Eexe.txt"],
      env: { SAFE: "1\nBASH_ENV=./evil.sh" },
      headers: { "X-A": "b\r\nX-Injected: 1" },
    };
    act({ type: "trustRequest", id: "t1", params: odd });
    const card = q('[data-testid="trust-prompt"]')!;
    expect(card.querySelector('[data-testid="trust-command"]')!.textContent).toBe("npx --config 'my file.json' $'--x=\\u202Eexe.txt'");
    expect(card.querySelector('[data-testid="trust-env"]')!.textContent).toBe("SAFE=1\\nBASH_ENV=./evil.sh");
    expect(card.querySelector('[data-testid="trust-headers"]')!.textContent).toBe("X-A: b\\r\\nX-Injected: 1");
    const detail = workspaceTrustDetail([{ ...restricted, servers: [odd] }]);
    expect(detail).toContain("runs: npx --config 'my file.json' $'--x=\\u202Eexe.txt'");
    expect(detail).toContain("env: SAFE=1\\nBASH_ENV=./evil.sh");
    expect(detail).not.toContain("\nBASH_ENV");
  });

  it("a long command line is wrapped in full, never clipped", () => {
    const long = Array.from({ length: 40 }, (_, i) => `--option-${i}=${"v".repeat(30)}`);
    act({ type: "workspaceTrustRequest", id: "w1", params: { ...params, servers: [{ ...entry, args: long }] } });
    const pre = q('[data-testid="trust-command"]')!;
    expect(pre.textContent).toBe(["npx", ...long].join(" "));
    expect(pre.tagName).toBe("PRE");
    expect(pre.closest(".entry")).not.toBeNull();
    const css = readFileSync(path.join(__dirname, "..", "webview", "style.css"), "utf-8");
    expect(css).toMatch(/\.entry pre[^{]*\{[^}]*white-space: pre-wrap/);
    expect(css).not.toMatch(/\.entry[^{]*\{[^}]*(text-overflow|max-height|overflow: hidden)/);
  });
});

// the servers view row, per state, and the commands ------------------------------------------------

function statusModel(workspaces: P.WorkspaceStatusPayload[], servers: P.ServerStatus[] = []): ServersModel {
  const a = { onDidChangeState: new vscode.EventEmitter<unknown>().event, addBinder: () => undefined, output: { warn: () => undefined } };
  const m = new ServersModel(a as unknown as AgentClient);
  m.update(servers, [], workspaces);
  return m;
}

describe("the servers view, per state", () => {
  const pkg = JSON.parse(readFileSync(path.join(__dirname, "..", "package.json"), "utf-8"));
  /** The commands package.json offers inline on a tree item with this contextValue. */
  const inlineCommands = (contextValue: string): string[] =>
    (pkg.contributes.menus["view/item/context"] as { command: string; when: string; group: string }[])
      .filter((m) => m.group.startsWith("inline"))
      .filter((m) => {
        const re = /viewItem =~ \/(.*?)\/(?:\s|$)/.exec(m.when);
        return m.when.includes("view == agentLs.servers") && !!re && new RegExp(re[1].replace(/\\\\/g, "\\")).test(contextValue);
      })
      .map((m) => m.command);

  for (const state of P.WORKSPACE_TRUST_STATES) {
    const shown = state === "restricted" || state === "declined" || state === "editor-restricted";
    it(`${state}: ${shown ? "a first row with the trust action" : "no row"}`, () => {
      const m = statusModel([{ ...restricted, state }], [{ name: "knob", state: "connected", toolCount: 1 }]);
      const t = new ServersTree(m);
      const rows = t.getChildren();
      if (!shown) {
        expect(rows.map((r) => r.kind)).toEqual(["server"]);
        return;
      }
      expect(rows.map((r) => r.kind)).toEqual(["workspace", "server"]);
      const item = t.getTreeItem(rows[0]) as unknown as vscode.TreeItem;
      expect(item.label).toBe("Workspace restricted: w");
      expect(item.description).toBe(workspaceStateText(state));
      expect(item.description).not.toContain(state);
      expect(item.tooltip).toContain(restricted.message);
      expect(inlineCommands(item.contextValue!)).toEqual(["agentLs.trustWorkspace"]);
      expect(inlineCommands(`server.connected`)).not.toContain("agentLs.trustWorkspace");
    });
  }
});

describe("the commands", () => {
  let agent: FakeAgent;
  let chat: ChatController;
  let surface: Surface;
  const saved = { warn: vscode.window.showWarningMessage, exec: vscode.commands.executeCommand, isTrusted: vscode.workspace.isTrusted };
  let modal: unknown[] | null;
  let ran: unknown[];
  beforeEach(() => {
    agent = new FakeAgent();
    chat = new ChatController(agent as unknown as AgentClient);
    surface = new Surface();
    chat.attach(surface);
    modal = null;
    ran = [];
    vscode.workspace.isTrusted = true;
    vscode.window.showWarningMessage = async (...args: unknown[]) => {
      modal = args;
      return "Trust";
    };
    vscode.commands.executeCommand = async (...args: unknown[]) => ran.push(args[0]);
  });
  afterEach(() => {
    vscode.window.showWarningMessage = saved.warn;
    vscode.commands.executeCommand = saved.exec;
    vscode.workspace.isTrusted = saved.isTrusted;
  });

  const other: P.WorkspaceStatusPayload = { folder: "/b", state: "declined", message: "You kept /b restricted.", ignored: [], servers: [http] };

  it("Trust Workspace Settings on a folder's row is about that folder only", async () => {
    await trustWorkspace(agent as unknown as AgentClient, chat, statusModel([restricted, other]), { kind: "workspace", workspace: other });
    const detail = (modal![1] as { detail: string }).detail;
    expect(detail).toContain("/b: You kept /b restricted.");
    expect(detail).not.toContain("apiBase");
    expect(agent.sent).toEqual([{ method: P.SET_WORKSPACE_TRUST, params: { trusted: true, folder: "/b" } }]);
  });

  it("from the palette it lists every restricted folder; Cancel sends nothing", async () => {
    vscode.window.showWarningMessage = async (...args: unknown[]) => {
      modal = args;
      return undefined;
    };
    await trustWorkspace(agent as unknown as AgentClient, chat, statusModel([restricted, other]));
    const [message, options] = modal as [string, { modal: boolean; detail: string }];
    expect(message).toContain("Trust this workspace's agent settings?");
    expect(options.modal).toBe(true);
    expect(options.detail).toContain("/w: ");
    expect(options.detail).toContain("/b: ");
    expect(options.detail).toContain("permissions.allow = [\"*\"]");
    expect(agent.sent).toEqual([]);
  });

  it("a pending card of the row's folder is revealed instead of the modal", async () => {
    agent.requests.get(P.TRUST_WORKSPACE)!(params, new vscode.CancellationTokenSource().token);
    await trustWorkspace(agent as unknown as AgentClient, chat, statusModel([restricted, other]), { kind: "workspace", workspace: other });
    expect(modal).not.toBeNull(); // the card is about /w, the row about /b
    modal = null;
    agent.sent.length = 0;
    surface.messages.length = 0;
    await trustWorkspace(agent as unknown as AgentClient, chat, statusModel([restricted, other]), { kind: "workspace", workspace: restricted });
    expect(modal).toBeNull();
    expect(agent.sent).toEqual([]);
    expect(surface.messages.filter((x) => x.type === "focusItem")).toHaveLength(1);
  });

  it("for an editor-restricted row it opens VS Code's trust editor", async () => {
    const editor: P.WorkspaceStatusPayload = { ...restricted, state: "editor-restricted" };
    await trustWorkspace(agent as unknown as AgentClient, chat, statusModel([editor]), { kind: "workspace", workspace: editor });
    expect(ran).toEqual(["workbench.trust.manage"]);
    expect(modal).toBeNull();
    expect(agent.sent).toEqual([]);
  });

  it("registered: Trust and Restrict Workspace Settings send agent/setWorkspaceTrust", async () => {
    const views = {} as unknown as ChatViews;
    const m = statusModel([restricted]);
    const disposables = registerCommands(agent as unknown as AgentClient, chat, views, m);
    try {
      await vscode.commands.registered.get("agentLs.restrictWorkspace")!();
      expect(agent.sent).toEqual([{ method: P.SET_WORKSPACE_TRUST, params: { trusted: false } }]);
      agent.sent.length = 0;
      m.update([], [], [restricted]); // (the fake server answered "trusted")
      await vscode.commands.registered.get("agentLs.trustWorkspace")!();
      expect(agent.sent).toEqual([{ method: P.SET_WORKSPACE_TRUST, params: { trusted: true, folder: "/w" } }]);
      // Trust Server on a server its restricted folder holds: that folder's decision, not mcp/trust
      agent.sent.length = 0;
      modal = null;
      m.update([{ name: "leak", state: "awaiting-trust", scope: "mcp.json", toolCount: 0 }], [], [restricted, other]);
      await vscode.commands.registered.get("agentLs.trustServer")!("leak");
      expect((modal![1] as { detail: string }).detail).toMatch(/^\/w: /);
      expect((modal![1] as { detail: string }).detail).not.toContain("/b: ");
      expect(agent.sent).toEqual([{ method: P.SET_WORKSPACE_TRUST, params: { trusted: true, folder: "/w" } }]);
    } finally {
      for (const d of disposables) d.dispose();
    }
  });
});

describe("the pending card survives the chat around it", () => {
  it("a new session or a resumed one keeps a card that still waits (and drops answered ones)", () => {
    let s = reduce(initialState(), { type: "workspaceTrustRequest", id: "w1", params });
    s = reduce(s, { type: "trustRequest", id: "t1", params: entry });
    s = reduce(s, { type: "trustAnswered", id: "t1", answer: "deny" });
    s = reduce(s, { type: "userPrompt", text: "hi" });
    s = reduce(s, { type: "reset", sessionId: "new" });
    expect(s.items.map((i) => i.id)).toEqual(["w1"]);
    s = reduce(s, { type: "history", sessionId: "old", messages: [{ role: "user", content: "earlier" }] });
    expect(s.items.map((i) => i.kind)).toEqual(["message", "workspaceTrust"]);
    s = reduce(s, { type: "workspaceTrustAnswered", id: "w1", answer: "trust" });
    expect(s.items.find((i) => i.id === "w1")).toMatchObject({ answer: "trust" });
  });

  it("revealing it focuses the card itself (not a button), also in a chat that only now loads", async () => {
    const agent = new FakeAgent();
    const chat = new ChatController(agent as unknown as AgentClient);
    agent.requests.get(P.TRUST_WORKSPACE)!(params, new vscode.CancellationTokenSource().token);
    const id = chat.snapshot.items[0].id;
    expect(chat.revealWorkspaceTrust()).toBe(true); // no chat open yet
    const late = new Surface();
    chat.attach(late);
    await chat.handle(late, { type: "ready" });
    expect(late.messages.map((m) => m.type)).toEqual(["state", "focusItem"]);
    // the webview applies it
    app.receive(late.messages[0]);
    app.receive(late.messages[1]);
    const card = q('[data-testid="workspace-trust-prompt"]')!;
    expect(document.activeElement).toBe(card);
    expect(card.dataset.itemId).toBe(id);
    // once is enough
    await chat.handle(late, { type: "ready" });
    expect(late.messages.map((m) => m.type)).toEqual(["state", "focusItem", "state"]);
  });
});
