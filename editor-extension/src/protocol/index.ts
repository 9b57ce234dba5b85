/**
 * The custom LSP protocol of agent-ls: method names and payload types.
 *
 * Mirrors agent_ls/server/protocol/ (the source of truth; documented in docs/protocol.md).
 * Every field is camelCase on the wire. Keep the two in step: tests/extension/test_protocol_mirror.py
 * reads every file of this folder and compares it with the Python definitions.
 */
export * from "./methods";
export type * from "./prompt";
export type * from "./sessions";
export type * from "./mcp";
export type * from "./questions";
export type * from "./commands";
export type * from "./intelligence";
export type * from "./sandbox";
export type * from "./jobs";
export type * from "./wire";
