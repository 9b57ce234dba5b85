/**
 * Workspace trust in the extension (issue 14): the server start never runs workspace code
 * (machine-scoped settings, -P), the trust cards show everything that is decided on and as it
 * runs, the restricted state is visible (chat banner), a pending card outlives the chat around it.
 * The host side (controller, servers view row, commands) is in trustHost.test.ts.
 * `vscode` is test/fakes/vscode.ts (vitest.config.ts).
 */
import { readFileSync } from "fs";
import * as path from "path";
import { beforeEach, describe, expect, it } from "vitest";
import { commandLine, pairLines, visible } from "../shared/commandLine";
import { parseFromWebview, type ToWebview } from "../shared/messages";
import { initialState, reduce, type ChatAction } from "../shared/state";
import { ChatController } from "../src/chat/controller";
import type { AgentClient } from "../src/client";
import { workspaceTrustDetail } from "../src/format";
import * as P from "../src/protocol";
import { resolveServerCommand } from "../src/serverCommand";
import { ChatApp } from "../webview/app";
import { inFolder } from "../webview/questions";
import * as vscode from "./fakes/vscode";
import { FakeAgent, LONG_ARGS, Surface, entry, oauthEntry, params, readPackageJson, restricted } from "./trustFixtures";
import { FakeHost } from "./webviewHarness";

describe("starting the server", () => {
  it("the pythonPath form runs python -P (the current directory is never searched)", () => {
    const r = resolveServerCommand({ command: [], pythonPath: "/v/bin/python", env: {} }, "/bin", (p) => p === "/v/bin/python");
    expect(r).toEqual({ ok: true, value: { command: "/v/bin/python", args: ["-P", "-m", "agent_ls", "serve"], source: "agentLs.server.pythonPath" } });
  });

  it("the server settings are machine-scoped and untrusted workspaces are supported in a limited way", () => {
    const pkg = readPackageJson();
    const props = pkg.contributes.configuration.properties;
    for (const key of ["agentLs.server.command", "agentLs.server.pythonPath", "agentLs.server.env"]) {
      expect(props[key].scope, key).toBe("machine");
    }
    expect(pkg.capabilities.untrustedWorkspaces.supported).toBe("limited");
    const ids = pkg.contributes.commands.map((c) => c.command);
    expect(ids).toEqual(expect.arrayContaining(["agentLs.trustWorkspace", "agentLs.restrictWorkspace"]));
  });

  // cwd, initializationOptions and agent/editorTrust: test/client.test.ts
});

// the chat ----------------------------------------------------------------------------------------


