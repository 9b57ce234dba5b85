/**
 * Issue 44 item 2: readable at the default side bar width (~300 px), and the chat gets the height.
 * - The MCP Servers view: its rows do not wrap (a workbench tree), so a sentence the user must read
 *   is laid out over rows between words; a failed server's reason quotes what the server said.
 * - The view starts collapsed and opens by itself (TreeView.reveal) only when something newly
 *   needs the user: a server that fails, waits for trust or for a sign-in.
 * - The chat can move to the secondary side bar (package.json's container and commands).
 * - A model name breaks after its "/", never inside a word.
 */
import { readFileSync } from "fs";
import * as path from "path";
import { describe, expect, it } from "vitest";
import type { AgentClient } from "../src/client";
import { attentionKeys, newAttention, serverOwnMessage, wrapWords } from "../src/format";
import * as P from "../src/protocol";
import { revealWhenNeeded, ServersModel, ServersTree, type ServerNode } from "../src/servers";
import { setBreakable } from "../webview/modelPicker";
import * as vscode from "./fakes/vscode";

function model(): ServersModel {
  const agent = { state: "running", onDidChangeState: new vscode.EventEmitter<unknown>().event, addBinder: () => undefined, output: { warn: () => undefined } };
  return new ServersModel(agent as unknown as AgentClient);
}

const healthy: P.ServerStatus = { name: "healthy", state: "connected", toolCount: 1 };
const broken: P.ServerStatus = {
  name: "broken",
  state: "failed",
  toolCount: 0,
  error: { phase: "handshake", message: "the server process exited during the handshake with exit code 3 | stderr: BROKEN_API_KEY is not set", exitCode: 3 },
  stderrTail: ["BROKEN_API_KEY is not set"],
};
const restricted: P.WorkspaceStatusPayload = { folder: "/w/ws", state: "restricted", message: "This workspace is restricted: its agent-ls settings and MCP servers are ignored until you trust it." };

describe("wrapWords: a sentence over tree rows", () => {
  it("breaks between words only, each row at most the width", () => {
    const text = "The server process exited with code 3 during the MCP handshake.";
    const rows = wrapWords(text, 30);
    expect(rows).toEqual(["The server process exited with", "code 3 during the MCP", "handshake."]);
    expect(rows.join(" ")).toBe(text);
    for (const r of rows) expect(r.length).toBeLessThanOrEqual(30);
  });

  it("a word longer than the width gets a row of its own, whole", () => {
    const long = "/an/unbroken/path/that/is/much/wider/than/the/row";
    expect(wrapWords(`in ${long} now`, 20)).toEqual(["in", long, "now"]);
    expect(wrapWords("   ", 20)).toEqual([]);
  });
});

describe("the server's own message", () => {
  it("is its last stderr line, else the stderr kept in the error, else none", () => {
    expect(serverOwnMessage(broken)).toBe("BROKEN_API_KEY is not set");
    expect(serverOwnMessage({ ...broken, stderrTail: [] })).toBe("BROKEN_API_KEY is not set");
    expect(serverOwnMessage({ error: { phase: "handshake", message: "x | stderr: one / two" } })).toBe("two");
    expect(serverOwnMessage({ error: { phase: "handshake", message: "the handshake did not finish within 30s" }, stderrTail: [] })).toBeNull();
    expect(serverOwnMessage({ error: null, stderrTail: ["Traceback (most recent call last):", "  "] })).toBeNull();
    expect(serverOwnMessage({ error: null, stderrTail: ["x".repeat(400)] })!.length).toBe(300);
  });

  it("is quoted under the reason in the servers view, every row short enough for the side bar", () => {
    const m = model();
    m.update([broken, healthy]);
    const t = new ServersTree(m);
    const rows = t.getChildren(t.getChildren()[0]);
    const texts = (what: string) => rows.flatMap((r) => (r.kind === "line" && r.what === what ? [r.text] : []));
    expect(texts("reason").join(" ")).toBe("The server process exited with code 3 during the MCP handshake.");
    expect(texts("said").join(" ")).toBe("It said: “BROKEN_API_KEY is not set”");
    for (const r of rows) if (r.kind === "line") expect(r.text.length).toBeLessThanOrEqual(30);
  });
});

