/**
 * Issue 47 in the VS Code chat and servers view: a command's tool card says where it ran
 * (sandboxed with its network, or outside the sandbox after approval), what the sandbox refused,
 * and offers "Allow for this workspace" (then "Undo") on each refusal, by keyboard too; a
 * sandboxed stdio server is marked in the servers view.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { parseFromWebview } from "../shared/messages";
import { mergedGrants, sandboxLabel } from "../shared/sandbox";
import { serverDescription, serverTooltip } from "../src/format";
import { act, ev, host, mount, q, qa } from "./webviewHarness";

beforeEach(() => mount());

const finish = (callId: string, sandbox: unknown, isError = false) => {
  ev({ type: "tool_call_started", callId, name: "bash", arguments: { command: "touch ~/x" }, server: null });
  ev({ type: "tool_call_finished", callId, name: "bash", isError, content: "touch: cannot touch '/home/me/x': Read-only file system", durationMs: 12, sandbox } as never);
};

describe("the sandbox mark on a tool card", () => {
  it("says sandboxed with its network in words on the summary line", () => {
    finish("c1", { mode: "sandboxed", mechanism: "bubblewrap", network: "proxy", hosts: [], paths: [] });
    const mark = q("tool-sandbox")!;
    expect(mark.textContent).toBe(" · ⛉ sandboxed · network via proxy");
    expect(mark.getAttribute("data-mode")).toBe("sandboxed");
    expect(mark.getAttribute("aria-label")).toContain("Ran in the OS sandbox (bubblewrap)");
    expect(q("tool-card")!.querySelector("summary")!.contains(mark)).toBe(true);
    expect(q("sandbox-refusals")).toBeNull();
  });

  it("says network off, and outside the sandbox after approval, in words", () => {
    finish("c1", { mode: "sandboxed", mechanism: "bubblewrap", network: "off", hosts: [], paths: [] });
    finish("c2", { mode: "outside", mechanism: "", network: "", hosts: [], paths: [] });
    const [off, outside] = qa("tool-sandbox");
    expect(off.textContent).toContain("sandboxed · network off");
    expect(outside.textContent).toContain("outside the sandbox");
    expect(outside.getAttribute("aria-label")).toBe("Ran outside the OS sandbox, with your full rights, as you approved");
    expect(sandboxLabel({ mode: "unsandboxed", mechanism: "", network: "", hosts: [], paths: [] }).short).toBe("no sandbox");
  });

  it("has no mark for a tool that is not a command, and drops a malformed one", () => {
    finish("c1", undefined);
    finish("c2", { mode: "whatever" });
    expect(q("tool-sandbox")).toBeNull();
  });
});

describe("allow for this workspace", () => {
  it("offers each refused place and host, posts the grant, then offers Undo", () => {
    finish("c1", { mode: "sandboxed", mechanism: "bubblewrap", network: "proxy", hosts: ["pypi.org"], paths: ["/home/me/.config/tool"] }, true);
    const rows = q("sandbox-refusals")!;
    expect(rows.textContent).toContain("Writing in /home/me/.config/tool was refused by the sandbox");
    expect(rows.textContent).toContain("The connection to pypi.org was refused by the sandbox");
    const [write, hostButton] = qa("sandbox-allow") as HTMLButtonElement[];
    expect(write.textContent).toBe("Allow for this workspace");
    expect(write.getAttribute("aria-label")).toBe("Allow writing in /home/me/.config/tool for this workspace (kept in your agent-ls data, not in the workspace)");
    expect(write.tagName).toBe("BUTTON"); // Tab and Enter reach it
    write.click();
    expect(host.sent.at(-1)).toEqual({ type: "sandboxGrant", kind: "writes", value: "/home/me/.config/tool", granted: true });
    expect(write.disabled).toBe(true);
    // the server's answer: the grant is kept; the card says so and offers Undo
    act({ type: "sandboxGrants", grants: { hosts: [], writes: ["/home/me/.config/tool"] } });
    expect(q("sandbox-granted")!.textContent).toContain("Allowed for this workspace");
    const undo = q("sandbox-undo") as HTMLButtonElement;
    expect(undo.getAttribute("aria-label")).toBe("Undo: stop allowing writing in /home/me/.config/tool in this workspace");
    undo.click();
    expect(host.sent.at(-1)).toEqual({ type: "sandboxGrant", kind: "writes", value: "/home/me/.config/tool", granted: false });
    act({ type: "sandboxGrants", grants: { hosts: [], writes: [] } });
    expect(qa("sandbox-allow").length).toBe(2);
    expect(hostButton.getAttribute("data-kind")).toBe("hosts");
  });

  it("offers no host grant when the network is off (there is no proxy to let it through)", () => {
    finish("c1", { mode: "sandboxed", mechanism: "bubblewrap", network: "off", hosts: ["pypi.org"], paths: [] }, true);
    expect(q("sandbox-refusals")).toBeNull();
  });

  it("accepts only well-formed grant messages from the webview", () => {
    expect(parseFromWebview({ type: "sandboxGrant", kind: "writes", value: "/x", granted: true })).not.toBeNull();
    expect(parseFromWebview({ type: "sandboxGrant", kind: "all", value: "/x", granted: true })).toBeNull();
    expect(parseFromWebview({ type: "sandboxGrant", kind: "hosts", value: 3, granted: true })).toBeNull();
    expect(parseFromWebview({ type: "sandboxGrant", kind: "hosts", value: "a", granted: "yes" })).toBeNull();
    expect(mergedGrants({ folders: [{ folder: "/v", hosts: ["a"], writes: [] }, { folder: "/w", hosts: ["a", "b"], writes: ["/w"] }], enabled: true, mechanism: "bubblewrap", message: "commands run in an OS sandbox: bubblewrap 0.8.0" }))
      .toEqual({ hosts: ["a", "b"], writes: ["/w"], note: null });
  });
});

describe("the chat header's note", () => {
  it("says once, in words, when commands do not run in a sandbox, and nothing while they do", () => {
    const none = mergedGrants({ folders: [], enabled: true, mechanism: "none", message: "no OS sandbox is available: bubblewrap is not installed; every command asks before it runs" });
    act({ type: "sandboxGrants", grants: none });
    const note = q("sandbox-note")!;
    expect(note.hidden).toBe(false);
    expect(note.textContent).toBe("No OS sandbox is available: bubblewrap is not installed; every command asks before it runs");
    expect(note.getAttribute("role")).toBe("status");
    act({ type: "sandboxGrants", grants: mergedGrants({ folders: [], enabled: false, mechanism: "bubblewrap", message: "the OS sandbox is off (agent.sandbox.enabled is false in your settings): commands run with your full rights after approval" }) });
    expect(q("sandbox-note")!.textContent).toContain("The OS sandbox is off");
    act({ type: "sandboxGrants", grants: mergedGrants({ folders: [], enabled: true, mechanism: "bubblewrap", message: "commands run in an OS sandbox: bubblewrap 0.8.0" }) });
    expect(q("sandbox-note")!.hidden).toBe(true);
  });
});

describe("the servers view", () => {
  it("marks a sandboxed stdio server and says how in the tooltip", () => {
    const s = { name: "files", state: "connected", transport: "stdio", scope: "workspace", source: "/w/.mcp.json", toolCount: 2, sandbox: "sandboxed (bubblewrap); no network" };
    expect(serverDescription(s)).toBe("connected · 2 tools · sandboxed");
    expect(serverTooltip(s)).toContain("OS sandbox: sandboxed (bubblewrap); no network");
    expect(serverDescription({ ...s, sandbox: null })).toBe("connected · 2 tools");
  });
});
