import { describe, expect, it } from "vitest";
import { matchPrompts, parseSlash } from "../shared/slash";
import type { McpPrompt } from "../src/protocol";

const prompts: McpPrompt[] = [
  { server: "knob", name: "review", description: "Review code", arguments: [{ name: "code", required: true }, { name: "style" }] },
  { server: "other", name: "review", arguments: [] },
  { server: "knob", name: "hello", arguments: [] },
];

describe("slash commands", () => {
  it("lists prompts matching what follows the slash", () => {
    expect(matchPrompts("/", prompts)).toHaveLength(4); // and the built-in /compact, last
    expect(matchPrompts("/comp", prompts).map((p) => p.name)).toEqual(["compact"]);
    expect(matchPrompts("/knob:re", prompts).map((p) => p.name)).toEqual(["review"]);
    expect(matchPrompts("/hel", prompts).map((p) => p.name)).toEqual(["hello"]);
    expect(matchPrompts("/hello world", prompts)).toEqual([]);
    expect(matchPrompts("hello", prompts)).toEqual([]);
  });

  it("fills the first required argument with free text", () => {
    const r = parseSlash("/knob:review def f(): pass", prompts);
    expect(r).toMatchObject({ kind: "prompt", prompt: { server: "knob", name: "review" }, arguments: { code: "def f(): pass" } });
  });

  it("takes key=value pairs", () => {
    const r = parseSlash('/knob:review code=x style="terse"', prompts);
    expect(r).toMatchObject({ kind: "prompt", arguments: { code: "x", style: "terse" } });
  });

  it("reports missing required arguments and ambiguous names", () => {
    expect(parseSlash("/knob:review", prompts)).toMatchObject({ kind: "error" });
    expect(parseSlash("/review x", prompts)).toEqual({ kind: "none" });
    expect(parseSlash("/hello", prompts)).toMatchObject({ kind: "prompt", arguments: {} });
    expect(parseSlash("/etc/hosts says what", prompts)).toEqual({ kind: "none" });
  });
});

describe("built-in slash commands", () => {
  it("/compact is the server's, even when an MCP prompt is named compact (reachable as /server:compact)", () => {
    const withCompact: McpPrompt[] = [...prompts, { server: "docs", name: "compact", arguments: [] }];
    expect(parseSlash("/compact", withCompact)).toEqual({ kind: "none" });
    expect(parseSlash("/docs:compact", withCompact)).toMatchObject({ kind: "prompt", prompt: { server: "docs", name: "compact" } });
  });
});
