/**
 * MCP prompts in the chat: the list the `/server:prompt` slash commands complete from
 * (mcp/prompts/list, re-listed when the servers change) and a slash command's expansion into
 * the text the model gets (mcp/prompts/get).
 */
import type * as vscode from "vscode";
import { parseSlash } from "../../shared/slash";
import type { ChatAction } from "../../shared/state";
import type { AgentClient } from "../client";
import { errorText } from "../errors";
import * as P from "../protocol";

export class SlashPrompts implements vscode.Disposable {
  private timer: ReturnType<typeof setTimeout> | undefined;

  constructor(
    private readonly agent: AgentClient,
    private readonly dispatch: (action: ChatAction) => void,
  ) {}

  async refresh(): Promise<void> {
    if (!this.agent.running) return;
    try {
      const r = await this.agent.request<P.PromptsListResult>(P.MCP_PROMPTS_LIST, {});
      this.dispatch({ type: "prompts", prompts: r.prompts });
    } catch (e) {
      this.agent.output.warn(`listing MCP prompts: ${errorText(e)}`);
    }
  }

  /** Re-lists MCP prompts shortly after the servers changed (coalesced). */
  refreshSoon(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = undefined;
      void this.refresh();
    }, 300);
  }

  /**
   * The text a message sends: the message itself, or the expansion of its `/server:prompt`
   * command; null when there is nothing to send (the chat then shows why).
   */
  async expand(text: string, prompts: P.McpPrompt[]): Promise<string | null> {
    const slash = parseSlash(text, prompts);
    if (slash.kind === "error") {
      this.dispatch({ type: "notice", role: "error", text: slash.message });
      return null;
    }
    if (slash.kind === "none") return text;
    const got = await this.agent.request<P.PromptsGetResult>(P.MCP_PROMPTS_GET, {
      server: slash.prompt.server,
      name: slash.prompt.name,
      arguments: slash.arguments,
    } satisfies P.GetPromptParams);
    const expanded = got.messages.map((m) => m.text).join("\n\n");
    if (!expanded.trim()) {
      this.dispatch({ type: "notice", role: "error", text: `the prompt ${slash.prompt.name} returned no text` });
      return null;
    }
    return expanded;
  }

  dispose(): void {
    if (this.timer) clearTimeout(this.timer);
  }
}
