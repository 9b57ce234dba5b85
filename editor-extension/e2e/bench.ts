// The browser side of `scripts/bench_intelligence.py --editor` (issue 27's benchmark through the real
// extension): opens the generated TypeScript workspace in code-server, opens a file (VS Code's
// TypeScript server starts for it), opens the chat and sends one prompt; the scripted model then
// calls `references` again and again (the Python side decides how often) and ends with a text that
// contains `done`. Exits 0 when that text shows, 1 otherwise. The figures are computed by the
// Python side from the extension's fact log and the session store.
//
//   node editor-extension/e2e/bench.ts CONFIG.json

import type { Frame } from 'playwright-core';
import { FactLog, launchBrowser, log, norm, readConfig, until, runDriver } from './harness.ts';
import type { BenchConfigBase } from './types.ts';
import { chatSummary, findChatFrame, sendPrompt, tid } from './chat.ts';
import { openFile, runCommand } from './workbench.ts';

interface BenchConfig extends BenchConfigBase {
  /** The file opened in the editor before the prompt (relative to the workspace). */
  file: string;
  prompt: string;
  /** Text of the model's last answer. */
  done: string;
  /** How long the whole run may take. */
  timeoutMs: number;
}

const cfg = readConfig('bench.ts') as BenchConfig;

async function main(): Promise<number> {
  const context = await launchBrowser(cfg, { width: 1400, height: 900 });
  const facts = new FactLog(cfg.factLog);
  const T = 60_000;
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${cfg.url}/?folder=${encodeURIComponent(cfg.workspace)}`, { timeout: T });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: T });
    await facts.waitFor(/^client-running\b/, T);
    await openFile(page, cfg.file, T);
    log('[bench] file open; opening the chat');
    await runCommand(page, 'Agent: Open Chat');
    const f: Frame = await findChatFrame(page, T);
    await sendPrompt(f, cfg.prompt, T);
    log('[bench] prompt sent');
    const answers = f.locator(`${tid('message')}[data-role="assistant"]`);
    try {
      await until(`the model's last answer ("${cfg.done}")`, async () => norm((await answers.allTextContents()).join(' ')).includes(cfg.done),
        cfg.timeoutMs, 500);
    } catch (e) {
      log(`[bench] ${(e as Error).message}; ${await chatSummary(f)}`);
      return 1;
    }
    log('[bench] done');
    return 0;
  } finally {
    await context.close().catch(() => undefined);
  }
}

runDriver(main, '[bench] driver');
