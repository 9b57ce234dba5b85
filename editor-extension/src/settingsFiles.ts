/** Where agent-ls reads its settings (mirrors agent_ls/config/settings.py), and opening them. */
import * as fs from "fs";
import * as path from "path";
import * as vscode from "vscode";
export { userSettingsPath } from "./format";

export const SETTINGS_TEMPLATE = `{
  // agent-ls settings (JSON with comments). See the README.
  "mcpServers": {
    // "time": { "command": "mcp-server-time" }
  }
}
`;

export function workspaceSettingsPath(folder: string): string {
  return path.join(folder, ".agent-ls", "settings.json");
}

/** Opens a settings file, creating it (and its folder) from a template when missing. */
export async function openSettingsFile(file: string): Promise<void> {
  if (!fs.existsSync(file)) {
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    await fs.promises.writeFile(file, SETTINGS_TEMPLATE, { flag: "wx" }).catch((e: unknown) => {
      if ((e as NodeJS.ErrnoException | null)?.code !== "EEXIST") throw e;
    });
  }
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  await vscode.window.showTextDocument(doc);
}

export function serverEnv(): NodeJS.ProcessEnv {
  const extra = vscode.workspace.getConfiguration("agentLs.server").get<Record<string, string>>("env") ?? {};
  return { ...process.env, ...extra };
}
