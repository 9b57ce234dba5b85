// The browser side of `scripts/bench_apps.py` (issue 45): opens the chat in code-server, sends
// the prompts one after another (each makes the model call show_board, a tool with an MCP App),
// and for each records (Date.now(), the machine's clock, shared with the extension's fact log)
// when the chat showed the tool card's result (the text fallback: the baseline), when the app's
// frame element appeared, the app document's first contentful paint (its timeOrigin plus the
// paint entry) and when the app showed the tool result (the board app stamps `data-result-at`).
// Writes them to `result` (JSON); exits 0 when every round has them all, 1 otherwise.
//
//   node editor-extension/e2e/bench_app.ts CONFIG.json

import * as fs from 'node:fs';
import type { Frame } from 'playwright-core';
import { FactLog, launchBrowser, log, readConfig, until, runDriver } from './harness.ts';
import type { BenchConfigBase } from './types.ts';
import { chatSummary, findChatFrame, sendPrompt, tid, waitAssistantText } from './chat.ts';
import { runCommand } from './workbench.ts';

interface BenchAppConfig extends BenchConfigBase {
  result: string;
  /** The prompts, and the answer the model gives once the tool ran. */
  rounds: { prompt: string; done: string }[];
  timeoutMs: number;
}

interface Round {
  cardAt?: number;
  frameAt?: number;
  paintAt?: number;
  resultAt?: number;
}

const cfg = readConfig('bench_app.ts') as BenchAppConfig;

/** Marks in the chat's document: each tool card's result and each app frame, when they appear. */
async function observe(f: Frame): Promise<void> {
  await f.evaluate(() => {
    const w = window as unknown as { benchMarks: { kind: string; at: number }[] };
    w.benchMarks = [];
    const seen = new WeakSet<Element>();
    const check = (): void => {
      document.querySelectorAll<HTMLElement>('[data-testid="tool-card"][data-status="done"], [data-testid="app-frame"]').forEach((el: HTMLElement) => {
        if (seen.has(el)) return;
        seen.add(el);
        w.benchMarks.push({ kind: el.tagName === 'IFRAME' ? 'frame' : 'card', at: Date.now() });
      });
    };
    new MutationObserver(check).observe(document.body, { subtree: true, childList: true, attributes: true, attributeFilter: ['data-status'] });
  });
}

async function marks(f: Frame): Promise<{ kind: string; at: number }[]> {
  return f.evaluate(() => (window as unknown as { benchMarks: { kind: string; at: number }[] }).benchMarks.splice(0));
}

async function main(): Promise<number> {
  const rounds: Round[] = [];
  const save = (extra: Record<string, unknown> = {}) => fs.writeFileSync(cfg.result, JSON.stringify({ rounds, ...extra }, null, 2));
  const context = await launchBrowser(cfg, { width: 1400, height: 900 });
  const facts = new FactLog(cfg.factLog);
  const T = cfg.timeoutMs;
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${cfg.url}/?folder=${encodeURIComponent(cfg.workspace)}`, { timeout: T });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: T });
    await facts.waitFor(/^activated\b/, T);
    await runCommand(page, 'Agent: Open Chat', 15_000);
    const f = await findChatFrame(page, T);
    await facts.waitFor(/^status .*\bapps\b.*connected|^status [1-9]/, T).catch(() => undefined);
    await observe(f);
    for (const [i, r] of cfg.rounds.entries()) {
      await sendPrompt(f, r.prompt, T);
      await waitAssistantText(f, r.done, T);
      const frameEl = f.locator(tid('app-frame')).last();
      const app = await until('the app frame', async () => (await (await frameEl.elementHandle()).contentFrame()) ?? undefined, T);
      await until('the app to show the result', async () => ((await app.locator('body[data-result-at]').count()) > 0 ? true : undefined), T, 10);
      const inApp = await app.evaluate(() => {
        const entries = performance.getEntriesByType('paint');
        const paint = entries.find((e) => e.name === 'first-contentful-paint') ?? entries.at(0);
        return { paintAt: paint ? performance.timeOrigin + paint.startTime : undefined, resultAt: Number(document.body.dataset.resultAt) };
      });
      const seen = await marks(f);
      const round: Round = {
        cardAt: seen.find((m) => m.kind === 'card')?.at,
        frameAt: seen.find((m) => m.kind === 'frame')?.at,
        paintAt: inApp.paintAt,
        resultAt: inApp.resultAt,
      };
      rounds.push(round);
      log(`[bench] round ${i}: ${JSON.stringify(round)}`);
      if (round.cardAt === undefined || round.frameAt === undefined || round.paintAt === undefined) {
        log(`[bench] round ${i}: a mark is missing; ${await chatSummary(f)}`);
        save({ error: `round ${i}: a mark is missing` });
        return 1;
      }
    }
    save();
    return 0;
  } finally {
    await context.close().catch(() => undefined);
  }
}

runDriver(main, '[bench] driver');
