// The editor's language intelligence as the agent's tools (issue 27, items 1 and 2), in the real
// editor with VS Code's built-in TypeScript support: with a small TypeScript project open, a
// prompt makes the scripted model call `references` on a function, `definition` from a call
// site and `symbols` for its name (tests/extension/e2e_scenario.py's Model retries while the
// TypeScript server is still starting, and checks the lines it got), then `edit_file` with a
// change that breaks a type; the user accepts the change in its file card, and the model checks
// that the edit's result carries TypeScript's error 2322. Its final answer says whether every
// check passed (and, if not, what it got instead).
//
// Called from driver.ts; waits on the chat's data-testid hooks and the fact log (CONTRACT.md).

import type { Frame } from 'playwright-core';
import { FactLog, type Run, norm, until } from './harness.ts';
import { sendPrompt, tid } from './chat.ts';
import { openFile } from './workbench.ts';

export async function intelligenceStep(run: Run, needs: string[]): Promise<void> {
  const { page, steps, facts, T } = run;
  const sc = run.sc.intelligence;
  await steps.run(
    'editor-intelligence',
    'references, definition and symbols come from VS Code\'s TypeScript support; an edit that breaks a type returns TS error 2322 in its result',
    needs,
    async (s) => {
      await openFile(page, sc.file, T); // the TypeScript server starts for the open file
      const f: Frame = await run.chatFrame();
      const mark = facts.mark();
      await sendPrompt(f, sc.prompt, T);
      const wait = T * 3; // the TypeScript server's start, then the 3 s wait for its diagnostics
      const row = f.locator(`${tid('file-change')}[data-status="pending"][data-path="${sc.file}"]`).last();
      await row.waitFor({ state: 'visible', timeout: wait });
      await row.locator('[data-change-action="accept"]').click();
      await facts.waitFor(/^review accept /, T, mark);
      const answers = f.locator(`${tid('message')}[data-role="assistant"]`);
      let last = '';
      await until(`the model's verdict ("${sc.seen}")`, async () => {
        const all = await answers.allTextContents();
        last = norm(all.slice(-3).join(' | '));
        return last.includes(sc.seen) || last.includes(sc.missing);
      }, wait);
      s.note(`answer: ${JSON.stringify(last.slice(-300))}`);
      if (!last.includes(sc.seen)) throw new Error(`the model did not get what the editor knows: ${last.slice(-600)}`);
      // the last references call: VS Code's own provider time (fact) vs the tool call (its card)
      const own = facts.lines().map((l) => FactLog.fact(l)).filter((l) => /^intelligence references \d+ \d+ms$/.test(l)).pop();
      const card = f.locator(`${tid('tool-card')}[data-tool="references"]`).last();
      const done = /Done \((\d+) ms\)/.exec(norm((await card.textContent()) ?? ''));
      const ownMs = own ? Number(/(\d+)ms$/.exec(own)?.[1]) : NaN;
      const toolMs = done ? Number(done[1]) : NaN;
      s.note(`references: VS Code's provider ${ownMs} ms, the tool call ${toolMs} ms, added ${toolMs - ownMs} ms (${own ?? 'no fact'})`);
      await until(`${tid('busy')} to disappear`, async () => (await f.locator(tid('busy')).count()) === 0, T);
    },
    T * 4,
  );
}
