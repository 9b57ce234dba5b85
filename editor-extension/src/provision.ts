/**
 * The extension provisions its own agent-ls server (issue 31), with no vscode import (unit
 * tests run it with real subprocesses):
 * - interpreter discovery: Python >= 3.11 from the Python extension's selected interpreter, else
 *   `python3.x`/`python3` on PATH, else well-known install locations; never one inside a
 *   workspace folder (nothing of a workspace runs while provisioning);
 * - a virtual environment in the extension's global storage (`server/env-<version>-<stamp>`),
 *   the bundled wheel installed into it (dependencies from the index, or with `--no-index
 *   --find-links <wheelhouse>`): by the base interpreter's own pip when it has pip >= 22.3
 *   (`venv --without-pip`, then `pip --python <env python> install`: bootstrapping pip into the
 *   environment with ensurepip took seconds of every install), else by the environment's pip
 *   (`venv` with ensurepip); recorded in `server/current.json` only once
 *   `<env python> -m agent_ls --version` answers with the bundled version; the previous
 *   environment is removed only then (an update that fails keeps the old one);
 * - every subprocess runs with cwd = the storage folder, Python's isolated mode (-I: no cwd or
 *   user site on sys.path, no PYTHON* variables) and a PATH without workspace folders.
 * Errors are {@link ProvisionError}s whose message says what happened and what to do.
 */
import { spawn, type ChildProcessWithoutNullStreams } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";

export const MIN_PYTHON: readonly [number, number] = [3, 11];

export interface Candidate {
  path: string;
  /** Where it came from, for the messages: "the Python extension", "PATH", "well-known location". */
  source: string;
}

export interface Probed extends Candidate {
  /** "3.12.4" when it ran, else undefined. */
  version?: string;
  /** Why it was not used (too old, did not run, inside a workspace folder). */
  problem?: string;
}

export type ProvisionErrorKind = "no-python" | "no-venv" | "network" | "pip" | "corrupt" | "no-wheel" | "cancelled";

export class ProvisionError extends Error {
  constructor(
    readonly kind: ProvisionErrorKind,
    message: string,
    /** A command line the user can run to retry by hand (pip failures). */
    readonly retry?: string,
  ) {
    super(message);
  }
}

export interface RunResult {
  code: number | null;
  output: string;
  /** Killed after `timeoutMs` (its output so far is in `output`). */
  timedOut?: boolean;
}

export interface RunOptions {
  cwd: string;
  env: NodeJS.ProcessEnv;
  timeoutMs?: number;
  onLine?: (line: string) => void;
  /** Aborts the process (a cancelled install). */
  signal?: AbortSignal;
}

/** Runs a program (no shell), stdout and stderr merged line by line. Never rejects; with `timeoutMs` it
 * resolves by then at the latest. */
export function run(command: string, args: readonly string[], opts: RunOptions): Promise<RunResult> {
  return new Promise((resolve) => {
    let settled = false;
    const finish = (r: RunResult) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      resolve(r);
    };
    let output = "";
    let pending = "";
    const feed = (chunk: Buffer) => {
      const text = chunk.toString("utf8");
      output += text;
      pending += text;
      const lines = pending.split(/\r?\n/);
      pending = lines.pop() ?? "";
      for (const l of lines) opts.onLine?.(l);
    };
    let child: ChildProcessWithoutNullStreams;
    try {
      child = spawn(command, [...args], { cwd: opts.cwd, env: opts.env, shell: false, windowsHide: true, signal: opts.signal });
    } catch (e) {
      resolve({ code: null, output: e instanceof Error ? e.message : String(e) });
      return;
    }
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          child.kill("SIGKILL");
          // a stub's own child (a shell script's `sleep`, an installer dialog) may hold the pipes open
          // after the kill: do not wait for them to close (issue 44)
          child.stdout.destroy();
          child.stderr.destroy();
          finish({ code: null, output, timedOut: true });
        }, opts.timeoutMs)
      : undefined;
    child.stdout.on("data", feed);
    child.stderr.on("data", feed);
    child.on("error", (e) => {
      output += (output ? "\n" : "") + e.message;
    });
    child.on("close", (code) => {
      if (pending && !settled) opts.onLine?.(pending);
      finish({ code, output });
    });
  });
}

