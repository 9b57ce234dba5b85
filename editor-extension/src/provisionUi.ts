/**
 * The editor side of provisioning (issue 31): when no agentLs.server.* setting is set and no
 * agent-ls is on PATH, offer "Install the agent-ls server", install it with a progress
 * notification (every command and pip's output in the Agent output channel), update it when the
 * extension's bundled wheel changes, and explain every failure with a way out.
 */
import * as path from "path";
import * as vscode from "vscode";
import { errorText } from "./errors";
import { fact } from "./factLog";
import {
  candidatePythons,
  findPython,
  noPythonMessage,
  type Probed,
  ProvisionError,
  provisionEnv,
  Provisioner,
  type Current,
} from "./provision";
import type { ResolvedCommand } from "./serverCommand";

export const INSTALL_ACTION = "Install the agent-ls server";
export const REINSTALL_ACTION = "Reinstall the agent-ls server";
export const REINSTALL_COMMAND = "agentLs.reinstallServer";
export const GET_PYTHON_ACTION = "Get Python";
export const PYTHON_PATH_ACTION = "Set agentLs.server.pythonPath";

/** Bounds and places of the interpreter search (tests replace them: a machine without Python). */
export interface PythonSearch {
  wellKnown?: readonly string[];
  timeoutMs?: number;
  budgetMs?: number;
}

export type Provisioned =
  | { kind: "command"; value: ResolvedCommand }
  /** Not installed (the offer is shown) or failed (the error is shown): the message for the status. */
  | { kind: "none"; message: string };

interface PythonApi {
  environments?: { getActiveEnvironmentPath?: (resource?: vscode.Uri) => { path?: string } | undefined };
  settings?: { getExecutionDetails?: (resource?: vscode.Uri) => { execCommand?: string[] } | undefined };
}

function workspaceFolders(): string[] {
  return (vscode.workspace.workspaceFolders ?? []).map((f) => f.uri.fsPath);
}

/** The Python extension's selected interpreter, when it is installed (5 s at most). */
async function selectedInterpreter(log: vscode.LogOutputChannel): Promise<string | null> {
  const ext = vscode.extensions.getExtension<PythonApi>("ms-python.python");
  if (!ext) return null;
  try {
    const api = ext.isActive
      ? ext.exports
      : await Promise.race([ext.activate(), new Promise<undefined>((r) => setTimeout(() => r(undefined), 5000))]);
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri;
    const p = api?.environments?.getActiveEnvironmentPath?.(folder)?.path ?? api?.settings?.getExecutionDetails?.(folder)?.execCommand?.[0];
    return p && path.isAbsolute(p) ? p : null;
  } catch (e) {
    log.warn(`the Python extension's interpreter: ${errorText(e)}`);
    return null;
  }
}

export class ServerProvisioning {
  private offerShown = false;
  private busy: Promise<Current | null> | null = null;

  constructor(
    private readonly storageDir: string,
    private readonly extensionDir: string,
    private readonly output: vscode.LogOutputChannel,
    /** Restarts the language client (after an install from the offer or the command). */
    private readonly restart: () => Promise<void>,
    private readonly search: PythonSearch = {},
  ) {}

  /** A Python >= 3.11 to install with (bounded: the Python extension 5 s, the probes `DISCOVERY_BUDGET_MS`). */
  private async discover(folders: readonly string[]): Promise<{ found: Probed | null; tried: Probed[] }> {
    const env = provisionEnv(process.env, folders);
    const selected = await selectedInterpreter(this.output);
    const candidates = candidatePythons({ selected, pathVar: env.PATH ?? "", wellKnown: this.search.wellKnown });
    const { found, tried } = await findPython(candidates, {
      cwd: this.storageDir,
      env,
      workspaceFolders: folders,
      timeoutMs: this.search.timeoutMs,
      budgetMs: this.search.budgetMs,
    });
    for (const t of tried) {
      this.output.info(`python ${t.path} (${t.source}): ${t.version ?? "-"} ${t.problem ?? "ok"}`);
    }
    return { found, tried };
  }

  private provisioner(): Provisioner {
    return new Provisioner(this.storageDir, path.join(this.extensionDir, "server"), provisionEnv(process.env, workspaceFolders()));
  }

  private wheelhouse(): string | undefined {
    const w = vscode.workspace.getConfiguration("agentLs.server").get<string>("wheelhouse");
    return typeof w === "string" && w.trim() ? w.trim() : undefined;
  }

  private command(p: Provisioner, current: Current): ResolvedCommand {
    return { ...p.serverCommand(current), source: "provisioned" };
  }

