// Rewind in the real editor (issue 40): a turn's shell command rewrites a file that is open in an
// editor (a clean buffer); "Rewind to here" on that prompt (pressed with the keyboard) asks what
// to take back (code and conversation), shows the plan in a modal (the file and what happens to
// it) and, confirmed, puts the file back on disk and in its editor; the chat drops the prompt and
// a Redo is offered; Redo shows its plan in a modal and, confirmed, puts the agent's text and the
// prompt back. One step, in a new session, kept short (the e2e is CPU heavy).
//
// Called from driver.ts; waits on the fact log (rewind-plan, rewound, rewind-buffers: CONTRACT.md)
// and the chat's data-testid hooks.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Locator } from 'playwright-core';
import { type Run, norm, until } from './harness.ts';
import { sendPrompt, tid, waitAssistantText } from './chat.ts';
import { openFile } from './workbench.ts';

const visibleText = async (editor: Locator): Promise<string> =>
  norm((await editor.locator('.view-lines').innerText()).replace(/\u00a0/g, ' '));

export async function rewindStep(run: Run, needs: string[]): Promise<void> {
  const { page, steps, facts, T } = run;
  const r = run.sc.rewind;
  await steps.run(
    'rewind',
    'a turn\'s shell command rewrites an open file; "Rewind to here" (keyboard) shows the plan, asks, and puts the file and its editor back; the chat drops the prompt; Redo shows its plan, then puts the file and the prompt back',
    needs,
    async (s) => {
      const onDisk = path.join(run.cfg.workspace, r.file);
      const editor = await openFile(page, r.file, T);
      await until('the file in its editor', async () => (await visibleText(editor)).includes(r.before), T);
      const f = await run.chatFrame();
      await f.locator(tid('new-session')).click();
      const mark = facts.mark();
      await sendPrompt(f, r.prompt, T);
      const approval = f.locator(`${tid('approval')}:not([data-answered])`).last();
      await approval.waitFor({ state: 'visible', timeout: T });
      await approval.locator('[data-answer="allow_once"]').click();
      await waitAssistantText(f, r.done, T);
      await until('the agent\'s text on disk', () => Promise.resolve(fs.readFileSync(onDisk, 'utf8').includes(r.after)), T);
      await until('the clean editor to show the agent\'s text', async () => (await visibleText(editor)).includes(r.after), T);
      await until(`${tid('busy')} to disappear`, async () => (await f.locator(tid('busy')).count()) === 0, T);

      const message = f.locator(`${tid('message')}[data-role="user"]`, { hasText: r.prompt }).last();
      await message.locator(tid('message-rewind')).press('Enter'); // a button: Enter presses it
      const choice = page.locator('.quick-input-list .monaco-list-row').filter({ hasText: 'Code and conversation' }).first();
      await choice.waitFor({ state: 'visible', timeout: T });
      await choice.click();
      const plan = await facts.waitFor(/^rewind-plan /, T, mark);
      s.note(plan);
      if (!plan.includes(`restore:${r.file}`)) throw new Error(`the plan does not restore ${r.file}: ${plan}`);
      const dialog = page.locator('.monaco-dialog-box').first();
      await dialog.waitFor({ state: 'visible', timeout: T });
      const asked = norm(await dialog.innerText());
      s.note(`modal: ${JSON.stringify(asked.slice(0, 300))}`);
      if (!asked.includes(`${r.file}: put back as it was`)) throw new Error(`the modal does not list ${r.file}: ${asked.slice(0, 300)}`);
      if (fs.readFileSync(onDisk, 'utf8').includes(r.before)) throw new Error('the file changed before the user confirmed');
      await dialog.getByRole('button', { name: 'Rewind', exact: true }).click();
      await facts.waitFor(/^rewound /, T, mark);
      await until('the file back on disk', () => Promise.resolve(fs.readFileSync(onDisk, 'utf8') === `${r.before}\n`), T);
      await until('the editor to show the text before the turn', async () => {
        const now = await visibleText(editor);
        return now.includes(r.before) && !now.includes(r.after);
      }, T);
      const buffers = await facts.waitFor(/^rewind-buffers /, T, mark);
      s.note(buffers);
      if (!buffers.includes('reloaded=1')) throw new Error(`the open editor was not reported as updated: ${buffers}`);
      await until('the rewound prompt gone from the chat', async () =>
        (await f.locator(`${tid('message')}[data-role="user"]`, { hasText: r.prompt }).count()) === 0, T);
      const redo = page.locator('.notifications-toasts .notification-toast', { hasText: 'Rewound to before' }).first();
      await redo.waitFor({ state: 'visible', timeout: T });
      if ((await redo.getByRole('button', { name: 'Redo' }).count()) === 0) throw new Error('the notification offers no Redo');
      s.note(`notification: ${JSON.stringify(norm(await redo.innerText()).slice(0, 200))}`);

      // Redo: its plan in a modal first (the file, the conversation), then the agent's text is back
      const redoMark = facts.mark();
      await redo.getByRole('button', { name: 'Redo' }).click();
      const redoPlan = await facts.waitFor(/^redo-plan /, T, redoMark);
      s.note(redoPlan);
      if (!redoPlan.includes(`restore:${r.file}`) || !redoPlan.includes('conversation=true')) throw new Error(`the redo's plan does not put back ${r.file} and the conversation: ${redoPlan}`);
      const redoDialog = page.locator('.monaco-dialog-box').first();
      await redoDialog.waitFor({ state: 'visible', timeout: T });
      const redoAsked = norm(await redoDialog.innerText());
      s.note(`redo modal: ${JSON.stringify(redoAsked.slice(0, 300))}`);
      if (!redoAsked.includes(`${r.file}: back to what the rewind replaced`)) throw new Error(`the redo modal does not list ${r.file}: ${redoAsked.slice(0, 300)}`);
      if (fs.readFileSync(onDisk, 'utf8').includes(r.after)) throw new Error('the file changed before the user confirmed the redo');
      await redoDialog.getByRole('button', { name: 'Redo', exact: true }).click();
      await facts.waitFor(/^redone /, T, redoMark);
      await until('the agent\'s text on disk again', () => Promise.resolve(fs.readFileSync(onDisk, 'utf8').includes(r.after)), T);
      await until('the prompt back in the chat', async () =>
        (await f.locator(`${tid('message')}[data-role="user"]`, { hasText: r.prompt }).count()) === 1, T);
    },
  );
}
