// The browser side of `scripts/bench_editor_prompt.py` (issue 30 item 2: the first prompt of a
// session in the editor): opens the workspace in code-server at 1400x900, opens the chat, waits
// until Send is enabled, then `typingMs` later sends the first prompt (as a user who types it);
// once its answer has ended, the second. Records (Date.now(), the machine's clock, shared with the
// Python side's scripted model and the server's log) when the workbench showed, the language
// client ran, Send became enabled, and for each prompt when it was sent and when the first words of
// its answer showed in the chat (timePrompt in chat.ts). Writes them to `result` (JSON); exits 0
// when both answers showed, 1 otherwise.
//
//   node editor-extension/e2e/bench_prompt.ts CONFIG.json

import * as fs from 'node:fs';
import { FactLog, type PromptTimes, launchBrowser, log, readConfig, sleep, until, runDriver } from './harness.ts';
import type { BenchConfigBase } from './types.ts';
import { chatSummary, findChatFrame, promptTimes, tid, timePrompt } from './chat.ts';
import { runCommand } from './workbench.ts';

interface BenchPromptConfig extends BenchConfigBase {
  /** Where the recorded times go (JSON). */
  result: string;
  /** The prompts, in order, and the first words of the model's answer to each. */
  prompts: { text: string; firstWords: string }[];
  /** From Send enabled to the click on Send of the first prompt. */
  typingMs: number;
  timeoutMs: number;
}

const cfg = readConfig('bench_prompt.ts') as BenchPromptConfig;

async function main(): Promise<number> {
  const marks: Record<string, number> = { start: Date.now() };
  const prompts: PromptTimes[] = [];
  const save = (extra: Record<string, unknown> = {}) => fs.writeFileSync(cfg.result, JSON.stringify({ marks, prompts, ...extra }, null, 2));
  const context = await launchBrowser(cfg, { width: 1400, height: 900 });
  const facts = new FactLog(cfg.factLog);
  const T = cfg.timeoutMs;
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(`${cfg.url}/?folder=${encodeURIComponent(cfg.workspace)}`, { timeout: T });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: T });
    marks['workbench shown'] = Date.now();
    // the palette lists the extension's commands once it is activated (VS Code activates it on start)
    await facts.waitFor(/^activated\b/, T);
    await runCommand(page, 'Agent: Open Chat', 15_000);
    const f = await findChatFrame(page, T);
    marks['chat shown'] = Date.now();
    await until(`${tid('send')} to be enabled`, async () => f.locator(tid('send')).isEnabled(), T, 25);
    marks['Send enabled'] = Date.now();
    const input = f.locator(tid('prompt-input'));
    for (const [i, p] of cfg.prompts.entries()) {
      const mark = facts.mark();
      await input.click();
      await input.fill(p.text);
      await timePrompt(f, String(i), p.firstWords);
      if (i === 0) await sleep(Math.max(0, marks['Send enabled'] + cfg.typingMs - Date.now()));
      await f.locator(tid('send')).click();
      const times = await promptTimes(f, String(i), T);
      prompts.push(times);
      if (times.shownAt === undefined) {
        log(`[bench] prompt ${i}: no answer shown; ${await chatSummary(f)}; facts: ${facts.since(mark)}`);
        save({ error: `prompt ${i}: the answer did not show` });
        return 1;
      }
      log(`[bench] prompt ${i}: Send -> first words ${times.shownAt - (times.sentAt ?? NaN)} ms`);
      // the turn ends (the next prompt is sent after the first answer, as a user does)
      await facts.waitFor(/^event turn_finished\b/, T, mark);
      await until(`${tid('busy')} to go away`, async () => (await f.locator(tid('busy')).count()) === 0, T, 25);
    }
    save();
    return 0;
  } finally {
    await context.close().catch(() => undefined);
  }
}

runDriver(main, '[bench] driver');
