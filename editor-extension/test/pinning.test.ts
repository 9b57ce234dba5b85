/**
 * Issue 30: the chat stays usable while the editor asks for things. The workspace trust question
 * lives in the restricted banner (its card opens under it with "Review and trust", and closes
 * again); pinned questions take about a third of the chat at most: older ones collapse to their
 * heading line, the newest is whole with its buttons in view.
 */
import * as fs from "fs";
import * as path from "path";
import { beforeEach, describe, expect, it } from "vitest";
import type { WorkspaceStatusPayload } from "../src/protocol/mcp";
import { act, app, host, key, mount, q, qa } from "./webviewHarness";

beforeEach(() => mount());

const approve = (callId: string) =>
  act({ type: "approvalRequest", params: { callId, tool: "mcp__knob__write_file", arguments: { path: `${callId}.txt` }, reason: "write capability", server: "knob", displayName: "write_file" } });

const restricted: WorkspaceStatusPayload = { folder: "/w", state: "restricted", message: "This workspace is restricted: its agent-ls settings and MCP servers are ignored until you trust it." };
const params = { folder: "/w", servers: [{ server: "db", command: "npx", args: ["-y", "db-mcp"], source: "/w/.mcp.json" }], settings: [] };

describe("the workspace trust question lives in the banner", () => {
  it("its card waits under the banner, closed, and does not take the focus", () => {
    const input = q("prompt-input") as HTMLTextAreaElement;
    input.focus();
    act({ type: "workspaces", workspaces: [restricted] });
    act({ type: "workspaceTrustRequest", id: "w1", params });
    const details = q("trust-details")!;
    expect(details.hidden).toBe(true);
    expect(q("pending")!.hidden).toBe(true); // not pinned a second time
    expect(details.contains(q("workspace-trust-prompt"))).toBe(true);
    expect(document.activeElement).toBe(input);
    const button = q("banner-trust") as HTMLButtonElement;
    expect(button.textContent).toBe("Review and trust");
    expect(button.getAttribute("aria-expanded")).toBe("false");
    expect(button.getAttribute("aria-controls")).toBe(details.id);
    // the card sits right under the banner, before the transcript
    const order = Array.from(app.transcript.parentElement!.children).map((c) => (c as HTMLElement).dataset.testid ?? c.className);
    expect(order.indexOf("trust-details")).toBe(order.indexOf("restricted-banner") + 1);
  });

  it("\"Review and trust\" opens the card (focus on it), again closes it; Trust answers; the focus goes back to the input", () => {
    act({ type: "workspaces", workspaces: [restricted] });
    act({ type: "workspaceTrustRequest", id: "w1", params });
    const details = q("trust-details")!;
    (q("banner-trust") as HTMLButtonElement).click();
    expect(host.sent).not.toContainEqual({ type: "trustWorkspaceCommand" }); // answered here, no round trip
    expect(details.hidden).toBe(false);
    const card = q("workspace-trust-prompt")!;
    expect(document.activeElement).toBe(card);
    expect(q("banner-trust")!.getAttribute("aria-expanded")).toBe("true");
    // closed again with the same button, which keeps the focus
    (q("banner-trust") as HTMLButtonElement).focus();
    (q("banner-trust") as HTMLButtonElement).click();
    expect(details.hidden).toBe(true);
    expect(document.activeElement).toBe(q("banner-trust"));
    expect(q("banner-trust")!.getAttribute("aria-expanded")).toBe("false");
    // open, Tab to "Trust workspace", answer
    (q("banner-trust") as HTMLButtonElement).click();
    const trust = card.querySelector<HTMLButtonElement>('[data-answer="trust"]')!;
    trust.focus();
    trust.click();
    expect(host.sent).toContainEqual({ type: "workspaceTrust", id: "w1", answer: "trust" });
    act({ type: "workspaceTrustAnswered", id: "w1", answer: "trust" });
    act({ type: "workspaces", workspaces: [{ ...restricted, state: "trusted" }] });
    expect(details.hidden).toBe(true);
    expect(q("restricted-banner")!.hidden).toBe(true);
    expect(document.activeElement).toBe(q("prompt-input"));
    expect(app.transcript.contains(q("workspace-trust-prompt"))).toBe(true); // answered: in the transcript
  });

  it("Escape in the open card goes back to the input (the question stays)", () => {
    act({ type: "workspaceTrustRequest", id: "w1", params });
    (q("banner-trust") as HTMLButtonElement).click();
    key(q("workspace-trust-prompt")!, "Escape");
    expect(document.activeElement).toBe(q("prompt-input"));
    expect(q("workspace-trust-prompt")!.dataset.answered).toBeUndefined();
  });

  it("a question that comes before the status still has its banner line; the host's focusItem opens it", () => {
    act({ type: "workspaceTrustRequest", id: "w1", params });
    expect(q("restricted-banner")!.hidden).toBe(false);
    expect(q("restricted-banner")!.textContent).toContain("This workspace is restricted");
    app.receive({ type: "focusItem", id: "w1" }); // "Agent: Trust Workspace Settings" from the palette
    expect(q("trust-details")!.hidden).toBe(false);
    expect(document.activeElement).toBe(q("workspace-trust-prompt"));
  });

  it("with no question waiting, the banner's button asks the host", () => {
    act({ type: "workspaces", workspaces: [{ ...restricted, state: "declined" }] });
    (q("banner-trust") as HTMLButtonElement).click();
    expect(host.sent).toContainEqual({ type: "trustWorkspaceCommand" });
    expect(q("banner-trust")!.hasAttribute("aria-expanded")).toBe(false);
  });
});

