/**
 * MCP prompts as slash commands: `/server:prompt rest` (or `/prompt rest` when the name is
 * unique). `rest` is either `key=value` pairs naming the prompt's arguments, or free text that
 * fills its first required argument (else its first argument).
 */
import type { McpPrompt, Wire } from "../src/protocol";

export type SlashResult =
  | { kind: "none" }
  | { kind: "prompt"; prompt: McpPrompt; arguments: Record<string, string> }
  | { kind: "error"; message: string };

export function slashName(p: McpPrompt): string {
  return p.server ? `${p.server}:${p.name}` : p.name;
}

/** The built-in commands in the suggestion list (no server: the agent-ls server runs them). */
export const BUILTIN_PROMPTS: McpPrompt[] = [
  { server: "", name: "compact", description: "Compact the conversation now (old tool results stay readable by handle; older turns are summarized)", arguments: [] },
];

/** Prompts whose slash name starts with what follows the `/` (for the suggestion list), then
 * the matching built-in commands. */
export function matchPrompts(input: string, prompts: McpPrompt[]): McpPrompt[] {
  if (!input.startsWith("/") || /\s/.test(input)) return [];
  const q = input.slice(1).toLowerCase();
  return [...prompts, ...BUILTIN_PROMPTS].filter((p) => slashName(p).toLowerCase().includes(q) || p.name.toLowerCase().startsWith(q));
}

/** Slash commands of agent-ls itself (the server runs them): they win over an MCP prompt of the
 * same name, which stays reachable as `/server:name`. */
export const BUILTIN_COMMANDS = ["compact"] as const;

export function findPrompt(token: string, prompts: McpPrompt[]): McpPrompt | null {
  if ((BUILTIN_COMMANDS as readonly string[]).includes(token)) return null;
  const colon = token.indexOf(":");
  if (colon > 0) {
    const server = token.slice(0, colon);
    const name = token.slice(colon + 1);
    return prompts.find((p) => p.server === server && p.name === name) ?? null;
  }
  const named = prompts.filter((p) => p.name === token);
  return named.length === 1 ? named[0] : null;
}

export function parseSlash(text: string, prompts: McpPrompt[]): SlashResult {
  const m = /^\/(\S+)\s*([\s\S]*)$/.exec(text.trim());
  if (!m) return { kind: "none" };
  const prompt = findPrompt(m[1], prompts);
  if (!prompt) return { kind: "none" };
  const rest = m[2].trim();
  const wire: Wire<McpPrompt> = prompt;
  const args = wire.arguments ?? [];
  const names = new Set(args.map((a) => a.name));
  const out: Record<string, string> = {};
  const pairs = rest ? rest.match(/(\w[\w-]*)=("[^"]*"|\S+)/g) : null;
  const allPairs = pairs !== null && pairs.join(" ").length === rest.replace(/\s+/g, " ").length;
  if (rest && allPairs && pairs.every((p) => names.has(p.slice(0, p.indexOf("="))))) {
    for (const p of pairs) {
      const eq = p.indexOf("=");
      let v = p.slice(eq + 1);
      if (v.startsWith('"') && v.endsWith('"') && v.length >= 2) v = v.slice(1, -1);
      out[p.slice(0, eq)] = v;
    }
  } else if (rest) {
    const target = args.find((a) => a.required) ?? args.at(0);
    if (!target) return { kind: "error", message: `/${slashName(prompt)} takes no arguments` };
    out[target.name] = rest;
  }
  const missing = args.filter((a) => a.required && !(a.name in out)).map((a) => a.name);
  if (missing.length) {
    return { kind: "error", message: `/${slashName(prompt)} needs: ${missing.join(", ")} (write name=value)` };
  }
  return { kind: "prompt", prompt, arguments: out };
}
