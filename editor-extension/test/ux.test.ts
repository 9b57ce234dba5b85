/**
 * Issue 17: a chat panel a daily user keeps open. The layout (the transcript takes the height,
 * questions the agent waits on are pinned above the input), prompts that show everything decided
 * on, long tool cards collapsed to one line, and accessibility (roles, live regions, keyboard).
 */
import * as fs from "fs";
import * as path from "path";
import { beforeEach, describe, expect, it, vi } from "vitest";
import type { ChatAction } from "../shared/state";
import { formatDuration, isLongTool } from "../webview/toolCards";
import { act, app, ev, host, key, mount, q, qa, reload, root } from "./webviewHarness";

beforeEach(() => mount());

const approve = (callId = "approval-1", args: Record<string, unknown> = { path: "a.txt" }) =>
  act({ type: "approvalRequest", params: { callId, tool: "mcp__knob__write_file", arguments: args, reason: "write capability", server: "knob", displayName: "write_file" } });

const LONG_COMMAND_ARGS = [
  "-m",
  "my_very_long_module_name.with.many.parts",
  "--config=/home/someone/projects/a-rather-long-folder-name/and/another/one/config.toml",
  "--token-file",
  "/run/secrets/an-unbroken-path-segment-that-is-much-wider-than-any-sidebar-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
  "two words",
];

