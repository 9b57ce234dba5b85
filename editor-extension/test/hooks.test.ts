/**
 * Issue 43: each hook run is a line of its own in the chat (event, command, outcome, time) that
 * opens on its output by mouse or keyboard; the outcome in words with a glyph; plain text only.
 */
import { beforeEach, describe, expect, it } from "vitest";
import type { HookEvent } from "../src/protocol";
import { ev, mount, q, qa, reload } from "./webviewHarness";

beforeEach(() => mount());

const hook = (extra: Partial<HookEvent> = {}): HookEvent => ({
  type: "hook",
  event: "PreToolUse",
  command: "./check.sh --strict",
  outcome: "blocked",
  durationMs: 12.4,
  message: "no force pushes\nask the release manager",
  output: "checking git push --force\nstderr:\nno force pushes",
  decision: null,
  callId: "c1",
  tool: "bash",
  ...extra,
});
/** The "toggle" event a <details> fires (a task after it opened or closed). */
const toggled = (b: HTMLElement) => new Promise<void>((resolve) => b.addEventListener("toggle", () => resolve(), { once: true }));

describe("hook lines", () => {
  it("show a tool hook as its own line after the call's card: event, command, outcome, time, first line of the reason", () => {
    ev({ type: "tool_call_started", callId: "c1", name: "bash", arguments: { command: "git push --force" }, server: null });
    ev(hook());
    ev({ type: "tool_call_finished", callId: "c1", name: "bash", isError: true, content: "This call was not run", durationMs: 20, denied: true });
    const line = q("hook")!;
    expect(line.tagName).toBe("DETAILS");
    expect(line.dataset.outcome).toBe("blocked");
    const summary = q("hook-summary")!;
    expect(summary.textContent).toBe("Hook · PreToolUse · ./check.sh --strict · ⊘ blocked (12 ms): no force pushes");
    // read as words (the glyph is hidden from screen readers)
    expect(summary.getAttribute("aria-label")).toBe("Hook · PreToolUse · ./check.sh --strict · blocked (12 ms): no force pushes");
    expect(summary.querySelector(".hook-icon")!.getAttribute("aria-hidden")).toBe("true");
    const order = qa("tool-card").concat(qa("hook")).map((n) => n.dataset.testid);
    expect(order).toEqual(["tool-card", "hook"]);
    expect(q("tool-card")!.compareDocumentPosition(line) & Node.DOCUMENT_POSITION_FOLLOWING).toBeTruthy();
    // the card itself has no progress line for it
    expect(q("tool-progress")).toBeNull();
  });

  it("opens on its message and output by keyboard or mouse, and remembers the choice across reloads", async () => {
    ev(hook());
    const line = q("hook") as HTMLDetailsElement;
    expect(line.open).toBe(false);
    const summary = q("hook-summary")!;
    expect(summary.tagName).toBe("SUMMARY"); // a native disclosure: focusable, Enter / Space toggle it
    expect(summary.tabIndex).toBe(0);
    summary.click(); // what Enter / Space on the focused summary do too
    expect(line.open).toBe(true);
    await toggled(line);
    expect(q("hook-text")!.textContent).toBe("no force pushes\nask the release manager");
    const output = q("hook-output")!;
    expect(output.textContent).toBe("checking git push --force\nstderr:\nno force pushes");
    expect(output.getAttribute("tabindex")).toBe("0"); // a long output scrolls: reachable by keyboard
    expect(output.getAttribute("aria-label")).toBe("Output of the PreToolUse hook ./check.sh --strict");
    reload();
    expect((q("hook") as HTMLDetailsElement).open).toBe(true);
  });

  it("says ran, ran with a decision, or error, and a hook that printed nothing says so", () => {
    ev(hook({ event: "UserPromptSubmit", command: "./ctx.sh", outcome: "ran", message: "", output: "", callId: null, tool: null }));
    ev(hook({ outcome: "ran", decision: "allow", message: "", output: "" }));
    ev(hook({ event: "Stop", command: "notify-send done", outcome: "error", message: "The Stop hook `notify-send done` failed with exit code 127 (command not found)", output: "" }));
    const lines = qa("hook");
    expect(lines.map((l) => l.dataset.outcome)).toEqual(["ran", "ran", "error"]);
    expect(lines[0].querySelector("summary")!.textContent).toBe("Hook · UserPromptSubmit · ./ctx.sh · ✓ ran (12 ms)");
    expect(lines[1].querySelector("summary")!.textContent).toContain("ran, allowed");
    expect(lines[2].querySelector("summary")!.textContent).toContain("✕ error (12 ms): The Stop hook");
    expect(lines[0].querySelector(".hook-body")!.textContent).toBe("It printed nothing.");
  });

  it("shows what a hook printed as plain text, never as HTML", () => {
    const evil = '<img src=x onerror="alert(1)"><b>bold</b>';
    ev(hook({ message: evil, output: evil }));
    expect(q("hook")!.querySelector("img, b")).toBeNull();
    expect(q("hook-output")!.textContent).toBe(evil);
  });

  it("is not a notice: the old 'notice' stand-in is gone", () => {
    ev(hook());
    expect(document.querySelectorAll(".notice").length).toBe(0);
  });
});
