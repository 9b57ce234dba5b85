/** Where agent-ls reads its settings (mirrors agent_ls/config/settings.py), and opening them. */
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import * as vscode from "vscode";

export const SETTINGS_TEMPLATE = `{
  // agent-ls settings (JSON with comments). See the README.
  "mcpServers": {
    // "time": { "command": "mcp-server-time" }
  }
}
`;

/** The user settings file, as the server computes it (platformdirs' user config dir). */
export function userSettingsPath(env: NodeJS.ProcessEnv, platform = process.platform, home = os.homedir()): string {
  if (env.AGENT_LS_USER_SETTINGS) return env.AGENT_LS_USER_SETTINGS;
  if (env.AGENT_LS_CONFIG_DIR) return path.join(env.AGENT_LS_CONFIG_DIR, "settings.json");
  let dir: string;
  if (platform === "darwin") dir = path.join(home, "Library", "Application Support", "agent-ls");
  else if (platform === "win32") dir = path.join(env.LOCALAPPDATA || path.join(home, "AppData", "Local"), "agent-ls", "agent-ls");
  else dir = path.join(env.XDG_CONFIG_HOME || path.join(home, ".config"), "agent-ls");
  return path.join(dir, "settings.json");
}

export function workspaceSettingsPath(folder: string): string {
  return path.join(folder, ".agent-ls", "settings.json");
}

/** Opens a settings file, creating it (and its folder) from a template when missing. */
export async function openSettingsFile(file: string): Promise<void> {
  if (!fs.existsSync(file)) {
    await fs.promises.mkdir(path.dirname(file), { recursive: true });
    await fs.promises.writeFile(file, SETTINGS_TEMPLATE, { flag: "wx" }).catch((e: NodeJS.ErrnoException) => {
      if (e.code !== "EEXIST") throw e;
    });
  }
  const doc = await vscode.workspace.openTextDocument(vscode.Uri.file(file));
  await vscode.window.showTextDocument(doc);
}

export function serverEnv(): NodeJS.ProcessEnv {
  const extra = vscode.workspace.getConfiguration("agentLs.server").get<Record<string, string>>("env") ?? {};
  return { ...process.env, ...extra };
}
