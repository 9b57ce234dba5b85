/** The MCP Servers tree (against test/fakes/vscode.ts): the error object's message, auth state. */
import { describe, expect, it } from "vitest";
import type { AgentClient } from "../src/client";
import * as P from "../src/protocol";
import { ServersModel, ServersTree, type ServerNode } from "../src/servers";
import * as vscode from "./fakes/vscode";

function tree(servers: P.ServerStatus[]): { tree: ServersTree; model: ServersModel } {
  const agent = {
    onDidChangeState: new vscode.EventEmitter<unknown>().event,
    addBinder: () => undefined,
    output: { warn: () => undefined },
  };
  const model = new ServersModel(agent as unknown as AgentClient);
  model.update(servers);
  return { tree: new ServersTree(model), model };
}

const failed: P.ServerStatus = {
  name: "gh",
  state: "failed",
  toolCount: 0,
  transport: "stdio",
  error: { phase: "spawn", message: "npx: not found", errno: 2 },
  stderrTail: [],
};

describe("MCP Servers view", () => {
  it("shows a failed server's error object as a row with its message, and in the tooltip", () => {
    const { tree: t } = tree([failed, { name: "knob", state: "connected", toolCount: 1, tools: [{ name: "mcp__knob__echo", original: "echo", capability: "read" }] }]);
    const [gh, knob] = t.getChildren();
    const ghItem = t.getTreeItem(gh) as unknown as vscode.TreeItem;
    expect(ghItem.tooltip).toContain("last error: spawn: npx: not found (errno 2)");
    expect(ghItem.collapsibleState).toBe(vscode.TreeItemCollapsibleState.Expanded);
    const rows = t.getChildren(gh);
    expect(rows.map((r: ServerNode) => r.kind)).toEqual(["error"]);
    const row = t.getTreeItem(rows[0]) as unknown as vscode.TreeItem;
    expect(row.label).toBe("spawn: npx: not found (errno 2)");
    expect(row.label).not.toContain("[object Object]");
    // A connected server lists its tools only.
    expect(t.getChildren(knob).map((r: ServerNode) => r.kind)).toEqual(["tool"]);
  });

  it("an older server's plain string error still shows", () => {
    const { tree: t } = tree([{ ...failed, error: "spawn failed" }]);
    const row = t.getTreeItem(t.getChildren(t.getChildren()[0])[0]) as unknown as vscode.TreeItem;
    expect(row.label).toBe("spawn failed");
  });

  it("a server that needs sign-in: its own icon, and the context value that offers Sign in", () => {
    const { tree: t } = tree([{ name: "gh", state: "needs-sign-in", transport: "http", toolCount: 0, auth: { state: "needs-sign-in" } }]);
    const item = t.getTreeItem(t.getChildren()[0]) as unknown as vscode.TreeItem;
    expect((item.iconPath as vscode.ThemeIcon).id).toBe("key");
    expect(item.contextValue).toBe("server.needs-sign-in.auth-needs-sign-in.can-sign-in");
    expect(item.tooltip).toContain("auth: needs-sign-in");
  });
});