/**
 * `true` when `p` is one of `folders` or inside one, however either is named: compared as
 * written and by real path (issue 38 item 7). A name of `p` is inside when any of
 * {@link fileNames} is inside the written or the real path of a folder: a symlinked folder,
 * `/proc/self/root/...`, `..` after a symlink, or a symlink (at any hop of its chain) into a
 * folder are all refused. The last hop's own name counts too, not only its target: a workspace
 * `.venv/bin/python` is a symlink to a system Python, yet running it loads the workspace's
 * site-packages (`.pth` files run code).
 */
export function insideAny(p: string, folders: readonly string[]): boolean {
  const roots = new Set<string>();
  for (const f of folders) fileNames(f).forEach((n) => roots.add(n));
  return fileNames(p).some((name) =>
    [...roots].some((root) => {
      const rel = path.relative(root, name);
      return rel === "" || (!rel.startsWith("..") && !path.isAbsolute(rel));
    }),
  );
}

/**
 * The names the file system gives `p`: as written (resolved), its real path, and each hop of
 * the symlink chain that starts at `p` as "real path of the hop's folder + the hop's own name".
 * `fs.realpathSync.native` (the C library's realpath) resolves `..` after a symlink as the
 * kernel does; Node's JavaScript `realpathSync` and `path.resolve` collapse it textually first.
 */
export function fileNames(p: string): string[] {
  const names = new Set<string>([path.resolve(p)]);
  const real = (q: string): string | null => {
    try {
      return fs.realpathSync.native(q);
    } catch {
      return null; // not there (yet): the written name is all there is
    }
  };
  const whole = real(p);
  if (whole) names.add(whole);
  let hop = p;
  for (let i = 0; i < 40; i++) {
    const base = path.basename(hop);
    const dir = real(path.dirname(hop));
    if (!dir || base === "" || base === "." || base === "..") break;
    const here = path.join(dir, base);
    names.add(here);
    let target: string;
    try {
      target = fs.readlinkSync(here);
    } catch {
      break; // not a symlink: the end of the chain
    }
    // joined as text (not path.join): `..` in the target is resolved by the next realpath
    hop = path.isAbsolute(target) ? target : dir + path.sep + target;
  }
  return [...names];
}

/**
 * The environment for provisioning subprocesses: the extension host's, without PYTHON* and
 * virtualenv/conda activation variables, and a PATH without relative entries or workspace folders.
 */
export function provisionEnv(base: NodeJS.ProcessEnv, workspaceFolders: readonly string[]): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(base)) {
    if (/^PYTHON/i.test(k) || ["VIRTUAL_ENV", "CONDA_PREFIX", "PIP_REQUIRE_VIRTUALENV"].includes(k.toUpperCase())) continue;
    env[k] = v;
  }
  const pathKey = Object.keys(env).find((k) => k.toUpperCase() === "PATH") ?? "PATH";
  env[pathKey] = safePath(env[pathKey], workspaceFolders);
  return env;
}

export function safePath(pathVar: string | undefined, workspaceFolders: readonly string[]): string {
  return (pathVar ?? "")
    .split(path.delimiter)
    .filter((d) => d && path.isAbsolute(d) && !insideAny(d, workspaceFolders))
    .join(path.delimiter);
}

