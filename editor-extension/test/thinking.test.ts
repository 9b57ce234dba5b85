/**
 * The model's reasoning in the chat webview: a "Thinking…" block streams before the reply, then
 * collapses to "Thought for N s", opened by mouse or keyboard; plain text only; one block per
 * phase; updated in place while it streams; nothing of it is sent back; resume still works.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ThinkingItem } from "../shared/state";
import { thinkingLabel } from "../webview/thinkingView";
import { act, app, ev, host, mount, q, qa, reload, root } from "./webviewHarness";

const think = (text: string) => ev({ type: "thinking", text });
const later = (ms: number) => vi.advanceTimersByTime(ms);
const block = () => q("thinking") as HTMLDetailsElement;
const summaryOf = (b: Element) => b.querySelector("[data-testid=thinking-summary]") as HTMLElement;
/** The "toggle" event a <details> fires (a task after it opened or closed). */
const toggled = async (b: HTMLElement) => {
  await new Promise<void>((resolve) => b.addEventListener("toggle", () => resolve(), { once: true }));
  await new Promise((resolve) => setTimeout(resolve, 0)); // and any other toggle queued with it
};
const textOf = (b: Element) => b.querySelector("[data-testid=thinking-text]")!.textContent;

beforeEach(() => {
  vi.useFakeTimers({ toFake: ["Date"] });
  vi.setSystemTime(new Date("2026-01-01T00:00:00Z"));
  mount();
  act({ type: "userPrompt", text: "Why is the sky blue?" });
  ev({ type: "turn_started", turn: 1 });
});
afterEach(() => {
  vi.useRealTimers();
});

