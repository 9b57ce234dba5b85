/** The MCP Servers tree (against test/fakes/vscode.ts): states in words, failed servers open with their reason and fixes. */
import { readFileSync } from "fs";
import * as path from "path";
import { describe, expect, it } from "vitest";
import type { AgentClient } from "../src/client";
import { errorText, rawErrorText } from "../src/errors";
import { serverEntryOffset, serverFixes, serversViewMessage, statusTooltip } from "../src/format";
import * as P from "../src/protocol";
import { doctorCommand } from "../src/serverCommand";
import { bindServersView, ServersModel, ServersTree, type ServerNode } from "../src/servers";
import { readableErrorText, serverProblemSentence, serverStateLabel } from "../shared/labels";
import { initialState, reduce } from "../shared/state";
import * as vscode from "./fakes/vscode";

function tree(servers: P.ServerStatus[], agentState = "running") {
  const stateChanged = new vscode.EventEmitter<unknown>();
  const agent = {
    state: agentState,
    request: async () => ({ servers }),
    onDidChangeState: stateChanged.event,
    addBinder: () => undefined,
    output: { warn: () => undefined },
  };
  const model = new ServersModel(agent as unknown as AgentClient);
  model.update(servers);
  return { tree: new ServersTree(model), model, agent, stateChanged };
}

const item = (t: ServersTree, n: ServerNode) => t.getTreeItem(n) as unknown as vscode.TreeItem;
/** The sentence a server's rows of one kind spell (issue 44: wrapped over rows). */
const sentence = (rows: ServerNode[], what: string) =>
  rows.flatMap((r) => (r.kind === "line" && r.what === what ? [r.text] : [])).join(" ");

const failed: P.ServerStatus = {
  name: "gh",
  state: "failed",
  toolCount: 0,
  transport: "stdio",
  source: "/w/.mcp.json",
  error: { phase: "spawn", message: "command 'npx' not found on PATH (PATH=/usr/bin:/bin)", errno: 2 },
  stderrTail: [],
};

const ALL_STATES = [
  "starting",
  "connected",
  "connected-listing-failed",
  "restarting",
  "failed",
  "disabled",
  "awaiting-trust",
  "untrusted",
  "needs-sign-in",
  "stopped",
];

