/** The status bar item: connected MCP servers, and whether the agent is busy. */
import * as vscode from "vscode";
import type { ChatController } from "./chat/controller";
import type { AgentClient } from "./client";
import { statusText, statusTooltip } from "./format";
import type { ServersModel } from "./servers";

export function createStatusBar(agent: AgentClient, model: ServersModel, chat: ChatController): vscode.Disposable {
  const item = vscode.window.createStatusBarItem("agentLs.status", vscode.StatusBarAlignment.Left, 50);
  item.name = "Agent (agent-ls)";
  item.command = "agentLs.showStatus";
  const update = () => {
    item.text = statusText({ client: agent.state, busy: chat.busy, connected: model.connected, total: model.list.length });
    item.tooltip = statusTooltip({ client: agent.state, error: agent.error, busy: chat.busy, servers: model.list });
    item.show();
  };
  update();
  const subs = [agent.onDidChangeState(update), model.onDidChange(update), chat.onDidChangeBusy(update)];
  return vscode.Disposable.from(item, ...subs);
}
