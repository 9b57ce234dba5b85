// The shapes of what the Python orchestrator (tests/extension/test_e2e.py, e2e_scenario.py) hands
// the drivers: the run config and the scenario, each step group's part of it included. Types
// only, importing no other module of the driver: harness.ts and the step groups import from here,
// so no two modules import each other's types.

/** What the Python orchestrator (tests/extension/test_e2e.py) hands the driver. */
export interface Config {
  /** code-server's base URL, e.g. http://127.0.0.1:40123 */
  url: string;
  /** The workspace folder code-server opens. */
  workspace: string;
  /** The extension's fact log (AGENT_LS_EXTENSION_LOG). */
  factLog: string;
  /** Where screenshots and result.json go (artifacts/e2e). */
  artifacts: string;
  /** Debian's Chromium. */
  chromium: string;
  /** A fresh, empty Chromium profile folder. */
  browserProfile: string;
  /** <repo>/.tools/e2e/node_modules (playwright-core lives there). */
  nodeModules: string;
  /** The agent-ls user settings file (AGENT_LS_CONFIG_DIR/settings.json): the driver adds a
   * server that fails to start to it (server-failed), and takes it out again. */
  userSettings: string;
  /** code-server's Machine settings.json: where it reads the machine-scoped agentLs.server.*
   * settings (the driver edits it, as "Preferences: Open Remote Settings (JSON)", to change one). */
  machineSettings: string;
  /** Default timeout of one step, in milliseconds. */
  stepTimeoutMs: number;
  scenario: Scenario;
}

/** What every benchmark driver is handed (scripts/bench_*.py --editor): code-server, the browser. */
export type BenchConfigBase = Pick<Config, 'url' | 'workspace' | 'factLog' | 'chromium' | 'browserProfile' | 'nodeModules'>;

export interface Scenario {
  /** The prompt typed into the chat. */
  prompt: string;
  /** Text the model streams before its first tool call. */
  introText: string;
  /** Model-facing name of the tool that needs approval, and its server. */
  approvalTool: string;
  server: string;
  /** Text the approved tool returns (it shows in the tool card's result). */
  toolResult: string;
  /** The model's final answer (streamed slowly in several chunks). */
  finalAnswer: string;
  /** Tool names (on the server) expected under the server in the MCP Servers view. */
  expectTools: string[];
  /** File (relative to the workspace) the code action runs on. */
  codeActionFile: string;
  /** Issue 30 item 6: a file holding only a number, the tool action (knob's `add` with
   * `"a": "${selection}"`, applied as an edit) picked on it, and the file before and after. */
  numberFile: string;
  numberAction: string;
  numberBefore: string;
  numberAfter: string;
  /** Title of the code action picked from the lightbulb menu. */
  codeActionTitle: string;
  /** The model's answer to the code action's question. */
  codeActionAnswer: string;
  /** A server defined in the workspace's .agent-ls/settings.json (must be trusted to start). */
  workspaceServer: string;
  /** A prompt whose tool (`elicitTool`, needs approval) asks the user through a form. */
  elicitPrompt: string;
  /** The first words of the model's answer to it (the session's second prompt: issue 30 item 2). */
  elicitIntro: string;
  elicitTool: string;
  /** The form's message. */
  elicitQuestion: string;
  /** The model's answer after the form was sent. */
  elicitFinal: string;
  /** The model's reasoning streamed before that answer (shown in a collapsible thinking block). */
  elicitThinking: string;
  /** Default values the form must show, by field name. */
  elicitDefaults: Record<string, string>;
  /** A prompt answered by an endless slow stream, stopped with the stop button. */
  stopPrompt: string;
  /** Code in a code block of the code action's answer, inserted at the cursor. */
  insertCode: string;
  /** A prompt sent with the editor's selection attached; the model answers `attachSeen` if it got it. */
  attachPrompt: string;
  attachSeen: string;
  /** An MCP prompt name that typing "/" must list. */
  slashPrompt: string;
  /** The question typed into the input box of the "Ask agent" code action, and the answer. */
  askQuestion: string;
  askAnswer: string;
  /** How the chip of the selection the code actions run on starts (`calc.py:1-`). */
  askChipPrefix: string;
  /** Review of the agent's file changes (review.ts). */
  review: ReviewScenario;
  /** Rewind to here (rewind.ts, issue 40). */
  rewind: RewindScenario;
  /** A subagent's card (subagent.ts, issue 42). */
  subagent: SubagentScenario;
  /** MCP Apps (mcpApp.ts, issue 45). */
  mcpApp: McpAppScenario;
  /** Issue 47: the folder the full-output step's bash command tries to write in (refused by the sandbox). */
  sandboxRefusedFolder: string;
  /** The editor's language intelligence as the agent's tools (intelligence.ts). */
  intelligence: IntelligenceScenario;
}

/** review.ts's part of the scenario. */
export interface ReviewScenario {
  /** The file (relative to the workspace) the agent edits; on disk it holds `valueBefore`. */
  file: string;
  /** A line of the file the agent changes, and what it becomes when the user accepts. */
  valueBefore: string;
  valueAccepted: string;
  /** What the user types into the buffer (not saved) before the agent's edit. */
  userNote: string;
  /** The prompt whose answer edits the file, and the model's answer after the edit. */
  acceptPrompt: string;
  acceptDone: string;
  /** The prompt whose answer reads and edits the file again (rejected), and the reason typed. */
  rejectPrompt: string;
  rejectReason: string;
  /** The model's answer when the rejection and the reason reached it. */
  rejectSeen: string;
  /** A prompt whose tool call (bash, approved once) prints more than a page, the model's answer,
   * and the output's last line (only the full output has it). */
  outputPrompt: string;
  outputDone: string;
  outputLastLine: string;
}

/** rewind.ts's part of the scenario. */
export interface RewindScenario {
  /** A file (relative to the workspace) holding `before`; the turn's bash writes `after` into it. */
  file: string;
  before: string;
  after: string;
  prompt: string;
  /** The model's answer after the bash call. */
  done: string;
}

/** subagent.ts's part of the scenario. */
export interface SubagentScenario {
  prompt: string;
  /** The agent the model runs, and the task's description it gives. */
  agent: string;
  description: string;
  /** The child's one tool call (a read: no approval). */
  tool: string;
  /** The parent's answer once the child answered. */
  done: string;
}

/** mcpApp.ts's part of the scenario. */
export interface McpAppScenario {
  server: string;
  /** The model-facing name of the tool with the app. */
  tool: string;
  prompt: string;
  done: string;
  /** The app's ui/message text, and the model's answer to it. */
  message: string;
  messageSeen: string;
  attackPrompt: string;
  attackDone: string;
  stillPrompt: string;
  stillDone: string;
}

/** intelligence.ts's part of the scenario. */
export interface IntelligenceScenario {
  /** The TypeScript file (relative to the workspace) the user has open and the agent edits. */
  file: string;
  prompt: string;
  /** The model's answer when every check passed; anything else starts with `missing`. */
  seen: string;
  missing: string;
}

/** firstPrompt.ts's part of the scenario. */
export interface FirstPromptScenario {
  prompt: string;
  /** The model's answer when the tool ran in the same turn (it ends with the tool's result). */
  done: string;
  /** The model's answer when tool_search did not find the tool (followed by what it got). */
  missing: string;
  /** The model-facing name of the starting server's tool. */
  tool: string;
}
