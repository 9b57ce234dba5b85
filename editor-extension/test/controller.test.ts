/**
 * The chat controller (extension host side) against a fake language client: Stop for turns
 * a code action started (agent/cancel), prompts the server withdraws ($/cancelRequest),
 * "Ask agent" asking for its question, code-action turns and resumed sessions shown like live
 * messages. `vscode` is test/fakes/vscode.ts (vitest.config.ts).
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { ToWebview } from "../shared/messages";
import { initialState, type ChatState, type MessageItem } from "../shared/state";
import { ChatController, type ChatSurface } from "../src/chat/controller";
import type { AgentClient } from "../src/client";
import { askQuestionIfNeeded, codeActionMiddleware, pickSession } from "../src/commands";
import * as P from "../src/protocol";
import { ChatApp } from "../webview/app";
import * as vscode from "./fakes/vscode";

type Handler = (params: unknown, token: vscode.CancellationToken) => unknown;

interface Sent {
  method: string;
  params: unknown;
  token?: vscode.CancellationToken;
}

/** The language client and AgentClient as the controller sees them; the test plays the server. */
class FakeAgent {
  readonly sent: Sent[] = [];
  readonly notifications = new Map<string, (params: unknown) => void>();
  readonly requests = new Map<string, Handler>();
  private readonly state = new vscode.EventEmitter<{ state: string; error?: string }>();
  readonly onDidChangeState = this.state.event;
  readonly output = { info: () => undefined, warn: () => undefined, error: () => undefined };
  /** How the "server" answers each method (default: an empty object). */
  answer: (method: string, params: unknown, token?: vscode.CancellationToken) => Promise<unknown> = async () => ({});
  running: unknown = {};

  addBinder(binder: (client: unknown) => unknown): void {
    binder({
      onNotification: (method: string, fn: (params: unknown) => void) => {
        this.notifications.set(method, fn);
        return new vscode.Disposable();
      },
      onRequest: (method: string, fn: Handler) => {
        this.requests.set(method, fn);
        return new vscode.Disposable();
      },
    });
  }

  request<R>(method: string, params?: unknown, token?: vscode.CancellationToken): Promise<R> {
    this.sent.push({ method, params, token });
    return this.answer(method, params, token) as Promise<R>;
  }

  /** The server sends an agent/event notification. */
  event(sessionId: string | null, event: P.AgentEvent): void {
    this.notifications.get(P.EVENT)!({ sessionId, event } satisfies P.EventParams);
  }

  /** The server sends one of its requests (agent/approve, ...); returns the answer and the token source. */
  serverRequest<R>(method: string, params: unknown): { answer: Promise<R>; cts: vscode.CancellationTokenSource } {
    const cts = new vscode.CancellationTokenSource();
    return { answer: this.requests.get(method)!(params, cts.token) as Promise<R>, cts };
  }

  methods(): string[] {
    return this.sent.map((s) => s.method);
  }
}

class Surface implements ChatSurface {
  readonly messages: ToWebview[] = [];
  readonly visible = true;
  post(message: ToWebview): void {
    this.messages.push(message);
  }
}

const flush = () => new Promise((r) => setTimeout(r, 0));
const notices = (s: ChatState) =>
  s.items.filter((i): i is MessageItem => i.kind === "message" && (i.role === "notice" || i.role === "error")).map((i) => i.text);

let agent: FakeAgent;
let chat: ChatController;
let surface: Surface;

beforeEach(() => {
  vscode.window.showInputBox = async () => undefined;
  vscode.window.showQuickPick = async () => undefined;
  agent = new FakeAgent();
  chat = new ChatController(agent as unknown as AgentClient);
  surface = new Surface();
  chat.attach(surface);
});

