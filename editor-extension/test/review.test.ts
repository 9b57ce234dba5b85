/**
 * Review of the agent's file changes (issue 16, item 3): the reducer's file cards, the webview's
 * card and buttons, the chat controller's wiring and the revert computation. The host side
 * (agent/reviewEdit answers, Keep / Revert / Review) is in reviewHost.test.ts. `vscode` is
 * test/fakes/vscode.ts.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { parseFromWebview, type FromWebview, type ToWebview } from "../shared/messages";
import { initialState, reduce, type ChangesItem, type ChatAction, type ChatState } from "../shared/state";
import { minimalChange, revertEdit } from "../src/chat/review";
import * as P from "../src/protocol";
import { ChatApp } from "../webview/app";
import * as vscode from "./fakes/vscode";
import { cards, review } from "./reviewFixtures";

describe("file cards in the chat state", () => {
  it("groups a turn's changes in one card that moves to the end, and follows their outcome", () => {
    let s: ChatState = { ...initialState(), sessionId: "s1" };
    s = reduce(s, { type: "reviewRequest", params: review("c1"), pending: true });
    s = reduce(s, { type: "event", sessionId: "s1", event: { type: "text", text: "more work" } });
    s = reduce(s, { type: "reviewRequest", params: review("c2"), pending: false });
    expect(s.items.map((i) => i.kind)).toEqual(["message", "changes"]);
    const [card] = cards(s);
    expect(card.files.map((f) => [f.changeId, f.status, f.reviewable])).toEqual([
      ["c1", "pending", true],
      ["c2", "proposed", true],
    ]);
    s = reduce(s, { type: "changeStatus", changeId: "c1", status: "rejected", reason: "no" });
    s = reduce(s, {
      type: "event",
      sessionId: "s1",
      event: { type: "file_change", changeId: "c2", callId: "call-c2", path: "/ws/c2.py", shown: "c2.py", added: 3, removed: 0, status: "applied", turn: 1 },
    });
    expect(cards(s)[0].files.map((f) => [f.status, f.reason, f.added])).toEqual([
      ["rejected", "no", 1],
      ["applied", null, 3],
    ]);
    // another turn: another card
    s = reduce(s, {
      type: "event",
      sessionId: "s1",
      event: { type: "file_change", changeId: "c3", callId: null, path: "/ws/x", shown: "x", added: 0, removed: 2, status: "written", turn: 2 },
    });
    expect(cards(s).map((c) => c.turn)).toEqual([1, 2]);
  });

  it("a tool call whose change waits for review no longer says it waits for approval", () => {
    let s: ChatState = { ...initialState(), sessionId: "s1" };
    s = reduce(s, { type: "event", sessionId: "s1", event: { type: "tool_call_started", callId: "call-c1", name: "edit_file", arguments: {} } });
    s = reduce(s, { type: "event", sessionId: "s1", event: { type: "approval_requested", callId: "call-c1", name: "edit_file", arguments: {}, reason: "r" } });
    s = reduce(s, { type: "reviewRequest", params: review("c1"), pending: true });
    expect(s.items.find((i) => i.kind === "tool")).toMatchObject({ awaitingApproval: false, status: "running" });
  });

  it("keeps a card that waits for the user across New session", () => {
    let s: ChatState = { ...initialState(), sessionId: "s1" };
    s = reduce(s, { type: "reviewRequest", params: review("c1"), pending: true });
    s = reduce(s, { type: "reviewRequest", params: review("c2", { turn: 2 }), pending: false });
    s = reduce(s, { type: "reset", sessionId: "s2" });
    expect(cards(s).map((c) => c.files[0].changeId)).toEqual(["c1"]);
  });

  it("shows a resumed session's changes after the tool card of their call", () => {
    const messages: P.StoredMessage[] = [
      { role: "user", content: "fix it" },
      { role: "assistant", content: null, tool_calls: [{ id: "k1", function: { name: "edit_file", arguments: "{}" } }] },
      { role: "tool", tool_call_id: "k1", content: "Edited a.py" },
      { role: "assistant", content: "done" },
    ];
    const changes: P.FileChangePayload[] = [
      { changeId: "x1", callId: "k1", path: "/ws/a.py", shown: "a.py", added: 2, removed: 1, created: false, status: "reverted", turn: 1, hasContent: true },
    ];
    const s = reduce(initialState(), { type: "history", sessionId: "s9", messages, changes });
    expect(s.items.map((i) => i.kind)).toEqual(["message", "tool", "changes", "message"]);
    const [card] = cards(s);
    expect(card.sessionId).toBe("s9");
    expect(card.files[0]).toMatchObject({ path: "a.py", status: "reverted", reviewable: true });
  });
});

describe("the revert edit", () => {
  it("finds the agent's change, also after the user edited elsewhere", () => {
    expect(minimalChange("abcXdef", "abcYYdef")).toEqual({ start: 3, endA: 4, endB: 5 });
    const before = "one\ntwo\nthree\n";
    const after = "one\nTWO!\nthree\n";
    expect(revertEdit(after, before, after)).toEqual({ start: 4, end: 8, text: "two" });
    const typed = "zero\n" + after + "four\n";
    const r = revertEdit(typed, before, after)!;
    expect(typed.slice(0, r.start) + r.text + typed.slice(r.end)).toBe("zero\n" + before + "four\n");
    expect(revertEdit("something else entirely", before, after)).toBeNull();
    expect(revertEdit(after + after, before, after)).toBeNull(); // twice: ambiguous
  });
});

describe("the file card in the webview", () => {
  let root: HTMLElement;
  let sent: FromWebview[];
  let app: ChatApp;
  const act = (action: ChatAction) => app.receive({ type: "action", action } satisfies ToWebview);
  const q = (sel: string) => root.querySelector(sel) as HTMLElement;

  beforeEach(() => {
    document.body.innerHTML = '<div id="app"></div>';
    root = document.getElementById("app")!;
    sent = [];
    app = new ChatApp(root, { post: (m) => sent.push(m), getState: () => undefined, setState: () => undefined });
    app.receive({ type: "state", state: { ...initialState(), server: "running", sessionId: "s1" } });
  });

  it("shows a waiting change with its counts and sends Accept / Reject with the reason", () => {
    act({ type: "reviewRequest", params: review("c1", { added: 4, removed: 2 }), pending: true });
    const card = q('[data-testid="file-changes"]');
    expect(card.textContent).toContain("The agent wants to change 1 file: review before it is applied");
    const row = q('[data-testid="file-change"]');
    expect(row.dataset.status).toBe("pending");
    expect(row.dataset.path).toBe("c1.py");
    expect(row.querySelector(".counts")!.textContent).toBe("+4 −2");
    expect(q('[data-testid="file-change-status"]').textContent).toContain("Waiting for your review");
    const labels = Array.from(card.querySelectorAll("button")).map((b) => b.textContent);
    expect(labels).toEqual(["Review", "Accept", "Reject", "Accept all in this turn", "Reject all in this turn"]);
    (q('[data-change-action="review"]') as HTMLButtonElement).click();
    (q('[data-testid="reject-reason"]') as HTMLInputElement).value = "wrong file";
    (q('[data-change-action="reject"]') as HTMLButtonElement).click();
    expect(sent).toEqual([
      { type: "fileChange", changeId: "c1", action: "review" },
      { type: "fileChange", changeId: "c1", action: "reject", reason: "wrong file" },
    ]);
    expect((q('[data-change-action="accept"]') as HTMLButtonElement).disabled).toBe(true);
  });

  it("an applied change offers Keep and Revert; two of them Keep all / Revert all", () => {
    act({ type: "reviewRequest", params: review("c1"), pending: false });
    act({ type: "changeStatus", changeId: "c1", status: "applied" });
    expect(Array.from(root.querySelectorAll('[data-testid="file-change"] button')).map((b) => b.textContent)).toEqual(["Review", "Keep", "Revert"]);
    act({ type: "reviewRequest", params: review("c2"), pending: false });
    act({ type: "changeStatus", changeId: "c2", status: "applied" });
    (q('[data-change-all="revert"]') as HTMLButtonElement).click();
    expect(sent).toEqual([{ type: "fileChange", changeId: "c1", action: "revert", all: true }]);
    act({ type: "changeStatus", changeId: "c1", status: "reverted" });
    act({ type: "changeStatus", changeId: "c2", status: "kept" });
    expect(q('[data-testid="file-changes"]').dataset.answered).toBe("true");
    expect(q('[data-change-all="revert"]')).toBeNull();
  });

  it("the webview's messages are checked", () => {
    expect(parseFromWebview({ type: "fileChange", changeId: "c", action: "keep" })).not.toBeNull();
    expect(parseFromWebview({ type: "fileChange", changeId: "c", action: "delete" })).toBeNull();
    expect(parseFromWebview({ type: "fileChange", changeId: 3, action: "keep" })).toBeNull();
    expect(parseFromWebview({ type: "fileChange", changeId: "c", action: "reject", reason: 5 })).toBeNull();
  });
});

describe("the full output of a long tool result", () => {
  it("the tool card offers it; the webview asks the host with the session and handle", () => {
    document.body.innerHTML = '<div id="app"></div>';
    const root = document.getElementById("app")!;
    const sent: FromWebview[] = [];
    const app = new ChatApp(root, { post: (m) => sent.push(m), getState: () => undefined, setState: () => undefined });
    app.receive({ type: "state", state: { ...initialState(), server: "running" } });
    const ev = (event: P.AgentEvent) => app.receive({ type: "action", action: { type: "event", sessionId: "s1", event } });
    ev({ type: "tool_call_started", callId: "k1", name: "bash", arguments: {} });
    ev({ type: "tool_call_finished", callId: "k1", name: "bash", isError: false, content: "page one", durationMs: 3 });
    expect(root.querySelector('[data-testid="tool-full-output"]')).toBeNull();
    ev({ type: "tool_call_started", callId: "k2", name: "bash", arguments: {} });
    ev({ type: "tool_call_finished", callId: "k2", name: "bash", isError: false, content: "page one [output out-1 ...]", durationMs: 3, outputHandle: "out-1" });
    (root.querySelector('[data-testid="tool-full-output"]') as HTMLButtonElement).click();
    expect(sent).toEqual([{ type: "openOutput", sessionId: "s1", handle: "out-1" }]);
    expect(parseFromWebview({ type: "openOutput", sessionId: "s1" })).toBeNull();
  });
});

describe("the chat controller's wiring", () => {
  it("binds agent/reviewEdit, passes a resumed session's changes, opens a full output", async () => {
    const { ChatController } = await import("../src/chat/controller");
    const requests = new Map<string, (params: unknown, token: vscode.CancellationToken) => unknown>();
    const sent: { method: string; params: unknown }[] = [];
    const state = new vscode.EventEmitter<{ state: string }>();
    const agent = {
      onDidChangeState: state.event,
      output: { info: () => undefined, warn: () => undefined, error: () => undefined },
      running: {},
      addBinder(binder: (client: unknown) => unknown) {
        binder({
          onNotification: () => new vscode.Disposable(),
          onRequest: (method: string, fn: (params: unknown, token: vscode.CancellationToken) => unknown) => {
            requests.set(method, fn);
            return new vscode.Disposable();
          },
        });
      },
      async request(method: string, params: unknown): Promise<unknown> {
        sent.push({ method, params });
        if (method === P.TOOL_OUTPUT) return { handle: "out-2", tool: "bash", text: "x".repeat(10), totalChars: 12 } satisfies P.ToolOutputResult;
        if (method === P.SESSIONS_RESUME) {
          return {
            sessionId: "s5",
            messages: [],
            changes: [{ changeId: "c9", callId: null, path: "/w/a.py", shown: "a.py", added: 1, removed: 0, created: true, status: "kept", turn: 1 }],
          } satisfies P.SessionsResumeResult;
        }
        return {};
      },
    };
    const controller = new ChatController(agent as never);
    expect(requests.has(P.REVIEW_EDIT)).toBe(true);
    const answer = await requests.get(P.REVIEW_EDIT)!(review("c1"), new vscode.CancellationTokenSource().token);
    expect(answer).toEqual({ decision: "deferred" }); // the default setting: afterApply

    await controller.resume("s5");
    const card = controller.snapshot.items.find((i): i is ChangesItem => i.kind === "changes")!;
    expect(card.files.map((f) => [f.path, f.status])).toEqual([["a.py", "kept"]]);

    const opened: unknown[] = [];
    vscode.workspace.openTextDocument = async (arg: unknown) => {
      opened.push(arg);
      return {};
    };
    await controller.handle({ post: () => undefined, visible: true }, { type: "openOutput", sessionId: "s1", handle: "out-2" });
    expect(sent.at(-1)).toEqual({ method: P.TOOL_OUTPUT, params: { sessionId: "s1", handle: "out-2" } });
    expect(opened).toEqual([{ content: "xxxxxxxxxx\n\n[agent-ls kept the first 10 of 12 characters of this output]\n", language: "plaintext" }]);
    controller.dispose();
  });
});

describe("approvals of reviewed edits", () => {
  it("are answered at once when every change is reviewed before it applies", async () => {
    const { ChatController } = await import("../src/chat/controller");
    const requests = new Map<string, (params: unknown, token: vscode.CancellationToken) => Promise<unknown>>();
    const agent = {
      onDidChangeState: new vscode.EventEmitter<unknown>().event,
      output: { info: () => undefined, warn: () => undefined, error: () => undefined },
      running: {},
      addBinder(binder: (client: unknown) => unknown) {
        binder({
          onNotification: () => new vscode.Disposable(),
          onRequest: (method: string, fn: (params: unknown, token: vscode.CancellationToken) => Promise<unknown>) => {
            requests.set(method, fn);
            return new vscode.Disposable();
          },
        });
      },
      request: async () => ({}),
    };
    const controller = new ChatController(agent as never);
    const saved = vscode.workspace.getConfiguration;
    const approve = (reviewedEdit: boolean) =>
      requests.get(P.APPROVE)!(
        { callId: `k${reviewedEdit}`, tool: "edit_file", arguments: {}, reason: "writes", sessionId: "s1", reviewedEdit } satisfies P.ApproveParams,
        new vscode.CancellationTokenSource().token,
      );
    try {
      vscode.workspace.getConfiguration = () => ({ get: () => "beforeApply" });
      await expect(approve(true)).resolves.toEqual({ answer: "allow_once" });
      void approve(false); // not reviewed: the user is asked
      expect(controller.snapshot.items.filter((i) => i.kind === "approval")).toHaveLength(1);
      vscode.workspace.getConfiguration = () => ({ get: () => "afterApply" });
      void approve(true); // applied unreviewed: the user is asked
      expect(controller.snapshot.items.filter((i) => i.kind === "approval")).toHaveLength(2);
    } finally {
      vscode.workspace.getConfiguration = saved;
      controller.dispose();
    }
  });
});