describe("layout: the transcript takes the height, questions are pinned above the input", () => {
  const css = fs.readFileSync(path.join(__dirname, "..", "webview", "style.css"), "utf8");
  const rule = (selector: string): string => {
    const m = css.match(new RegExp(`(^|\\n)${selector.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")} \\{([^}]*)\\}`));
    expect(m, `CSS rule ${selector}`).not.toBeNull();
    return m![2];
  };

  it("is one column filling the panel: transcript flexes, the rest keeps its size, input last", () => {
    expect(rule("html, body")).toMatch(/height: 100%/);
    expect(rule(".chat")).toMatch(/display: flex; flex-direction: column; height: 100vh/);
    expect(rule(".chat > *")).toMatch(/flex: none/);
    const t = rule(".chat > .transcript");
    expect(t).toMatch(/flex: 1 1 0/);
    expect(t).toMatch(/overflow-y: auto/);
    const p = rule(".chat > .pending");
    expect(p).toMatch(/max-height: 34vh/); // about a third of the chat (issue 30)
    expect(p).toMatch(/overflow-y: auto/);
    expect(p).toMatch(/flex: 0 1 auto/); // gives way before the input is pushed out
    expect(css).toContain(".chat > .pending[hidden] { display: none; }");
    // DOM order: transcript, busy line, pending questions, then the composer with the input
    const children = Array.from(root.children).map((c) => c.className.split(" ")[0]);
    expect(children.slice(-4)).toEqual(["transcript", "busy-host", "pending", "composer"]);
    expect(root.lastElementChild!.contains(q("prompt-input"))).toBe(true);
  });

  it("pins a pending approval outside the transcript until it is answered, then puts it back in order", () => {
    const pending = q("pending")!;
    expect(pending.hidden).toBe(true);
    act({ type: "userPrompt", text: "write it" });
    approve();
    ev({ type: "text", text: "while waiting" });
    const box = q("approval")!;
    expect(pending.hidden).toBe(false);
    expect(pending.contains(box)).toBe(true);
    expect(app.transcript.contains(box)).toBe(false);
    act({ type: "approvalAnswered", requestId: "approval-1", answer: "allow_once" });
    const answered = q("approval")!;
    expect(answered.dataset.answered).toBe("allow_once");
    expect(pending.hidden).toBe(true);
    expect(app.transcript.contains(answered)).toBe(true);
    // in item order: user message, the answered approval, the text streamed meanwhile
    const order = Array.from(app.transcript.children).map((c) => (c as HTMLElement).dataset.testid);
    expect(order).toEqual(["message", "approval", "message"]);
  });

  it("pins trust, workspace trust, elicitation and sampling questions too, each in arrival order", () => {
    act({ type: "trustRequest", id: "t1", params: { server: "db", command: "python", args: ["db.py"], source: "/w/.mcp.json" } });
    act({ type: "elicitRequest", id: "e1", params: { server: "knob", message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } } });
    act({ type: "samplingRequest", id: "s1", params: { server: "knob", model: "m", messages: [{ role: "user", content: { type: "text", text: "hi" } }], maxTokens: 10 } } as unknown as ChatAction);
    act({ type: "workspaceTrustRequest", id: "w1", params: { folder: "/w", servers: [], settings: [] } });
    const pinned = Array.from(q("pending")!.children).map((c) => (c as HTMLElement).dataset.itemId);
    expect(pinned).toEqual(["t1", "e1", "s1"]);
    // the workspace trust question lives under the banner (issue 30)
    expect(q("trust-details")!.querySelector("[data-item-id]")!.getAttribute("data-item-id")).toBe("w1");
    expect(app.transcript.querySelector("[data-item-id]")).toBeNull();
    expect(app.transcript.textContent).toContain("Ask the agent anything"); // the empty hint stays
  });

  it("moves the focus to a new question (not while the user types), and back to the input once answered", () => {
    const input = q("prompt-input") as HTMLTextAreaElement;
    input.focus();
    approve("a1");
    const box = q("approval")!;
    expect(document.activeElement).toBe(box);
    // Tab from the dialog reaches its first button: Allow once
    expect(box.querySelector("button")!.dataset.answer).toBe("allow_once");
    (box.querySelector('[data-answer="allow_once"]') as HTMLButtonElement).focus();
    (box.querySelector('[data-answer="allow_once"]') as HTMLButtonElement).click();
    expect(host.sent).toContainEqual({ type: "approve", requestId: "a1", answer: "allow_once" });
    act({ type: "approvalAnswered", requestId: "a1", answer: "allow_once" });
    expect(document.activeElement).toBe(input);
    // typing: the next question does not take the focus away
    input.value = "half a sentence";
    approve("a2");
    expect(document.activeElement).toBe(input);
  });

  it("after answering one of two questions, the focus moves to the next", () => {
    q("prompt-input")!.focus(); // the user is in the chat
    approve("a1");
    approve("a2");
    const [first, second] = qa("approval");
    // the first collapsed to a line when the second came (issue 30): the newest has the focus
    expect(document.activeElement).toBe(second);
    (second.querySelector('[data-answer="deny"]') as HTMLButtonElement).focus();
    act({ type: "approvalAnswered", requestId: "a2", answer: "deny" });
    expect(document.activeElement).toBe(qa("approval").find((b) => b.dataset.itemId === first.dataset.itemId));
  });

  it("a question arriving while this chat does not have the focus leaves the focus where it is", () => {
    // The user types in an editor, or in the other chat (the side bar view and an editor panel
    // both show every question): the webview's document does not have the focus.
    const input = q("prompt-input") as HTMLTextAreaElement;
    input.focus();
    const hasFocus = vi.spyOn(document, "hasFocus").mockReturnValue(false);
    try {
      approve("a1");
      expect(document.activeElement).toBe(input);
      expect(q("pending")!.hidden).toBe(false); // pinned all the same
    } finally {
      hasFocus.mockRestore();
    }
    // nothing in the chat was focused at all: still nothing (jsdom: no focus, no document focus)
    mount();
    approve("a2");
    expect(document.activeElement).toBe(document.body);
  });

  it("brings a new question into view by scrolling the pending region only (never the editor around the webview)", () => {
    const pageScroll = vi.fn();
    const proto = HTMLElement.prototype as unknown as { scrollIntoView?: () => void };
    const had = proto.scrollIntoView;
    proto.scrollIntoView = pageScroll; // (jsdom has none)
    const pending = q("pending")!;
    let top = 0;
    Object.defineProperty(pending, "scrollTop", { get: () => top, set: (v: number) => (top = v), configurable: true });
    // the region shows 0..100 px; a question is drawn at 150..200 px
    const rect = (t: number, b: number) => ({ top: t, bottom: b, left: 0, right: 10, width: 10, height: b - t, x: 0, y: t, toJSON: () => ({}) });
    const box = vi.spyOn(HTMLElement.prototype, "getBoundingClientRect").mockImplementation(function (this: HTMLElement) {
      return this === pending ? rect(0, 100) : this.dataset.testid === "approval" ? rect(150, 200) : rect(0, 0);
    });
    try {
      q("prompt-input")!.focus();
      approve("a1");
      expect(top).toBe(100); // just into view: its bottom at the region's bottom
      expect(pageScroll).not.toHaveBeenCalled();
      expect(document.activeElement).toBe(q("approval"));
    } finally {
      box.mockRestore();
      proto.scrollIntoView = had;
    }
  });

  it("answering with the focused button keeps the focus in the question (a disabled button would drop it)", () => {
    q("prompt-input")!.focus();
    approve("a1");
    const box = q("approval")!;
    const allow = box.querySelector('[data-answer="allow_once"]') as HTMLButtonElement;
    allow.focus();
    allow.click();
    expect(allow.disabled).toBe(true);
    expect(document.activeElement).toBe(box);
    act({ type: "approvalAnswered", requestId: "a1", answer: "allow_once" });
    expect(document.activeElement).toBe(q("prompt-input"));
  });
});