describe("Stop", () => {
  it("cancels a turn a code action started with agent/cancel {sessionId}", async () => {
    agent.answer = async (method, params) => {
      if (method === P.CANCEL) {
        // The server ends the turn, then answers.
        agent.event((params as P.CancelParams).sessionId, { type: "turn_finished", stopReason: "cancelled" });
        return { cancelled: true } satisfies P.CancelResult;
      }
      return {};
    };
    agent.event("s-bg", { type: "turn_started", turn: 1 });
    agent.event("s-bg", { type: "text", text: "Streaming a long answer" });
    expect(chat.snapshot.busy).toBe(true);
    await chat.handle(surface, { type: "stop" });
    await flush();
    expect(agent.sent.filter((s) => s.method === P.CANCEL).map((s) => s.params)).toEqual([{ sessionId: "s-bg" }]);
    expect(agent.methods()).not.toContain(P.PROMPT);
    expect(chat.snapshot.busy).toBe(false);
    expect(notices(chat.snapshot)).toContain("Stopped.");
    // The webview applies the same actions: its Stop button is disabled again.
    const app = renderApp(surface);
    expect((document.querySelector('[data-testid="stop"]') as HTMLButtonElement).disabled).toBe(true);
    expect(app.state.busy).toBe(false);
  });

  it("cancels the chat's own prompt with $/cancelRequest (the request's token), not agent/cancel", async () => {
    let token: vscode.CancellationToken | undefined;
    agent.answer = (method, _params, t) => {
      if (method !== P.PROMPT) return Promise.resolve({});
      token = t;
      return new Promise((_resolve, reject) =>
        t!.onCancellationRequested(() => reject(Object.assign(new Error("cancelled"), { code: P.REQUEST_CANCELLED }))),
      );
    };
    void chat.handle(surface, { type: "send", text: "tell me a story" });
    await flush();
    agent.event("s1", { type: "turn_started", turn: 1 });
    expect(token?.isCancellationRequested).toBe(false);
    await chat.handle(surface, { type: "stop" });
    await flush();
    expect(token?.isCancellationRequested).toBe(true);
    expect(agent.methods()).not.toContain(P.CANCEL);
    expect(chat.snapshot.busy).toBe(false);
  });

  it("stops the background turn the chat shows even while its own prompt runs in another session", async () => {
    agent.answer = (method) => (method === P.PROMPT ? new Promise(() => undefined) : Promise.resolve({ cancelled: true }));
    void chat.handle(surface, { type: "send", text: "first" });
    await flush();
    agent.event("s-own", { type: "turn_started", turn: 1 });
    agent.event("s-bg", { type: "turn_started", turn: 1 }); // a code action's turn: the chat switches to it
    await chat.handle(surface, { type: "stop" });
    await flush();
    expect(agent.sent.filter((s) => s.method === P.CANCEL).map((s) => s.params)).toEqual([{ sessionId: "s-bg" }]);
    expect(agent.sent.find((s) => s.method === P.PROMPT)!.token!.isCancellationRequested).toBe(false);
  });

  it("a server without agent/cancel: says so and stops showing the turn as busy", async () => {
    agent.answer = async (method) => {
      if (method === P.CANCEL) throw Object.assign(new Error("Method not found"), { code: P.METHOD_NOT_FOUND });
      return {};
    };
    agent.event("s-bg", { type: "turn_started", turn: 1 });
    await chat.handle(surface, { type: "stop" });
    await flush();
    expect(chat.snapshot.busy).toBe(false);
    expect(notices(chat.snapshot).join(" ")).toMatch(/cannot stop a turn a code action started/);
  });

  it("a turn the server no longer runs (its turn_finished was lost): cancelled false clears busy", async () => {
    agent.answer = async () => ({ cancelled: false }) satisfies P.CancelResult;
    agent.event("s-bg", { type: "turn_started", turn: 1 });
    await chat.handle(surface, { type: "stop" });
    await flush();
    expect(agent.methods()).toEqual([P.CANCEL]);
    expect(chat.snapshot.busy).toBe(false);
    expect(notices(chat.snapshot)).not.toContain("Stopped.");
    // Nothing runs now: another Stop sends nothing.
    await chat.handle(surface, { type: "stop" });
    expect(agent.methods()).toEqual([P.CANCEL]);
  });

  it("Stop with nothing running sends nothing", async () => {
    await chat.handle(surface, { type: "stop" });
    expect(agent.sent).toEqual([]);
  });
});