let root: HTMLElement;
let host: FakeHost;
let app: ChatApp;
const q = (sel: string) => root.querySelector<HTMLElement>(sel);
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
    expect(card.closest("[data-testid=trust-details]")).not.toBeNull(); // under the banner (issue 30)
    expect(card.getAttribute("aria-label")).toBe("Trust this workspace's agent settings?");
    const entries = Array.from(card.querySelectorAll<HTMLElement>('[data-testid="trust-entry"]'));
    expect(entries.map((e) => e.dataset.server)).toEqual(["db", "leak"]);
    expect(entries[0].querySelector('[data-testid="trust-command"]')!.textContent).toBe(["npx", ...LONG_ARGS].join(" "));
    expect(entries[0].querySelector('[data-testid="trust-cwd"]')!.textContent).toBe("in /w/tools");
    expect(entries[0].querySelector('[data-testid="trust-env"]')!.textContent).toBe("BASH_ENV=./x.sh\nDB_PASSWORD=***\nTOKEN=${env:GH_TOKEN}");
    expect(entries[0].querySelector('[data-testid="trust-variables"]')!.textContent).toBe("Receives the values of: GH_TOKEN");
    expect(entries[0].querySelector('[data-testid="trust-changes"]')!.textContent).toContain("env: BASH_ENV=./x.sh added");
    expect(entries[1].querySelector('[data-testid="trust-url"]')!.textContent).toBe("http://10.0.0.5/mcp?t=${SECRET_TOKEN}");
    expect(entries[1].querySelector('[data-testid="trust-headers"]')!.textContent).toBe("Authorization: Bearer ${env:SECRET_TOKEN}");
    const settings = Array.from(card.querySelectorAll<HTMLElement>('[data-testid="workspace-settings"] li'));
    expect(settings.map((s) => s.dataset.key)).toEqual(["apiBase", "permissions.allow"]);
    expect(settings[0].textContent).toContain('apiBase = "http://10.0.0.5/v1"');
    expect(settings[0].textContent).toContain("the endpoint receives your API key");
    // the files inside the folder the card names are named from it (a full path pushed the command out of view at 300 px)
    expect(entries[0].querySelector(".entry-head")!.textContent).toBe("db (stdio) from .mcp.json");
    expect(settings[0].textContent).toContain("(.agent-ls/settings.json)");
    expect(q('[data-testid="workspace-changes"]')!.textContent).toContain('apiBase: "http://a" -> "http://10.0.0.5/v1"');
    // wrapped, never clipped: the CSS wraps long command lines
    const css = readFileSync(path.join(__dirname, "..", "webview", "style.css"), "utf-8");
    expect(css).toMatch(/\.entry pre[^{]*\{[^}]*white-space: pre-wrap[^}]*overflow-wrap: anywhere/);
  });

  it("names a file by its path in the folder, and a file outside it in full", () => {
    expect(inFolder("/w/.agent-ls/settings.json", "/w")).toBe(".agent-ls/settings.json");
    expect(inFolder("/w/.mcp.json", "/w/")).toBe(".mcp.json");
    expect(inFolder("/w2/.mcp.json", "/w")).toBe("/w2/.mcp.json");
    expect(inFolder("/w", "/w")).toBe("/w");
    expect(inFolder("/etc/x", "/")).toBe("/etc/x");
    expect(inFolder("C:\\w\\.mcp.json", "C:\\w")).toBe(".mcp.json");
  });

  it("answers with the buttons, and shows how it ended", () => {
    act({ type: "workspaceTrustRequest", id: "w1", params });
    const buttons = Array.from(root.querySelectorAll<HTMLButtonElement>('[data-testid="workspace-trust-prompt"] button'));
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

  it("shows every OAuth setting of an entry (which file is read, where credentials go) and what changed", () => {
    // issue 25, finding 1: the card said only "connects to"; the file it reads and posts was not shown
    act({ type: "trustRequest", id: "t1", params: oauthEntry });
    const card = q('[data-testid="trust-prompt"]')!;
    expect(card.querySelector('[data-testid="trust-oauth"]')!.textContent).toBe(
      'grant: jwt_bearer\nassertionFile: ~/.ssh/id_rsa\nclientId: agent\nclientSecret: ***\nidp.tokenEndpoint: https://idp.example/token\nissuer: https://10.0.0.5\nscopes: ["a","b"]\ndpop: true',
    );
    expect(card.querySelector('[data-testid="trust-options"]')!.textContent).toBe("protocol: legacy");
    expect(card.querySelector('[data-testid="trust-refused"]')!.textContent).toContain("oauth.assertionFile, oauth.clientSecret");
    expect(card.querySelector('[data-testid="trust-changes"]')!.textContent).toContain("oauth.assertionFile: ~/.ssh/id_rsa added");
    // the same in the workspace card and in the modal's text
    act({ type: "workspaceTrustRequest", id: "w1", params: { ...params, servers: [oauthEntry] } });
    const ws = q('[data-testid="workspace-trust-prompt"] [data-testid="trust-oauth"]')!;
    expect(ws.textContent).toContain("assertionFile: ~/.ssh/id_rsa");
    const detail = workspaceTrustDetail([{ ...restricted, servers: [oauthEntry] }]);
    expect(detail).toContain("oauth.assertionFile: ~/.ssh/id_rsa");
    expect(detail).toContain("oauth.clientSecret: ***");
    expect(detail).toContain("protocol: legacy");
    expect(detail).toContain("refused in a workspace file (the server does not start): oauth.assertionFile, oauth.clientSecret");
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
    // issue 44: the whole message is the banner's text, wrapped (never cut); the folder in the tooltip
    const line = banner.querySelector(".banner-line") as HTMLElement;
    expect(line.querySelector(".banner-text")!.textContent).toBe(restricted.message);
    expect(line.title).toContain("(state: restricted)");
    const css = readFileSync(path.join(__dirname, "..", "webview", "style.css"), "utf-8");
    expect(css).not.toMatch(/\.banner-text \{[^}]*(nowrap|ellipsis)/);
    expect(css).toMatch(/\.banner-line \{[^}]*flex-wrap: wrap/);
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
