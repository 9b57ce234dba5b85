/**
 * Which command starts the language server (pure, so it can be unit tested):
 * 1. `agentLs.server.command` when non-empty;
 * 2. else `agentLs.server.pythonPath -P -m agent_ls serve` when pythonPath is set;
 * 3. else `agent-ls` found on PATH;
 * 4. else (`unconfigured`) the server the extension provisions itself (src/provision.ts).
 */
import * as fs from "fs";
import * as path from "path";

export interface ServerSettings {
  command: string[];
  pythonPath: string;
  env: Record<string, string>;
}

export interface ResolvedCommand {
  command: string;
  args: string[];
  /** Which setting decided, for the log. */
  source: "agentLs.server.command" | "agentLs.server.pythonPath" | "PATH" | "provisioned";
}

export type Resolution =
  | { ok: true; value: ResolvedCommand }
  /** `unconfigured`: no agentLs.server.* setting and no agent-ls on PATH (the extension may provision one). */
  | { ok: false; error: string; unconfigured?: boolean };

export function readServerSettings(get: (key: string) => unknown): ServerSettings {
  const command = get("command");
  const pythonPath = get("pythonPath");
  const env = get("env");
  const envOut: Record<string, string> = {};
  if (env && typeof env === "object" && !Array.isArray(env)) {
    for (const [k, v] of Object.entries(env as Record<string, unknown>)) {
      // eslint-disable-next-line @typescript-eslint/no-base-to-string -- the settings schema says string: a number or boolean is passed as written
      if (v !== undefined && v !== null) envOut[k] = String(v);
    }
  }
  return {
    command: Array.isArray(command) ? command.filter((c): c is string => typeof c === "string") : [],
    pythonPath: typeof pythonPath === "string" ? pythonPath.trim() : "",
    env: envOut,
  };
}

/** The first executable named `name` on `pathVar`, or null. */
export function findOnPath(name: string, pathVar: string | undefined, isExecutable = defaultIsExecutable): string | null {
  if (name.includes("/") || name.includes("\\")) return isExecutable(name) ? name : null;
  const exts = process.platform === "win32" ? (process.env.PATHEXT || ".EXE;.CMD;.BAT").split(";") : [""];
  for (const dir of (pathVar || "").split(path.delimiter)) {
    if (!dir) continue;
    for (const ext of exts) {
      const candidate = path.join(dir, name + ext);
      if (isExecutable(candidate)) return candidate;
    }
  }
  return null;
}

function defaultIsExecutable(p: string): boolean {
  try {
    const st = fs.statSync(p);
    if (!st.isFile()) return false;
    if (process.platform === "win32") return true;
    fs.accessSync(p, fs.constants.X_OK);
    return true;
  } catch {
    return false;
  }
}

export function resolveServerCommand(
  settings: ServerSettings,
  pathVar: string | undefined,
  isExecutable = defaultIsExecutable,
): Resolution {
  const cmd = settings.command.filter((c) => c.length > 0);
  if (cmd.length > 0) {
    return { ok: true, value: { command: cmd[0], args: cmd.slice(1), source: "agentLs.server.command" } };
  }
  if (settings.pythonPath) {
    if (!isExecutable(settings.pythonPath) && !findOnPath(settings.pythonPath, pathVar, isExecutable)) {
      return {
        ok: false,
        error: `agentLs.server.pythonPath is ${JSON.stringify(settings.pythonPath)}, which is not an executable file`,
      };
    }
    return {
      ok: true,
      // -P: no unsafe sys.path entry (the current directory is never searched for modules)
      value: { command: settings.pythonPath, args: ["-P", "-m", "agent_ls", "serve"], source: "agentLs.server.pythonPath" },
    };
  }
  const found = findOnPath("agent-ls", pathVar, isExecutable);
  if (!found) {
    return {
      ok: false,
      unconfigured: true,
      error:
        "the agent-ls command is not on PATH. Set agentLs.server.pythonPath to the Python that has agent-ls " +
        "installed (after the README's setup: <repo>/.venv/bin/python), or agentLs.server.command to the full " +
        "command (e.g. [\"<repo>/.venv/bin/agent-ls\"])",
    };
  }
  return { ok: true, value: { command: found, args: [], source: "PATH" } };
}

/**
 * The command line of `agent-ls mcp doctor <server>` with the same program the language server
 * runs: the server's own arguments without a final `serve`, then `mcp doctor <server>` and the
 * workspace folders (`-w`).
 */
export function doctorCommand(server: ResolvedCommand, name: string, folders: readonly string[] = []): string[] {
  const args = [...server.args];
  if (args[args.length - 1] === "serve") args.pop();
  return [server.command, ...args, "mcp", "doctor", name, ...folders.flatMap((f) => ["-w", f])];
}