describe("prompts the server withdraws ($/cancelRequest)", () => {
  const approve = (callId: string, sessionId: string | null = "s1"): P.ApproveParams => ({
    callId,
    tool: "mcp__knob__delete_item",
    arguments: { id: "7" },
    reason: "needs approval",
    server: "knob",
    displayName: "delete_item",
    sessionId,
  });

  it("an approval is closed as withdrawn when its request is cancelled, and answers deny", async () => {
    const { answer, cts } = agent.serverRequest<P.ApproveResult>(P.APPROVE, approve("call_1"));
    expect(chat.snapshot.items.filter((i) => i.kind === "approval" && i.answer === null)).toHaveLength(1);
    cts.cancel();
    await expect(answer).resolves.toEqual({ answer: "deny" });
    const item = chat.snapshot.items.find((i) => i.kind === "approval")!;
    expect([item.answer, item.withdrawn]).toEqual(["deny", true]);
    renderApp(surface);
    const box = document.querySelector('[data-testid="approval"]') as HTMLElement;
    expect(box.dataset.withdrawn).toBe("true");
    expect(box.querySelectorAll("button")).toHaveLength(0);
    expect(box.textContent).toContain("Withdrawn");
    // A late click does nothing (the question is gone).
    chat.answerApproval("call_1", "allow_once");
    expect(agent.sent).toHaveLength(0);
  });

  it("two pending questions with the same callId both stay answerable", async () => {
    const a = agent.serverRequest<P.ApproveResult>(P.APPROVE, approve("direct-1", null));
    const b = agent.serverRequest<P.ApproveResult>(P.APPROVE, approve("direct-1", null));
    const ids = chat.snapshot.items.flatMap((i) => (i.kind === "approval" ? [i.requestId] : []));
    expect(new Set(ids).size).toBe(2);
    await chat.handle(surface, { type: "approve", requestId: ids[0], answer: "allow_once" });
    await chat.handle(surface, { type: "approve", requestId: ids[1], answer: "deny" });
    await expect(a.answer).resolves.toEqual({ answer: "allow_once" });
    await expect(b.answer).resolves.toEqual({ answer: "deny" });
  });

  it("trust prompts and elicitation forms close when withdrawn", async () => {
    const trust = agent.serverRequest<P.TrustServerResult>(P.TRUST_SERVER, {
      server: "wsknob",
      command: "/usr/bin/python3",
      args: ["knob.py"],
      source: "/w/.agent-ls/settings.json",
      cwd: "/w/tools",
    } satisfies P.TrustServerParams);
    const elicit = agent.serverRequest<P.ElicitResult>(P.ELICIT, {
      server: "knob",
      message: "Who are you?",
      requestedSchema: { type: "object", properties: { name: { type: "string" } } },
    } satisfies P.ElicitParams);
    renderApp(surface);
    expect(document.querySelector('[data-testid="trust-cwd"]')?.textContent).toBe("in /w/tools");
    trust.cts.cancel();
    elicit.cts.cancel();
    await expect(trust.answer).resolves.toEqual({ trusted: null });
    await expect(elicit.answer).resolves.toEqual({ action: "cancel" });
    const app = renderApp(surface);
    expect(app.state.items.every((i) => (i.kind === "trust" || i.kind === "elicit" ? i.withdrawn === true : true))).toBe(true);
    expect(document.querySelector('[data-testid="elicitation-form"]')).toBeNull();
    expect(document.querySelector('[data-testid="trust-prompt"] button')).toBeNull();
  });
});