describe("tool cards: long ones collapse to a one-line summary", () => {
  const longResult = Array.from({ length: 40 }, (_, i) => `line ${i}`).join("\n");

  it("collapses a long card by default, with tool, server, outcome and duration in its summary", () => {
    ev({ type: "tool_call_started", callId: "c1", name: "mcp__knob__dump", arguments: {}, server: "knob", displayName: "dump" });
    let card = q("tool-card") as HTMLDetailsElement;
    expect(card.open).toBe(true); // running, nothing long yet
    ev({ type: "tool_call_finished", callId: "c1", name: "mcp__knob__dump", isError: false, content: longResult, durationMs: 1530 });
    card = q("tool-card") as HTMLDetailsElement;
    expect(card.open).toBe(false);
    const summary = card.querySelector("summary")!;
    expect(summary.textContent).toBe("dump · knob · ✓ Done (1.5 s) · 40 lines of output");
    // the whole output is still in the card (for the user who opens it), scrollable by keyboard
    expect(card.querySelector("[data-testid=tool-result]")!.textContent).toBe(longResult);
    const pre = card.querySelector("[data-testid=tool-result] pre") as HTMLElement;
    expect(pre.tabIndex).toBe(0);
    expect(pre.getAttribute("aria-label")).toBe("Output of dump");
    expect(pre.getAttribute("role")).toBe("region");
  });

  it("keeps a short card open and remembers the user's choice across re-renders and reloads", () => {
    ev({ type: "tool_call_started", callId: "c1", name: "echo", arguments: { t: 1 }, server: "knob" });
    ev({ type: "tool_call_finished", callId: "c1", name: "echo", isError: false, content: "pong", durationMs: 12 });
    expect((q("tool-card") as HTMLDetailsElement).open).toBe(true);
    expect(q("tool-card")!.querySelector("summary")!.textContent).toBe("echo · knob · ✓ Done (12 ms)");
    ev({ type: "tool_call_started", callId: "c2", name: "dump", arguments: {}, server: "knob" });
    ev({ type: "tool_call_finished", callId: "c2", name: "dump", isError: true, content: longResult, durationMs: 80 });
    const long = qa("tool-card")[1] as HTMLDetailsElement;
    expect(long.open).toBe(false);
    long.open = true;
    long.dispatchEvent(new Event("toggle"));
    ev({ type: "text", text: "after" });
    expect((qa("tool-card")[1] as HTMLDetailsElement).open).toBe(true);
    // a reload (the webview hidden and shown) keeps it
    reload();
    expect((qa("tool-card")[1] as HTMLDetailsElement).open).toBe(true);
    expect((qa("tool-card")[0] as HTMLDetailsElement).open).toBe(true);
  });

  it("is operable by keyboard: the summary line is a native disclosure (Enter / Space)", () => {
    ev({ type: "tool_call_started", callId: "c1", name: "dump", arguments: {}, server: "knob" });
    ev({ type: "tool_call_finished", callId: "c1", name: "dump", isError: false, content: longResult, durationMs: 5 });
    const card = q("tool-card")!;
    expect(card.tagName).toBe("DETAILS");
    expect(card.firstElementChild!.tagName).toBe("SUMMARY");
  });

  it("isLongTool and formatDuration", () => {
    const base = { kind: "tool", id: "x", rev: 0, tool: "t", server: null, displayName: null, status: "done", durationMs: 1, awaitingApproval: false } as const;
    expect(isLongTool({ ...base, args: {}, result: "short" } as never)).toBe(false);
    expect(isLongTool({ ...base, args: {}, result: "x".repeat(801) } as never)).toBe(true);
    expect(isLongTool({ ...base, args: { a: "x".repeat(900) }, result: null } as never)).toBe(true);
    expect(isLongTool({ ...base, args: {}, result: "x", output: { sessionId: "s", handle: "h" } } as never)).toBe(true);
    expect(formatDuration(12.4)).toBe("12 ms");
    expect(formatDuration(1530)).toBe("1.5 s");
    expect(formatDuration(125_000)).toBe("2 min 5 s");
  });
});

