/**
 * Owns the LanguageClient: resolves the server command from the settings, creates, starts,
 * restarts (on any `agentLs.server.*` change) and stops it, logs every state change to the
 * output channel, and re-binds the features' handlers to each new client.
 */
import * as fs from "fs";
import * as os from "os";
import * as vscode from "vscode";
import {
  LanguageClient,
  State,
  type LanguageClientOptions,
  type Middleware,
  type ServerOptions,
} from "vscode-languageclient/node";
import { errorCode, errorText } from "./errors";
import { fact } from "./factLog";
import * as P from "./protocol";
import { REINSTALL_COMMAND, ServerProvisioning } from "./provisionUi";
import { readServerSettings, resolveServerCommand, type ResolvedCommand } from "./serverCommand";

export type ClientState = "starting" | "running" | "stopped" | "failed";

/** Called for each new client before it starts; returns what to dispose when it goes away. */
export type ClientBinder = (client: LanguageClient) => vscode.Disposable[];

export class AgentClient implements vscode.Disposable {
  readonly output: vscode.LogOutputChannel;
  private client: LanguageClient | null = null;
  private bindings: vscode.Disposable[] = [];
  private readonly binders: ClientBinder[] = [];
  private readonly middleware: Middleware[] = [];
  private readonly stateEmitter = new vscode.EventEmitter<{ state: ClientState; error?: string }>();
  readonly onDidChangeState = this.stateEmitter.event;
  private current: ClientState = "stopped";
  private lastError: string | null = null;
  private generation = 0;
  private readonly disposables: vscode.Disposable[] = [];
  private traceChannel: vscode.LogOutputChannel | null = null;
  private readonly provisioning: ServerProvisioning | null = null;
  private lastCommand: ResolvedCommand | null = null;

  /**
   * @param storageDir where the server process starts (the extension's global storage), never
   *   a workspace folder: nothing in a repository may be picked up by the server's start-up.
   * @param extensionDir the installed extension (its `server/` folder holds the bundled agent-ls
   *   wheel): when given, the extension provisions its own server when nothing is configured.
   */
  constructor(
    private readonly storageDir: string = os.tmpdir(),
    extensionDir?: string,
  ) {
    this.output = vscode.window.createOutputChannel("Agent (agent-ls)", { log: true });
    if (extensionDir) {
      const provisioning = new ServerProvisioning(this.storageDir, extensionDir, this.output, () => this.restart());
      this.provisioning = provisioning;
      this.disposables.push(
        vscode.commands.registerCommand(REINSTALL_COMMAND, async () => {
          if (this.lastCommand && this.lastCommand.source !== "provisioned") {
            this.output.info(`reinstalling the provisioned server; the ${this.lastCommand.source} setting still decides what starts`);
          }
          await provisioning.reinstall();
        }),
      );
    }
    this.disposables.push(
      this.output,
      this.stateEmitter,
      // VS Code's own workspace trust was granted: the server may now ask about the workspace.
      vscode.workspace.onDidGrantWorkspaceTrust(() => this.editorTrustGranted()),
      vscode.workspace.onDidChangeConfiguration((e) => {
        if (e.affectsConfiguration("agentLs.server")) {
          this.output.info("agentLs.server settings changed: restarting the language server");
          void this.restart();
        }
      }),
    );
  }

  /**
   * VS Code's own workspace trust was granted: the server may now ask about the workspace. A
   * client still starting sends it once initialized (its initialization options may have been
   * read before the grant); a stopped one reads `isTrusted` again when it starts.
   */
  private editorTrustGranted(): void {
    const client = this.client;
    if (!client || (this.current !== "running" && this.current !== "starting")) return;
    this.output.info("VS Code now trusts this workspace: telling the agent-ls server");
    client.sendNotification(P.EDITOR_TRUST, { trusted: true } satisfies P.EditorTrustParams).catch((e: unknown) => {
      this.output.warn(`${P.EDITOR_TRUST}: ${errorText(e)}`);
    });
  }

  get state(): ClientState {
    return this.current;
  }

  /** The command the server was last started with (the doctor runs the same program). */
  get serverCommand(): ResolvedCommand | null {
    return this.lastCommand;
  }

  get error(): string | null {
    return this.lastError;
  }

  /** The running client, or null. */
  get running(): LanguageClient | null {
    return this.client && this.current === "running" ? this.client : null;
  }

  addBinder(binder: ClientBinder): void {
    this.binders.push(binder);
  }

  addMiddleware(m: Middleware): void {
    this.middleware.push(m);
  }

  /** A request to the server; rejects with a clear error when the server is not running. */
  async request<R>(method: string, params?: unknown, token?: vscode.CancellationToken): Promise<R> {
    const client = this.running;
    if (!client) {
      throw new Error(
        this.lastError ? `the agent-ls server is not running: ${this.lastError}` : "the agent-ls server is not running",
      );
    }
    return token ? client.sendRequest<R>(method, params, token) : client.sendRequest<R>(method, params);
  }

  private setState(state: ClientState, error?: string): void {
    this.current = state;
    if (state === "failed") this.lastError = error ?? "failed";
    else if (state === "running") this.lastError = null;
    this.stateEmitter.fire(error === undefined ? { state } : { state, error });
  }

