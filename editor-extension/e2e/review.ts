// Review of the agent's file changes in the real editor (issue 16, item 3), with
// `agentLs.edits.review: "beforeApply"` (tests/extension/e2e_run.py writes it to the User settings):
//
// - review-accept: the user has an unsaved change in a file; a prompt makes the agent edit
//   that file: the chat shows the file card (waiting, +/- counts) with Review / Accept / Reject
//   in view; Review opens VS Code's diff editor; Accept lands the change in the buffer with the
//   user's unsaved change kept (the disk untouched); Undo in the editor reverts it.
// - review-reject: the agent reads the file and edits it again; Reject (with a reason) leaves
//   the buffer as it was, and the model got the rejection and the reason (its answer says so).
//
// Called from driver.ts; waits on the fact log and the chat's data-testid hooks (CONTRACT.md).

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame, Locator, Page } from 'playwright-core';
import { type FactLog, type Steps, norm, until } from './harness.ts';
import { tid } from './chat.ts';
import { openFile } from './workbench.ts';
import type { ReviewScenario } from './types.ts';

export interface ReviewContext {
  page: Page;
  steps: Steps;
  facts: FactLog;
  timeoutMs: number;
  workspace: string;
  scenario: ReviewScenario;
  chatFrame: () => Promise<Frame>;
  sendPrompt: (f: Frame, text: string) => Promise<void>;
  waitAssistantText: (f: Frame, text: string) => Promise<void>;
  /** Steps these need (the chat is open, a prompt was answered). */
  needs: string[];
}

const visibleText = async (editor: Locator): Promise<string> =>
  norm((await editor.locator('.view-lines').innerText()).replace(/\u00a0/g, ' '));

/** Waits for the waiting file card of `file` and checks that its decision is in view. */
async function waitingCard(ctx: ReviewContext, f: Frame, mark: number, note: (t: string) => void): Promise<Locator> {
  const sc = ctx.scenario;
  // edit_file is a write tool, but every change of it is reviewed before it applies: the
  // extension answers its approval at once (no second question)
  await ctx.facts.waitFor(/^approval allow_once \(reviewed before apply\) edit_file$/, ctx.timeoutMs, mark);
  await ctx.facts.waitFor(new RegExp(`^review pending ${sc.file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`), ctx.timeoutMs, mark);
  const row = f.locator(`${tid('file-change')}[data-status="pending"][data-path="${sc.file}"]`).last();
  await row.waitFor({ state: 'visible', timeout: ctx.timeoutMs });
  if ((await f.locator(`${tid('approval')}:not([data-answered])`).count()) > 0) throw new Error('an approval card asks about the reviewed edit too');
  const counts = norm((await row.locator('.counts').textContent()) ?? '');
  note(`card: ${JSON.stringify(norm((await row.textContent()) ?? '').slice(0, 160))}`);
  if (counts !== '+1 −1') throw new Error(`the file card counts ${JSON.stringify(counts)}, not "+1 −1"`);
  const accept = row.locator('[data-change-action="accept"]');
  const inView = await accept.evaluate((el) => {
    const r = el.getBoundingClientRect();
    return r.top >= 0 && r.bottom <= window.innerHeight && r.height > 0;
  });
  if (!inView) throw new Error('the Accept button of the waiting file card is not in view (the user would have to scroll)');
  return row;
}

