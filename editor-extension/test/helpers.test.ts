import { describe, expect, it } from "vitest";
import { parseFromWebview } from "../shared/messages";
import { attachmentLabel, serverContextValue, serverDescription, serverErrorText, serverTooltip, statusText, userSettingsPath } from "../src/format";
import { resolveServerCommand, readServerSettings } from "../src/serverCommand";

describe("server command", () => {
  const exe = (set: string[]) => (p: string) => set.includes(p);
  const base = { command: [], pythonPath: "", env: {} };

  it("prefers agentLs.server.command", () => {
    const r = resolveServerCommand({ ...base, command: ["/x/agent-ls", "serve"], pythonPath: "/py" }, "/bin", exe([]));
    expect(r).toEqual({ ok: true, value: { command: "/x/agent-ls", args: ["serve"], source: "agentLs.server.command" } });
  });

  it("then pythonPath -m agent_ls serve", () => {
    const r = resolveServerCommand({ ...base, pythonPath: "/v/bin/python" }, "/bin", exe(["/v/bin/python"]));
    expect(r).toEqual({ ok: true, value: { command: "/v/bin/python", args: ["-m", "agent_ls", "serve"], source: "agentLs.server.pythonPath" } });
    const missing = resolveServerCommand({ ...base, pythonPath: "/nope/python" }, "/bin", exe([]));
    expect(missing.ok).toBe(false);
  });

  it("then agent-ls on PATH, with a clear error when it is not there", () => {
    const r = resolveServerCommand(base, "/a:/b", exe(["/b/agent-ls"]));
    expect(r).toEqual({ ok: true, value: { command: "/b/agent-ls", args: [], source: "PATH" } });
    const none = resolveServerCommand(base, "/a:/b", exe([]));
    expect(none.ok).toBe(false);
    if (!none.ok) expect(none.error).toMatch(/agentLs\.server\.pythonPath/);
  });

  it("reads settings defensively", () => {
    const values: Record<string, unknown> = { command: ["a", 3, "b"], pythonPath: "  /p  ", env: { A: "1", B: 2, C: null } };
    expect(readServerSettings((k) => values[k])).toEqual({ command: ["a", "b"], pythonPath: "/p", env: { A: "1", B: "2" } });
    expect(readServerSettings(() => undefined)).toEqual({ command: [], pythonPath: "", env: {} });
  });
});

describe("formatting", () => {
  it("describes servers as the contract says", () => {
    const s = { name: "knob", state: "connected", toolCount: 3 };
    expect(serverDescription(s)).toBe("connected · 3 tools");
    expect(serverContextValue(s)).toBe("server.connected");
    expect(serverContextValue({ ...s, state: "awaiting-trust" })).toBe("server.awaiting-trust.untrusted");
    expect(serverContextValue({ ...s, auth: { state: "needs-sign-in" } })).toBe("server.connected.auth-needs-sign-in");
  });

  it("server errors as one line (typed object or legacy string)", () => {
    expect(serverErrorText({ phase: "spawn", message: "npx: not found", errno: 2 })).toBe("spawn: npx: not found (errno 2)");
    expect(serverErrorText({ phase: "handshake", message: "exited", exitCode: 1 })).toBe("handshake: exited (exit code 1)");
    expect(serverErrorText({ message: "401", httpStatus: 401 })).toBe("401 (HTTP 401)");
    expect(serverErrorText("plain")).toBe("plain");
    expect(serverErrorText(null)).toBe("");
    const tip = serverTooltip({ name: "gh", state: "failed", toolCount: 0, error: { phase: "spawn", message: "ENOENT" } });
    expect(tip).toContain("last error: spawn: ENOENT");
    expect(tip).not.toContain("[object Object]");
  });

  it("status bar text", () => {
    expect(statusText({ client: "running", busy: false, connected: 2, total: 3 })).toBe("$(hubot) MCP 2/3");
    expect(statusText({ client: "running", busy: true, connected: 2, total: 3 })).toContain("working");
    expect(statusText({ client: "failed", busy: false, connected: 0, total: 0 })).toContain("error");
  });

  it("attachment labels", () => {
    expect(attachmentLabel({ kind: "file", uri: "file:///w/src/a%20b.py" })).toBe("a b.py");
    expect(
      attachmentLabel({ kind: "selection", uri: "file:///w/a.py", range: { start: { line: 0, character: 0 }, end: { line: 4, character: 1 } } }),
    ).toBe("a.py:1-5");
    expect(attachmentLabel({ kind: "resource", uri: "mem://x", server: "knob" })).toBe("knob: mem://x");
  });

  it("user settings path follows the server's rules", () => {
    expect(userSettingsPath({ AGENT_LS_USER_SETTINGS: "/s.json" }, "linux", "/h")).toBe("/s.json");
    expect(userSettingsPath({ AGENT_LS_CONFIG_DIR: "/c" }, "linux", "/h")).toBe("/c/settings.json");
    expect(userSettingsPath({}, "linux", "/h")).toBe("/h/.config/agent-ls/settings.json");
    expect(userSettingsPath({ XDG_CONFIG_HOME: "/x" }, "linux", "/h")).toBe("/x/agent-ls/settings.json");
  });
});

describe("webview messages", () => {
  it("accepts well-formed messages and rejects the rest", () => {
    expect(parseFromWebview({ type: "send", text: "hi" })).toEqual({ type: "send", text: "hi" });
    expect(parseFromWebview({ type: "approve", requestId: "a", answer: "allow_once" })).not.toBeNull();
    expect(parseFromWebview({ type: "approve", requestId: "a", answer: "always" })).toBeNull();
    expect(parseFromWebview({ type: "send" })).toBeNull();
    expect(parseFromWebview({ type: "elicit", id: "e", action: "accept", content: { a: 1 } })).not.toBeNull();
    expect(parseFromWebview({ type: "elicit", id: "e", action: "accept", content: "x" })).toBeNull();
    expect(parseFromWebview({ type: "rm -rf" })).toBeNull();
    expect(parseFromWebview("send")).toBeNull();
    expect(parseFromWebview(null)).toBeNull();
  });
});
