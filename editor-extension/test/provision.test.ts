/**
 * The extension provisions its own server (issue 31, src/provision.ts), with real subprocesses:
 * fake "python" shell scripts in a temp dir for the interpreter discovery and the error paths
 * (too old, does not run, inside a workspace, venv/pip failures, corrupt environment), and the
 * machine's real Python with a real venv and pip for one install of a tiny agent_ls wheel, an
 * update that keeps the old environment until the new one works, and pip's real errors.
 */
import { execFileSync, spawnSync } from "child_process";
import * as fs from "fs";
import * as os from "os";
import * as path from "path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  bundledWheel,
  candidatePythons,
  envPython,
  findPython,
  noPythonMessage,
  pipInstallsElsewhere,
  pipVersion,
  ProvisionError,
  provisionEnv,
  Provisioner,
  safePath,
} from "../src/provision";

let tmp: string;
beforeEach(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "agent-ls-provision-"));
});
afterEach(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

/** A fake python: prints `version` for the version probe; records that it ran in `<dir>/ran`. */
function fakePython(dir: string, name: string, body: string): string {
  fs.mkdirSync(dir, { recursive: true });
  const p = path.join(dir, name);
  fs.writeFileSync(p, `#!/bin/sh\necho "$0 $*" >> "${path.join(tmp, "ran")}"\n${body}\n`, { mode: 0o755 });
  return p;
}
const prints = (v: string) => `echo ${v}`;
const ran = () => (fs.existsSync(path.join(tmp, "ran")) ? fs.readFileSync(path.join(tmp, "ran"), "utf8") : "");
const opts = (ws: string[] = []) => ({ cwd: tmp, env: provisionEnv(process.env, ws), workspaceFolders: ws });

describe("interpreter discovery", () => {
  it("lists the selected interpreter first, then python3.x on PATH, without duplicates", () => {
    const a = path.join(tmp, "a");
    const b = path.join(tmp, "b");
    const p312 = fakePython(a, "python3.12", prints("3.12.1"));
    const p3 = fakePython(b, "python3", prints("3.11.2"));
    fakePython(b, "python2", prints("2.7.18"));
    const c = candidatePythons({ selected: "/sel/python", pathVar: [a, b, a].join(path.delimiter), home: tmp });
    expect(c.slice(0, 3)).toEqual([
      { path: "/sel/python", source: "the Python extension's selected interpreter" },
      { path: p312, source: "PATH" },
      { path: p3, source: "PATH" },
    ]);
    expect(c.filter((x) => x.path === p312)).toHaveLength(1);
    // the same file under two names (a symlink, /bin -> /usr/bin) is listed once
    const link = path.join(tmp, "c");
    fs.symlinkSync(b, link);
    expect(candidatePythons({ pathVar: [b, link].join(path.delimiter), home: tmp }).filter((x) => x.path.startsWith(link))).toEqual([]);
    expect(c.some((x) => x.path.endsWith("python2"))).toBe(false);
  });

  it("finds the machine's real python3 (>= 3.11) on PATH, from a storage folder not created yet", async () => {
    const storage = path.join(tmp, "globalStorage", "agent-ls.agent-ls");
    const { found } = await findPython(candidatePythons({ pathVar: process.env.PATH ?? "" }), { ...opts(), cwd: storage });
    expect(found).not.toBeNull();
    expect(found?.version).toMatch(/^3\.(1[1-9])\.\d+$/);
  });

  it("no Python at all: a message that says so and how to get one", async () => {
    const { found, tried } = await findPython([], opts());
    expect(found).toBeNull();
    const msg = noPythonMessage(tried, "linux");
    expect(msg).toMatch(/needs Python 3\.11 or newer/);
    expect(msg).toMatch(/No Python was found/);
    expect(msg).toMatch(/apt install python3 python3-venv/);
    expect(msg).toMatch(/Reinstall the agent-ls Server/);
  });

  it("too old and not running: skipped, and the message names each with its version and where it came from", async () => {
    const old = fakePython(path.join(tmp, "old"), "python3", prints("3.9.18"));
    const broken = fakePython(path.join(tmp, "broken"), "python3", "echo 'error while loading shared libraries' >&2; exit 127");
    const good = fakePython(path.join(tmp, "good"), "python3", prints("3.12.4"));
    const { found, tried } = await findPython(
      [
        { path: old, source: "PATH" },
        { path: broken, source: "a well-known location" },
        { path: path.join(tmp, "missing", "python3"), source: "PATH" },
        { path: good, source: "PATH" },
      ],
      opts(),
    );
    expect(found).toMatchObject({ path: good, version: "3.12.4" });
    expect(tried.map((t) => t.problem)).toEqual([
      expect.stringMatching(/too old/),
      expect.stringMatching(/did not run \(error while loading shared libraries\)/),
      expect.stringMatching(/did not run/),
      undefined,
    ]);
    const msg = noPythonMessage(tried.slice(0, 3), "linux");
    expect(msg).toContain(`${old} (PATH, 3.9.18): too old`);
    expect(msg).toContain(`${broken} (a well-known location)`);
  });

  it("never runs an interpreter inside a workspace folder, and drops workspace folders from PATH", async () => {
    const ws = path.join(tmp, "ws");
    const inWs = fakePython(path.join(ws, ".venv", "bin"), "python3", prints("3.12.0"));
    const { found, tried } = await findPython([{ path: inWs, source: "the Python extension's selected interpreter" }], opts([ws]));
    expect(found).toBeNull();
    expect(tried[0].problem).toMatch(/inside a workspace folder/);
    expect(ran()).toBe("");
    const delim = path.delimiter;
    expect(safePath(["/usr/bin", path.join(ws, "bin"), "relative/bin", "", ws].join(delim), [ws])).toBe("/usr/bin");
    const env = provisionEnv({ PATH: `/usr/bin${delim}${ws}`, PYTHONPATH: ws, PYTHONSTARTUP: "x", VIRTUAL_ENV: ws, HOME: "/h" }, [ws]);
    expect(env).toEqual({ PATH: "/usr/bin", HOME: "/h" });
  });

  // issue 38 item 7: the containment test compares real paths, so no other name of a workspace
  // interpreter gets it run (each variation is a real file or symlink in the temp dir)
  it("refuses a workspace interpreter however it is named; one outside still runs", async () => {
    const ws = path.join(tmp, "ws");
    const inWs = fakePython(path.join(ws, ".venv", "bin"), "python3", prints("3.12.0"));
    const outside = fakePython(path.join(tmp, "elsewhere", "bin"), "python3", prints("3.12.1"));
    fs.symlinkSync(ws, path.join(tmp, "ws-link")); // a symlinked folder naming the workspace
    fs.symlinkSync(inWs, path.join(tmp, "elsewhere", "bin", "python3.12")); // outside, target inside
    fs.symlinkSync(path.join(tmp, "elsewhere", "bin", "python3.12"), path.join(tmp, "elsewhere", "hop")); // a chain
    fs.mkdirSync(path.join(ws, "sub"));
    fs.symlinkSync(path.join(ws, "sub"), path.join(tmp, "elsewhere", "into-sub"));
    // the workspace's venv python is a symlink to an interpreter outside (as `python -m venv` makes it)
    fs.mkdirSync(path.join(ws, "venv2", "bin"), { recursive: true });
    fs.symlinkSync(outside, path.join(ws, "venv2", "bin", "python"));
    const wsLinkFolder = path.join(tmp, "ws-folder-link");
    fs.symlinkSync(ws, wsLinkFolder); // the editor names the workspace folder through a symlink
    const names: [string, string[]][] = [
      [inWs, [ws]],
      [`/proc/self/root${inWs}`, [ws]],
      [path.join(tmp, "ws-link", ".venv", "bin", "python3"), [ws]],
      [path.join(tmp, "elsewhere", "bin", "python3.12"), [ws]],
      [path.join(tmp, "elsewhere", "hop"), [ws]],
      // `..` after a symlink: the kernel goes to ws/sub/.. = ws; a textual resolve would say tmp/elsewhere
      [`${path.join(tmp, "elsewhere", "into-sub")}/../.venv/bin/python3`, [ws]],
      [`${ws}/.venv/bin/../bin/./python3`, [ws]],
      [path.join(ws, "venv2", "bin", "python"), [ws]],
      [inWs, [wsLinkFolder]],
      [inWs, [`/proc/self/root${ws}`]],
      [inWs, [path.join(tmp, "nowhere"), ws]],
    ];
    for (const [name, folders] of names) {
      const { found, tried } = await findPython([{ path: name, source: "the Python extension's selected interpreter" }], opts(folders));
      expect(found, `${name} in ${folders.join(", ")}`).toBeNull();
      expect(tried[0].problem, name).toMatch(/inside a workspace folder/);
    }
    expect(ran()).toBe("");
    // PATH entries naming a workspace folder another way are dropped too
    const delim = path.delimiter;
    expect(safePath(["/usr/bin", path.join(tmp, "ws-link", "bin"), `/proc/self/root${ws}`].join(delim), [ws])).toBe("/usr/bin");
    // a legitimate interpreter outside is still accepted, also through a symlinked folder outside
    fs.symlinkSync(path.join(tmp, "elsewhere"), path.join(tmp, "elsewhere-link"));
    for (const ok of [outside, path.join(tmp, "elsewhere-link", "bin", "python3")]) {
      const { found } = await findPython([{ path: ok, source: "PATH" }], opts([ws, wsLinkFolder]));
      expect(found?.version, ok).toBe("3.12.1");
    }
  });
});

/** A fake python that can make a fake venv (a copy of itself) and fake pip; FAKE_* pick failures;
 * FAKE_BASEPIP is its own pip's version (unset: it has no pip). */
const FAKE_FULL = `
case "$*" in
  *"-m venv"*)
    [ "$FAKE_VENV" = noensurepip ] && { echo "Error: ensurepip is not available. apt install python3-venv" >&2; exit 1; }
    for last; do :; done
    mkdir -p "$last/bin" && cp "$0" "$last/bin/python" && exit 0 ;;
  *"-m pip --version"*)
    [ -n "$FAKE_BASEPIP" ] && { echo "pip $FAKE_BASEPIP from /fake/site-packages/pip (python 3.12)"; exit 0; }
    echo "$0: No module named pip" >&2; exit 1 ;;
  *"-m pip install"*|*"-m pip --python "*)
    where=$0; prev=; for a; do [ "$prev" = --python ] && where=$a; prev=$a; done
    pwd > "\${where%/*}/../pip-cwd"
    echo "pip argv: $*"
    case "$FAKE_PIP" in
      network) echo "WARNING: Retrying after connection broken by 'NewConnectionError: Failed to establish a new connection'"; echo "ERROR: No matching distribution found for mcp<2.4,>=2.3" >&2; exit 1 ;;
      fail) echo "Collecting agent-ls"; echo "ERROR: resolution impossible: pygls 3 conflicts" >&2; exit 1 ;;
    esac
    exit 0 ;;
  *"agent_ls --version"*) echo "agent-ls \${FAKE_VERSION:-9.9.9}" ;;
  *"import agent_ls"*) [ "$FAKE_IMPORT" = fail ] && { echo "ModuleNotFoundError: No module named 'agent_ls'" >&2; exit 1; }; echo "\${FAKE_VERSION:-9.9.9}" ;;
  *) echo 3.12.4 ;;
esac`;

describe("Provisioner with fake pythons (error paths)", () => {
  let storage: string;
  let wheels: string;
  let base: string;
  const provisioner = (env: Record<string, string> = {}) => new Provisioner(storage, wheels, { ...provisionEnv(process.env, []), ...env });

  beforeEach(() => {
    storage = path.join(tmp, "storage");
    wheels = path.join(tmp, "ext", "server");
    fs.mkdirSync(wheels, { recursive: true });
    fs.writeFileSync(path.join(wheels, "agent_ls-9.9.9-py3-none-any.whl"), "not really a wheel");
    base = fakePython(path.join(tmp, "base"), "python3", FAKE_FULL);
  });

  it("installs into global storage with cwd there, records current.json, then reports ready", async () => {
    const p = provisioner();
    expect(await p.check()).toEqual({ kind: "missing" });
    const lines: string[] = [];
    const current = await p.install({ python: base, onLine: (l) => lines.push(l) });
    expect(current.version).toBe("9.9.9");
    expect(current.env.startsWith(path.join(storage, "server", "env-9.9.9-"))).toBe(true);
    expect(fs.readFileSync(path.join(current.env, "pip-cwd"), "utf8").trim()).toBe(path.join(storage, "server"));
    expect(lines.some((l) => l.startsWith("$ ") && l.includes("-I -m pip install"))).toBe(true);
    expect(lines.join("\n")).not.toMatch(/--no-index/);
    expect(await p.check()).toEqual({ kind: "ready", current });
    expect(p.serverCommand(current)).toEqual({ command: envPython(current.env), args: ["-P", "-m", "agent_ls", "serve"] });
  });

  it("a base pip >= 22.3 installs into the environment (pip --python); no pip is bootstrapped into it", async () => {
    const p = provisioner({ FAKE_BASEPIP: "23.2.1" });
    const lines: string[] = [];
    const current = await p.install({ python: base, onLine: (l) => lines.push(l) });
    const py = envPython(current.env);
    const commands = lines.filter((l) => l.startsWith("$ "));
    expect(commands[0]).toBe(`$ ${base} -I -m venv --without-pip ${current.env}`);
    expect(commands[1]).toMatch(new RegExp(`^\\$ ${base} -I -m pip --python ${py} install --disable-pip-version-check .*agent_ls-9\\.9\\.9-py3-none-any\\.whl$`));
    expect(fs.readFileSync(path.join(current.env, "pip-cwd"), "utf8").trim()).toBe(path.join(storage, "server"));
    expect(lines).toContain("(the base interpreter's pip 23.2.1 installs into the new environment: it gets no pip of its own)");
    expect(await p.check()).toEqual({ kind: "ready", current });
    // pip failing this way: the command to retry is the one that ran
    const err = (await provisioner({ FAKE_BASEPIP: "23.2.1", FAKE_PIP: "fail" }).install({ python: base }).catch((e: unknown) => e)) as ProvisionError;
    expect(err.kind).toBe("pip");
    expect(err.retry).toMatch(new RegExp(`^${base} -I -m pip --python .*/bin/python install `));
  });

  it("a base pip older than 22.3, or none: the environment gets its own pip (ensurepip) and installs with it", async () => {
    for (const env of [{ FAKE_BASEPIP: "22.2.2" }, {}] as Record<string, string>[]) {
      const lines: string[] = [];
      const current = await provisioner(env).install({ python: base, onLine: (l) => lines.push(l) });
      const commands = lines.filter((l) => l.startsWith("$ "));
      expect(commands[0]).toBe(`$ ${base} -I -m venv ${current.env}`);
      expect(commands[1].startsWith(`$ ${envPython(current.env)} -I -m pip install `)).toBe(true);
      expect(lines.join("\n")).toMatch(/gets its own pip from ensurepip/);
    }
    expect(pipVersion("pip 23.2.1 from /usr/lib/python3/dist-packages/pip (python 3.12)")).toBe("23.2.1");
    expect(pipVersion("No module named pip")).toBeNull();
    expect(["22.2.2", "22.3", "23.0", "9.0.1", "100.1"].map(pipInstallsElsewhere)).toEqual([false, true, true, false, true]);
  });

  it("a wheelhouse: pip --no-index --find-links <folder>", async () => {
    const lines: string[] = [];
    await provisioner().install({ python: base, wheelhouse: "/wh", onLine: (l) => lines.push(l) });
    expect(lines.find((l) => l.startsWith("pip argv:"))).toMatch(/--no-index --find-links \/wh /);
  });

  it("no network and no wheelhouse: says so, suggests agentLs.server.wheelhouse; nothing is recorded", async () => {
    const p = provisioner({ FAKE_PIP: "network" });
    const err = await p.install({ python: base }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProvisionError);
    expect((err as ProvisionError).kind).toBe("network");
    expect((err as ProvisionError).message).toMatch(/no network[\s\S]*agentLs\.server\.wheelhouse[\s\S]*No matching distribution/);
    expect(fs.existsSync(p.currentFile)).toBe(false);
    expect(fs.readdirSync(p.root).filter((n) => n.startsWith("env-"))).toEqual([]);
  });

  it("pip failing: the log's last lines and the command to retry", async () => {
    const err = (await provisioner({ FAKE_PIP: "fail" }).install({ python: base }).catch((e: unknown) => e)) as ProvisionError;
    expect(err.kind).toBe("pip");
    expect(err.message).toMatch(/resolution impossible: pygls 3 conflicts/);
    expect(err.retry).toMatch(/bin\/python -I -m pip install .*agent_ls-9\.9\.9-py3-none-any\.whl$/);
    expect(err.message).toContain(`To retry by hand: ${err.retry ?? "?"}`);
  });

  it("a Python without venv/ensurepip: how to get it", async () => {
    const err = (await provisioner({ FAKE_VENV: "noensurepip" }).install({ python: base }).catch((e: unknown) => e)) as ProvisionError;
    expect(err.kind).toBe("no-venv");
    expect(err.message).toMatch(/python3-venv/);
  });

  it("a corrupt environment: missing python, unreadable current.json, agent_ls not importable", async () => {
    const p = provisioner();
    const current = await p.install({ python: base });
    expect((await provisioner({ FAKE_IMPORT: "fail" }).check()).kind).toBe("corrupt");
    fs.rmSync(envPython(current.env));
    const missing = await p.check();
    expect(missing.kind === "corrupt" && missing.detail).toMatch(/bin\/python is missing/);
    fs.writeFileSync(p.currentFile, "{not json");
    expect(await p.check()).toMatchObject({ kind: "corrupt", current: null });
    // re-provisioning repairs it
    await p.install({ python: base });
    expect((await p.check()).kind).toBe("ready");
  });

  it("no bundled wheel: a clear error", async () => {
    fs.rmSync(wheels, { recursive: true });
    const err = (await provisioner().install({ python: base }).catch((e: unknown) => e)) as ProvisionError;
    expect(err.kind).toBe("no-wheel");
    expect(bundledWheel(wheels)).toBeNull();
  });
});

describe("Provisioner with the real Python, venv and pip", () => {
  /** A tiny real wheel of `agent_ls` (no dependencies, or one that cannot be found). */
  function makeWheel(dir: string, version: string, requires: string[] = []): void {
    fs.mkdirSync(dir, { recursive: true });
    const script = `
import sys, zipfile
out, version, requires = sys.argv[1], sys.argv[2], sys.argv[3:]
info = f"agent_ls-{version}.dist-info"
files = {
    "agent_ls/__init__.py": f"__version__ = {version!r}\\n",
    "agent_ls/__main__.py": "import agent_ls, sys\\nif '--version' in sys.argv: print('agent-ls', agent_ls.__version__)\\n",
    f"{info}/METADATA": "Metadata-Version: 2.1\\nName: agent-ls\\nVersion: " + version + "\\n" + "".join(f"Requires-Dist: {r}\\n" for r in requires),
    f"{info}/WHEEL": "Wheel-Version: 1.0\\nGenerator: test\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n",
}
files[f"{info}/RECORD"] = "".join(f"{n},,\\n" for n in files) + f"{info}/RECORD,,\\n"
with zipfile.ZipFile(f"{out}/agent_ls-{version}-py3-none-any.whl", "w") as z:
    for n, t in files.items():
        z.writestr(n, t)
`;
    execFileSync("python3", ["-I", "-c", script, dir, version, ...requires]);
  }
  const python = () => {
    const r = spawnSync("python3", ["-I", "-c", "import sys; print(sys.executable)"], { encoding: "utf8" });
    return r.stdout.trim();
  };
  /** The host's environment without its pip settings (this machine's pip.conf has extra indexes). */
  const env = (extra: Record<string, string> = {}) => {
    const e = Object.entries(provisionEnv(process.env, [])).filter(([k]) => !k.startsWith("PIP_"));
    return { ...Object.fromEntries(e), PIP_CONFIG_FILE: os.devNull, ...extra };
  };

  /** The extension's storage, its bundled wheel of ``version`` and an empty wheelhouse. */
  const bundled = (version: string) => {
    const wh = path.join(tmp, "wheelhouse");
    fs.mkdirSync(wh);
    const wheels = path.join(tmp, "ext", "server");
    makeWheel(wheels, version);
    return { storage: path.join(tmp, "storage"), wheels, wh };
  };

  it("installs, reuses, updates keeping the old environment until the new one works", async () => {
    const { storage, wheels, wh } = bundled("1.0.0");
    const p = new Provisioner(storage, wheels, env());
    const first = await p.install({ python: python(), wheelhouse: wh });
    expect(first.version).toBe("1.0.0");
    expect(await p.check()).toEqual({ kind: "ready", current: first });
    const out = execFileSync(envPython(first.env), ["-I", "-m", "agent_ls", "--version"], { encoding: "utf8" });
    expect(out.trim()).toBe("agent-ls 1.0.0");
    // this machine's python3 has pip >= 22.3: it installed into the environment, which has no pip
    expect(spawnSync(envPython(first.env), ["-I", "-m", "pip", "--version"]).status).not.toBe(0);

    // the extension updates; its new wheel needs a dependency the wheelhouse lacks: the update
    // fails and the old environment stays in use
    fs.rmSync(wheels, { recursive: true });
    makeWheel(wheels, "1.1.0", ["agent-ls-missing-dependency>=1"]);
    expect(await p.check()).toMatchObject({ kind: "outdated", bundled: "1.1.0" });
    const err = (await p.install({ python: python(), wheelhouse: wh }).catch((e: unknown) => e)) as ProvisionError;
    expect(err.kind).toBe("pip");
    expect(err.message).toMatch(/from the wheelhouse .*agent-ls-missing-dependency/s);
    expect(p.readCurrent()).toEqual(first);
    expect(fs.existsSync(envPython(first.env))).toBe(true);

    // fixed: the update installs, the old environment goes
    fs.rmSync(wheels, { recursive: true });
    makeWheel(wheels, "1.1.0");
    const second = await p.install({ python: python(), wheelhouse: wh });
    expect(await p.check()).toEqual({ kind: "ready", current: second });
    expect(fs.existsSync(first.env)).toBe(false);
  }, 120_000);

  it("a base interpreter without pip: the environment's own pip from ensurepip installs", async () => {
    const { storage, wheels, wh } = bundled("1.0.0");
    // a real interpreter with no pip of its own: a venv made without one
    execFileSync(python(), ["-I", "-m", "venv", "--without-pip", path.join(tmp, "nopip")]);
    const bare = envPython(path.join(tmp, "nopip"));
    expect(spawnSync(bare, ["-I", "-m", "pip", "--version"]).status).not.toBe(0);
    const p = new Provisioner(storage, wheels, env());
    const current = await p.install({ python: bare, wheelhouse: wh });
    expect(await p.check()).toEqual({ kind: "ready", current });
    expect(spawnSync(envPython(current.env), ["-I", "-m", "pip", "--version"]).status).toBe(0);
  }, 120_000);

  it("no network and no wheelhouse: pip's real connection error is reported as such", async () => {
    const storage = path.join(tmp, "storage");
    const wheels = path.join(tmp, "ext", "server");
    makeWheel(wheels, "1.0.0", ["agent-ls-missing-dependency>=1"]);
    // an index on a closed loopback port: the connection is refused at once
    const p = new Provisioner(storage, wheels, env({ PIP_INDEX_URL: "http://127.0.0.1:9/simple", PIP_RETRIES: "0", PIP_TIMEOUT: "2" }));
    const err = (await p.install({ python: python() }).catch((e: unknown) => e)) as ProvisionError;
    expect(err.kind).toBe("network");
    expect(err.retry).toMatch(/-m pip --python \S+ install/);
    expect(p.readCurrent()).toBeNull();
  }, 120_000);
});
