/**
 * MCP Apps in the chat: the bridge (shared/appBridge.ts: the spec's JSON-RPC, the flood limits,
 * teardown, the app's CSP), the webview's frames (webview/appView.ts: sandboxed, messages taken
 * only from the app's own frame, never as chat commands) and the extension host's side
 * (src/chat/apps.ts and appFrames.ts: the HTML served with its CSP, an app's tools/call
 * through agent/appCallTool with the frame's own server and session, a refusal passed back).
 */
import * as http from "http";
import { afterEach, describe, expect, it } from "vitest";
import { AppBridge, appCsp, DEFAULT_LIMITS, type AppHost, type JsonObject } from "../shared/appBridge";
import type { AppItem } from "../shared/items";
import type { ToWebview } from "../shared/messages";
import { ChatController, type ChatSurface } from "../src/chat/controller";
import type { AgentClient } from "../src/client";
import * as P from "../src/protocol";
import { AppViews, fromHost } from "../webview/appView";
import * as vscode from "./fakes/vscode";
import * as W from "./webviewHarness";

const flush = () => new Promise((r) => setTimeout(r, 0));

class Host implements AppHost {
  calls: [string, JsonObject][] = [];
  messages: string[] = [];
  contexts: string[] = [];
  heights: number[] = [];
  links: string[] = [];
  linkAnswer: (url: string) => Promise<void> = async () => undefined;
  callAnswer: (name: string) => Promise<JsonObject> = async () => ({ content: [{ type: "text", text: "ok" }] });
  callTool(name: string, args: JsonObject): Promise<JsonObject> {
    this.calls.push([name, args]);
    return this.callAnswer(name);
  }
  async message(text: string): Promise<void> {
    this.messages.push(text);
  }
  async context(text: string): Promise<void> {
    this.contexts.push(text);
  }
  resize(height: number): void {
    this.heights.push(height);
  }
  openLink(url: string): Promise<void> {
    this.links.push(url);
    return this.linkAnswer(url);
  }
}

function bridge(host = new Host(), now = () => 0) {
  const sent: JsonObject[] = [];
  const b = new AppBridge((m) => sent.push(m as JsonObject), host, {
    toolInput: { title: "q3" }, toolResult: { content: [{ type: "text", text: "board" }] }, toolName: "show_board", theme: "dark",
  }, DEFAULT_LIMITS, now);
  return { b, sent, host };
}

const req = (id: number, method: string, params: JsonObject = {}) => ({ jsonrpc: "2.0", id, method, params });

