// The official TypeScript ACP SDK (@agentclientprotocol/sdk 2.4.x) as the client of
// `agent-ls acp`: a second implementation of the protocol checks the wire (tests/acp/test_ts_client.py).
//
//   node ts_client.mjs            env: ACP_SDK (the package folder), AGENT_CMD (JSON argv),
//                                      WORKSPACE (the session's cwd)
//
// It initializes with terminal support, opens a session, picks the second model of the
// session's model option, sends one prompt (the scripted model asks for `bash`), runs the
// command in a real terminal of its own, lists the sessions, and prints what it saw as JSON.
import { spawn } from "node:child_process";
import { Readable, Writable } from "node:stream";
import { pathToFileURL } from "node:url";

const sdk = await import(pathToFileURL(`${process.env.ACP_SDK}/dist/v1/stable/acp.js`).href);
const [command, ...args] = JSON.parse(process.env.AGENT_CMD);
const cwd = process.env.WORKSPACE;

const agentProcess = spawn(command, args, { cwd, stdio: ["pipe", "pipe", "inherit"] });
const stream = sdk.ndJsonStream(Writable.toWeb(agentProcess.stdin), Readable.toWeb(agentProcess.stdout));

const updates = [];
const terminalLog = [];
const terminals = new Map();
let nextTerminal = 1;

const app = sdk
  .client()
  .onNotification("session/update", ({ params }) => {
    updates.push(params.update);
  })
  .onRequest("session/request_permission", ({ params }) => {
    terminalLog.push(["permission", params.toolCall.toolCallId]);
    return { outcome: { outcome: "selected", optionId: "allow_once" } };
  })
  .onRequest("terminal/create", ({ params }) => {
    terminalLog.push(["create", params.command, params.args, params.cwd]);
    const id = `ts-term-${nextTerminal++}`;
    const child = spawn(params.command, params.args ?? [], { cwd: params.cwd, stdio: ["ignore", "pipe", "pipe"] });
    const t = { output: "", exit: null };
    child.stdout.on("data", (d) => (t.output += d));
    child.stderr.on("data", (d) => (t.output += d));
    t.done = new Promise((resolve) => child.on("close", (code, signal) => {
      t.exit = { exitCode: code, signal };
      resolve(t.exit);
    }));
    t.child = child;
    terminals.set(id, t);
    return { terminalId: id };
  })
  .onRequest("terminal/wait_for_exit", async ({ params }) => {
    terminalLog.push(["wait", params.terminalId]);
    return await terminals.get(params.terminalId).done;
  })
  .onRequest("terminal/output", ({ params }) => {
    terminalLog.push(["output", params.terminalId]);
    const t = terminals.get(params.terminalId);
    return { output: t.output, truncated: false, exitStatus: t.exit ?? undefined };
  })
  .onRequest("terminal/kill", ({ params }) => {
    terminalLog.push(["kill", params.terminalId]);
    terminals.get(params.terminalId).child.kill("SIGKILL");
    return {};
  })
  .onRequest("terminal/release", ({ params }) => {
    terminalLog.push(["release", params.terminalId]);
    terminals.delete(params.terminalId);
    return {};
  });

const connection = app.connect(stream);
const agent = connection.agent;
const out = {};
try {
  out.initialize = await agent.request("initialize", {
    protocolVersion: 1,
    clientCapabilities: { terminal: true, fs: { readTextFile: false, writeTextFile: false } },
  });
  const created = await agent.request("session/new", { cwd, mcpServers: [] });
  out.sessionId = created.sessionId;
  out.configOptions = created.configOptions;
  const model = created.configOptions.find((o) => o.category === "model");
  out.setAnswer = await agent.request("session/set_config_option", {
    sessionId: created.sessionId, configId: model.id, value: model.options[1].value,
  });
  try {
    await agent.request("session/set_config_option", {
      sessionId: created.sessionId, configId: model.id, value: "no/such-model",
    });
  } catch (e) {
    out.badValue = { code: e.code, data: e.data };
  }
  out.prompt = await agent.request("session/prompt", {
    sessionId: created.sessionId, prompt: [{ type: "text", text: "Run the tests in the terminal" }],
  });
  out.list = await agent.request("session/list", {});
} catch (e) {
  out.error = { message: String(e?.message ?? e), code: e?.code, data: e?.data };
}
out.updates = updates;
out.terminalLog = terminalLog;
process.stdout.write(JSON.stringify(out) + "\n");
connection.close();
agentProcess.stdin.end();
await new Promise((resolve) => agentProcess.on("close", resolve));
