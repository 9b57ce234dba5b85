import { describe, expect, it } from "vitest";
import { parseFromWebview } from "../shared/messages";
import { readFileSync } from "fs";
import * as path from "path";
import { attachmentLabel, authActions, authText, serverContextValue, serverDescription, serverErrorText, serverTooltip, statusText, userSettingsPath } from "../src/format";
import { resolveServerCommand, readServerSettings } from "../src/serverCommand";

describe("server command", () => {
  const exe = (set: string[]) => (p: string) => set.includes(p);
  const base = { command: [], pythonPath: "", env: {} };

  it("prefers agentLs.server.command", () => {
    const r = resolveServerCommand({ ...base, command: ["/x/agent-ls", "serve"], pythonPath: "/py" }, "/bin", exe([]));
    expect(r).toEqual({ ok: true, value: { command: "/x/agent-ls", args: ["serve"], source: "agentLs.server.command" } });
  });

  it("then pythonPath -P -m agent_ls serve", () => {
    const r = resolveServerCommand({ ...base, pythonPath: "/v/bin/python" }, "/bin", exe(["/v/bin/python"]));
    expect(r).toEqual({ ok: true, value: { command: "/v/bin/python", args: ["-P", "-m", "agent_ls", "serve"], source: "agentLs.server.pythonPath" } });
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
    expect(serverContextValue({ ...s, auth: { state: "needs-sign-in" } })).toBe("server.connected.auth-needs-sign-in.can-sign-in");
  });

  it("offers Sign in / Sign out by the server's state and OAuth state", () => {
    const s = { name: "gh", state: "connected", toolCount: 1 };
    const offers = (x: Parameters<typeof authActions>[0]) => authActions(x);
    expect(offers(s)).toEqual({ signIn: false, signOut: false }); // no OAuth at all
    expect(offers({ ...s, state: "needs-sign-in", auth: null })).toEqual({ signIn: true, signOut: false });
    expect(offers({ ...s, state: "needs-sign-in", auth: { state: "needs-sign-in" } })).toEqual({ signIn: true, signOut: false });
    expect(offers({ ...s, auth: { state: "signed-in", expiresAt: 1764748800 } })).toEqual({ signIn: false, signOut: true });
    expect(offers({ ...s, state: "failed", auth: { state: "failed", reason: "invalid_grant" } })).toEqual({ signIn: true, signOut: true });
    expect(offers({ ...s, auth: { state: "signing-in" } })).toEqual({ signIn: false, signOut: false });
    // The menus (package.json) key on these context value parts.
    expect(serverContextValue({ ...s, state: "needs-sign-in" })).toBe("server.needs-sign-in.can-sign-in");
    expect(serverContextValue({ ...s, auth: { state: "signed-in" } })).toBe("server.connected.auth-signed-in.can-sign-out");
    const tip = serverTooltip({ ...s, auth: { state: "signed-in", expiresAt: 1764748800 } });
    expect(tip).toContain("auth: signed-in (until 2025-12-03 08:00 UTC)");
    const negotiated = serverTooltip({ ...s, serverInfo: "knob 1.0.0", protocolVersion: "2026-07-28" });
    expect(negotiated).toContain("server: knob 1.0.0");
    expect(negotiated).toContain("protocol: MCP 2026-07-28");
    expect(authText({ state: "failed", reason: "the token was revoked" })).toBe("failed (the token was revoked)");
  });

  it("the package.json menus offer sign in/out on those context values", () => {
    const pkg = JSON.parse(readFileSync(path.join(__dirname, "..", "package.json"), "utf8")) as {
      contributes: { menus: Record<string, { command: string; when: string }[]> };
    };
    const menu = pkg.contributes.menus["view/item/context"];
    const shown = (command: string, ctx: string) =>
      menu.some((m) => {
        if (m.command !== command) return false;
        const re = /viewItem =~ \/(.*)\//.exec(m.when);
        return !!re && new RegExp(re[1]).test(ctx);
      });
    const ctx = (x: Parameters<typeof serverContextValue>[0]) => serverContextValue(x);
    const base = { name: "gh", state: "connected", toolCount: 1 };
    expect(shown("agentLs.signIn", ctx({ ...base, state: "needs-sign-in" }))).toBe(true);
    expect(shown("agentLs.signOut", ctx({ ...base, state: "needs-sign-in" }))).toBe(false);
    expect(shown("agentLs.signOut", ctx({ ...base, auth: { state: "signed-in" } }))).toBe(true);
    expect(shown("agentLs.signIn", ctx({ ...base, auth: { state: "signed-in" } }))).toBe(false);
    expect(shown("agentLs.signIn", ctx(base))).toBe(false);
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