describe("MCP Servers view", () => {
  it("a failed server is expanded: its reason in one sentence, then the rows that fix it", () => {
    const { tree: t } = tree([failed, { name: "knob", state: "connected", toolCount: 1, tools: [{ name: "mcp__knob__echo", original: "echo", capability: "read" }] }]);
    const [gh, knob] = t.getChildren();
    const ghItem = item(t, gh);
    expect(ghItem.collapsibleState).toBe(vscode.TreeItemCollapsibleState.Expanded);
    // a new id when it comes to need attention: the editor applies Expanded only to an id it
    // has not seen (the row was there before, starting or collapsed)
    expect(ghItem.id).toBe("server:gh:attention");
    expect(item(t, knob).id).toBe("server:knob");
    expect(ghItem.description).toBe("failed");
    expect(ghItem.tooltip).toContain("gh: Failed (state: failed)");
    expect(ghItem.tooltip).toContain("last error: spawn: command 'npx' not found on PATH (PATH=/usr/bin:/bin) (errno 2)");
    const rows = t.getChildren(gh);
    const lines = rows.filter((r): r is ServerNode & { kind: "line" } => r.kind === "line");
    expect(rows.map((r: ServerNode) => r.kind)).toEqual([...lines.map(() => "line"), "fix", "fix", "fix", "fix"]);
    expect(sentence(rows, "reason")).toBe('The command npx was not found: check "command" in the settings, or the PATH the editor was started with.');
    expect(sentence(rows, "reason")).not.toMatch(/errno|PATH=|spawn:|\[object Object\]/);
    // wrapped over rows that fit a 300 px side bar, between words; the first carries the icon
    for (const l of lines) expect(l.text.length).toBeLessThanOrEqual(30);
    expect((item(t, lines[0]).iconPath as vscode.ThemeIcon).id).toBe("error");
    expect((item(t, lines[1]).iconPath as vscode.ThemeIcon).id).toBe("blank");
    const reason = item(t, rows[0]);
    expect(reason.tooltip).toContain("details: spawn: command 'npx' not found");
    const fixes = rows.filter((r) => r.kind === "fix").map((r) => item(t, r));
    expect(fixes.map((f) => f.command?.command)).toEqual(["agentLs.serverDoctor", "agentLs.editServerConfig", "agentLs.showServerLog", "agentLs.restartServer"]);
    for (const f of fixes) expect(f.command?.arguments).toEqual(["gh"]);
    expect(fixes.map((f) => f.label)).toContain("Show the server log");
    // A connected server lists its tools only, collapsed.
    expect(item(t, knob).collapsibleState).toBe(vscode.TreeItemCollapsibleState.Collapsed);
    expect(t.getChildren(knob).map((r: ServerNode) => r.kind)).toEqual(["tool"]);
  });

  it("every state has a label in words; the raw state is in the tooltip only", () => {
    for (const state of ALL_STATES) {
      const { tree: t } = tree([{ name: "s", state, toolCount: 2 }]);
      const it = item(t, t.getChildren()[0]);
      expect(it.description, state).not.toContain("-");
      expect(it.description, state).toBe(
        serverStateLabel(state)[0].toLowerCase() + serverStateLabel(state).slice(1) + (state.startsWith("connected") ? " · 2 tools" : ""),
      );
      expect(it.tooltip, state).toContain(`(state: ${state})`);
      expect((it.iconPath as vscode.ThemeIcon).color?.id, state).not.toBe("testing.iconPassed");
    }
    expect(serverStateLabel("awaiting-trust")).toBe("Waiting for your trust");
    expect(serverStateLabel("connected-listing-failed")).toBe("Connected, but listing failed");
    expect(serverStateLabel("starting")).toBe("Starting…");
    expect(serverStateLabel("some-new-state")).toBe("Some new state");
  });

  it("raw exception text stays out of the reason; what the server said is quoted under it", () => {
    const error = { phase: "handshake", message: "RuntimeError: boom | stderr: Traceback (most recent call last): / x" };
    const { tree: t } = tree([{ ...failed, error, stderrTail: ["Traceback (most recent call last):", 'ValueError: bad'] }]);
    const rows = t.getChildren(t.getChildren()[0]);
    const reason = item(t, rows[0]);
    expect(sentence(rows, "reason")).toBe("The MCP handshake with the server failed.");
    // issue 44: the server's own words (its last stderr line), quoted
    expect(sentence(rows, "said")).toBe("It said: “ValueError: bad”");
    expect((item(t, rows.find((r) => r.kind === "line" && r.what === "said")!).iconPath as vscode.ThemeIcon).id).toBe("quote");
    expect(reason.tooltip).toContain("ValueError: bad"); // the details are one hover away
    expect(serverProblemSentence({ phase: "handshake", message: "HTTP 401 from https://x", httpStatus: 401 })).toBe(
      "The server refused the connection (HTTP 401): sign in, or check its headers.",
    );
    expect(serverProblemSentence({ phase: "handshake", message: "the server process exited during the handshake with exit code 3", exitCode: 3 })).toBe(
      "The server process exited with code 3 during the MCP handshake.",
    );
    expect(serverProblemSentence({ phase: "handshake", message: "the handshake did not finish within 30s (connectTimeout) | stderr: a" })).toBe(
      "The server did not finish the MCP handshake within 30 s (connectTimeout).",
    );
    expect(serverProblemSentence({ phase: "running", message: "the server process exited on signal 9", exitCode: -9 })).toBe(
      "The server process was stopped by signal 9.",
    );
    expect(serverProblemSentence({ phase: "config", message: "variable GITHUB_TOKEN is not set (in env.TOKEN)" })).toBe(
      "Its configuration is not valid: variable GITHUB_TOKEN is not set (in env.TOKEN).",
    );
    expect(serverProblemSentence("KeyError: 'x'")).toBe("'x'.");
  });

  it("an older server's plain string error still shows, as a sentence", () => {
    const { tree: t } = tree([{ ...failed, error: "spawn failed" }]);
    expect(sentence(t.getChildren(t.getChildren()[0]), "reason")).toBe("Spawn failed.");
  });

  it("a server that needs sign-in: expanded, its own icon, a Sign in row and the context value that offers Sign in", () => {
    const { tree: t } = tree([{ name: "gh", state: "needs-sign-in", transport: "http", toolCount: 0, auth: { state: "needs-sign-in" } }]);
    const node = t.getChildren()[0];
    const it = item(t, node);
    expect((it.iconPath as vscode.ThemeIcon).id).toBe("key");
    expect(it.collapsibleState).toBe(vscode.TreeItemCollapsibleState.Expanded);
    expect(it.description).toBe("needs you to sign in");
    expect(it.contextValue).toBe("server.needs-sign-in.auth-needs-sign-in.can-sign-in");
    expect(it.tooltip).toContain("auth: needs-sign-in");
    const rows = t.getChildren(node).map((r) => item(t, r));
    expect(rows[0].label).toBe("Sign in to use this server.");
    expect(rows[1].command).toEqual({ command: "agentLs.signIn", title: "Sign in to this server", arguments: ["gh"] });
  });

  it("a server waiting for trust offers Trust; a listing failure offers the log and a restart", () => {
    const trust = serverFixes({ name: "w", state: "awaiting-trust", toolCount: 0, source: "/w/.mcp.json", error: { phase: "trust", message: "waiting" } });
    expect(trust.map((f) => f.command)).toEqual(["agentLs.trustServer", "agentLs.editServerConfig"]);
    const listing = serverFixes({ name: "l", state: "connected-listing-failed", toolCount: 2, error: { phase: "listing", message: "tools/list failed: McpError: x" } });
    expect(listing.map((f) => f.command)).toEqual(["agentLs.serverDoctor", "agentLs.showServerLog", "agentLs.restartServer"]);
    expect(serverFixes({ name: "ok", state: "connected", toolCount: 1 })).toEqual([]);
  });

  it("while servers start the view says so, not 'No MCP servers yet'", async () => {
    const starting = (name: string, state = "starting"): P.ServerStatus => ({ name, state, toolCount: 0 });
    expect(serversViewMessage("starting", [])).toBe("Starting the agent-ls server…");
    expect(serversViewMessage("running", [starting("time"), starting("gh", "restarting"), { name: "k", state: "connected", toolCount: 1 }])).toBe(
      "Starting 2 servers… (gh, time)",
    );
    expect(serversViewMessage("running", [starting("a")])).toBe("Starting 1 server… (a)");
    expect(serversViewMessage("running", ["a", "b", "c", "d", "e"].map((n) => starting(n)))).toBe("Starting 5 servers… (a, b, c and 2 more)");
    expect(serversViewMessage("running", [{ name: "k", state: "connected", toolCount: 1 }])).toBeUndefined();

    const contexts: unknown[][] = [];
    const saved = vscode.commands.executeCommand;
    vscode.commands.executeCommand = async (...args: unknown[]) => void contexts.push(args);
    try {
      const { model, agent } = tree([starting("gh")]);
      const view: { message?: string } = {};
      bindServersView(view, model, agent as unknown as AgentClient);
      // Running, but its first status has not arrived: still starting (no "No MCP servers yet").
      expect(view.message).toBe("Starting the agent-ls server…");
      expect(contexts).toContainEqual(["setContext", "agentLs.agentState", "starting"]);
      await model.refresh();
      expect(view.message).toBe("Starting 1 server… (gh)");
      expect(contexts).toContainEqual(["setContext", "agentLs.agentState", "running"]);
      model.update([{ name: "gh", state: "connected", toolCount: 1 }]);
      expect(view.message).toBeUndefined();
    } finally {
      vscode.commands.executeCommand = saved;
    }
    // The empty view's welcome text depends on that context key.
    const pkg = JSON.parse(readFileSync(path.join(__dirname, "..", "package.json"), "utf8")) as {
      contributes: { viewsWelcome: { when?: string; contents: string }[]; commands: { command: string }[] };
    };
    const welcome = pkg.contributes.viewsWelcome;
    expect(welcome.find((w) => w.when === "agentLs.agentState == running")?.contents).toMatch(/^No MCP servers yet/);
    expect(welcome.find((w) => w.when?.includes("starting"))?.contents).toMatch(/^Starting the agent-ls server/);
    // Every fix a row offers is a contributed and registered command.
    const contributed = pkg.contributes.commands.map((c) => c.command);
    const source = readFileSync(path.join(__dirname, "..", "src", "commands.ts"), "utf8");
    for (const id of ["agentLs.serverDoctor", "agentLs.editServerConfig", "agentLs.showServerLog", "agentLs.restartServer", "agentLs.signIn", "agentLs.trustServer"]) {
      expect(contributed).toContain(id);
      expect(source).toContain(`reg("${id}"`);
    }
  });

  it("the doctor runs with the language server's program; Edit configuration finds the entry", () => {
    expect(doctorCommand({ command: "/v/bin/python", args: ["-P", "-m", "agent_ls", "serve"], source: "agentLs.server.pythonPath" }, "gh", ["/w"])).toEqual([
      "/v/bin/python", "-P", "-m", "agent_ls", "mcp", "doctor", "gh", "-w", "/w",
    ]);
    expect(doctorCommand({ command: "/usr/bin/agent-ls", args: [], source: "PATH" }, "gh")).toEqual(["/usr/bin/agent-ls", "mcp", "doctor", "gh"]);
    const text = '{\n  "mcpServers": {\n    "gh.x" : {"command": "npx"}\n  }\n}';
    expect(text.slice(serverEntryOffset(text, "gh.x")).startsWith('"gh.x"')).toBe(true);
    expect(serverEntryOffset(text, "gh")).toBe(-1);
  });
});