describe("pinned questions take about a third of the chat", () => {
  it("older questions collapse to their heading line; the newest is whole and takes the focus", () => {
    q("prompt-input")!.focus();
    approve("a1");
    approve("a2");
    const [a1, a2] = qa("approval");
    expect(a1.dataset.collapsed).toBe("true");
    expect(a2.dataset.collapsed).toBeUndefined();
    const toggle = a1.querySelector<HTMLButtonElement>(".pin-toggle")!;
    expect(toggle.textContent).toBe("Show");
    expect(toggle.getAttribute("aria-expanded")).toBe("false");
    expect(a2.querySelector(".pin-toggle")).toBeNull();
    expect(a2.querySelector('[data-answer="deny"]')).not.toBeNull();
    // the first had the focus; it collapsed, so the newest takes it
    expect(document.activeElement).toBe(a2);
    // "Show" opens an older one (and keeps the focus on the button); "Hide" closes it
    toggle.click();
    expect(a1.dataset.collapsed).toBeUndefined();
    expect(a1.querySelector(".pin-toggle")!.textContent).toBe("Hide");
    expect(document.activeElement).toBe(a1.querySelector(".pin-toggle"));
    (a1.querySelector(".pin-toggle") as HTMLButtonElement).click();
    expect(a1.dataset.collapsed).toBe("true");
    // answering the newest makes the older one the newest: whole again, no toggle
    act({ type: "approvalAnswered", requestId: "a2", answer: "deny" });
    const left = qa("approval").find((b) => b.dataset.itemId === a1.dataset.itemId)!;
    expect(left.dataset.collapsed).toBeUndefined();
    expect(left.querySelector(".pin-toggle")).toBeNull();
    expect(host.sent.filter((m) => m.type === "approve")).toEqual([]); // the toggles answered nothing
  });

  it("the CSS caps the pending region at a third, keeps the newest's buttons in view, and lets an open trust card take its height", () => {
    const css = fs.readFileSync(path.join(__dirname, "..", "webview", "style.css"), "utf8");
    expect(css).toMatch(/\.chat > \.pending \{[^}]*max-height: 34vh/);
    // issue 44: the open trust card is not capped at a third (its command and server list are read whole)
    expect(css).toMatch(/\.chat > \.trust-details \{[^}]*overflow-y: auto/);
    expect(css).not.toMatch(/\.chat > \.trust-details \{[^}]*max-height/);
    expect(css).toMatch(/\.pending > \[data-collapsed\] > :not\(\.head\):not\(\.pin-toggle\) \{ display: none; \}/);
    expect(css).toMatch(/\.pending > :last-child \.buttons[^{]*\{[^}]*position: sticky; bottom: 0/);
    expect(css).toContain(".chat > .trust-details[hidden] { display: none; }");
    // compact while a question waits: the attach buttons and the "New session" line step aside;
    // a pinned approval's reason stays whole (issue 44: it wraps, never ellipsized)
    expect(css).toContain('.chat:has(> .pending:not([hidden])) .composer [data-testid^="attach-"] { display: none; }');
    expect(css).not.toMatch(/\.pending > \.approval > \.reason \{[^}]*(nowrap|ellipsis)/);
  });

  it("a pinned question's reason is in the card whole", () => {
    approve("a1");
    const reason = q("approval")!.querySelector<HTMLElement>(".reason")!;
    expect(reason.textContent).toBe("write capability");
  });
});
