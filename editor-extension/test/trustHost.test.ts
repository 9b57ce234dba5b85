/**
 * Workspace trust on the extension host (issue 14): the chat controller's trust cards, the
 * servers view's row of a restricted folder, and the Trust / Restrict Workspace Settings commands.
 * `vscode` is test/fakes/vscode.ts (vitest.config.ts).
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { WorkspaceTrustItem } from "../shared/state";
import { ChatController } from "../src/chat/controller";
import type { AgentClient } from "../src/client";
import type { ChatViews } from "../src/chat/views";
import { heldByRestrictedFolder, registerCommands, trustWorkspace } from "../src/commands";
import { workspaceRowDescription, workspaceStateText, workspaceTrustDetail } from "../src/format";
import * as P from "../src/protocol";
import { ServersModel, ServersTree } from "../src/servers";
import * as vscode from "./fakes/vscode";
import { FakeAgent, LONG_ARGS, Surface, http, params, readPackageJson, restricted, statusModel } from "./trustFixtures";

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
    // issue 44: short rows (a tree row does not wrap); the sentences are wrapped over rows under it
    expect(item.label).toBe("Workspace w");
    expect(item.description).toBe("kept restricted");
    expect(item.description).not.toContain("declined");
    expect(item.tooltip).toContain("(state: declined)");
    expect(item.contextValue).toBe("workspace.declined");
    const nodes = t.getChildren(row);
    const lines = nodes.flatMap((n) => (n.kind === "line" ? [n.text] : []));
    expect(lines.join(" ")).toBe(`You kept it restricted. ${restricted.message}`);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(30);
    const settings = nodes.filter((n) => n.kind === "ignored");
    const children = settings.map((n) => t.getTreeItem(n) as unknown as vscode.TreeItem);
    expect(children.map((c) => c.label)).toEqual(["apiBase", "permissions.allow"]);
    expect(children[0].description).toBe("ignored");
    const why = t.getChildren(settings[0]).flatMap((n) => (n.kind === "line" ? [n.text] : []));
    expect(why.join(" ")).toBe("The endpoint receives your API key and your conversation.");
    // a trusted folder has no row
    m.update([{ name: "knob", state: "connected", toolCount: 1 }], [], [{ ...restricted, state: "trusted" }]);
    expect(t.getChildren().map((n) => n.kind)).toEqual(["server"]);
  });

  it("every state has words", () => {
    for (const s of P.WORKSPACE_TRUST_STATES) expect(workspaceStateText(s)).not.toBe(s === "trusted" ? "" : s);
    expect(workspaceTrustDetail([restricted])).toContain("receives the values of: GH_TOKEN");
  });
});


describe("the servers view, per state", () => {
  const pkg = readPackageJson();
  /** The commands package.json offers inline on a tree item with this contextValue. */
  const inlineCommands = (contextValue: string): string[] =>
    pkg.contributes.menus["view/item/context"]
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
      expect(item.label).toBe("Workspace w");
      expect(item.description).toBe(workspaceRowDescription(state));
      // what the state means, in words, wrapped under the row
      expect(t.getChildren(rows[0]).flatMap((n) => (n.kind === "line" ? [n.text] : [])).join(" ").toLowerCase()).toContain(workspaceStateText(state).toLowerCase());
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