describe("thinking blocks", () => {
  it("stream open under 'Thinking…', then collapse to 'Thought for N s' once the reply starts", () => {
    think("Rayleigh");
    const b = block();
    expect(b.tagName).toBe("DETAILS");
    expect(b.dataset.state).toBe("streaming");
    expect(b.open).toBe(true);
    expect(summaryOf(b).textContent).toBe("Thinking…");
    expect(b.querySelector(".spinner")).not.toBeNull();
    expect(textOf(b)).toBe("Rayleigh");
    // the log is busy while the reasoning streams (a screen reader does not read every piece)
    expect(app.transcript.getAttribute("aria-busy")).toBe("true");
    later(1000);
    think(" scattering");
    later(2200);
    think("…");
    expect(textOf(b)).toBe("Rayleigh scattering…");
    later(800);
    ev({ type: "text", text: "Because of Rayleigh scattering." });
    // the same element, now one line
    expect(block()).toBe(b);
    expect(b.dataset.state).toBe("done");
    expect(b.open).toBe(false);
    expect(summaryOf(b).textContent).toBe("Thought for 4 s");
    expect(b.querySelector(".spinner")).toBeNull();
    // before the reply it preceded, after the question
    const order = Array.from(app.transcript.children).map((c) => `${(c as HTMLElement).dataset.testid ?? ""}:${(c as HTMLElement).dataset.role ?? ""}`);
    expect(order).toEqual(["message:user", "thinking:", "message:assistant"]);
    // the text is still there for the user who opens it
    expect(textOf(b)).toBe("Rayleigh scattering…");
  });

  it("updates the streaming block in place: the element, its text node and the focus stay", () => {
    think("a");
    const b = block();
    const summary = summaryOf(b);
    const node = b.querySelector("[data-testid=thinking-text]")!.firstChild;
    summary.focus();
    expect(document.activeElement).toBe(summary);
    for (const piece of ["b", "c", "d"]) think(piece);
    expect(block()).toBe(b);
    expect(b.querySelector("[data-testid=thinking-text]")!.firstChild).toBe(node);
    expect(node!.textContent).toBe("abcd");
    expect(document.activeElement).toBe(summary);
    // other items are not rebuilt by the deltas
    const user = q("message")!;
    think("e");
    expect(q("message")).toBe(user);
  });

  it("opens and closes by mouse or keyboard, and remembers the choice across re-renders and reloads", async () => {
    think("step one");
    later(1500);
    ev({ type: "tool_call_started", callId: "c1", name: "read", arguments: {}, server: "fs" });
    const b = block();
    expect(b.open).toBe(false);
    const summary = summaryOf(b);
    expect(summary.tagName).toBe("SUMMARY"); // a native disclosure: focusable, Enter / Space toggle it
    expect(summary.tabIndex).toBe(0);
    summary.click(); // what Enter / Space on the focused summary do too
    expect(b.open).toBe(true);
    await toggled(b);
    ev({ type: "tool_call_finished", callId: "c1", name: "read", isError: false, content: "x", durationMs: 2 });
    ev({ type: "text", text: "done" });
    expect(block().open).toBe(true);
    reload();
    expect(block().open).toBe(true);
    expect(summaryOf(block()).textContent).toBe("Thought for 2 s");
    summaryOf(block()).click();
    await toggled(block());
    reload();
    expect(block().open).toBe(false);
  });

  it("shows the reasoning as plain text, never as HTML", () => {
    const evil = '<img src=x onerror="alert(1)"><b>bold</b> **not markdown** & <script>1</script>';
    think(evil);
    ev({ type: "text", text: "ok" });
    const b = block();
    expect(textOf(b)).toBe(evil);
    expect(b.querySelector("img, b, script, strong")).toBeNull();
    expect(root.querySelector("img, script")).toBeNull();
    expect(b.querySelector("[data-testid=thinking-text]")!.innerHTML).toContain("&lt;img");
  });

  it("gives one block per phase, in order with the tool cards", () => {
    think("I should read the file.");
    later(1000);
    ev({ type: "tool_call_started", callId: "c1", name: "mcp__fs__read", arguments: { path: "a" }, server: "fs", displayName: "read" });
    ev({ type: "tool_call_finished", callId: "c1", name: "mcp__fs__read", isError: false, content: "text", durationMs: 4 });
    think("Now I can answer.");
    expect(qa("thinking").map((b) => b.dataset.state)).toEqual(["done", "streaming"]);
    later(3000);
    ev({ type: "text", text: "It says text." });
    ev({ type: "turn_finished", stopReason: "end", usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }, steps: 2, text: "" });
    act({ type: "promptFinished", result: { sessionId: "s1", stopReason: "end", text: "", usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 } } });
    const order = Array.from(app.transcript.children).map((c) => (c as HTMLElement).dataset.testid);
    expect(order).toEqual(["message", "thinking", "tool-card", "thinking", "message"]);
    const blocks = qa("thinking");
    expect(blocks.map((b) => summaryOf(b).textContent)).toEqual(["Thought for 1 s", "Thought for 3 s"]);
    expect(blocks.map(textOf)).toEqual(["I should read the file.", "Now I can answer."]);
    expect(blocks.every((b) => !(b as HTMLDetailsElement).open)).toBe(true);
    expect(app.transcript.getAttribute("aria-busy")).toBe("false");
  });

  it("collapses when the turn ends without a reply (stopped)", () => {
    think("hmm");
    later(2000);
    act({ type: "promptFailed", message: "Stopped.", cancelled: true });
    expect(block().dataset.state).toBe("done");
    expect(summaryOf(block()).textContent).toBe("Thought for 2 s");
    expect(q("notice")!.textContent).toBe("Stopped.");
  });

  it("never sends the reasoning back: the next prompt carries only what the user typed", () => {
    think("PRIVATE-REASONING");
    ev({ type: "text", text: "answer" });
    ev({ type: "turn_finished", stopReason: "end", usage: { inputTokens: 1, outputTokens: 1, cacheReadTokens: 0, cacheWriteTokens: 0 }, steps: 1, text: "answer" });
    act({ type: "busy", busy: false });
    // clicking around the block posts nothing
    summaryOf(block()).click();
    block().querySelector<HTMLElement>("[data-testid=thinking-text]")!.click();
    expect(host.sent).toEqual([]);
    app.input.value = "next question";
    app.send();
    expect(JSON.stringify(host.sent)).not.toContain("PRIVATE-REASONING");
    expect(host.sent).toContainEqual({ type: "send", text: "next question" });
  });

  it("a resumed session (no thinking stored) replaces the transcript and the next turn streams again", () => {
    think("old reasoning");
    ev({ type: "text", text: "old answer" });
    act({
      type: "history",
      sessionId: "s2",
      messages: [
        { role: "user", content: "earlier" },
        { role: "assistant", content: "earlier answer" },
      ],
    });
    expect(q("thinking")).toBeNull();
    expect(qa("message").map((m) => m.querySelector(".text, .markdown")!.textContent.trim())).toEqual(["earlier", "earlier answer"]);
    act({ type: "userPrompt", text: "again" });
    ev({ type: "turn_started", turn: 1 });
    think("fresh");
    expect(qa("thinking")).toHaveLength(1);
    expect(textOf(block())).toBe("fresh");
    // the view hidden and shown mid-thought: restored from the saved state, still streaming
    reload();
    expect(block().dataset.state).toBe("streaming");
    expect(textOf(block())).toBe("fresh");
  });

  it("labels: seconds, minutes, and 'Thought' without timing", () => {
    const item = (done: boolean, durationMs: number | null): ThinkingItem => ({ kind: "thinking", id: "k-1", rev: 0, text: "", startedAt: 0, done, durationMs });
    expect(thinkingLabel(item(false, null))).toBe("Thinking…");
    expect(thinkingLabel(item(true, null))).toBe("Thought");
    expect(thinkingLabel(item(true, 200))).toBe("Thought for 1 s");
    expect(thinkingLabel(item(true, 12_400))).toBe("Thought for 12 s");
    expect(thinkingLabel(item(true, 125_000))).toBe("Thought for 2 min 5 s");
    // a block restored without timing shows "Thought"
    mount({ items: [{ ...item(true, null), text: "kept" }] });
    expect(summaryOf(block()).textContent).toBe("Thought");
    expect(textOf(block())).toBe("kept");
  });

  it("draws in theme colours: the description colour, focus outline from the theme", async () => {
    const fs = await import("fs");
    const path = await import("path");
    const css = fs.readFileSync(path.join(__dirname, "..", "webview", "style.css"), "utf8");
    expect(css).toMatch(/\.thinking > summary \{[^}]*color: var\(--vscode-descriptionForeground\)/);
    expect(css).toMatch(/\.thinking \.thinking-text \{[^}]*color: var\(--vscode-descriptionForeground\)[^}]*white-space: pre-wrap/);
  });
});