describe("states and errors in words elsewhere (status bar, notifications, chat)", () => {
  it("the status bar tooltip has no raw state names or exception text", () => {
    const tip = statusTooltip({
      client: "running",
      busy: false,
      servers: [failed, { name: "w", state: "awaiting-trust", toolCount: 0, error: { phase: "trust", message: "waiting until you trust this workspace" } }, { name: "k", state: "connected-listing-failed", toolCount: 2, error: { phase: "listing", message: "tools/list failed: McpError: nope" } }],
    });
    expect(tip).toContain("agent-ls server: Running");
    expect(tip).toContain("gh: failed. The command npx was not found");
    expect(tip).toContain("w: waiting for your trust. It waits for your trust");
    expect(tip).toContain("k: connected, but listing failed · 2 tools. Connected, but listing its tools");
    expect(tip).not.toMatch(/awaiting-trust|connected-listing-failed|McpError|errno/);
    const down = statusTooltip({ client: "failed", error: "the agent-ls language server did not start (agent-ls): Error: spawn agent-ls ENOENT", busy: false, servers: [] });
    expect(down).toBe("agent-ls server: Could not start. The agent-ls language server did not start (agent-ls): spawn agent-ls ENOENT");
  });

  it("exception class names and tracebacks are taken out of messages the user reads", () => {
    expect(readableErrorText("RuntimeError: boom")).toBe("Boom");
    expect(readableErrorText("httpx.ConnectError: [Errno 111] Connection refused")).toBe("[Errno 111] Connection refused");
    expect(readableErrorText("Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n    f()\nValueError: bad value")).toBe("Bad value");
    expect(readableErrorText("the call failed (TimeoutError: slow)")).toBe("the call failed (slow)");
    expect(readableErrorText("no model is configured: set \"model\"")).toBe('no model is configured: set "model"');
    expect(readableErrorText("x ".repeat(400), 50).length).toBeLessThanOrEqual(51);
    expect(readableErrorText("")).toMatch(/Something went wrong/);
    // Notifications and the chat get the readable text; logs can have the raw one.
    const internal = { code: -32603, message: "KeyError: 'session'" };
    expect(errorText(internal)).toBe("'session' (an internal error of the agent-ls server: details are in the Agent output)");
    expect(rawErrorText(internal)).toBe("KeyError: 'session'");
    expect(errorText(new Error("session abc is already answering a prompt"))).toBe("session abc is already answering a prompt");
  });

  it("the chat shows a turn's error without the exception class", () => {
    let s = reduce(initialState(), { type: "event", sessionId: "s1", event: { type: "error", kind: "internal", message: "AttributeError: 'NoneType' object has no attribute 'x'" } });
    s = reduce(s, { type: "promptFinished", result: { sessionId: "s1", stopReason: "error", text: "", error: { kind: "internal", message: "AttributeError: 'NoneType' object has no attribute 'x'" } } as never });
    const errors = s.items.filter((i) => i.kind === "message" && i.role === "error").map((i) => (i as { text: string }).text);
    expect(errors).toEqual(["'NoneType' object has no attribute 'x'"]); // once, readable
  });
});
