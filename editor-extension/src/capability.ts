/** The client capabilities agent-ls's own protocol adds under `capabilities.experimental.agentLs`. */
import type { ClientCapabilities, StaticFeature } from "vscode-languageclient/node";

/** A feature the language client registers: it sets `experimental.agentLs[name] = true` (keeping
 * what other features set there), so the server uses that part of the protocol. */
export function agentLsCapability(name: string): StaticFeature {
  return {
    fillClientCapabilities(capabilities: ClientCapabilities): void {
      const experimental = (capabilities.experimental ?? {}) as Record<string, unknown>;
      const ours = (experimental.agentLs ?? {}) as Record<string, unknown>;
      experimental.agentLs = { ...ours, [name]: true };
      capabilities.experimental = experimental;
    },
    initialize(): void {},
    getState: () => ({ kind: "static" }),
    clear(): void {},
  };
}