describe("code actions", () => {
  const askArgs = { uri: "file:///w/main.py", range: { start: { line: 1, character: 4 }, end: { line: 2, character: 0 } }, text: "return x + 1", mode: "ask" };

  it('"Ask agent" asks for the question and sends it', async () => {
    const asked: unknown[] = [];
    vscode.window.showInputBox = async (opts) => {
      asked.push(opts);
      return "  Is this pure?  ";
    };
    expect(await askQuestionIfNeeded(P.CMD_ASK, [askArgs])).toEqual([{ ...askArgs, question: "Is this pure?" }]);
    expect(asked).toHaveLength(1);
    // Dismissed: nothing runs. Empty: the server's default question.
    vscode.window.showInputBox = async () => undefined;
    expect(await askQuestionIfNeeded(P.CMD_ASK, [askArgs])).toBeNull();
    vscode.window.showInputBox = async () => "";
    expect(await askQuestionIfNeeded(P.CMD_ASK, [askArgs])).toEqual([askArgs]);
    // Fix / Explain, a question already given, other commands: no input box.
    vscode.window.showInputBox = async () => {
      throw new Error("must not ask");
    };
    for (const [command, args] of [
      [P.CMD_ASK, [{ ...askArgs, mode: "fix" }]],
      [P.CMD_ASK, [{ ...askArgs, mode: "explain" }]],
      [P.CMD_ASK, [{ ...askArgs, question: "given" }]],
      [P.CMD_RUN_MCP_PROMPT, [{ ...askArgs, server: "knob", name: "review", argument: "code" }]],
      [P.CMD_RUN_TOOL_ACTION, [{ ...askArgs, index: 0 }]],
    ] as const) {
      expect(await askQuestionIfNeeded(command, [...args])).toEqual(args);
    }
  });

  it("the executeCommand middleware asks too, and runs nothing when dismissed", async () => {
    const mw = codeActionMiddleware();
    const ran: unknown[][] = [];
    const next = async (_c: string, args: unknown[]) => {
      ran.push(args);
      return { started: true };
    };
    vscode.window.showInputBox = async () => "Why?";
    await mw.executeCommand!(P.CMD_ASK, [askArgs], next);
    vscode.window.showInputBox = async () => undefined;
    expect(await mw.executeCommand!(P.CMD_ASK, [askArgs], next)).toBeUndefined();
    expect(ran).toEqual([[{ ...askArgs, question: "Why?" }]]);
  });

  it("a code action's turn shows its user message (question and selection chip) after the notice", () => {
    const noticeId = chat.noteCodeAction("Ask agent");
    agent.event("s9", { type: "turn_started", turn: 1 });
    agent.event("s9", { type: "text", text: "It is pure." });
    chat.showCodeActionOutcome("Ask agent", P.CMD_ASK, { sessionId: "s9", started: true, text: "Is this pure?" }, 0, noticeId, [askArgs]);
    const items = chat.snapshot.items;
    expect(items.map((i) => (i.kind === "message" ? `${i.role}:${i.text}` : i.kind))).toEqual([
      "notice:Code action: Ask agent",
      "user:Is this pure?",
      "assistant:It is pure.",
    ]);
    expect(items[1].kind === "message" && items[1].attachments).toEqual(["main.py:2-3"]);
  });
});

describe("attachments", () => {
  it("MCP resource templates are offered too; the user fills in the variables", async () => {
    agent.answer = async (method) =>
      method === P.MCP_RESOURCES_LIST
        ? ({
            resources: [{ server: "knob", uri: "knob://readme", name: "readme" }],
            templates: [{ server: "knob", uriTemplate: "knob://items/{id}", name: "item" }],
          } satisfies P.ResourcesListResult)
        : {};
    const offered: unknown[] = [];
    vscode.window.showQuickPick = async (items: unknown) => {
      offered.push(...(items as unknown[]));
      return (items as { template?: string }[]).find((i) => i.template);
    };
    let validate: ((v: string) => string | null) | undefined;
    vscode.window.showInputBox = async (opts: unknown) => {
      validate = (opts as { validateInput: (v: string) => string | null }).validateInput;
      expect((opts as { value: string }).value).toBe("knob://items/{id}");
      return "knob://items/7";
    };
    await chat.handle(surface, { type: "attach", kind: "resource" });
    expect(offered).toHaveLength(2);
    expect(validate!("knob://items/{id}")).toMatch(/Replace/);
    expect(validate!("knob://items/7")).toBeNull();
    expect(chat.snapshot.attachments).toEqual([{ kind: "resource", label: "knob: knob://items/7" }]);
    expect(agent.sent[0]).toMatchObject({ method: P.MCP_RESOURCES_LIST, params: {} });
  });
});

