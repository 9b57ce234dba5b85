/** The status bar item: connected MCP servers, and whether the agent is busy. */
import * as vscode from "vscode";
import type { ChatController } from "./chat/controller";
import type { AgentClient } from "./client";
import { serverErrorText, statusText } from "./format";
import type { ServersModel } from "./servers";

export function createStatusBar(agent: AgentClient, model: ServersModel, chat: ChatController): vscode.Disposable {
  const item = vscode.window.createStatusBarItem("agentLs.status", vscode.StatusBarAlignment.Left, 50);
  item.name = "Agent (agent-ls)";
  item.command = "agentLs.showStatus";
  const update = () => {
    item.text = statusText({ client: agent.state, busy: chat.busy, connected: model.connected, total: model.list.length });
    const lines = model.list.map((s) => `${s.name}: ${s.state}${s.error ? ` (${serverErrorText(s.error)})` : ""}`);
    item.tooltip =
      agent.state === "failed"
        ? `agent-ls server: ${agent.error ?? "failed"}`
        : [`agent-ls server: ${agent.state}${chat.busy ? ", agent working" : ""}`, ...lines].join("\n");
    item.show();
  };
  update();
  const subs = [agent.onDidChangeState(update), model.onDidChange(update), chat.onDidChangeBusy(update)];
  return vscode.Disposable.from(item, ...subs);
}