export async function reviewSteps(ctx: ReviewContext): Promise<void> {
  const { page, steps, facts, scenario: sc } = ctx;
  const T = ctx.timeoutMs;
  const onDisk = path.join(ctx.workspace, sc.file);
  const diskBefore = fs.readFileSync(onDisk, 'utf8');

  await steps.run(
    'review-accept',
    'an agent edit of a file with unsaved changes waits in a file card (Review shows the diff); Accept lands it in the buffer with the user\'s change kept; Undo reverts it',
    ctx.needs,
    async (s) => {
      const editor = await openFile(page, sc.file, T);
      await editor.locator('.view-lines').first().click();
      await page.keyboard.press('Control+End');
      await page.keyboard.type(sc.userNote);
      await until('the user\'s unsaved note in the editor', async () => (await visibleText(editor)).includes(sc.userNote), T);
      const f = await ctx.chatFrame();
      const mark = facts.mark();
      await ctx.sendPrompt(f, sc.acceptPrompt);
      const row = await waitingCard(ctx, f, mark, (t) => s.note(t));
      if ((await visibleText(editor)).includes(sc.valueAccepted)) throw new Error('the change is in the buffer before the user accepted it');

      await row.locator('[data-change-action="review"]').click();
      await facts.waitFor(/^review-diff /, T, mark);
      const diff = page.locator('.monaco-diff-editor').first();
      await diff.waitFor({ state: 'visible', timeout: T }).catch(() => {
        throw new Error('Review opened no diff editor');
      });
      const diffText = async () => norm((await diff.innerText()).replace(/\u00a0/g, ' '));
      await until(`the diff editor to show "${sc.valueBefore}" and "${sc.valueAccepted}"`, async () => {
        const t = await diffText();
        return t.includes(sc.valueBefore) && t.includes(sc.valueAccepted);
      }, T).catch(async (e: unknown) => {
        throw new Error(`${(e as Error).message}; it shows ${JSON.stringify((await diffText()).slice(0, 200))}`);
      });
      s.note(`diff editor: ${JSON.stringify((await diffText()).slice(0, 160))}`);

      await row.locator('[data-change-action="accept"]').click();
      await facts.waitFor(new RegExp(`^review accept `), T, mark);
      await ctx.waitAssistantText(f, sc.acceptDone);
      const accepted = f.locator(`${tid('file-change')}[data-path="${sc.file}"]`).last();
      await until('the file card to say "accepted"', async () => (await accepted.getAttribute('data-status')) === 'accepted', T);

      const buffer = await openFile(page, sc.file, T);
      await until(`"${sc.valueAccepted}" in the buffer`, async () => (await visibleText(buffer)).includes(sc.valueAccepted), T);
      const text = await visibleText(buffer);
      s.note(`buffer after Accept: ${JSON.stringify(text)}`);
      if (!text.includes(sc.userNote)) throw new Error('the user\'s unsaved note is gone from the buffer after Accept');
      if (fs.readFileSync(onDisk, 'utf8') !== diskBefore) throw new Error('the file on disk changed (the edit must stay in the buffer until saved)');

      await buffer.locator('.view-lines').first().click();
      await page.keyboard.press('Control+Z');
      await until(`Undo to bring back "${sc.valueBefore}"`, async () => {
        const now = await visibleText(buffer);
        return now.includes(sc.valueBefore) && !now.includes(sc.valueAccepted);
      }, T);
      const undone = await visibleText(buffer);
      if (!undone.includes(sc.userNote)) throw new Error('Undo of the agent\'s change also removed the user\'s note');
      await until(`${tid('busy')} to disappear`, async () => (await f.locator(tid('busy')).count()) === 0, T);
    },
  );

  await steps.run(
    'review-reject',
    'Reject (with a reason) leaves the file as it was; the model is told, with the reason',
    ['review-accept'],
    async (s) => {
      const f = await ctx.chatFrame();
      const mark = facts.mark();
      const editor = await openFile(page, sc.file, T);
      const before = await visibleText(editor);
      await ctx.sendPrompt(f, sc.rejectPrompt);
      const row = await waitingCard(ctx, f, mark, (t) => s.note(t));
      const card = row.locator(`xpath=ancestor::*[@data-testid="file-changes"]`);
      await card.locator(tid('reject-reason')).fill(sc.rejectReason);
      await row.locator('[data-change-action="reject"]').click();
      await facts.waitFor(/^review reject /, T, mark);
      await ctx.waitAssistantText(f, sc.rejectSeen);
      const status = f.locator(`${tid('file-change')}[data-path="${sc.file}"]`).last();
      await until('the file card to say "rejected"', async () => (await status.getAttribute('data-status')) === 'rejected', T);
      s.note(`card: ${JSON.stringify(norm((await status.textContent()) ?? '').slice(0, 160))}`);
      const after = await visibleText(editor);
      if (after !== before) throw new Error(`the buffer changed after Reject: ${JSON.stringify(before)} -> ${JSON.stringify(after)}`);
      if (fs.readFileSync(onDisk, 'utf8') !== diskBefore) throw new Error('the file on disk changed after Reject');
      await until(`${tid('busy')} to disappear`, async () => (await f.locator(tid('busy')).count()) === 0, T);
    },
  );
}