describe("prompts show everything decided on, never clipped", () => {
  it("the trust prompt: the whole command, arguments, env names, cwd, and what changed first", () => {
    act({
      type: "trustRequest",
      id: "t1",
      params: {
        server: "db",
        command: "/usr/local/bin/python3",
        args: LONG_COMMAND_ARGS,
        source: "/w/.mcp.json",
        cwd: "/w/tools/db",
        env: { DB_URL: "postgres://localhost/db", API_TOKEN: "***" },
        changes: ["args changed: added --token-file", "env DB_URL added"],
      },
    });
    const box = q("trust-prompt")!;
    const cmd = box.querySelector("[data-testid=trust-command]")!;
    expect(cmd.tagName).toBe("PRE");
    expect(cmd.textContent).toBe(`/usr/local/bin/python3 ${LONG_COMMAND_ARGS.slice(0, 5).join(" ")} 'two words'`);
    expect(box.querySelector("[data-testid=trust-env]")!.textContent).toContain("DB_URL=");
    expect(box.querySelector("[data-testid=trust-env]")!.textContent).toContain("API_TOKEN=");
    expect(box.querySelector("[data-testid=trust-cwd]")!.textContent).toBe("in /w/tools/db");
    const entry = box.querySelector("[data-testid=trust-entry]")!;
    const changes = entry.querySelector("[data-testid=trust-changes]")!;
    expect(Array.from(changes.querySelectorAll("li")).map((l) => l.textContent)).toEqual(["args changed: added --token-file", "env DB_URL added"]);
    // what changed is the first thing in the entry, before the command
    expect(changes.compareDocumentPosition(cmd) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    expect(box.textContent).toContain("changed by /w/.mcp.json");
  });

  it("an HTTP entry shows its URL and headers", () => {
    act({ type: "trustRequest", id: "t2", params: { server: "web", command: "", args: [], source: "/w/.mcp.json", transport: "http", url: "https://mcp.example.invalid/v1/a-very-long-path", headers: { Authorization: "***" } } });
    const box = q("trust-prompt")!;
    expect(box.querySelector("[data-testid=trust-url]")!.textContent).toBe("https://mcp.example.invalid/v1/a-very-long-path");
    expect(box.querySelector("[data-testid=trust-headers]")!.textContent).toBe("Authorization: ***");
  });

  it("wraps every field of a prompt (CSS), so nothing scrolls out of sight sideways, and breaks a word only when it is wider than the line", () => {
    const css = fs.readFileSync(path.join(__dirname, "..", "webview", "style.css"), "utf8");
    expect(css).toMatch(/\.approval pre \{[^}]*overflow-x: visible;[^}]*overflow-wrap: anywhere;[^}]*word-break: normal;/);
    expect(css).not.toContain("break-all");
    expect(css).toMatch(/\.entry pre, \.workspace-trust code \{[^}]*white-space: pre-wrap;[^}]*overflow-wrap: anywhere;/);
    expect(css).toMatch(/\.markdown pre, \.tool-card pre, \.approval pre \{[^}]*white-space: pre-wrap;/);
  });

  it("the approval shows the tool, its server and every argument in full, hidden characters escaped", () => {
    const long = "x".repeat(500);
    approve("a1", { command: "rm -rf build && make\nall", note: "abc\u202Edef", long });
    const box = q("approval")!;
    const args = box.querySelector("[data-testid=approval-args]")!.textContent;
    expect(args).toContain('"command": "rm -rf build && make\\nall"');
    expect(args).toContain("abc\\u202Edef");
    expect(args).not.toContain("\u202E");
    expect(args).toContain(long);
    expect(box.textContent).toContain("Allow write_file from knob?");
    expect(box.textContent).toContain("Arguments:");
    // short arguments stay on one line
    approve("a2", { id: "42" });
    expect(qa("approval")[1].querySelector("[data-testid=approval-args]")!.textContent).toBe('{"id":"42"}');
    expect(box.textContent).toContain("write capability");
    expect(box.innerHTML).toContain('title="mcp__knob__write_file"');
  });
});

