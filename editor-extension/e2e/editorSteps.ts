// The agent from the editor: the contract's commands in the palette, code actions from the
// lightbulb menu (their answers in the chat, a code block inserted at the cursor, "Ask agent"
// with its question, Stop of a code action's turn) and the selection attached to a prompt.

import { type Run, escape, escapeRe, norm, sleep, until } from './harness.ts';
import { chatSummary, sendPrompt, tid, waitAssistantText } from './chat.ts';
import { openFile, pickCodeAction, quickInput } from './workbench.ts';

/** commands, code-action, code-insert, ask-agent, stop-code-action, attach-selection, tool-action-number. */
export async function editorSteps(run: Run): Promise<void> {
  const { page, steps, facts, sc, T, chatFrame } = run;

  await steps.run('commands', 'the contract\'s commands are in the command palette', ['workbench'], async () => {
    const missing: string[] = [];
    for (const title of [
      'Agent: Open Chat',
      'Agent: Open Chat in Editor',
      'Agent: Ask About Selection',
      'Agent: Restart MCP Servers',
      'Agent: Show MCP Status',
      'Agent: Open User Settings File',
      'Agent: Open Workspace Settings File',
    ]) {
      await quickInput(page, 'F1', `>${title}`, T);
      const row = page
        .locator('.quick-input-list .monaco-list-row')
        .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRe(title)}\\s*$`) }) });
      const found = await until(`"${title}" in the palette`, async () => (await row.count()) > 0, 5_000).catch(() => false);
      if (!found) missing.push(title);
    }
    await escape(page);
    if (missing.length) throw new Error(`missing from the command palette: ${JSON.stringify(missing)}`);
  });

  await steps.run(
    'code-action',
    `select code, pick "${sc.codeActionTitle}" from the lightbulb menu, see the outcome in the chat`,
    ['activation', 'open-chat'],
    async (s) => {
      const mark = facts.mark();
      const shown = await pickCodeAction(run, sc.codeActionTitle, s);
      await facts.waitFor(new RegExp(`^code-action ${escapeRe(sc.codeActionTitle)}`), T, mark);
      const f = await chatFrame();
      await until(
        `the code action's answer "${sc.codeActionAnswer}" in the chat`,
        async () => {
          const texts = await f.locator(`${tid('message')}[data-role="assistant"]`).allTextContents();
          return texts.some((t) => norm(t).includes(norm(sc.codeActionAnswer)));
        },
        T,
      ).catch(async (e: unknown) => {
        throw new Error(`${(e as Error).message}; ${await chatSummary(f)}; facts since the action: ${facts.since(mark)}`);
      });
      await until(`${tid('busy')} to disappear after the code action's turn`, async () => (await f.locator(tid('busy')).count()) === 0, T);
      if (shown) s.note('ran from the lightbulb menu');
      else throw new Error('the lightbulb never appeared for the selection (the action ran from Ctrl+. instead)');
    },
  );
  await steps.run('code-insert', "insert the answer's code block at the editor's cursor", ['code-action'], async () => {
    const editor = page.locator(`.editor-group-container.active .monaco-editor[data-uri$="${sc.codeActionFile}"]`).first();
    await editor.locator('.view-lines').first().click();
    await page.keyboard.press('Control+End');
    const f = await chatFrame();
    const answer = f.locator(`${tid('message')}[data-role="assistant"]`, { hasText: sc.codeActionAnswer }).last();
    const insert = answer.locator(tid('code-insert')).first();
    await insert.waitFor({ state: 'visible', timeout: T }).catch(async () => {
      throw new Error(`the answer's code block has no ${tid('code-insert')} button; ${await chatSummary(f)}`);
    });
    if ((await answer.locator(tid('code-copy')).count()) === 0) throw new Error(`the code block has no ${tid('code-copy')} button`);
    await insert.click();
    await until(
      `"${sc.insertCode}" in the editor`,
      async () => norm((await editor.locator('.view-lines').innerText()).replace(/\u00a0/g, ' ')).includes(sc.insertCode),
      T,
    ).catch(async (e: unknown) => {
      throw new Error(`${(e as Error).message}; the editor shows ${JSON.stringify(norm(await editor.locator('.view-lines').innerText()).slice(-200))}`);
    });
  });

  await steps.run(
    'ask-agent',
    '"Ask agent" from the lightbulb menu asks for the question (input box); the answer and the question with its selection chip show in the chat',
    ['code-action'],
    async (s) => {
      const mark = facts.mark();
      await pickCodeAction(run, 'Ask agent', s);
      await facts.waitFor(/^code-action Ask agent/, T, mark);
      const box = page.locator('.quick-input-widget').first();
      const input = box.locator('input').first();
      await input.waitFor({ state: 'visible', timeout: T }).catch(() => {
        throw new Error(`no input box asked for the question; facts: ${facts.since(mark)}`);
      });
      s.note(`input box: ${JSON.stringify(norm((await box.innerText()).slice(0, 160)))}`);
      await input.fill(sc.askQuestion);
      await input.press('Enter');
      await facts.waitFor(new RegExp(`^code-action-question ${escapeRe(sc.askQuestion)}`), T, mark);
      const f = await chatFrame();
      await waitAssistantText(f, sc.askAnswer, T);
      const user = f.locator(`${tid('message')}[data-role="user"]`, { hasText: sc.askQuestion }).last();
      await user.waitFor({ state: 'visible', timeout: T }).catch(async () => {
        throw new Error(`the question is not shown as a user message; ${await chatSummary(f)}`);
      });
      const chips = (await user.locator('.chip').allTextContents()).map(norm);
      s.note(`user message chips: ${JSON.stringify(chips)}`);
      if (!chips.some((c) => c.startsWith(sc.askChipPrefix))) {
        throw new Error(`the question's message has no "${sc.askChipPrefix}…" chip (it has ${JSON.stringify(chips)})`);
      }
      if (norm((await user.textContent()) ?? '').includes('Selection from')) throw new Error('the user message shows the rendered attachment text');
      await until(`${tid('busy')} to disappear after the answer`, async () => (await f.locator(tid('busy')).count()) === 0, T);
    },
  );

  await steps.run('stop-code-action', "Stop cancels a turn a code action started (agent/cancel)", ['ask-agent'], async (s) => {
    const mark = facts.mark();
    await pickCodeAction(run, 'Ask agent', s);
    const input = page.locator('.quick-input-widget input').first();
    await input.waitFor({ state: 'visible', timeout: T });
    await input.fill(sc.stopPrompt);
    await input.press('Enter');
    const f = await chatFrame();
    const assistant = f.locator(`${tid('message')}[data-role="assistant"]`).last();
    await until('the slow answer of the code action to stream ("w0 w1 w2")', async () => norm((await assistant.textContent()) ?? '').includes('w0 w1 w2'), T)
      .catch(async (e: unknown) => {
        throw new Error(`${(e as Error).message}; ${await chatSummary(f)}; facts: ${facts.since(mark)}`);
      });
    const stop = f.locator(tid('stop'));
    if (!(await stop.isEnabled())) throw new Error(`${tid('stop')} is disabled while the code action's answer streams`);
    await stop.click();
    await facts.waitFor(/^stop \S+/, 10_000, mark);
    await until(`${tid('busy')} to disappear after Stop`, async () => (await f.locator(tid('busy')).count()) === 0, 10_000);
    await until('the "Stopped." notice', async () => (await f.locator(tid('notice'), { hasText: 'Stopped.' }).count()) > 0, 10_000);
    const words = async (): Promise<number> => (norm((await assistant.textContent()) ?? '').match(/\bw\d+\b/g) ?? []).length;
    const before = await words();
    await sleep(1200); // the stream sends a word every 0.15 s: a live stream would grow meanwhile
    const after = await words();
    s.note(`words before the stop took effect: ${before}; 1.2 s later: ${after}; facts: ${facts.since(mark)}`);
    if (after > before) throw new Error(`the code action's answer kept growing after Stop (${before} -> ${after} words)`);
    if (!facts.lines().slice(mark).some((l) => l === 'event turn_finished')) throw new Error('no turn_finished event after Stop');
  });

  await steps.run('attach-selection', 'attach the selection to a prompt; the model receives it', ['final-answer'], async (s) => {
    const editor = await openFile(page, sc.codeActionFile, T);
    await editor.locator('.view-lines').first().click();
    await page.keyboard.press('Control+A');
    const f = await chatFrame();
    await f.locator(tid('attach-selection')).click();
    const chip = f.locator(tid('attachment')).first();
    await chip.waitFor({ state: 'visible', timeout: T }).catch(async () => {
      throw new Error(`no ${tid('attachment')} chip after ${tid('attach-selection')}; ${await chatSummary(f)}`);
    });
    s.note(`chip: ${JSON.stringify(norm((await chip.textContent()) ?? ''))}`);
    await sendPrompt(f, sc.attachPrompt, T);
    await waitAssistantText(f, sc.attachSeen, T);
    await until(`the ${tid('attachment')} chip to be cleared after sending`, async () => (await f.locator(tid('attachment')).count()) === 0, T)
      .catch(() => s.note('the attachment chip stayed after sending'));
    await until(`${tid('busy')} to disappear`, async () => (await f.locator(tid('busy')).count()) === 0, T);
  });

  // Issue 30 item 6: `"a": "${selection}"` on a selected number reaches the tool as a number
  // (its schema says number) and the result replaces the selection.
  await steps.run('tool-action-number', `select the number in ${sc.numberFile}, pick "${sc.numberAction}": the file reads ${sc.numberAfter}`, ['activation'], async (s) => {
    // the lightbulb is not what this step checks (code-action does): Ctrl+. after 5 s, not after
    // the run's whole timeout (it rarely shows for a one-number selection: ~40 s of every run)
    await pickCodeAction(run, sc.numberAction, s, sc.numberFile, 5_000);
    const editor = page.locator(`.editor-group-container.active .monaco-editor[data-uri$="${sc.numberFile}"]`).first();
    const f = await chatFrame();
    await until(`"${sc.numberAfter}" in ${sc.numberFile}`, async () => {
      // (read-only tools run without asking; should the policy ask, allow it)
      const ask = f.locator(`${tid('pending')} ${tid('approval')}:not([data-answered]) [data-answer="allow_once"]`).first();
      if (await ask.isVisible().catch(() => false)) await ask.click().catch(() => undefined);
      return norm((await editor.locator('.view-lines').innerText()).replace(/\u00a0/g, ' ')) === sc.numberAfter;
    }, T).catch(async (e: unknown) => {
      throw new Error(`${(e as Error).message}; the editor shows ${JSON.stringify(norm(await editor.locator('.view-lines').innerText()))}; facts: ${facts.since(0).slice(-600)}`);
    });
    s.note(`${sc.numberBefore} -> ${sc.numberAfter}`);
  });
}