function isFile(p: string): boolean {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/** Where to look, in order, without duplicates; `selected` is the Python extension's choice. */
export function candidatePythons(opts: {
  selected?: string | null;
  pathVar: string;
  platform?: NodeJS.Platform;
  home?: string;
  localAppData?: string;
  /** Replaces the well-known install locations (tests: a machine without Python). */
  wellKnown?: readonly string[];
}): Candidate[] {
  const platform = opts.platform ?? process.platform;
  const home = opts.home ?? os.homedir();
  const out: Candidate[] = [];
  const seen = new Set<string>();
  // one entry per interpreter: /bin/python3 and /usr/bin/python3.11 are often the same file
  const add = (p: string, source: string) => {
    let key = p;
    try {
      key = fs.realpathSync(p);
    } catch {
      // not there (the selected interpreter is listed anyway: its probe says why it is not used)
    }
    if (!seen.has(key)) {
      seen.add(key);
      out.push({ path: p, source });
    }
  };
  if (opts.selected) add(opts.selected, "the Python extension's selected interpreter");
  const minors = ["13", "12", "11", "14"];
  const win = platform === "win32";
  // `python3` first (the system's default), then the versioned names (a newer one next to an old default)
  const names = win ? ["python.exe", "python3.exe"] : ["python3", ...minors.map((m) => `python3.${m}`)];
  for (const dir of opts.pathVar.split(path.delimiter).filter(Boolean)) {
    for (const n of names) {
      const p = path.join(dir, n);
      if (isFile(p)) add(p, "PATH");
    }
  }
  const wellKnown: string[] = [];
  if (win) {
    const lad = opts.localAppData ?? process.env.LOCALAPPDATA ?? path.join(home, "AppData", "Local");
    for (const m of minors) {
      wellKnown.push(path.join(lad, "Programs", "Python", `Python3${m}`, "python.exe"));
      wellKnown.push(path.join("C:\\Program Files", `Python3${m}`, "python.exe"));
    }
  } else {
    for (const dir of ["/usr/local/bin", "/opt/homebrew/bin", "/usr/bin", path.join(home, ".local", "bin")]) {
      for (const n of names) wellKnown.push(path.join(dir, n));
    }
    for (const m of minors) wellKnown.push(`/Library/Frameworks/Python.framework/Versions/3.${m}/bin/python3`);
    wellKnown.push(path.join(home, ".pyenv", "shims", "python3"));
  }
  for (const p of opts.wellKnown ?? wellKnown) if (isFile(p)) add(p, "a well-known location");
  return out;
}

const VERSION_SCRIPT = "import sys; print('%d.%d.%d' % sys.version_info[:3])";

export function versionOk(version: string): boolean {
  const [maj, min] = version.split(".").map((x) => parseInt(x, 10));
  return maj > MIN_PYTHON[0] || (maj === MIN_PYTHON[0] && min >= MIN_PYTHON[1]);
}

/** How long one interpreter may take to print its version: a working one answers in well under a second. */
export const PROBE_TIMEOUT_MS = 5000;
/** How long looking for Python may take in all: on a machine without a usable one, the user hears why
 * within seconds (issue 44: stubs that never answer, 15 s each, kept the message away for 45 s). */
export const DISCOVERY_BUDGET_MS = 10000;

/**
 * The first candidate that runs and is Python >= 3.11, with what was tried (for the error).
 * Candidates inside a workspace folder are never run. Each probe gets `timeoutMs` at most, all of
 * them `budgetMs`; candidates left when the budget is spent are listed as not tried.
 */
export async function findPython(
  candidates: readonly Candidate[],
  opts: { cwd: string; env: NodeJS.ProcessEnv; workspaceFolders: readonly string[]; timeoutMs?: number; budgetMs?: number },
): Promise<{ found: Probed | null; tried: Probed[] }> {
  const tried: Probed[] = [];
  const deadline = Date.now() + (opts.budgetMs ?? DISCOVERY_BUDGET_MS);
  // the probes run in the storage folder, which does not exist before the first install
  fs.mkdirSync(opts.cwd, { recursive: true });
  for (const c of candidates) {
    if (insideAny(c.path, opts.workspaceFolders)) {
      tried.push({ ...c, problem: "inside a workspace folder (never run while provisioning)" });
      continue;
    }
    const left = deadline - Date.now();
    if (left <= 0) {
      tried.push({ ...c, problem: "not tried (looking for Python took too long)" });
      continue;
    }
    const timeoutMs = Math.min(opts.timeoutMs ?? PROBE_TIMEOUT_MS, left);
    const r = await run(c.path, ["-I", "-c", VERSION_SCRIPT], { cwd: opts.cwd, env: opts.env, timeoutMs });
    if (r.timedOut) {
      tried.push({ ...c, problem: `did not answer within ${(timeoutMs / 1000).toFixed(1)} s` });
      continue;
    }
    const m = /^(\d+)\.(\d+)\.(\d+)\s*$/m.exec(r.output);
    if (r.code !== 0 || !m) {
      tried.push({ ...c, problem: `did not run (${lastLines(r.output, 1) || `exit ${String(r.code)}`})` });
      continue;
    }
    const version = `${m[1]}.${m[2]}.${m[3]}`;
    if (!versionOk(version)) {
      tried.push({ ...c, version, problem: `too old (agent-ls needs Python ${MIN_PYTHON.join(".")} or newer)` });
      continue;
    }
    const found = { ...c, version };
    tried.push(found);
    return { found, tried };
  }
  return { found: null, tried };
}

export function noPythonMessage(tried: readonly Probed[], platform: NodeJS.Platform = process.platform): string {
  const how =
    platform === "win32"
      ? "install Python 3.12 from python.org or the Microsoft Store"
      : platform === "darwin"
        ? "install Python 3.12 (python.org, or `brew install python@3.12`)"
        : "install Python 3.11 or newer (e.g. `sudo apt install python3 python3-venv`, or python.org)";
  const found = tried.length
    ? "Found: " + tried.map((t) => `${t.path} (${t.source}${t.version ? `, ${t.version}` : ""}): ${t.problem ?? "ok"}`).join("; ")
    : "No Python was found on PATH or in the usual install locations";
  return `agent-ls needs Python ${MIN_PYTHON.join(".")} or newer to install its server. ${found}. To fix: ${how}, or select one with the Python extension, then run "Agent: Reinstall the agent-ls Server". A Python that already has agent-ls installed can be named in the agentLs.server.pythonPath setting instead.`;
}

export function lastLines(text: string, n: number): string {
  return text
    .split(/\r?\n/)
    .map((l) => l.trimEnd())
    .filter(Boolean)
    .slice(-n)
    .join("\n");
}

/** A command line for the user to copy (POSIX quoting; readable on Windows too). */
export function shellLine(argv: readonly string[]): string {
  return argv.map((a) => (/^[\w@%+=:,./-]+$/.test(a) ? a : `'${a.replace(/'/g, "'\\''")}'`)).join(" ");
}

const NETWORK = /(Failed to establish a new connection|Temporary failure in name resolution|Name or service not known|Network is unreachable|Max retries exceeded|ProxyError|ConnectTimeout|Could not fetch URL|No matching distribution found|Could not find a version that satisfies)/i;

/** The bundled wheel (one `agent_ls-<version>-*.whl` in `dir`), or null. */
export function bundledWheel(dir: string): { path: string; version: string } | null {
  let names: string[];
  try {
    names = fs.readdirSync(dir);
  } catch {
    return null;
  }
  const wheel = names.filter((n) => /^agent_ls-[^-]+-.*\.whl$/.test(n)).sort().pop();
  return wheel ? { path: path.join(dir, wheel), version: wheel.split("-")[1] } : null;
}

export interface Current {
  version: string;
  env: string;
  /** The interpreter the environment was made from. */
  basePython: string;
  installedAt: string;
}

export type EnvState =
  | { kind: "missing" }
  | { kind: "ready"; current: Current }
  | { kind: "outdated"; current: Current; bundled: string }
  | { kind: "corrupt"; current: Current | null; detail: string };

export function envPython(envDir: string, platform: NodeJS.Platform = process.platform): string {
  return platform === "win32" ? path.join(envDir, "Scripts", "python.exe") : path.join(envDir, "bin", "python");
}

/** The first pip that can install into another environment (`pip --python <interpreter>`). */
export const PIP_PYTHON_OPTION: readonly [number, number] = [22, 3];

/** The pip version in `pip --version`'s output ("pip 23.2.1 from ..."), or null. */
export function pipVersion(output: string): string | null {
  const m = /^pip (\d+\.\d+(?:\.\d+)?)\b/m.exec(output);
  return m ? m[1] : null;
}

/** Whether pip `version` has `--python` (>= {@link PIP_PYTHON_OPTION}). */
export function pipInstallsElsewhere(version: string): boolean {
  const [maj, min] = version.split(".").map((x) => parseInt(x, 10));
  return maj > PIP_PYTHON_OPTION[0] || (maj === PIP_PYTHON_OPTION[0] && min >= PIP_PYTHON_OPTION[1]);
}

export interface InstallOptions {
  python: string;
  wheelhouse?: string;
  onLine?: (line: string) => void;
  onStep?: (step: string) => void;
  signal?: AbortSignal;
}

/** The provisioned server in `storageDir/server`. */
export class Provisioner {
  readonly root: string;

  constructor(
    storageDir: string,
    private readonly wheelDir: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.root = path.join(storageDir, "server");
  }

  get currentFile(): string {
    return path.join(this.root, "current.json");
  }

  bundled(): { path: string; version: string } | null {
    return bundledWheel(this.wheelDir);
  }

  readCurrent(): Current | null | "unreadable" {
    let text: string;
    try {
      text = fs.readFileSync(this.currentFile, "utf8");
    } catch {
      return null;
    }
    try {
      const c = JSON.parse(text) as Partial<Current>;
      if (typeof c.version === "string" && typeof c.env === "string") {
        return { version: c.version, env: c.env, basePython: c.basePython ?? "", installedAt: c.installedAt ?? "" };
      }
    } catch {
      // fall through
    }
    return "unreadable";
  }

  /** The provisioned environment's state: runs its python once (`import agent_ls`). */
  async check(): Promise<EnvState> {
    const current = this.readCurrent();
    if (current === null) return { kind: "missing" };
    if (current === "unreadable") return { kind: "corrupt", current: null, detail: `${this.currentFile} is not readable JSON` };
    const py = envPython(current.env);
    if (!isFile(py)) return { kind: "corrupt", current, detail: `${py} is missing` };
    const r = await run(py, ["-I", "-c", "import agent_ls; print(agent_ls.__version__)"], {
      cwd: this.root,
      env: this.env,
      timeoutMs: 30000,
    });
    if (r.code !== 0) {
      return { kind: "corrupt", current, detail: `${py} cannot import agent_ls: ${lastLines(r.output, 3) || `exit ${String(r.code)}`}` };
    }
    const bundled = this.bundled();
    if (bundled && bundled.version !== r.output.trim()) return { kind: "outdated", current, bundled: bundled.version };
    return { kind: "ready", current };
  }

  /** The command that starts the provisioned server. */
  serverCommand(current: Current): { command: string; args: string[] } {
    return { command: envPython(current.env), args: ["-P", "-m", "agent_ls", "serve"] };
  }

  /**
   * A new environment with the bundled wheel; `current.json` points at it once it answers
   * `--version`; older environments are removed afterwards. On failure the new one is removed
   * and the old one (if any) stays in use.
   */
  async install(opts: InstallOptions): Promise<Current> {
    const wheel = this.bundled();
    if (!wheel) throw new ProvisionError("no-wheel", `this extension package carries no agent-ls wheel (looked in ${this.wheelDir})`);
    fs.mkdirSync(this.root, { recursive: true });
    const envDir = path.join(this.root, `env-${wheel.version}-${Date.now().toString(36)}`);
    const log = opts.onLine ?? (() => undefined);
    const step = async (what: string, argv: string[]): Promise<RunResult> => {
      opts.onStep?.(what);
      log(`$ ${shellLine(argv)}`);
      const r = await run(argv[0], argv.slice(1), { cwd: this.root, env: this.env, onLine: log, signal: opts.signal });
      if (opts.signal?.aborted) throw new ProvisionError("cancelled", "the installation was cancelled");
      return r;
    };
    try {
      // the base interpreter's own pip (new enough for --python) installs into the environment: no
      // pip is bootstrapped into it; else (no pip there, or an older one) the environment gets its
      // own pip from ensurepip
      const basePip = await this.basePip(opts.python, opts.signal);
      log(basePip
        ? `(the base interpreter's pip ${basePip} installs into the new environment: it gets no pip of its own)`
        : `(the base interpreter has no pip ${PIP_PYTHON_OPTION.join(".")} or newer: the new environment gets its own pip from ensurepip)`);
      const venvArgv = [opts.python, "-I", "-m", "venv", ...(basePip ? ["--without-pip"] : []), envDir];
      const v = await step("Creating a virtual environment", venvArgv);
      if (v.code !== 0) {
        const noVenv = /ensurepip is not available|No module named venv|No module named ensurepip/i.test(v.output);
        throw new ProvisionError(
          noVenv ? "no-venv" : "pip",
          noVenv
            ? `${opts.python} cannot create virtual environments (its venv/ensurepip module is missing; on Debian or Ubuntu: sudo apt install python3-venv). Then run "Agent: Reinstall the agent-ls Server".`
            : `creating the virtual environment failed (exit ${String(v.code)}):\n${lastLines(v.output, 10)}`,
          shellLine(venvArgv),
        );
      }
      const py = envPython(envDir);
      // --no-compile: byte-compiling every module of the dependencies (litellm, botocore) took
      // most of the install's time; the server compiles what it imports on its first start
      // (`pip --python` runs the base's pip under the environment's python, which has no user site
      // and gets no PYTHON* variables: as isolated as `-I`)
      const pipArgv = [...(basePip ? [opts.python, "-I", "-m", "pip", "--python", py] : [py, "-I", "-m", "pip"]),
        "install", "--disable-pip-version-check", "--no-input", "--no-compile"];
      if (opts.wheelhouse) pipArgv.push("--no-index", "--find-links", opts.wheelhouse);
      pipArgv.push(wheel.path);
      const p = await step(`Installing agent-ls ${wheel.version} and its dependencies`, pipArgv);
      if (p.code !== 0) {
        const tail = lastLines(p.output, 10);
        const retry = shellLine(pipArgv);
        if (!opts.wheelhouse && NETWORK.test(p.output)) {
          throw new ProvisionError(
            "network",
            `pip could not download agent-ls's dependencies (no network or no access to the package index?) and no wheelhouse is set. Connect and run "Agent: Reinstall the agent-ls Server", or point agentLs.server.wheelhouse at a folder of wheels (made on a connected machine with \`pip download -d <folder> agent-ls\` from the wheel). pip said:\n${tail}`,
            retry,
          );
        }
        const where = opts.wheelhouse ? ` from the wheelhouse ${opts.wheelhouse}` : "";
        throw new ProvisionError("pip", `pip failed to install agent-ls${where} (exit ${String(p.code)}). Last lines:\n${tail}\nTo retry by hand: ${retry}`, retry);
      }
      const check = await step("Checking the server", [py, "-I", "-m", "agent_ls", "--version"]);
      if (check.code !== 0 || !check.output.includes(wheel.version)) {
        throw new ProvisionError("corrupt", `the new environment does not run agent-ls: ${lastLines(check.output, 5)}`);
      }
      const current: Current = { version: wheel.version, env: envDir, basePython: opts.python, installedAt: new Date().toISOString() };
      const tmp = `${this.currentFile}.tmp`;
      fs.writeFileSync(tmp, JSON.stringify(current, null, 2));
      fs.renameSync(tmp, this.currentFile);
      this.removeOtherEnvs(envDir);
      return current;
    } catch (e) {
      fs.rmSync(envDir, { recursive: true, force: true });
      throw e;
    }
  }

  /** The version of `python`'s own pip when it can install into another environment (>= 22.3),
   * else null (no pip, an older one, or it did not answer). */
  private async basePip(python: string, signal?: AbortSignal): Promise<string | null> {
    const r = await run(python, ["-I", "-m", "pip", "--version"], { cwd: this.root, env: this.env, timeoutMs: 30000, signal });
    if (signal?.aborted) throw new ProvisionError("cancelled", "the installation was cancelled");
    const version = r.code === 0 ? pipVersion(r.output) : null;
    return version && pipInstallsElsewhere(version) ? version : null;
  }

  /** Best effort: an environment still in use (Windows) goes at the next install. */
  private removeOtherEnvs(keep: string): void {
    for (const n of fs.readdirSync(this.root)) {
      const p = path.join(this.root, n);
      if (!n.startsWith("env-") || p === keep) continue;
      try {
        fs.rmSync(p, { recursive: true, force: true });
      } catch {
        // in use
      }
    }
  }
}