describe("the app bridge", () => {
  it("answers ui/initialize, then sends the tool's input and result once the app is initialized", async () => {
    const { b, sent } = bridge();
    b.receive(req(1, "ui/initialize", { protocolVersion: "2026-01-26", appInfo: { name: "x" } }));
    await flush();
    const init = sent[0] as { id: number; result: { hostInfo: { name: string }; hostCapabilities: JsonObject } };
    expect(init.id).toBe(1);
    expect(init.result.hostInfo.name).toBe("agent-ls");
    expect(Object.keys(init.result.hostCapabilities)).toContain("serverTools");
    expect(sent).toHaveLength(1); // nothing before `initialized`
    b.receive({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
    expect(sent.slice(1).map((m) => m.method)).toEqual(["ui/notifications/tool-input", "ui/notifications/tool-result"]);
    expect((sent[1] as { params: JsonObject }).params).toEqual({ arguments: { title: "q3" } });
    b.receive({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
    expect(sent).toHaveLength(3); // once
  });

  it("passes tools/call to the host and a refusal back as an error, the host never skipped", async () => {
    const { b, sent, host } = bridge();
    host.callAnswer = async (name) => {
      if (name === "model_secret") throw new Error("the tool 'model_secret' of MCP server 'apps' is not callable by its app (its visibility is model only)");
      return { content: [{ type: "text", text: "saved blue" }] };
    };
    b.receive(req(1, "tools/call", { name: "save_choice", arguments: { choice: "blue" } }));
    b.receive(req(2, "tools/call", { name: "model_secret", arguments: {} }));
    await flush();
    expect(host.calls).toEqual([["save_choice", { choice: "blue" }], ["model_secret", {}]]);
    expect(sent.find((m) => m.id === 1)).toMatchObject({ result: { content: [{ text: "saved blue" }] } });
    const refused = sent.find((m) => m.id === 2) as { error: { code: number; message: string } };
    expect(refused.error.code).toBe(-32000);
    expect(refused.error.message).toContain("visibility is model only");
  });

  it("sends ui/message and ui/update-model-context to the host; refuses what it does not support", async () => {
    const { b, sent, host } = bridge();
    b.receive(req(1, "ui/message", { role: "user", content: [{ type: "text", text: "picked blue" }] }));
    b.receive(req(2, "ui/message", { role: "user", content: [] }));
    b.receive(req(3, "ui/update-model-context", { content: [{ type: "text", text: "filter: blue" }] }));
    b.receive(req(5, "resources/read", { uri: "file:///etc/passwd" }));
    await flush();
    expect(host.messages).toEqual(["picked blue"]);
    expect(host.contexts).toEqual(["filter: blue"]);
    expect(sent.find((m) => m.id === 2)).toMatchObject({ error: { code: -32602 } });
    expect(sent.find((m) => m.id === 5)).toMatchObject({ error: { code: -32601 } });
  });

  it("passes ui/open-link to the host; its refusal goes back to the app", async () => {
    const { b, sent, host } = bridge();
    host.linkAnswer = async (url) => {
      if (url.startsWith("file:")) throw new Error("the link was not opened: only http and https links are opened, not file:");
    };
    b.receive(req(1, "ui/open-link", { url: "https://example.com/docs?q=1" }));
    b.receive(req(2, "ui/open-link", { url: "file:///etc/passwd" }));
    b.receive(req(3, "ui/open-link", {}));
    await flush();
    expect(host.links).toEqual(["https://example.com/docs?q=1", "file:///etc/passwd"]);
    expect(sent.find((m) => m.id === 1)).toMatchObject({ result: {} });
    expect(sent.find((m) => m.id === 2)).toMatchObject({ error: { code: -32000 } });
    expect(JSON.stringify(sent.find((m) => m.id === 2))).toContain("only http and https");
    expect(sent.find((m) => m.id === 3)).toMatchObject({ error: { code: -32602 } });
  });

  it("bounds a flood: per second, pending tool calls, message size; heights are clamped", async () => {
    let t = 0;
    const { b, sent, host } = bridge(new Host(), () => t);
    let release: () => void = () => undefined;
    host.callAnswer = () => new Promise((r) => (release = () => r({ content: [] })));
    for (let i = 0; i < 5000; i++) b.receive({ jsonrpc: "2.0", method: "ui/notifications/size-changed", params: { height: 100000 } });
    expect(host.heights.length).toBe(DEFAULT_LIMITS.perSecond);
    expect(new Set(host.heights)).toEqual(new Set([DEFAULT_LIMITS.maxHeight]));
    expect(b.dropped).toBe(5000 - DEFAULT_LIMITS.perSecond);
    t = 1000; // the next second
    for (let i = 0; i < 10; i++) b.receive(req(i, "tools/call", { name: "save_choice", arguments: {} }));
    await flush();
    expect(host.calls).toHaveLength(DEFAULT_LIMITS.maxPending);
    expect(sent.filter((m) => (m.error as { message?: string } | undefined)?.message === "too many tool calls at once")).toHaveLength(10 - DEFAULT_LIMITS.maxPending);
    release();
    t = 2000;
    b.receive(req(99, "ping", { pad: "x".repeat(DEFAULT_LIMITS.maxBytes + 1) }));
    await flush();
    expect(sent.find((m) => m.id === 99)).toBeUndefined();
  });

  it("tells an initialized app when the editor's theme changes", () => {
    const { b, sent } = bridge();
    b.themeChanged("light"); // before initialized: kept for the app's ui/initialize
    expect(sent).toHaveLength(0);
    b.receive({ jsonrpc: "2.0", method: "ui/notifications/initialized", params: {} });
    b.themeChanged("dark");
    b.themeChanged("dark");
    expect(sent.filter((m) => m.method === "ui/notifications/host-context-changed")).toEqual([
      { jsonrpc: "2.0", method: "ui/notifications/host-context-changed", params: { theme: "dark" } },
    ]);
  });

  it("tears the app down with ui/resource-teardown, then says nothing more", async () => {
    const { b, sent } = bridge();
    const done = b.teardown("closed", 1000);
    const ask = sent.at(-1) as { id: string; method: string };
    expect(ask.method).toBe("ui/resource-teardown");
    b.receive({ jsonrpc: "2.0", id: ask.id, result: {} });
    await done;
    b.receive(req(7, "ping"));
    await flush();
    expect(sent.find((m) => m.id === 7)).toBeUndefined();
  });

  it("builds the app's CSP: the restrictive default, declared domains only as plain sources", () => {
    const none = appCsp(null);
    expect(none).toContain("default-src 'none'");
    expect(none).toContain("connect-src 'none'");
    expect(none).toContain("frame-src 'none'");
    expect(none).toContain("sandbox allow-scripts");
    expect(none).not.toContain("'self'");
    const declared = appCsp({
      connectDomains: ["https://api.example.com", "https://a.com; script-src *", "'unsafe-eval'", "*"],
      resourceDomains: ["https://cdn.example.com"],
    });
    expect(declared).toContain("connect-src https://api.example.com;");
    expect(declared).toContain("script-src 'unsafe-inline' https://cdn.example.com;");
    expect(declared).not.toContain("unsafe-eval");
    expect(declared).not.toContain("a.com");
  });
});

function appItem(over: Partial<AppItem> = {}): AppItem {
  return {
    kind: "app", id: "a-1", rev: 0, callId: "c1", sessionId: "s1", server: "apps", tool: "show_board",
    resourceUri: "ui://apps/board.html", frameId: "f".repeat(32), frameUrl: "http://127.0.0.1:9/app/" + "f".repeat(32),
    arguments: { title: "q3" }, result: null, prefersBorder: true, notice: null, context: null, ...over,
  };
}

describe("the app frames in the webview", () => {
  it("renders a sandboxed frame (scripts only) and takes messages only from that frame", () => {
    const posted: unknown[] = [];
    const views = new AppViews((m) => posted.push(m), () => "dark");
    const node = views.render(document, appItem());
    document.body.append(node);
    const frame = node.querySelector("iframe")!;
    expect(frame.getAttribute("sandbox")).toBe("allow-scripts");
    expect(frame.getAttribute("allow")).toBe("");
    expect(frame.src).toContain("/app/");
    // another window (the chat's host, a frame the app opened) is not the app
    expect(views.route(new MessageEvent("message", { data: req(1, "ui/initialize"), source: window }))).toBe(false);
    expect(views.route(new MessageEvent("message", { data: req(1, "ui/initialize") }))).toBe(false);
    // the app's own frame: to its bridge
    expect(frame.contentWindow).not.toBeNull();
    expect(views.route(new MessageEvent("message", { data: { type: "prompt", text: "pwned" }, source: frame.contentWindow }))).toBe(true);
    expect(posted).toEqual([]); // a chat command from the app is nothing
    // a re-render of the same app keeps its element (the frame is not reloaded)
    expect(views.render(document, { ...appItem(), rev: 1, context: "filter" }, node)).toBe(node);
    expect(node.querySelector("[data-testid=app-context]")?.textContent).toContain("filter");
    node.remove();
  });

  it("reads only the host frame's messages as chat messages", () => {
    const origin = "https://webview.example";
    expect(fromHost(new MessageEvent("message", { origin }), origin)).toBe(true);
    expect(fromHost(new MessageEvent("message", { origin: "null" }), origin)).toBe(false);
    expect(fromHost(new MessageEvent("message", { origin: "https://evil.example" }), origin)).toBe(false);
    expect(fromHost(new MessageEvent("message", { origin: "null" }), "null")).toBe(false);
  });

  it("says in the card which permissions the app asked for and that none is granted", async () => {
    const agent = new FakeAgent();
    const chat = new ChatController(agent as unknown as AgentClient);
    chat.attach(new Surface());
    await chat.appFrames.start();
    const send = (event: P.AgentEvent) => agent.notifications.get(P.EVENT)!({ sessionId: "s1", event } satisfies P.EventParams);
    send({ type: "tool_call_started", callId: "c1", name: "mcp__apps__scan", arguments: {}, server: "apps", displayName: "scan" });
    send({
      type: "tool_call_finished", callId: "c1", name: "mcp__apps__scan", isError: false, content: "scanner", durationMs: 3,
      app: { server: "apps", tool: "scan", resourceUri: "ui://apps/scan.html", arguments: {}, html: "<p>scan</p>", csp: null,
             permissions: { clipboardWrite: {}, camera: {}, bogus: {} }, prefersBorder: null, result: null, error: null },
    });
    const item = chat.snapshot.items.find((i): i is AppItem => i.kind === "app")!;
    expect(item.permissions).toEqual(["camera", "clipboardWrite"]);
    const views = new AppViews(() => undefined, () => "dark");
    const node = views.render(document, item);
    const frame = node.querySelector("iframe")!;
    expect(frame.getAttribute("allow")).toBe(""); // still never granted
    const line = node.querySelector("[data-testid=app-permissions]");
    expect(line?.getAttribute("role")).toBe("note");
    expect(line?.textContent).toBe(
      "This app asked for the camera and writing to the clipboard; agent-ls does not grant them to apps, so the parts that need them will not work.");
    // an app that asked for nothing has no such line
    expect(views.render(document, appItem({ id: "a-2", frameId: "g".repeat(32) })).querySelector("[data-testid=app-permissions]")).toBeNull();
    chat.dispose();
  });

  it("shows why an app is not shown", () => {
    const views = new AppViews(() => undefined, () => "dark");
    const node = views.render(document, appItem({ frameId: null, frameUrl: null, notice: "This tool's app cannot be shown: too large" }));
    expect(node.querySelector("iframe")).toBeNull();
    expect(node.querySelector("[data-testid=app-notice]")?.textContent).toContain("too large");
  });
});

describe("an app in the chat webview", () => {
  it("shows the app right under its tool card, keeps its frame across re-renders, tears it down with the session", async () => {
    W.mount({ sessionId: "s1" });
    W.ev({ type: "tool_call_started", callId: "c1", name: "mcp__apps__show_board", arguments: {}, server: "apps", displayName: "show_board" });
    W.ev({
      type: "tool_call_finished", callId: "c1", name: "mcp__apps__show_board", isError: false, content: "board", durationMs: 1,
      app: { server: "apps", tool: "show_board", resourceUri: "ui://apps/board.html", arguments: {}, html: null, csp: null, permissions: null,
             prefersBorder: null, result: null, error: null, frameId: "f".repeat(32), frameUrl: "http://127.0.0.1:9/app/" + "f".repeat(32) } as P.McpAppPayload,
    });
    const card = W.q("tool-card")!;
    const box = W.q("app-card")!;
    expect(card.nextElementSibling).toBe(box);
    const frame = box.querySelector("iframe")!;
    const posted: unknown[] = [];
    frame.contentWindow!.postMessage = ((m: unknown) => void posted.push(m)) as typeof window.postMessage;
    W.act({ type: "appContext", frameId: "f".repeat(32), text: "filter" });
    expect(W.q("app-card")!.querySelector("iframe")).toBe(frame); // the same frame: not reloaded
    expect(W.q("app-context")!.textContent).toContain("filter");
    W.act({ type: "reset", sessionId: "s2" });
    await flush();
    expect(posted).toEqual([expect.objectContaining({ method: "ui/resource-teardown" })]);
    expect(box.hidden).toBe(true); // hidden while it winds down, removed once it answered or half a second passed
    await new Promise((r) => setTimeout(r, 600));
    expect(box.isConnected).toBe(false);
  });
});

class FakeAgent {
  readonly sent: { method: string; params: unknown }[] = [];
  readonly notifications = new Map<string, (params: unknown) => void>();
  private readonly state = new vscode.EventEmitter<{ state: string; error?: string }>();
  readonly onDidChangeState = this.state.event;
  readonly output = { info: () => undefined, warn: () => undefined, error: () => undefined };
  answer: (method: string, params: unknown) => Promise<unknown> = async () => ({});
  running: unknown = {};
  addBinder(binder: (client: unknown) => unknown): void {
    binder({
      onNotification: (method: string, fn: (params: unknown) => void) => {
        this.notifications.set(method, fn);
        return new vscode.Disposable();
      },
      onRequest: () => new vscode.Disposable(),
    });
  }
  request<R>(method: string, params?: unknown): Promise<R> {
    this.sent.push({ method, params });
    return this.answer(method, params) as Promise<R>;
  }
}

class Surface implements ChatSurface {
  readonly messages: ToWebview[] = [];
  readonly visible = true;
  post(message: ToWebview): void {
    this.messages.push(message);
  }
}

function get(url: string): Promise<{ status: number; csp: string; body: string }> {
  return new Promise((resolve, reject) => {
    http.get(url, (res) => {
      let body = "";
      res.on("data", (c: Buffer) => (body += c.toString()));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, csp: String(res.headers["content-security-policy"] ?? ""), body }));
    }).on("error", reject);
  });
}

describe("the extension host's side of apps", () => {
  let chat: ChatController | null = null;
  afterEach(() => chat?.dispose());

  async function start(): Promise<{ agent: FakeAgent; chat: ChatController; surface: Surface; item: AppItem }> {
    const agent = new FakeAgent();
    chat = new ChatController(agent as unknown as AgentClient);
    const surface = new Surface();
    chat.attach(surface);
    await chat.appFrames.start();
    const send = (event: P.AgentEvent) => agent.notifications.get(P.EVENT)!({ sessionId: "s1", event } satisfies P.EventParams);
    send({ type: "tool_call_started", callId: "c1", name: "mcp__apps__show_board", arguments: { title: "q3" }, server: "apps", displayName: "show_board" });
    send({
      type: "tool_call_finished", callId: "c1", name: "mcp__apps__show_board", isError: false, content: "board for q3", durationMs: 3,
      app: { server: "apps", tool: "show_board", resourceUri: "ui://apps/board.html", arguments: { title: "q3" }, html: "<!doctype html><p>board</p>",
             csp: { connectDomains: ["https://api.example.com"] }, permissions: {}, prefersBorder: null, result: { content: [] }, error: null },
    });
    const item = chat.snapshot.items.find((i): i is AppItem => i.kind === "app")!;
    return { agent, chat, surface, item };
  }

  it("serves the app's HTML with its own CSP; the webview gets the frame's address, not the HTML", async () => {
    const { chat: c, item } = await start();
    expect(item.frameUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/app\/[A-Za-z0-9_-]+$/);
    expect(JSON.stringify(c.snapshot)).not.toContain("<p>board</p>");
    const page = await get(item.frameUrl!);
    expect(page.status).toBe(200);
    expect(page.body).toContain("<p>board</p>");
    expect(page.csp).toContain("connect-src https://api.example.com");
    expect(page.csp).toContain("sandbox allow-scripts");
    expect((await get(item.frameUrl!.replace(/app\/.*/, "app/" + "x".repeat(32)))).status).toBe(404);
    // another conversation: the app is forgotten
    c.appFrames.keepOnly("s2");
    expect((await get(item.frameUrl!)).status).toBe(404);
  });

  it("sends an app's tools/call with the frame's server and session; a refusal goes back to the app", async () => {
    const { agent, chat: c, surface, item } = await start();
    agent.answer = async (method, params) => {
      if (method === P.APP_CALL_TOOL && (params as P.AppCallToolParams).tool === "model_secret") {
        throw new Error("the tool 'model_secret' of MCP server 'apps' is not callable by its app (its visibility is model only)");
      }
      return { isError: false, content: "saved blue", denied: false, structured: null, truncatedChars: 0, attachments: [] };
    };
    await c.handle(surface, { type: "appCall", frameId: item.frameId, requestId: "r1", tool: "save_choice", arguments: { choice: "blue" }, server: "knob" });
    await c.handle(surface, { type: "appCall", frameId: item.frameId, requestId: "r2", tool: "model_secret", arguments: {} });
    await c.handle(surface, { type: "appCall", frameId: "unknown-frame-id-000000000", requestId: "r3", tool: "save_choice", arguments: {} });
    const calls = agent.sent.filter((s) => s.method === P.APP_CALL_TOOL).map((s) => s.params);
    expect(calls).toEqual([
      { sessionId: "s1", server: "apps", tool: "save_choice", arguments: { choice: "blue" } },
      { sessionId: "s1", server: "apps", tool: "model_secret", arguments: {} },
    ]);
    const replies = surface.messages.filter((m): m is Extract<ToWebview, { type: "appReply" }> => m.type === "appReply");
    expect(replies.find((r) => r.requestId === "r1")?.result).toEqual({ content: [{ type: "text", text: "saved blue" }], isError: false });
    expect(replies.find((r) => r.requestId === "r2")?.error).toContain("visibility is model only");
    expect(replies.find((r) => r.requestId === "r3")?.error).toContain("not part of the conversation shown");
  });

  it("shows a resumed call's app again, read from its server (never from the transcript); says why when it cannot", async () => {
    const agent = new FakeAgent();
    chat = new ChatController(agent as unknown as AgentClient);
    const surface = new Surface();
    chat.attach(surface);
    const call = (id: string, name: string) => ({ role: "assistant", content: "", tool_calls: [{ id, function: { name, arguments: "{\"title\":\"q3\"}" } }] });
    const result = (id: string, server: string, tool: string, app: Record<string, unknown> | null) => ({
      role: "tool", tool_call_id: id, content: `${tool} result`,
      run: { server, displayName: tool, durationMs: 3, isError: false, denied: false, app },
    });
    agent.answer = async (method, params) => {
      if (method === P.SESSIONS_RESUME) {
        return {
          sessionId: "s9", changes: [], plan: [],
          messages: [
            { role: "user", content: "show the board" },
            call("c1", "mcp__apps__show_board"),
            result("c1", "apps", "show_board", { server: "apps", tool: "show_board", resourceUri: "ui://apps/board.html", arguments: { title: "q3" },
                                              result: { structuredContent: { title: "q3" } }, html: "<p>stored page</p>" }),
            call("c2", "mcp__gone__chart"),
            result("c2", "gone", "chart", { server: "gone", tool: "chart", resourceUri: "ui://gone/chart.html", arguments: {}, result: null }),
            call("c3", "mcp__apps__plain"),
            result("c3", "apps", "plain", null),
          ],
        };
      }
      if (method === P.APP_RESOURCE) {
        const p = params as P.AppResourceParams;
        if (p.server === "gone") throw new Error("MCP server 'gone' is not configured");
        return { resourceUri: "ui://apps/board.html", html: "<!doctype html><p>board from the server</p>", csp: {}, permissions: {}, prefersBorder: null };
      }
      return {};
    };
    await chat.resume("s9");
    expect(agent.sent.filter((s) => s.method === P.APP_RESOURCE).map((s) => s.params)).toEqual([
      { server: "apps", tool: "show_board" }, { server: "gone", tool: "chart" },
    ]);
    const items = chat.snapshot.items;
    const apps = items.filter((i): i is AppItem => i.kind === "app");
    expect(apps).toHaveLength(2);
    // each right under its own card
    for (const a of apps) expect(items[items.indexOf(a) - 1]).toMatchObject({ kind: "tool", callId: a.callId });
    const [board, gone] = apps;
    expect(board.frameUrl).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/app\//);
    expect(board.result).toEqual({ structuredContent: { title: "q3" } });
    expect(board.arguments).toEqual({ title: "q3" });
    const page = await get(board.frameUrl!);
    expect(page.body).toContain("board from the server");
    expect(page.body).not.toContain("stored page");
    expect(gone.frameUrl).toBeNull();
    expect(gone.notice).toContain("could not be read again from MCP server gone");
    expect(gone.notice).toContain("is not configured");
    expect(gone.result).toEqual({ content: [{ type: "text", text: "chart result" }] }); // the text result when none was kept
  });

  it("opens an app's link only once the user confirms a modal naming the server and the full URL; only http and https", async () => {
    const { chat: c, surface, item } = await start();
    const saved = { warn: vscode.window.showWarningMessage, open: vscode.env.openExternal };
    const asked: unknown[][] = [];
    const opened: string[] = [];
    let answer: string | undefined = "Open Link";
    vscode.window.showWarningMessage = async (...args: unknown[]) => {
      asked.push(args);
      return answer;
    };
    vscode.env.openExternal = async (uri: vscode.Uri) => {
      opened.push(uri.toString());
      return true;
    };
    try {
      const link = (requestId: string, url: string, frameId = item.frameId!) =>
        c.handle(surface, { type: "appOpenLink", frameId, requestId, url });
      await link("r1", "https://docs.example.com/board?id=7");
      answer = undefined; // the user closes the modal
      await link("r2", "https://evil.example.net/");
      answer = "Open Link";
      for (const [i, bad] of ["javascript:alert(1)", "file:///etc/passwd", "command:workbench.action.terminal.new", "vscode://x/y", "/relative"].entries()) {
        await link(`b${i}`, bad);
      }
      await link("r3", "https://docs.example.com/", "unknown-frame-id-000000000");
      expect(asked).toHaveLength(2);
      expect(String(asked[0][0])).toContain("MCP server apps");
      expect(String(asked[0][0])).toContain("docs.example.com");
      expect(asked[0][1]).toMatchObject({ modal: true });
      expect((asked[0][1] as { detail: string }).detail).toContain("https://docs.example.com/board?id=7");
      expect(opened).toEqual(["https://docs.example.com/board?id=7"]);
      const replies = surface.messages.filter((m): m is Extract<ToWebview, { type: "appReply" }> => m.type === "appReply");
      const reply = (id: string) => replies.find((r) => r.requestId === id);
      expect(reply("r1")).toMatchObject({ result: {} });
      expect(reply("r2")?.error).toContain("did not open");
      for (let i = 0; i < 4; i++) expect(reply(`b${i}`)?.error).toContain("only http and https");
      expect(reply("b4")?.error).toContain("not an absolute URL");
      expect(reply("r3")?.error).toContain("not part of the conversation shown");
    } finally {
      vscode.window.showWarningMessage = saved.warn;
      vscode.env.openExternal = saved.open;
    }
  });

  it("shows the context an app gives the model, and sends its ui/message as a prompt the user sees", async () => {
    const { agent, chat: c, surface, item } = await start();
    await c.handle(surface, { type: "appContext", frameId: item.frameId, requestId: "r1", text: "filter: blue" });
    expect(agent.sent.find((s) => s.method === P.APP_CONTEXT)?.params).toEqual({ sessionId: "s1", server: "apps", resourceUri: "ui://apps/board.html", text: "filter: blue" });
    expect(c.snapshot.items.find((i): i is AppItem => i.kind === "app")?.context).toBe("filter: blue");
    agent.answer = async (method) => (method === P.PROMPT ? { sessionId: "s1", stopReason: "end", text: "", usage: {}, error: null } : {});
    await c.handle(surface, { type: "appMessage", frameId: item.frameId, requestId: "r2", text: "The user picked blue." });
    const prompt = agent.sent.find((s) => s.method === P.PROMPT)?.params as P.PromptParams;
    expect(prompt.text).toContain("The user picked blue.");
    expect(prompt.displayText).toBe("From the app of show_board (MCP server apps): The user picked blue.");
    const shown = c.snapshot.items.filter((i) => i.kind === "message" && i.role === "user").map((i) => (i as { text: string }).text);
    expect(shown).toContain("From the app of show_board (MCP server apps): The user picked blue.");
  });
});