describe("accessibility: roles, live regions, keyboard", () => {
  it("the chat is the page's main landmark", () => {
    expect(root.getAttribute("role")).toBe("main");
    expect(root.getAttribute("aria-label")).toBe("Agent chat");
  });

  it("the transcript is a polite log, busy while an answer streams (announced once complete)", () => {
    const t = app.transcript;
    expect(t.getAttribute("role")).toBe("log");
    expect(t.getAttribute("aria-live")).toBe("polite");
    expect(t.getAttribute("aria-relevant")).toBe("additions");
    expect(t.getAttribute("aria-label")).toBe("Conversation");
    expect(t.tabIndex).toBe(0); // scrollable by keyboard
    act({ type: "userPrompt", text: "q" });
    ev({ type: "turn_started", turn: 1 });
    ev({ type: "text", text: "Hel" });
    expect(t.getAttribute("aria-busy")).toBe("true");
    ev({ type: "text", text: "lo" });
    expect(t.getAttribute("aria-busy")).toBe("true");
    ev({ type: "tool_call_started", callId: "c1", name: "echo", arguments: {} });
    expect(t.getAttribute("aria-busy")).toBe("false"); // the message is complete: read it
    ev({ type: "text", text: "Done." });
    expect(t.getAttribute("aria-busy")).toBe("true");
    ev({ type: "turn_finished", stopReason: "end" });
    expect(t.getAttribute("aria-busy")).toBe("false");
    expect(q("busy")).toBeNull();
  });

  it("the pending region is an assertive, labelled region; each question an alertdialog named by its heading", () => {
    const p = q("pending")!;
    expect(p.getAttribute("role")).toBe("region");
    expect(p.getAttribute("aria-live")).toBe("assertive");
    expect(p.getAttribute("aria-label")).toBe("Waiting for your answer");
    approve();
    const box = q("approval")!;
    expect(box.getAttribute("role")).toBe("alertdialog");
    const label = document.getElementById(box.getAttribute("aria-labelledby")!)!;
    expect(label.textContent).toBe("Allow write_file from knob?");
    act({ type: "approvalAnswered", requestId: "approval-1", answer: "deny" });
    expect(q("approval")!.getAttribute("role")).toBeNull();
  });

  it("the busy line is a status; the input is labelled; remove-attachment buttons say what they remove", () => {
    act({ type: "userPrompt", text: "q" });
    expect(q("busy")!.getAttribute("role")).toBe("status");
    expect(q("prompt-input")!.getAttribute("aria-label")).toMatch(/^Message to the agent/);
    act({ type: "attachments", attachments: [{ kind: "file", label: "a.py" }] });
    expect(q("remove-attachment")!.getAttribute("aria-label")).toBe("Remove a.py");
  });

  it("every control is a button (or a native control); nothing clickable is a bare div", () => {
    act({ type: "userPrompt", text: "q" });
    approve();
    ev({ type: "text", text: "```js\nx\n```" });
    for (const b of Array.from(root.querySelectorAll("[data-answer], [data-testid=send], [data-testid=stop], [data-testid=new-session], [data-testid=code-copy], [data-testid=code-insert]"))) {
      expect(b.tagName, (b as HTMLElement).outerHTML.slice(0, 80)).toBe("BUTTON");
    }
  });

  it("Escape in an elicitation cancels it; in an approval it only returns to the input", () => {
    const input = q("prompt-input") as HTMLTextAreaElement;
    approve();
    const box = q("approval")!;
    key(box.querySelector("button")!, "Escape");
    expect(host.sent.filter((m) => m.type === "approve")).toHaveLength(0);
    expect(document.activeElement).toBe(input);
    act({ type: "elicitRequest", id: "e1", params: { server: "knob", message: "Name?", requestedSchema: { type: "object", properties: { name: { type: "string" } } } } });
    const field = q("elicitation-form")!.querySelector("input")!;
    key(field, "Escape");
    expect(host.sent).toContainEqual({ type: "elicit", id: "e1", action: "cancel" });
    expect(document.activeElement).toBe(input);
  });

  it("Escape closes the slash list; Enter then sends the text as typed", () => {
    act({ type: "prompts", prompts: [{ server: "knob", name: "greet", arguments: [] }] });
    const input = q("prompt-input") as HTMLTextAreaElement;
    input.value = "/gr";
    input.dispatchEvent(new Event("input"));
    expect(q("slash-item")).not.toBeNull();
    key(input, "Escape");
    expect(root.querySelector(".slash")!.hasAttribute("hidden")).toBe(true);
    key(input, "Enter");
    expect(host.sent).toContainEqual({ type: "send", text: "/gr" });
  });

  it("a session row is operated with Enter or Space", () => {
    act({ type: "sessions", sessions: [{ id: "s9", title: "Fix the build", created: 1, updated: 2, messageCount: 2 }] } as ChatAction);
    const row = q("session-item")!;
    expect(row.tabIndex).toBe(0);
    key(row, "Enter");
    key(row, " ");
    expect(host.sent.filter((m) => m.type === "resumeSession")).toEqual([
      { type: "resumeSession", sessionId: "s9" },
      { type: "resumeSession", sessionId: "s9" },
    ]);
  });

  it("focus is always visible (CSS :focus-visible on every control and on the dialogs)", () => {
    const css = fs.readFileSync(path.join(__dirname, "..", "webview", "style.css"), "utf8");
    expect(css).toMatch(/button:focus-visible, textarea:focus-visible, input:focus-visible, select:focus-visible, summary:focus-visible,\s*a:focus-visible, \[tabindex\]:focus-visible/);
    expect(css).toMatch(/\.approval:focus \{ outline: 1px solid var\(--vscode-focusBorder\)/);
  });
});
