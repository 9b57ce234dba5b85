// End-to-end scenario of issue 31: the extension provisions its own server. A VS Code
// (code-server) with no agentLs.server.* settings and no agent-ls on PATH:
//   phase "install": the offer appears; the user clicks "Install the agent-ls server"; the
//     server is installed (from the wheelhouse named by agentLs.server.wheelhouse) and starts;
//     a prompt is answered; the MCP Servers view lists the user's server;
//   phase "reuse" (code-server started again on the same user data): the provisioned server is
//     reused (no offer, no install step); a prompt is answered; the servers view works.
//
//   node editor-extension/e2e/provision.ts CONFIG.json
//
// Started by tests/extension/test_e2e_provision.py (which owns the processes). Steps wait on the
// extension's fact log (CONTRACT.md) and the webview's data-testid hooks. Writes result.json
// (steps, and `installToAnswerMs`: from the click on "Install" to the first answered prompt).

import type { BrowserContext, Page } from 'playwright-core';
import { FactLog, Steps, escapeRe, launchBrowser, norm, readConfig, until, runDriver } from './harness.ts';
import { findChatFrame, sendPrompt, waitAssistantText } from './chat.ts';
import { runCommand, serversPane } from './workbench.ts';
import type { Config } from './types.ts';

/** The shared fields (types.ts Config) this driver reads, and its own. */
interface ProvisionConfig extends Pick<Config, 'url' | 'workspace' | 'factLog' | 'artifacts' | 'chromium' |
  'browserProfile' | 'nodeModules' | 'stepTimeoutMs'> {
  phase: 'install' | 'reuse';
  /** How long the install may take (pip from the wheelhouse). */
  installTimeoutMs: number;
  installAction: string;
  prompt: string;
  answer: string;
  server: string;
}

const cfg = readConfig('provision.ts') as ProvisionConfig;

async function main(): Promise<number> {
  const context: BrowserContext = await launchBrowser(cfg, { width: 1400, height: 900 });
  const facts = new FactLog(cfg.factLog);
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const steps = new Steps(page, cfg.artifacts, cfg.stepTimeoutMs);
    const extra = await scenario(page, steps, facts);
    steps.save({ ...extra, factLogTail: facts.tail(40) });
    return steps.results.every((r) => r.status === 'passed') ? 0 : 1;
  } finally {
    await context.close().catch(() => undefined);
  }
}

async function scenario(page: Page, steps: Steps, facts: FactLog): Promise<Record<string, unknown>> {
  const T = cfg.stepTimeoutMs;
  const extra: Record<string, unknown> = {};
  let clickedAt = 0;

  await steps.run('workbench', 'code-server serves the workbench', [], async () => {
    await page.goto(`${cfg.url}/?folder=${encodeURIComponent(cfg.workspace)}`, { timeout: T });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: T });
    await page.locator('.part.statusbar').waitFor({ state: 'visible', timeout: T });
  });

  await steps.run('activation', 'the extension activates', ['workbench'], async () => {
    await facts.waitFor(/^activated\b/, T);
  });

  if (cfg.phase === 'install') {
    await steps.run('offer', `the offer "${cfg.installAction}" appears; the user clicks it`, ['activation'], async (s) => {
      await facts.waitFor(/^provision-offered\b/, T);
      const button = page.locator('.notifications-toasts .monaco-button', { hasText: new RegExp(`^\\s*${escapeRe(cfg.installAction)}\\s*$`) }).first();
      await button.waitFor({ state: 'visible', timeout: T });
      const toast = norm(await page.locator('.notifications-toasts .notification-toast').first().innerText().catch(() => ''));
      s.note(`notification: ${JSON.stringify(toast.slice(0, 200))}`);
      clickedAt = Date.now();
      await button.click();
    });

    await steps.run('installed', 'the server is installed with a progress notification, then starts', ['offer'], async (s) => {
      await facts.waitFor(/^provision-install-start\b/, T);
      const progress = page.locator('.notifications-toasts .notification-toast', { hasText: /Installing the agent-ls server/ }).first();
      const shown = await progress.waitFor({ state: 'visible', timeout: 10_000 }).then(() => true, () => false);
      s.note(`progress notification seen: ${String(shown)}`);
      await until(
        'the install to finish',
        () => facts.find(/^provision-(installed|failed)\b/),
        cfg.installTimeoutMs,
      ).then((f) => {
        if (f.startsWith('provision-failed')) throw new Error(`the install failed: ${f}`);
        s.note(f);
      });
      await facts.waitFor(/^client-running\b/, T);
      if (!shown) throw new Error('no "Installing the agent-ls server" progress notification was shown');
    }, cfg.installTimeoutMs + T);
  } else {
    await steps.run('reused', 'the provisioned server is reused: no offer, no install step', ['activation'], async (s) => {
      const reused = await facts.waitFor(/^provision-reused\b/, T);
      await facts.waitFor(/^client-running\b/, T);
      s.note(reused);
      const again = facts.find(/^provision-(offered|install-start)\b/);
      if (again) throw new Error(`the second start offered or ran an install: ${again}`);
    });
  }

  const started = cfg.phase === 'install' ? 'installed' : 'reused';
  await steps.run('prompt', 'a prompt in the chat is answered by the model', [started], async (s) => {
    await runCommand(page, 'Agent: Open Chat');
    const f = await findChatFrame(page, T);
    await sendPrompt(f, cfg.prompt, T);
    await waitAssistantText(f, cfg.answer, T);
    if (clickedAt) {
      extra.installToAnswerMs = Date.now() - clickedAt;
      s.note(`from the click on "${cfg.installAction}" to the answer: ${(Date.now() - clickedAt) / 1000} s`);
    }
  });

  await steps.run('servers-view', 'the MCP Servers view lists the user\'s server, connected', [started], async (s) => {
    await runCommand(page, 'Agent: Focus on MCP Servers View');
    const pane = serversPane(page);
    await pane.waitFor({ state: 'visible', timeout: T });
    const row = pane
      .locator('.monaco-list-row')
      .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRe(cfg.server)}\\s*$`) }) })
      .first();
    await row.waitFor({ state: 'visible', timeout: T });
    const desc = await until('the server to be connected', async () => {
      const d = norm((await row.locator('.label-description').allInnerTexts()).join(' '));
      return /^connected\b/.test(d) ? d : undefined;
    }, T);
    s.note(`${cfg.server}: ${desc}`);
  });
  return extra;
}

runDriver(main, '[e2e] provision driver');