describe("sessions", () => {
  it("a slash command is sent expanded, with displayText as typed", async () => {
    agent.answer = async (method) => {
      if (method === P.MCP_PROMPTS_GET) return { description: null, messages: [{ role: "user", text: "Write a greeting for Ada." }] };
      if (method === P.PROMPT) return { sessionId: "s1", stopReason: "end", text: "Hi", usage: {} };
      return {};
    };
    (chat as unknown as { dispatch(a: unknown): void }).dispatch({
      type: "prompts",
      prompts: [{ server: "knob", name: "greet", arguments: [{ name: "name", required: true }] }],
    });
    await chat.handle(surface, { type: "send", text: "/knob:greet Ada" });
    const prompt = agent.sent.find((s) => s.method === P.PROMPT)!.params as P.PromptParams;
    expect(prompt.text).toBe("Write a greeting for Ada.");
    expect(prompt.displayText).toBe("/knob:greet Ada");
  });

  it("a resumed session shows the typed text and attachment chips, not the rendered attachments", async () => {
    const stored: P.StoredMessage[] = [
      {
        role: "user",
        content: "Selection from /w/main.py (lines 2-2):\n```python\nreturn x + 1\n```\n\nWhy?",
        display: {
          text: "Why?",
          attachments: [
            { kind: "selection", uri: "file:///w/main.py", range: { start: { line: 1, character: 4 }, end: { line: 1, character: 16 } }, server: null, languageId: "python" },
            { kind: "resource", uri: "knob://readme", server: "knob" },
          ],
        },
      },
      { role: "assistant", content: "Because." },
      { role: "user", content: "plain" },
    ];
    agent.answer = async () => ({ sessionId: "s1", messages: stored }) satisfies P.SessionsResumeResult;
    await chat.handle(surface, { type: "resumeSession", sessionId: "s1" });
    renderApp(surface);
    const users = [...document.querySelectorAll('[data-testid="message"][data-role="user"]')];
    expect(users.map((u) => u.querySelector(".text")?.textContent)).toEqual(["Why?", "plain"]);
    expect([...users[0].querySelectorAll(".chip")].map((c) => c.textContent)).toEqual(["main.py:2-2", "knob: knob://readme"]);
    expect(users[0].textContent).not.toContain("Selection from");
  });
});

describe("renaming and deleting sessions (issue 39: every front end names and deletes sessions)", () => {
  const sessions: P.SessionInfo[] = [
    { id: "old", title: "Old work", created: 1, updated: 1, messageCount: 2 },
    { id: "new", title: null, created: 2, updated: 5, messageCount: 4 },
  ] as P.SessionInfo[];

  it("the pick lists the most recent first; rename sends agent/sessions/rename and lists again", async () => {
    let offered: { label: string; id: string }[] = [];
    vscode.window.showQuickPick = (async (items: { label: string; id: string }[]) => {
      offered = items;
      return items[1];
    }) as typeof vscode.window.showQuickPick;
    agent.answer = async (method) => {
      if (method === P.SESSIONS_LIST) return { sessions } satisfies P.SessionsListResult;
      if (method === P.SESSIONS_RENAME) return { title: "Retry logic" } satisfies P.RenameResult;
      return {};
    };
    const pick = await pickSession(chat, "Rename which session?");
    expect(offered.map((o) => o.id)).toEqual(["new", "old"]);
    expect(pick).toEqual({ id: "old", label: "Old work", title: "Old work" });
    expect(await chat.renameSession("old", "  Retry   logic ")).toBe("Retry logic");
    expect(agent.sent.find((s) => s.method === P.SESSIONS_RENAME)!.params).toEqual({ sessionId: "old", title: "  Retry   logic " });
    expect(agent.methods().slice(-1)).toEqual([P.SESSIONS_LIST]);
  });

  it("deleting the session the chat shows starts a new one; another session leaves the chat alone", async () => {
    agent.answer = async (method) => {
      if (method === P.SESSIONS_DELETE) return { deleted: true } satisfies P.DeleteResult;
      if (method === P.SESSIONS_LIST) return { sessions: [] } satisfies P.SessionsListResult;
      if (method === P.SESSIONS_RESUME) return { sessionId: "s1", messages: [{ role: "user", content: "hi" }] };
      return {};
    };
    await chat.handle(surface, { type: "resumeSession", sessionId: "s1" });
    expect(chat.snapshot.sessionId).toBe("s1");
    expect(await chat.deleteSession("other")).toBe(true);
    expect(chat.snapshot.sessionId).toBe("s1");
    expect(await chat.deleteSession("s1")).toBe(true);
    expect(chat.snapshot.sessionId).toBeNull();
    expect(chat.snapshot.items.filter((i) => i.kind === "message")).toEqual([]);
  });

  it("no saved session: nothing is picked", async () => {
    agent.answer = async () => ({ sessions: [] });
    expect(await pickSession(chat, "Delete which session?")).toBeUndefined();
  });
});