describe("the servers view opens only when something newly needs the user", () => {
  it("attentionKeys: failed, waiting for trust or sign-in (not starting, not disabled)", () => {
    const keys = attentionKeys([
      healthy,
      broken,
      { name: "t", state: "awaiting-trust", toolCount: 0 },
      { name: "s", state: "needs-sign-in", toolCount: 0 },
      { name: "st", state: "starting", toolCount: 0 },
      { ...broken, name: "again", state: "restarting" },
      { name: "d", state: "disabled", toolCount: 0 },
    ]);
    expect(keys).toEqual(["server:broken", "server:t", "server:s"]);
    expect(newAttention(new Set(["server:broken"]), keys)).toEqual(["server:t", "server:s"]);
    // a folder's trust question waits in the chat's banner: its servers waiting for that answer do not open the view
    const asked = attentionKeys([broken, { name: "t", state: "awaiting-trust", toolCount: 0 }], [restricted]);
    expect(asked).toEqual(["server:broken"]);
    expect(attentionKeys([{ name: "t", state: "awaiting-trust", toolCount: 0 }], [{ ...restricted, state: "declined" }])).toEqual(["server:t"]);
  });

  it("reveals (expands, no focus, no selection) the row that newly needs the user, once", async () => {
    const m = model();
    const t = new ServersTree(m);
    const reveals: [ServerNode, unknown][] = [];
    const view = { reveal: (node: ServerNode, options: unknown) => (reveals.push([node, options]), Promise.resolve()) };
    revealWhenNeeded(view, t, m, () => undefined);
    m.update([healthy]); // all fine: the view stays collapsed
    m.update([{ ...healthy, state: "starting" }, { ...broken, state: "starting" }]);
    expect(reveals).toHaveLength(0);
    m.update([healthy, broken]); // it fails: revealed on its row
    expect(reveals).toHaveLength(1);
    const [node, options] = reveals[0];
    expect(node.kind === "server" && node.status.name).toBe("broken");
    expect(options).toEqual({ select: false, focus: false, expand: true });
    // the row object is the one the tree gives the editor (TreeView.reveal needs it)
    expect(t.getChildren()).toContain(node);
    expect(t.getParent(t.getChildren(node)[0])).toBe(node);
    m.update([healthy, broken]); // still failed: not again
    expect(reveals).toHaveLength(1);
    m.update([healthy, { ...broken, state: "connected", error: null }]); // fixed
    m.update([healthy, broken]); // fails again: revealed again
    expect(reveals).toHaveLength(2);
    // a folder waiting for a trust decision: its question is in the chat's banner, the view stays as it is
    m.update([healthy, broken], undefined, [restricted]);
    expect(reveals).toHaveLength(2);
    m.update([healthy, broken, { name: "t", state: "awaiting-trust", toolCount: 0 }], undefined, [restricted]);
    expect(reveals).toHaveLength(2); // it waits for the folder's answer, asked in the chat
    m.update([healthy, broken, { name: "t2", state: "awaiting-trust", toolCount: 0 }], undefined, []);
    expect(reveals).toHaveLength(3);
    expect(reveals[2][0].kind === "server" && reveals[2][0].status.name).toBe("t2");
  });

  it("package.json: the view starts collapsed; the chat can move to the secondary side bar", () => {
    const pkg = JSON.parse(readFileSync(path.join(__dirname, "..", "package.json"), "utf8")) as {
      contributes: {
        viewsContainers: Record<string, { id: string }[]>;
        views: Record<string, { id: string; visibility?: string }[]>;
        commands: { command: string }[];
        menus: Record<string, { command: string; when?: string }[]>;
      };
    };
    const views = pkg.contributes.views.agentLs;
    expect(views.find((v) => v.id === "agentLs.servers")?.visibility).toBe("collapsed");
    expect(views.find((v) => v.id === "agentLs.chat")?.visibility).toBeUndefined();
    expect(pkg.contributes.viewsContainers.secondarySidebar.map((c) => c.id)).toEqual(["agentLsSecondary"]);
    const source = readFileSync(path.join(__dirname, "..", "src", "commands.ts"), "utf8");
    expect(source).toContain('"workbench.view.extension.agentLsSecondary"');
    for (const id of ["agentLs.moveChatToSecondarySideBar", "agentLs.moveChatToSideBar"]) {
      expect(pkg.contributes.commands.map((c) => c.command)).toContain(id);
      expect(source).toContain(`reg("${id}"`);
      expect(pkg.contributes.menus["view/title"].some((m) => m.command === id && m.when === "view == agentLs.chat")).toBe(true);
    }
  });
});

describe("a model name in the chat's header", () => {
  it("may break after a '/', never inside a word", () => {
    const node = document.createElement("span");
    setBreakable(node, "openai/scripted");
    expect(node.innerHTML).toBe("openai/<wbr>scripted");
    expect(node.textContent).toBe("openai/scripted");
    setBreakable(node, "gpt-4o");
    expect(node.innerHTML).toBe("gpt-4o");
  });
});