  /** The provisioned server's command, installing or updating first when needed. */
  async resolve(): Promise<Provisioned> {
    const p = this.provisioner();
    const state = await p.check();
    if (state.kind === "ready") {
      fact(`provision-reused ${state.current.version}`);
      this.output.info(`using the provisioned agent-ls ${state.current.version} in ${state.current.env}`);
      return { kind: "command", value: this.command(p, state.current) };
    }
    if (state.kind === "outdated") {
      this.output.info(`the provisioned agent-ls is ${state.current.version}; this extension carries ${state.bundled}: updating`);
      const updated = await this.install(`Updating the agent-ls server to ${state.bundled}`);
      if (updated) return { kind: "command", value: this.command(p, updated) };
      this.output.warn(`the update failed: starting the previous agent-ls ${state.current.version}`);
      return { kind: "command", value: this.command(p, state.current) };
    }
    if (state.kind === "corrupt") {
      const msg = `the provisioned agent-ls server is broken (${state.detail}). Reinstall it?`;
      this.output.error(msg);
      fact(`provision-corrupt ${state.detail}`);
      void vscode.window.showErrorMessage(msg, REINSTALL_ACTION, "Show Log").then((pick) => {
        if (pick === REINSTALL_ACTION) void this.reinstall();
        if (pick === "Show Log") this.output.show();
      });
      return { kind: "none", message: msg };
    }
    if (!p.bundled()) return { kind: "none", message: "" };
    // no usable Python: say so now, with the way to get one, rather than offer an install that cannot
    // run (issue 44)
    const { found, tried } = await this.discover(workspaceFolders());
    if (!found) {
      const error = new ProvisionError("no-python", noPythonMessage(tried));
      if (!this.offerShown) {
        this.offerShown = true;
        void this.showFailure(error).then(() => {
          this.offerShown = false;
        });
      }
      return { kind: "none", message: error.message };
    }
    const msg = "the agent-ls server is not installed yet";
    this.output.info(`${msg}: offering to install it (a Python virtual environment in ${p.root})`);
    if (!this.offerShown) {
      this.offerShown = true;
      fact("provision-offered");
      void vscode.window
        .showInformationMessage(
          "agent-ls needs its server: install it now? (A Python virtual environment in the extension's storage, with the agent-ls package this extension carries.)",
          INSTALL_ACTION,
          "Use My Own (Settings)",
        )
        .then((pick) => {
          this.offerShown = false;
          if (pick === INSTALL_ACTION) void this.reinstall();
          if (pick === "Use My Own (Settings)") void vscode.commands.executeCommand("workbench.action.openSettings", "agentLs.server");
        });
    }
    return { kind: "none", message: `${msg}: click "${INSTALL_ACTION}" or run "Agent: Reinstall the agent-ls Server"` };
  }

  /** Installs (again) and restarts the client; the command and the offer's button. */
  async reinstall(): Promise<boolean> {
    const current = await this.install("Installing the agent-ls server");
    if (current) await this.restart();
    return current !== null;
  }

  /** One install at a time; null when it failed (the error was shown). */
  private install(title: string): Promise<Current | null> {
    this.busy ??= this.installOnce(title).finally(() => {
      this.busy = null;
    });
    return this.busy;
  }

  private async installOnce(title: string): Promise<Current | null> {
    const t0 = Date.now();
    fact("provision-install-start");
    const folders = workspaceFolders();
    const p = this.provisioner();
    try {
      return await vscode.window.withProgress(
        { location: vscode.ProgressLocation.Notification, title, cancellable: true },
        async (progress, token) => {
          const abort = new AbortController();
          token.onCancellationRequested(() => abort.abort());
          progress.report({ message: "looking for Python 3.11 or newer" });
          const { found, tried } = await this.discover(folders);
          if (!found) throw new ProvisionError("no-python", noPythonMessage(tried));
          const wheelhouse = this.wheelhouse();
          this.output.info(`installing with ${found.path} (Python ${found.version ?? "?"})${wheelhouse ? `, wheelhouse ${wheelhouse}` : ""}`);
          const current = await p.install({
            python: found.path,
            wheelhouse,
            signal: abort.signal,
            onStep: (s) => progress.report({ message: s }),
            onLine: (l) => this.output.info(l),
          });
          const secs = ((Date.now() - t0) / 1000).toFixed(1);
          fact(`provision-installed ${current.version} ${secs}s`);
          this.output.info(`installed agent-ls ${current.version} in ${current.env} (${secs} s)`);
          return current;
        },
      );
    } catch (e) {
      void this.showFailure(e);
      return null;
    }
  }

  /** Shows what failed with its ways out; resolves once the user picked one or closed it. */
  private async showFailure(e: unknown): Promise<void> {
    const kind = e instanceof ProvisionError ? e.kind : "pip";
    const msg = e instanceof ProvisionError ? e.message : errorText(e);
    // no Python: nothing was tried yet, the message says what is needed and how to get it (issue 44)
    const text = kind === "no-python" ? msg : `Installing the agent-ls server failed: ${msg}`;
    this.output.error(kind === "no-python" ? msg : `installing the agent-ls server failed: ${msg}`);
    if (e instanceof ProvisionError && e.retry) this.output.error(`to retry by hand: ${e.retry}`);
    fact(`provision-failed ${kind} ${msg}`);
    if (kind === "cancelled") return;
    const actions = kind === "no-python" ? [GET_PYTHON_ACTION, PYTHON_PATH_ACTION, "Show Log"] : [REINSTALL_ACTION, "Show Log"];
    if (kind === "network") actions.push("Set a Wheelhouse");
    const pick = await vscode.window.showErrorMessage(text, ...actions);
    if (pick === REINSTALL_ACTION) void this.reinstall();
    if (pick === "Show Log") this.output.show();
    if (pick === GET_PYTHON_ACTION) void vscode.env.openExternal(vscode.Uri.parse("https://www.python.org/downloads/"));
    if (pick === PYTHON_PATH_ACTION) void vscode.commands.executeCommand("workbench.action.openSettings", "agentLs.server.pythonPath");
    if (pick === "Set a Wheelhouse") void vscode.commands.executeCommand("workbench.action.openSettings", "agentLs.server.wheelhouse");
  }
}
