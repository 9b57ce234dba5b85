import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { parseFromWebview, type FromWebview } from "../shared/messages";
import { initialState, pendingItems, reduce, type ChatAction, type ChatState, type SamplingItem } from "../shared/state";
import { SamplingConsent } from "../src/chat/sampling";
import { setFactLogFile } from "../src/factLog";
import type { SampleParams } from "../src/protocol";
import { ChatApp } from "../webview/app";

const PARAMS: SampleParams = {
  server: "knob",
  messages: [
    { role: "user", text: "meaning of life?" },
    { role: "assistant", text: "[image image/png, 1.2 KB]" },
  ],
  systemPrompt: "You are the knob test server's sampling target.",
  maxTokens: 200,
  model: "openai/gpt-4.1-mini",
  requestedMaxTokens: 5000,
  omittedMessages: 3,
};

function running(): ChatState {
  return { ...initialState(), server: "running" };
}

describe("sampling state", () => {
  it("a request is a pending item until answered; a withdrawal is marked", () => {
    let s = reduce(running(), { type: "samplingRequest", id: "sampling-1", params: PARAMS });
    const item = s.items[0] as SamplingItem;
    expect(item).toMatchObject({ kind: "sampling", server: "knob", model: "openai/gpt-4.1-mini", maxTokens: 200, omittedMessages: 3, answer: null });
    expect(item.messages).toEqual(PARAMS.messages);
    expect(pendingItems(s)).toHaveLength(1);
    s = reduce(s, { type: "samplingAnswered", id: "sampling-1", answer: "allow_session" });
    expect((s.items[0] as SamplingItem).answer).toBe("allow_session");
    expect(pendingItems(s)).toHaveLength(0);
    // A second answer for the same card changes nothing.
    const again = reduce(s, { type: "samplingAnswered", id: "sampling-1", answer: "deny" });
    expect((again.items[0] as SamplingItem).answer).toBe("allow_session");
    s = reduce(s, { type: "samplingRequest", id: "sampling-2", params: { ...PARAMS, systemPrompt: null, omittedMessages: undefined } });
    s = reduce(s, { type: "samplingAnswered", id: "sampling-2", answer: "deny", withdrawn: true });
    expect(s.items[1]).toMatchObject({ answer: "deny", withdrawn: true, systemPrompt: null, omittedMessages: 0 });
  });

  it("the webview's answer message is validated", () => {
    expect(parseFromWebview({ type: "sample", id: "sampling-1", answer: "allow_once" })).toEqual({ type: "sample", id: "sampling-1", answer: "allow_once" });
    expect(parseFromWebview({ type: "sample", id: "sampling-1", answer: "always" })).toBeNull();
    expect(parseFromWebview({ type: "sample", answer: "deny" })).toBeNull();
  });
});

describe("sampling consent card", () => {
  let root: HTMLElement;
  let sent: FromWebview[];
  let app: ChatApp;
  const act = (action: ChatAction) => app.receive({ type: "action", action });
  const card = () => root.querySelector('[data-testid="sampling-prompt"]') as HTMLElement;

  beforeEach(() => {
    document.body.innerHTML = '<div id="app"></div>';
    root = document.getElementById("app")!;
    sent = [];
    let saved: unknown;
    app = new ChatApp(root, { post: (m) => sent.push(m), getState: () => saved, setState: (s) => (saved = s) });
    app.receive({ type: "state", state: running() });
  });

  it("shows the server, model, token cap, system prompt and messages, with three answers", () => {
    act({ type: "samplingRequest", id: "sampling-1", params: PARAMS });
    const c = card();
    expect(c.dataset.server).toBe("knob");
    expect(c.textContent).toContain("knob asks to use the model openai/gpt-4.1-mini (at most 200 tokens)");
    expect(c.querySelector('[data-testid="sampling-system"]')!.textContent).toContain("sampling target");
    const messages = c.querySelector('[data-testid="sampling-messages"]')!;
    expect(messages.textContent).toContain("3 earlier messages not shown");
    expect(messages.textContent).toContain("user: meaning of life?");
    expect(messages.textContent).toContain("[image image/png, 1.2 KB]");
    const answers = Array.from(c.querySelectorAll("button")).map((b) => b.dataset.answer);
    expect(answers).toEqual(["allow_once", "allow_session", "deny"]);
  });

  it("a click sends the answer once; the answered card keeps no buttons", () => {
    act({ type: "samplingRequest", id: "sampling-1", params: PARAMS });
    (card().querySelector('[data-answer="allow_session"]') as HTMLButtonElement).click();
    (card().querySelector('[data-answer="deny"]') as HTMLButtonElement).click();
    expect(sent.filter((m) => m.type === "sample")).toEqual([{ type: "sample", id: "sampling-1", answer: "allow_session" }]);
    act({ type: "samplingAnswered", id: "sampling-1", answer: "allow_session" });
    expect(card().dataset.answered).toBe("allow_session");
    expect(card().querySelectorAll("button")).toHaveLength(0);
    expect(card().textContent).toContain("Allow for session");
  });

  it("a withdrawn request says so", () => {
    act({ type: "samplingRequest", id: "sampling-1", params: PARAMS });
    act({ type: "samplingAnswered", id: "sampling-1", answer: "deny", withdrawn: true });
    expect(card().dataset.withdrawn).toBe("true");
    expect(card().textContent).toContain("Withdrawn");
  });
});

describe("SamplingConsent (extension host side)", () => {
  let log: string;

  beforeEach(() => {
    log = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "agent-ls-facts-")), "facts.log");
    setFactLogFile(log);
  });
  afterEach(() => setFactLogFile(null));

  const facts = () => (fs.existsSync(log) ? fs.readFileSync(log, "utf8").trim().split("\n") : []);

  it("resolves the server's request with the user's answer and logs the fact", async () => {
    const actions: ChatAction[] = [];
    let shown = 0;
    const consent = new SamplingConsent((a) => actions.push(a), () => shown++);
    const pending = consent.request(PARAMS);
    expect(shown).toBe(1);
    expect(actions[0]).toMatchObject({ type: "samplingRequest", params: PARAMS });
    const id = (actions[0] as { id: string }).id;
    consent.answer(id, "allow_once");
    consent.answer(id, "deny"); // late: ignored
    await expect(pending).resolves.toEqual({ answer: "allow_once" });
    expect(actions[1]).toEqual({ type: "samplingAnswered", id, answer: "allow_once" });
    expect(facts()).toEqual(["sampling allow_once"]);
  });

  it("a cancelled request and a server that went away are denied as withdrawn", async () => {
    const actions: ChatAction[] = [];
    const consent = new SamplingConsent((a) => actions.push(a), () => undefined);
    let cancel: () => void = () => undefined;
    const first = consent.request(PARAMS, { onCancellationRequested: (l) => (cancel = l) });
    const second = consent.request(PARAMS);
    expect(consent.waiting).toBe(2);
    cancel();
    await expect(first).resolves.toEqual({ answer: "deny" });
    consent.withdrawAll();
    await expect(second).resolves.toEqual({ answer: "deny" });
    expect(consent.waiting).toBe(0);
    expect(actions.filter((a) => a.type === "samplingAnswered").every((a) => "withdrawn" in a && a.withdrawn)).toBe(true);
    expect(facts()).toEqual(["sampling withdrawn", "sampling withdrawn"]);
  });
});
