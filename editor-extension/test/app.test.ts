import { beforeEach, describe, expect, it } from "vitest";
import { initialState } from "../shared/state";
import { act, app, ev, host, mount, q, qa, reload, root, running } from "./webviewHarness";

beforeEach(() => mount());

describe("chat webview", () => {
  it("has the contract's DOM hooks", () => {
    for (const id of ["prompt-input", "send", "stop", "new-session", "sessions", "attach-selection", "attach-file", "attach-resource"]) {
      expect(q(id), id).not.toBeNull();
    }
    expect(q("prompt-input")!.tagName).toBe("TEXTAREA");
    expect(q("busy")).toBeNull();
    expect((q("stop") as HTMLButtonElement).disabled).toBe(true);
  });

  it("shows the context meter from usage events, readable and with the numbers in its tooltip", () => {
    act({ type: "userPrompt", text: "read" });
    expect((q("context-meter") as HTMLElement).hidden).toBe(true);
    ev({ type: "usage", inputTokens: 1, outputTokens: 1, contextTokens: 12160, contextWindow: 32000 });
    const meter = q("context-meter") as HTMLElement;
    expect(meter.hidden).toBe(false);
    expect(meter.textContent).toBe("38% of context");
    expect(meter.title).toContain("12160 of 32000 tokens");
    expect(meter.getAttribute("role")).toBe("status");
  });

  it("says whose count the meter shows: agent-ls's estimate before the first answer, then the provider's (issue 44)", () => {
    act({ type: "userPrompt", text: "read" });
    ev({ type: "usage", contextTokens: 6080, contextWindow: 32000, contextSource: "estimate" });
    const meter = q("context-meter") as HTMLElement;
    expect(meter.textContent).toBe("≈19% of context");
    expect(meter.title).toContain("6080 of 32000 tokens");
    expect(meter.title).toContain("estimated by agent-ls");
    expect(meter.getAttribute("aria-label")).toContain("estimated by agent-ls");
    // the answer's usage: the provider counted 4800 where agent-ls counted 6080
    ev({ type: "usage", inputTokens: 4700, outputTokens: 100, contextTokens: 4800, contextWindow: 32000, contextSource: "provider" });
    expect(meter.textContent).toBe("15% of context");
    expect(meter.title).toContain("4800 of 32000 tokens");
    expect(meter.title).toContain("reported by the provider");
    expect(meter.title).not.toContain("estimated");
    expect(meter.getAttribute("aria-label")).toContain("reported by the provider");
  });

  it("sends the prompt on click and on Enter, and clears the input", () => {
    const input = q("prompt-input") as HTMLTextAreaElement;
    input.value = "hello agent";
    (q("send") as HTMLButtonElement).click();
    expect(host.sent).toContainEqual({ type: "send", text: "hello agent" });
    expect(input.value).toBe("");
    input.value = "second";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", bubbles: true }));
    expect(host.sent).toContainEqual({ type: "send", text: "second" });
    input.value = "multi";
    input.dispatchEvent(new KeyboardEvent("keydown", { key: "Enter", shiftKey: true, bubbles: true }));
    expect(host.sent.filter((m) => m.type === "send")).toHaveLength(2);
  });

  it("does not send while busy or when the server is not running", () => {
    app.receive({ type: "state", state: running({ busy: true }) });
    (q("prompt-input") as HTMLTextAreaElement).value = "x";
    expect((q("send") as HTMLButtonElement).disabled).toBe(true);
    app.send();
    app.receive({ type: "state", state: { ...initialState(), server: "failed", serverError: "agent-ls not found" } });
    expect((q("send") as HTMLButtonElement).disabled).toBe(true);
    expect(root.textContent).toContain("agent-ls not found");
    expect(host.sent.filter((m) => m.type === "send")).toHaveLength(0);
  });

  it("streams assistant markdown into one message, busy and stop while the turn runs", () => {
    act({ type: "userPrompt", text: "<b>not html</b>" });
    const user = qa("message")[0];
    expect(user.dataset.role).toBe("user");
    expect(user.textContent).toContain("<b>not html</b>");
    expect(q("busy")).not.toBeNull();
    expect((q("stop") as HTMLButtonElement).disabled).toBe(false);
    ev({ type: "turn_started", turn: 1 });
    ev({ type: "text", text: "Here is **bold" });
    ev({ type: "text", text: "** text.\n\n```py\nprint(1)\n```\n<script>window.pwned=1</script>" });
    const msgs = qa("message");
    expect(msgs).toHaveLength(2);
    const reply = msgs[1];
    expect(reply.dataset.role).toBe("assistant");
    expect(reply.querySelector("strong")?.textContent).toBe("bold");
    expect(reply.querySelector("script")).toBeNull();
    expect(reply.querySelector("[data-testid=code-copy]")).not.toBeNull();
    expect(reply.querySelector("[data-testid=code-insert]")).not.toBeNull();
    ev({ type: "turn_finished", stopReason: "end" });
    expect(q("busy")).toBeNull();
    expect((q("stop") as HTMLButtonElement).disabled).toBe(true);
  });

  it("stop posts a stop message", () => {
    act({ type: "userPrompt", text: "q" });
    (q("stop") as HTMLButtonElement).click();
    expect(host.sent).toContainEqual({ type: "stop" });
  });

  it("code block buttons send the code to copy or insert", () => {
    ev({ type: "text", text: "```js\nconst a = 1;\n```" });
    (q("code-copy") as HTMLButtonElement).click();
    (q("code-insert") as HTMLButtonElement).click();
    expect(host.sent).toContainEqual({ type: "copy", text: "const a = 1;\n" });
    expect(host.sent).toContainEqual({ type: "insert", text: "const a = 1;\n" });
  });

  it("renders tool cards with tool, server, args, result and status transitions", () => {
    ev({ type: "tool_call_started", callId: "c1", name: "mcp__knob__echo", arguments: { text: "ping" }, server: "knob", displayName: "echo" });
    let card = q("tool-card") as HTMLDetailsElement;
    expect(card.dataset.tool).toBe("mcp__knob__echo");
    expect(card.dataset.server).toBe("knob");
    expect(card.dataset.status).toBe("running");
    expect(card.querySelector("[data-testid=tool-args]")!.textContent).toContain('"text": "ping"');
    expect(card.tagName).toBe("DETAILS");
    card.open = false;
    card.dispatchEvent(new Event("toggle"));
    ev({ type: "tool_call_finished", callId: "c1", name: "mcp__knob__echo", isError: false, content: "pong", durationMs: 12 });
    card = q("tool-card") as HTMLDetailsElement;
    expect(card.dataset.status).toBe("done");
    expect(card.querySelector("[data-testid=tool-result]")!.textContent).toBe("pong");
    expect(card.open).toBe(false); // the user's collapse survives the re-render
    ev({ type: "tool_call_started", callId: "c2", name: "write", arguments: {} });
    ev({ type: "tool_call_finished", callId: "c2", name: "write", isError: true, content: "denied", durationMs: 0, denied: true });
    expect(qa("tool-card")[1].dataset.status).toBe("denied");
  });

  it("re-renders only the items that changed", () => {
    act({ type: "userPrompt", text: "q" });
    ev({ type: "text", text: "a" });
    const [user, reply] = qa("message");
    ev({ type: "text", text: "b" });
    const [user2, reply2] = qa("message");
    expect(user2).toBe(user);
    expect(reply2).not.toBe(reply);
    expect(reply2.textContent).toContain("ab");
  });

  it("answers approvals with allow once / for session / deny", () => {
    act({ type: "approvalRequest", params: { callId: "approval-7", tool: "mcp__knob__write_file", arguments: { path: "a" }, reason: "write capability", server: "knob", displayName: "write_file" } });
    const box = q("approval")!;
    const answers = Array.from(box.querySelectorAll("button")).map((b) => b.dataset.answer);
    expect(answers).toEqual(["allow_once", "deny", "allow_session"]);
    expect(box.textContent).toContain("write_file");
    expect(box.textContent).toContain("write capability");
    (box.querySelector('[data-answer="allow_session"]') as HTMLButtonElement).click();
    expect(host.sent).toContainEqual({ type: "approve", requestId: "approval-7", answer: "allow_session" });
    expect((box.querySelector('[data-answer="deny"]') as HTMLButtonElement).disabled).toBe(true);
    // a second click does not answer twice
    (box.querySelector('[data-answer="deny"]') as HTMLButtonElement).click();
    expect(host.sent.filter((m) => m.type === "approve")).toHaveLength(1);
    act({ type: "approvalAnswered", requestId: "approval-7", answer: "allow_session" });
    expect(q("approval")!.dataset.answered).toBe("allow_session");
    expect(q("approval")!.querySelector("button")).toBeNull();
  });

  it("names each session scope on its own button and says why a protected file asks (issue 25)", () => {
    const scopes = [
      { id: "exact", label: "Allow exactly this command for this session" },
      { id: "prefix", label: "Allow `git status` … for this session" },
    ];
    act({ type: "approvalRequest", params: { callId: "c-9", tool: "bash", arguments: { command: "git status --short" }, reason: "bash needs approval", scopes, sensitive: "it names '.git/config'\u001b[2K" } });
    const box = q("approval")!;
    const buttons = Array.from(box.querySelectorAll("button"));
    expect(buttons.map((b) => b.textContent)).toEqual(["Allow once", "Deny", scopes[0].label, scopes[1].label]);
    expect(q("approval-sensitive")!.textContent).toContain("Protected file: it names '.git/config'\\u001B[2K");
    (box.querySelector('[data-scope="prefix"]') as HTMLButtonElement).click();
    expect(host.sent).toContainEqual({ type: "approve", requestId: "c-9", answer: "allow_session", scope: "prefix" });
    act({ type: "approvalAnswered", requestId: "c-9", answer: "allow_session", scope: "prefix" });
    expect(q("approval")!.textContent).toContain(scopes[1].label);
  });

  it("offers no session choice when the server offers none", () => {
    act({ type: "approvalRequest", params: { callId: "c-10", tool: "bash", arguments: { command: "for f in *; do :; done" }, reason: "cannot be checked", scopes: [] } });
    const answers = Array.from(q("approval")!.querySelectorAll("button")).map((b) => b.dataset.answer);
    expect(answers).toEqual(["allow_once", "deny"]);
  });

  it("answers trust prompts", () => {
    act({ type: "trustRequest", id: "trust-1", params: { server: "local", command: "python", args: ["srv.py"], source: "/w/.agent-ls/settings.json" } });
    const box = q("trust-prompt")!;
    expect(box.textContent).toContain("python srv.py");
    (box.querySelector('[data-answer="trust"]') as HTMLButtonElement).click();
    expect(host.sent).toContainEqual({ type: "trust", id: "trust-1", answer: "trust" });
  });

  it("builds an elicitation form from the schema and submits typed values", () => {
    act({
      type: "elicitRequest",
      id: "elicit-1",
      params: {
        server: "knob",
        message: "Who are you?",
        requestedSchema: {
          type: "object",
          properties: { name: { type: "string", default: "Ada" }, age: { type: "integer", default: 36 }, ok: { type: "boolean" } },
          required: ["name"],
        },
      },
    });
    const form = q("elicitation-form") as HTMLFormElement;
    expect((form.querySelector('[name="name"]') as HTMLInputElement).value).toBe("Ada");
    (form.querySelector('[name="ok"]') as HTMLInputElement).checked = true;
    form.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    expect(host.sent).toContainEqual({ type: "elicit", id: "elicit-1", action: "accept", content: { name: "Ada", age: 36, ok: true } });
  });

  it("shows validation errors instead of submitting, and declines", () => {
    act({
      type: "elicitRequest",
      id: "elicit-2",
      params: { server: "knob", message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } }, required: ["name"] } },
    });
    const form = q("elicitation-form") as HTMLFormElement;
    form.dispatchEvent(new Event("submit", { bubbles: true, cancelable: true }));
    expect(host.sent.filter((m) => m.type === "elicit")).toHaveLength(0);
    expect(form.textContent).toContain("required");
    (q("elicit-decline") as HTMLButtonElement).click();
    expect(host.sent).toContainEqual({ type: "elicit", id: "elicit-2", action: "decline" });
  });

  it("lists sessions and resumes one on click", () => {
    act({ type: "sessions", sessions: [{ id: "abc", title: "Old chat", created: 1, updated: 2, model: null, messageCount: 4 }] });
    const item = q("session-item")!;
    expect(item.dataset.sessionId).toBe("abc");
    item.click();
    expect(host.sent).toContainEqual({ type: "resumeSession", sessionId: "abc" });
    (q("new-session") as HTMLButtonElement).click();
    expect(host.sent).toContainEqual({ type: "newSession" });
  });

  it("attach buttons and attachment chips", () => {
    (q("attach-selection") as HTMLButtonElement).click();
    (q("attach-file") as HTMLButtonElement).click();
    (q("attach-resource") as HTMLButtonElement).click();
    expect(host.sent.filter((m) => m.type === "attach").map((m) => (m as { kind: string }).kind)).toEqual(["selection", "file", "resource"]);
    act({ type: "attachments", attachments: [{ kind: "file", label: "a.py" }] });
    expect(q("attachment")!.textContent).toContain("a.py");
    (q("attachment")!.querySelector("button") as HTMLButtonElement).click();
    expect(host.sent).toContainEqual({ type: "removeAttachment", index: 0 });
  });

  it("lists MCP prompts as slash commands", () => {
    act({ type: "prompts", prompts: [{ server: "knob", name: "review", arguments: [{ name: "code", required: true }] }] });
    const input = q("prompt-input") as HTMLTextAreaElement;
    input.value = "/";
    input.dispatchEvent(new Event("input"));
    expect(host.sent).toContainEqual({ type: "listPrompts" });
    const items = qa("slash-item");
    expect(items.map((i) => i.dataset.name)).toEqual(["knob:review", "compact"]); // the built-in last
    expect(items[1].textContent).toContain("/compact");
    items[0].click();
    expect(input.value).toBe("/knob:review ");
    expect(qa("slash-item")).toHaveLength(0);
  });

  it("survives being hidden: a new webview restores from getState", () => {
    act({ type: "userPrompt", text: "remember me" });
    ev({ type: "text", text: "ok" });
    (q("prompt-input") as HTMLTextAreaElement).value = "draft";
    (q("prompt-input") as HTMLTextAreaElement).dispatchEvent(new Event("input"));
    reload();
    expect(qa("message").map((m) => m.querySelector(".text, .markdown")!.textContent.trim())).toEqual(["remember me", "ok"]);
    expect((q("prompt-input") as HTMLTextAreaElement).value).toBe("draft");
  });

  it("setInput from the host fills the prompt", () => {
    app.receive({ type: "setInput", text: "explain this" });
    expect((q("prompt-input") as HTMLTextAreaElement).value).toBe("explain this");
  });
});