/** "Open full output" on the tool card of an output longer than a page (issue 16, item 4). */
export async function fullOutputStep(ctx: ReviewContext): Promise<void> {
  const { page, steps, facts, scenario: sc } = ctx;
  const T = ctx.timeoutMs;
  await steps.run('full-output', 'a tool output longer than a page: its card offers "Open full output", which opens all of it in an editor', ctx.needs, async (s) => {
    const f = await ctx.chatFrame();
    const mark = facts.mark();
    await ctx.sendPrompt(f, sc.outputPrompt);
    const approval = f.locator(`${tid('approval')}:not([data-answered])`).last();
    await approval.waitFor({ state: 'visible', timeout: T });
    await approval.locator('[data-answer="allow_once"]').click();
    await ctx.waitAssistantText(f, sc.outputDone);
    const card = f.locator(`${tid('tool-card')}[data-tool="bash"]`).last();
    const open = card.locator(tid('tool-full-output'));
    await open.waitFor({ state: 'attached', timeout: T }).catch(() => {
      throw new Error(`the bash tool card has no ${tid('tool-full-output')} button`);
    });
    const shown = norm((await card.locator(tid('tool-result')).textContent()) ?? '');
    if (shown.includes(sc.outputLastLine)) throw new Error('the card already shows the whole output (it should show the first page)');
    if (!(await card.evaluate((el) => (el as HTMLDetailsElement).open))) await card.locator('summary').click();
    await open.click();
    const fact = await facts.waitFor(/^full-output out-\d+ \d+$/, T, mark);
    s.note(fact);
    const editor = page.locator('.editor-group-container.active .monaco-editor').first();
    await until('the output\'s start in the untitled editor', async () => (await visibleText(editor)).includes('line 0 line 1'), T);
    await editor.locator('.view-lines').first().click();
    await page.keyboard.press('Control+End');
    await until(`its last line "${sc.outputLastLine}" in the editor`, async () => (await visibleText(editor)).includes(sc.outputLastLine), T);
    await until(`${tid('busy')} to disappear`, async () => (await f.locator(tid('busy')).count()) === 0, T);
  });
}

/** After the sessions step resumed the session of the review steps: its file cards are back, with their outcome. */
export async function resumedCardsStep(ctx: ReviewContext): Promise<void> {
  const { steps, scenario: sc } = ctx;
  await steps.run('review-resumed', 'the resumed session shows its file cards with their outcome', ['sessions', 'review-reject'], async (s) => {
    const f = await ctx.chatFrame();
    const rows = f.locator(`${tid('file-change')}[data-path="${sc.file}"]`);
    const statuses = await until('the resumed file cards', async () => {
      const all = await rows.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset['status'] ?? ''));
      return all.includes('accepted') && all.includes('rejected') ? all : undefined;
    }, ctx.timeoutMs).catch(async (e: unknown) => {
      throw new Error(`${(e as Error).message}: the rows say ${JSON.stringify(await rows.evaluateAll((els) => els.map((x) => (x as HTMLElement).dataset['status'])))}`);
    });
    s.note(`file cards after resume: ${JSON.stringify(statuses)}`);
  });
}