  async start(): Promise<void> {
    const gen = ++this.generation;
    const config = vscode.workspace.getConfiguration("agentLs.server");
    const settings = readServerSettings((k) => config.get(k));
    const env: NodeJS.ProcessEnv = { ...process.env, ...settings.env };
    let resolved = resolveServerCommand(settings, env.PATH);
    if (!resolved.ok && resolved.unconfigured && this.provisioning) {
      // nothing configured: the server this extension provisions (installed on the user's click)
      this.setState("starting");
      const provisioned = await this.provisioning.resolve();
      if (gen !== this.generation) return;
      if (provisioned.kind === "command") resolved = { ok: true, value: provisioned.value };
      else if (provisioned.message) {
        this.output.info(`the language server is not started: ${provisioned.message}`);
        fact(`not-started ${provisioned.message}`);
        this.setState("failed", provisioned.message);
        return;
      }
    }
    if (!resolved.ok) {
      const msg = `cannot start the agent-ls language server: ${resolved.error}`;
      this.output.error(msg);
      fact(`error ${msg}`);
      this.setState("failed", msg);
      void vscode.window.showErrorMessage(msg, "Open Settings", "Show Log").then((pick) => {
        if (pick === "Open Settings") void vscode.commands.executeCommand("workbench.action.openSettings", "agentLs.server");
        if (pick === "Show Log") this.output.show();
      });
      return;
    }
    this.lastCommand = resolved.value;
    const client = this.create(resolved.value, env);
    this.client = client;
    this.bindings = this.binders.flatMap((b) => b(client));
    this.bindings.push(
      client.onDidChangeState((e) => {
        if (gen !== this.generation) return;
        const name = (s: State) => (s === State.Running ? "running" : s === State.Starting ? "starting" : "stopped");
        this.output.info(`language client: ${name(e.oldState)} -> ${name(e.newState)}`);
        if (e.newState === State.Running) {
          fact("client-running");
          this.setState("running");
          void this.logServerInfo();
        } else if (e.newState === State.Starting) {
          this.setState("starting");
        } else if (this.current !== "failed") {
          this.setState("stopped");
        }
      }),
    );
    this.setState("starting");
    const shown = [resolved.value.command, ...resolved.value.args].join(" ");
    const extra = Object.keys(settings.env);
    // the names only: agentLs.server.env may hold secrets
    const envNote = extra.length ? `; agentLs.server.env sets ${extra.join(", ")}` : "";
    this.output.info(`starting the language server (${resolved.value.source}): ${shown}${envNote}`);
    try {
      await client.start();
    } catch (e) {
      if (gen !== this.generation) return;
      const msg = `the agent-ls language server did not start (${shown}): ${errorText(e)}`;
      this.output.error(msg);
      fact(`error ${msg}`);
      this.setState("failed", msg);
      void vscode.window.showErrorMessage(msg, "Show Log").then((pick) => {
        if (pick === "Show Log") this.output.show();
      });
    }
  }

  /** The server's working directory: the extension's storage folder (created), else the temp dir. */
  serverCwd(): string {
    try {
      fs.mkdirSync(this.storageDir, { recursive: true });
      return this.storageDir;
    } catch (e) {
      this.output.warn(`cannot create ${this.storageDir} (${errorText(e)}); the server starts in ${os.tmpdir()}`);
      return os.tmpdir();
    }
  }

  private create(cmd: ResolvedCommand, env: NodeJS.ProcessEnv): LanguageClient {
    const serverOptions: ServerOptions = {
      command: cmd.command,
      args: cmd.args,
      options: { env, cwd: this.serverCwd() },
    };
    if (!this.traceChannel) {
      this.traceChannel = vscode.window.createOutputChannel("Agent (agent-ls) LSP Trace", { log: true });
      this.disposables.push(this.traceChannel);
    }
    const clientOptions: LanguageClientOptions = {
      documentSelector: [{ scheme: "file" }, { scheme: "untitled" }],
      outputChannel: this.output,
      traceOutputChannel: this.traceChannel,
      middleware: mergeMiddleware(this.middleware),
      // The editor's own workspace trust (restricted mode): read at each start.
      initializationOptions: () => ({ workspaceTrusted: vscode.workspace.isTrusted }),
      initializationFailedHandler: (error) => {
        this.output.error(`initialize failed: ${errorText(error)}`);
        fact(`error initialize failed: ${errorText(error)}`);
        return false;
      },
    };
    // id `agentLs` makes the client honour the `agentLs.trace.server` setting.
    return new LanguageClient("agentLs", "agent-ls", serverOptions, clientOptions);
  }

  private async logServerInfo(): Promise<void> {
    try {
      const info = await this.request<P.ServerInfoResult>(P.SERVER_INFO, {});
      this.output.info(`server ${info.name} ${info.version}, pid ${info.pid}, python ${info.python}`);
    } catch (e) {
      if (errorCode(e) !== P.METHOD_NOT_FOUND) this.output.warn(`agent/serverInfo: ${errorText(e)}`);
    }
  }

  async stop(): Promise<void> {
    this.generation++;
    const client = this.client;
    this.client = null;
    for (const d of this.bindings.splice(0)) d.dispose();
    if (client) {
      try {
        if (client.state !== State.Stopped) await client.stop(3000);
      } catch (e) {
        this.output.warn(`stopping the language server: ${errorText(e)}`);
      }
      try {
        await client.dispose(1000);
      } catch {
        // already stopped
      }
    }
    if (this.current !== "failed") this.setState("stopped");
  }

  async restart(): Promise<void> {
    await this.stop();
    this.lastError = null;
    await this.start();
  }

  showOutput(): void {
    this.output.show(true);
  }

  dispose(): void {
    void this.stop();
    for (const d of this.disposables.splice(0)) d.dispose();
  }
}

function mergeMiddleware(parts: Middleware[]): Middleware {
  const out: Middleware = {};
  for (const p of parts) Object.assign(out, p);
  return out;
}

export { errorCode, errorText } from "./errors";