/** A webview that receives everything the host posted so far, as a real one would. */
function renderApp(from: Surface): ChatApp {
  document.body.innerHTML = '<div id="app"></div>';
  const app = new ChatApp(document.getElementById("app")!, { post: () => undefined, getState: () => undefined, setState: () => undefined });
  app.receive({ type: "state", state: { ...initialState(), server: "running" } });
  for (const m of from.messages) app.receive(m);
  expect(app.state.items).toEqual(chat.snapshot.items); // the webview's reducer agrees with the host's
  return app;
}

describe("the model picker (issue 27, item 3)", () => {
  const models = (current: string, sessionId: string | null): P.ModelsResult => ({
    models: ["openai/a", "openai/b"], current, default: "openai/a", sessionId,
  });

  it("a chat without a session gets one, then agent/setModel; the header shows the pick", async () => {
    agent.answer = async (method, params) => {
      if (method === P.SESSIONS_NEW) return { sessionId: "s9" };
      if (method === P.SET_MODEL) return models((params as P.SetModelParams).model, (params as P.SetModelParams).sessionId);
      return {};
    };
    await chat.handle(surface, { type: "setModel", model: "openai/b" });
    expect(agent.methods()).toEqual([P.SESSIONS_NEW, P.SET_MODEL]);
    expect(agent.sent[1].params).toEqual({ sessionId: "s9", model: "openai/b" });
    expect(chat.snapshot.sessionId).toBe("s9");
    expect(chat.snapshot.models?.current).toBe("openai/b");
    // the next prompt goes to that session
    agent.answer = async () => ({ sessionId: "s9", stopReason: "end", text: "", usage: {}, error: null });
    await chat.send("hello");
    expect((agent.sent.find((s) => s.method === P.PROMPT)!.params as P.PromptParams).sessionId).toBe("s9");
  });

  it("a refused model is said in the chat and the header goes back to the model in effect", async () => {
    agent.answer = async (method) => {
      if (method === P.SESSIONS_RESUME) return { sessionId: "s1", messages: [], changes: [] };
      if (method === P.SET_MODEL) throw new Error("unknown model 'openai/zz': the settings offer openai/a, openai/b");
      if (method === P.MODELS) return models("openai/a", "s1");
      return {};
    };
    await chat.resume("s1");
    expect(agent.methods().slice(-2)).toEqual([P.SESSIONS_RESUME, P.MODELS]); // resume shows the session's model
    await chat.handle(surface, { type: "setModel", model: "openai/zz" });
    expect(notices(chat.snapshot).at(-1)).toContain("unknown model 'openai/zz'");
    expect(agent.methods().at(-1)).toBe(P.MODELS);
    expect(chat.snapshot.models?.current).toBe("openai/a");
  });

  it("the settings changed (servers' status): the header asks again, once for a burst", async () => {
    agent.answer = async (method) => (method === P.MODELS ? models("openai/a", null) : {});
    chat.refreshModelsSoon();
    chat.refreshModelsSoon();
    await new Promise((r) => setTimeout(r, 400));
    expect(agent.methods().filter((m) => m === P.MODELS)).toHaveLength(1);
    expect(chat.snapshot.models?.models).toEqual(["openai/a", "openai/b"]);
  });
});
