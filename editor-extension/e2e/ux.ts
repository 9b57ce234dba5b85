// The chat as a daily user lives with it (issue 17), in the real editor:
//
// - ux-keyboard-approval: keyboard only (after one click into the input): type the prompt, Enter
//   sends it; the approval is pinned above the input, in view at 1400x900 and at 900x700
//   (screenshots of both), and takes the focus (this chat has it: the editor panel's chat, open
//   too, must not take it); Tab reaches "Allow once", Enter approves; the focus goes back to the input.
// - ux-keyboard-stop: Enter sends a prompt with an endless answer; Tab reaches Stop, Enter stops it.
// - ux-focus-editor: the user types in an editor while an approval arrives (a code action's turn;
//   the side bar chat and the editor panel's chat both show it): the keys keep landing in the
//   editor, no chat takes the focus.
// - ux-trust-long-command: the workspace's settings gain a server with a long command line; the
//   trust prompt shows the whole command (its text in full, nothing scrolled out of sight:
//   scrollWidth <= clientWidth); "Don't start" answers it.
// - ux-server-failed: the user settings gain a server that fails to start; the MCP Servers view
//   opens its row on the reason (one sentence) and the fixes (screenshot at 1400x900, dark theme).
// - ux-a11y-dark / ux-a11y-light / ux-a11y-high-contrast: axe-core (a11y.ts) finds no WCAG 2.1
//   A/AA violation (colour contrast, ARIA, names, keyboard) in the chat, with a pending question
//   and tool cards on screen, nor in the MCP Servers view (scoped to that view: a workbench tree
//   our extension fills; the failed server's rows included), in the dark, light and
//   high-contrast themes (the `workbench.colorTheme` user setting).
//
// Screenshots for the README (scripts/screenshots.sh copies them to docs/images/): ux-*.png in
// the artifacts folder. Called from driver.ts; waits on facts and data-testid hooks (CONTRACT.md).

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame, Page } from 'playwright-core';
import { type Run, norm, until } from './harness.ts';
import { axeChat, axeElement, describeViolations, withoutJoinedDescriptions } from './a11y.ts';
import { chatFocus, chatFrames, focused, focusTrace, inViewport, promptTimes, tabTo, tid, timePrompt, traceFocus } from './chat.ts';
import { collapseServersView, paneRow, pickCodeAction, rowDescription, rowLabels, runCommand, serversPane, setTheme, sideBarWidth } from './workbench.ts';

const LONG_SERVER = 'wslong';
const LONG_ARGS = [
  '-m',
  'an_mcp_server_package.with_a_long_module_path.and_more_parts',
  '--config=/srv/projects/a-rather-long-folder-name/with/more/levels/config.toml',
  '--data-dir',
  '/var/lib/an-unbroken-path-segment-much-wider-than-the-side-bar-of-the-editor-aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa',
  '--verbose',
];
const LONG_COMMAND = '/opt/tools/does-not-exist/bin/python3';

/** A server whose process exits during the MCP handshake (a missing key, say). */
const BROKEN_SERVER = 'broken';
const BROKEN_EXIT = 3;
/** The reason row: the exit code is in it when agent-ls got the process's status in time. */
const BROKEN_REASONS = [`The server process exited with code ${BROKEN_EXIT} during the MCP handshake.`, 'The MCP handshake with the server failed.'];
const BROKEN_FIXES = ['Run the doctor on this server', 'Edit its configuration', 'Show the server log', 'Restart the server'];

/** `p`, or an error (its text from `why`) when it takes longer than `ms`. */
async function within<T>(p: Promise<T>, ms: number, why: () => Promise<string>): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => void why().then((w) => reject(new Error(w)), reject), ms);
  });
  try {
    return await Promise.race([p, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** Whether `where` draws frames (requestAnimationFrame fires within a second): "yes" or "no". */
async function drawing(where: Page | Frame): Promise<string> {
  return within(where.evaluate(() => new Promise<string>((resolve) => requestAnimationFrame(() => resolve('yes')))), 1_000, () => Promise.resolve('no')).catch((e: unknown) => (e as Error).message);
}

export async function uxSteps(run: Run, needs: string[]): Promise<void> {
  const { page, steps, facts, sc, T } = run;
  const shot = (name: string) => path.join(run.cfg.artifacts, name);
  const sidebar = page.locator('.part.sidebar').first();

  await steps.run('ux-keyboard-approval', 'keyboard only: Enter sends; the approval is pinned in view at 1400x900 and 900x700 and takes the focus; Tab to "Allow once", Enter approves', needs, async (s) => {
    await page.setViewportSize({ width: 1400, height: 900 });
    let f = await run.chatFrame();
    await f.locator(tid('new-session')).click();
    await until('an empty transcript after "New session"', async () => (await f.locator(tid('message')).count()) === 0, T);
    await until(`${tid('send')} to be enabled`, async () => f.locator(tid('send')).isEnabled(), T);
    const input = f.locator(tid('prompt-input'));
    await input.click(); // the one pointer action: put the focus into the chat
    await page.keyboard.type(sc.prompt);
    const mark = facts.mark();
    await traceFocus(f);
    await timePrompt(f, 'after-restart', sc.introText.slice(0, 20));
    await page.keyboard.press('Enter');
    await f.locator(`${tid('message')}[data-role="user"]`, { hasText: sc.prompt }).first().waitFor({ state: 'visible', timeout: T });
    // issue 30 item 2: the first prompt of a new session on the server settings-restart started (a figure)
    const later = (run.promptLatency.afterRestart = await promptTimes(f, 'after-restart', T));
    s.note(`prompt after the restart: Send -> first words ${(later.shownAt ?? NaN) - (later.sentAt ?? NaN)} ms`);
    const approval = f.locator(`${tid('pending')} ${tid('approval')}:not([data-answered])`).first();
    await approval.waitFor({ state: 'visible', timeout: T }).catch(() => {
      throw new Error(`no ${tid('approval')} pinned in ${tid('pending')}`);
    });
    // the approval took the focus (the input was empty, this chat had the focus), and kept it
    const arrival = await until('the pinned approval to have the focus', async () => ((await focused(f)) === 'approval' ? 'approval' : undefined), 2_000).catch(
      async () => `${await focused(f)} (chats with the focus: ${await chatFocus(page)}; focus changes: ${await focusTrace(f)})`,
    );
    s.note(`focus on arrival: ${arrival}`);
    if (arrival !== 'approval') throw new Error(`the pinned approval did not keep the focus: it is on ${arrival}`);
    try {
      for (const [w, h] of [[1400, 900], [900, 700]] as const) {
        await page.setViewportSize({ width: w, height: h });
        f = await run.chatFrame();
        const problem = await until(`the approval to be in view at ${w}x${h}`, async () => ((await inViewport(page, approval)) === null ? true : undefined), 5_000)
          .then(() => null)
          .catch(async () => inViewport(page, approval));
        await page.screenshot({ path: shot(`ux-approval-${w}x${h}.png`) });
        if (problem) throw new Error(`at ${w}x${h} the pinned approval is not in view: ${problem}`);
        // ... and whole inside the pending region (not scrolled out of it), its buttons in view too
        const [a, p] = [await approval.boundingBox(), await f.locator(tid('pending')).boundingBox()];
        if (!a || !p || a.y < p.y - 0.5 || a.y + a.height > p.y + p.height + 0.5) throw new Error(`at ${w}x${h} the approval ${JSON.stringify(a)} is not whole inside ${tid('pending')} ${JSON.stringify(p)}`);
        const deny = await inViewport(page, approval.locator('[data-answer="deny"]'));
        if (deny) throw new Error(`at ${w}x${h} the approval's Deny button is not in view: ${deny}`);
        const t = await f.locator('.transcript').boundingBox();
        s.note(`${w}x${h}: transcript ${t ? Math.round(t.height) : '?'} px tall, pending ${Math.round(p.height)} px`);
      }
    } finally {
      await page.setViewportSize({ width: 1400, height: 900 });
    }
    await sidebar.screenshot({ path: shot('ux-chat-sidebar.png') }).catch(() => undefined);
    f = await run.chatFrame();
    const after = await focused(f);
    s.note(`focus after the window was resized: ${after}`);
    // resizing the browser window (not a user's key) can take the focus out of the webview: put it back where it was
    if (after !== 'approval') await approval.focus();
    const presses = await tabTo(page, f, 'answer:allow_once', 3);
    await page.keyboard.press('Enter');
    await facts.waitFor(/^approval allow_once\b/, T, mark);
    s.note(`Tab pressed ${presses}x to reach "Allow once"`);
    const final = f.locator(`${tid('message')}[data-role="assistant"]`, { hasText: sc.finalAnswer.slice(0, 20) });
    await final.first().waitFor({ state: 'visible', timeout: T });
    await until(`${tid('busy')} to disappear`, async () => (await f.locator(tid('busy')).count()) === 0, T);
    // answered: the focus is back in the input (not dropped to the page with the disabled button)
    const back = await focused(f);
    s.note(`focus after approving: ${back}`);
    if (back !== 'prompt-input') throw new Error(`after approving, the focus is on ${back}, not back in the input (focus changes: ${await focusTrace(f)})`);
  });

  await steps.run('ux-keyboard-stop', 'keyboard only: Enter sends a prompt with an endless answer; Tab to Stop, Enter stops it', needs, async (s) => {
    const f = await run.chatFrame();
    // a question left from a failed step would keep the turn busy: answer it first
    for (const b of await f.locator(`${tid('pending')} [data-answer="deny"]`).all()) await b.click().catch(() => undefined);
    await until(`${tid('busy')} to be gone before sending`, async () => (await f.locator(tid('busy')).count()) === 0, T);
    await f.locator(tid('prompt-input')).click();
    await page.keyboard.type(sc.stopPrompt);
    await page.keyboard.press('Enter');
    const assistant = f.locator(`${tid('message')}[data-role="assistant"]`).last();
    await until('the endless answer to stream', async () => norm((await assistant.textContent()) ?? '').includes('w0 w1'), T);
    const presses = await tabTo(page, f, 'stop', 8);
    await page.keyboard.press('Enter');
    await until(`${tid('busy')} to disappear after Stop`, async () => (await f.locator(tid('busy')).count()) === 0, 10_000);
    s.note(`Tab pressed ${presses}x from the input to reach Stop`);
  });

  await steps.run('ux-focus-editor', 'typing in an editor while an approval arrives: the keys keep landing in the editor, no chat takes the focus', [...needs, 'ask-agent'], async (s) => {
    await page.setViewportSize({ width: 1400, height: 900 });
    const f = await run.chatFrame();
    await until(`${tid('busy')} to be gone before the code action`, async () => (await f.locator(tid('busy')).count()) === 0, T);
    const mark = facts.mark();
    // the file in the first editor group: the chat panel (chat-panel) stays in view in the second.
    // (With the panel hidden behind calc.py in its group, headless Chromium stopped presenting
    // frames once the approval arrived: screenshots and key presses waited until the window was
    // resized. Not isolated further; see the report of the change that added this step.)
    await runCommand(page, 'View: Focus First Editor Group');
    // "Ask agent" on the selection, with a question whose answer calls a tool that needs approval
    await pickCodeAction(run, 'Ask agent', s);
    s.note(`chats: ${(await chatFrames(page)).length}; tabs: ${JSON.stringify(await page.locator('.tabs-container .tab.active').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label'))))}`);
    const question = page.locator('.quick-input-widget input').first();
    await question.waitFor({ state: 'visible', timeout: T });
    await question.fill(sc.prompt);
    await question.press('Enter');
    // back in the editor, the user goes on typing (at the end of the file) while the agent works:
    // the approval arrives meanwhile (two model requests after the question)
    await page.keyboard.press('Control+End');
    await traceFocus(f);
    const where = async (): Promise<string> =>
      page.evaluate(() => {
        const a = document.activeElement;
        const editor = a?.closest('.monaco-editor');
        return editor ? `editor ${editor.getAttribute('data-uri') ?? ''}` : `${a?.tagName.toLowerCase() ?? 'nothing'}.${a?.className ?? ''}`;
      });
    const type = async (text: string, delay: number): Promise<void> => {
      await within(page.keyboard.type(text, { delay }), 15_000, async () => `typing ${JSON.stringify(text)} stalled (focus: ${await where()})`);
    };
    const before = '# typed while the agent works';
    await type(`\n${before}`, 40);
    const approval = f.locator(`${tid('pending')} ${tid('approval')}:not([data-answered])`).first();
    await approval.waitFor({ state: 'visible', timeout: T }).catch(() => {
      throw new Error(`no approval arrived in the chat; facts: ${facts.since(mark)}`);
    });
    const after = ' and after the question came';
    await type(after, 20);
    const focusNow = await where();
    s.note(`focus: ${focusNow}; the chat's focused element: ${await focused(f)}`);
    s.note(`frames drawn: page ${await drawing(page)}, chat ${await drawing(f)}`);
    if (!focusNow.startsWith('editor ') || !focusNow.endsWith(sc.codeActionFile)) throw new Error(`the focus left the editor of ${sc.codeActionFile} when the approval arrived: it is on ${focusNow} (chat focus changes: ${await focusTrace(f)})`);
    // what the user typed is in the editor (its lines as drawn), not in the chat's input
    await page.screenshot({ path: shot('ux-focus-editor.png') });
    const shown = await page.evaluate(() => {
      const editor = document.activeElement?.closest('.monaco-editor');
      return (editor?.querySelector('.view-lines') as HTMLElement | null)?.innerText.replace(/\u00a0/g, ' ') ?? '';
    });
    if (!norm(shown).includes(`${before}${after}`)) throw new Error(`the typing did not all land in the editor: it shows ${JSON.stringify(norm(shown).slice(-100))}`);
    const chatInput = await within(f.locator(tid('prompt-input')).inputValue(), 5_000, () => Promise.resolve('reading the chat input stalled'));
    if (chatInput.includes('after the question')) throw new Error(`the typing went into the chat's input: ${JSON.stringify(chatInput)}`);
    s.note(`chat focus changes: ${await focusTrace(f)}`);
    // the user answers it when they choose to (a click); the file goes back to how it was on disk
    await approval.locator('[data-answer="deny"]').click({ timeout: 10_000 });
    await facts.waitFor(/^approval deny\b/, T, mark);
    await until(`${tid('busy')} to disappear`, async () => (await f.locator(tid('busy')).count()) === 0, T);
    await within(runCommand(page, 'File: Revert File'), 20_000, async () => `"File: Revert File" stalled (focus: ${await where()})`);
  });

  await steps.run('ux-trust-long-command', 'a new workspace server with a long command: the pinned trust prompt shows it completely (not clipped)', needs, async (s) => {
    await page.setViewportSize({ width: 1400, height: 900 });
    const file = path.join(run.cfg.workspace, '.agent-ls', 'settings.json');
    const original = fs.readFileSync(file, 'utf8');
    const settings = JSON.parse(original) as { mcpServers: Record<string, unknown> };
    settings.mcpServers[LONG_SERVER] = { command: LONG_COMMAND, args: LONG_ARGS, env: { WSLONG_TOKEN: 'x', WSLONG_MODE: 'fast' } };
    const mark = facts.mark();
    fs.writeFileSync(file, JSON.stringify(settings, null, 2));
    try {
      const f = await run.chatFrame();
      const prompt = f.locator(`${tid('pending')} ${tid('trust-prompt')}`, { hasText: LONG_SERVER }).first();
      await prompt.waitFor({ state: 'visible', timeout: T }).catch(() => {
        throw new Error(`no pinned ${tid('trust-prompt')} for "${LONG_SERVER}" after the workspace settings changed`);
      });
      const cmd = prompt.locator(tid('trust-command'));
      const expected = [LONG_COMMAND, ...LONG_ARGS].join(' ');
      const shown = (await cmd.textContent()) ?? '';
      if (shown !== expected) throw new Error(`the trust prompt shows the command ${JSON.stringify(shown)}, not ${JSON.stringify(expected)}`);
      const fit = await cmd.evaluate((el) => {
        const box = el.closest('[data-testid="trust-prompt"]');
        return { scroll: el.scrollWidth, client: el.clientWidth, boxScroll: box?.scrollWidth ?? -1, boxClient: box?.clientWidth ?? -1 };
      });
      if (fit.boxClient < 0) throw new Error('the trust command is not inside its trust prompt card');
      s.note(`command ${shown.length} chars; scrollWidth ${fit.scroll} / clientWidth ${fit.client}; card ${fit.boxScroll} / ${fit.boxClient}`);
      if (fit.scroll > fit.client || fit.boxScroll > fit.boxClient) throw new Error(`the command is clipped: ${JSON.stringify(fit)}`);
      const env = norm((await prompt.locator(tid('trust-env')).textContent()) ?? '');
      if (!env.includes('WSLONG_TOKEN') || !env.includes('WSLONG_MODE')) throw new Error(`the env names are missing: ${JSON.stringify(env)}`);
      const trustButton = prompt.locator('[data-answer="trust"]');
      const problem = await inViewport(page, trustButton);
      if (problem) throw new Error(`the trust prompt's "Trust and start" is not in view: ${problem}`);
      await sidebar.screenshot({ path: shot('ux-trust-prompt.png') }).catch(() => undefined);
      const violations = await axeChat(run.cfg.nodeModules, f);
      s.note(`axe (trust prompt pinned): ${violations.length} violations`);
      if (violations.length) throw new Error(`axe-core found violations with the trust prompt pinned: ${describeViolations(violations)}`);
      await prompt.locator('[data-answer="deny"]').click();
      await facts.waitFor(/^trust deny\b/, T, mark);
    } finally {
      fs.writeFileSync(file, original);
    }
  });

  // The user settings as they were before ux-server-failed added a server (put back at the end).
  let userSettings: string | undefined;
  try {
    await steps.run('ux-server-failed', 'a server that fails to start: the MCP Servers view opens its row on the reason and the fixes', needs, async (s) => {
      await page.setViewportSize({ width: 1400, height: 900 });
      await setTheme(run, 'Dark 2026', 'vscode-dark');
      await runCommand(page, 'Agent: Focus on MCP Servers View');
      const pane = serversPane(page);
      await pane.waitFor({ state: 'visible', timeout: T });
      await paneRow(page, pane, sc.server).waitFor({ state: 'visible', timeout: T });
      await pane.screenshot({ path: shot('ux-servers.png') }).catch(() => undefined); // the healthy view, for the README
      // the user adds a server whose process exits during the handshake
      const file = run.cfg.userSettings;
      userSettings = fs.readFileSync(file, 'utf8');
      const settings = JSON.parse(userSettings) as { mcpServers: Record<string, { command?: string; args?: string[] } | undefined> };
      const python = settings.mcpServers[sc.server]?.command ?? 'python3';
      const crash = `import sys; sys.stderr.write('BROKEN_API_KEY is not set\\n'); sys.exit(${BROKEN_EXIT})`;
      settings.mcpServers[BROKEN_SERVER] = { command: python, args: ['-c', crash] };
      const mark = facts.mark();
      fs.writeFileSync(file, JSON.stringify(settings, null, 2));
      const row = paneRow(page, pane, BROKEN_SERVER);
      await row.waitFor({ state: 'visible', timeout: T }).catch(async () => {
        throw new Error(`no row "${BROKEN_SERVER}" in the MCP Servers view after the user settings changed (rows: ${JSON.stringify((await pane.locator('.monaco-list-row').allInnerTexts()).map(norm))}; facts: ${facts.since(mark)})`);
      });
      const desc = await until(`"${BROKEN_SERVER}" to show as failed`, async () => {
        const d = await rowDescription(row);
        return /^failed\b/i.test(d) ? d : undefined;
      }, T).catch(async (e: unknown) => {
        throw new Error(`${(e as Error).message} (it shows ${JSON.stringify(await rowDescription(row))})`);
      });
      s.note(`row: ${BROKEN_SERVER} — ${desc}`);
      // it opens by itself on what is wrong, though the row was shown before (starting)
      const expanded = await until(`"${BROKEN_SERVER}" to open by itself`, async () => ((await row.getAttribute('aria-expanded')) === 'true' ? true : undefined), 10_000)
        .catch(() => false);
      if (!expanded) throw new Error(`the failed server "${BROKEN_SERVER}" stays collapsed: its reason is hidden (aria-expanded=${JSON.stringify(await row.getAttribute('aria-expanded'))})`);
      // (issue 44: the sentence is wrapped over rows, between words; its first row starts it)
      const reason = pane.locator('.monaco-list-row').filter({ has: page.locator('.label-name', { hasText: /^\s*The (server process|MCP handshake)\b/ }) }).first();
      const shown = async () => (await rowLabels(pane)).join(' ');
      await reason.waitFor({ state: 'visible', timeout: T }).catch(async () => {
        throw new Error(`no reason row under "${BROKEN_SERVER}" (rows: ${JSON.stringify((await pane.locator('.monaco-list-row').allInnerTexts()).map(norm).slice(0, 10))})`);
      });
      const all = await shown();
      if (!BROKEN_REASONS.some((r) => all.includes(r))) throw new Error(`the servers view does not read the reason (one of ${JSON.stringify(BROKEN_REASONS)}): ${JSON.stringify(all.slice(0, 400))}`);
      s.note(`rows: ${all.slice(0, 300)}`);
      const paneBox = await pane.boundingBox();
      for (const label of [null, ...BROKEN_FIXES]) {
        const r = label === null ? reason : paneRow(page, pane, label);
        await r.waitFor({ state: 'visible', timeout: 5_000 }).catch(() => {
          throw new Error(`the fix "${label}" is not listed under "${BROKEN_SERVER}"`);
        });
        const b = await r.boundingBox();
        if (!b || !paneBox || b.y < paneBox.y || b.y + b.height > paneBox.y + paneBox.height + 0.5) throw new Error(`the row "${label ?? 'reason'}" is not in view in the MCP Servers view (${JSON.stringify(b)} in ${JSON.stringify(paneBox)})`);
      }
      const names = await pane.locator('.monaco-list-row').evaluateAll((rows) => rows.slice(0, 8).map((r) => r.getAttribute('aria-label') ?? ''));
      s.note(`accessible names: ${JSON.stringify(names)}`);
      // widen the side bar the way a user does to read the reason whole, and take the picture
      const sideBefore = Math.round((await sidebar.boundingBox())?.width ?? 0);
      const wide = await sideBarWidth(page, 540).catch(() => sideBefore);
      // cut short (an ellipsis) when the label or a box around it inside the row is narrower than its text
      const clipped = await reason.evaluate((row) =>
        Array.from(row.querySelectorAll('.label-name, .monaco-icon-name-container, .monaco-icon-label-container, .monaco-icon-label')).some((el) => el.scrollWidth > el.clientWidth + 1),
      );
      s.note(`side bar ${sideBefore} -> ${wide} px; the reason ${clipped ? 'is cut short' : 'shows whole'}`);
      await pane.screenshot({ path: shot('ux-server-failed.png') });
      if (wide !== sideBefore) await sideBarWidth(page, sideBefore).catch(() => undefined);
      if (clipped) throw new Error(`with the side bar ${wide} px wide, the reason "${norm(await reason.innerText())}" is still cut short`);
    });

    // The chat with tool cards, an answer and a pinned approval, and the servers view, in each theme.
    // (VS Code 1.139's defaults: Dark 2026 and Light 2026; code-server starts in the light one)
    const themes: [string, string, string][] = [
      ['dark', 'Dark 2026', 'vscode-dark'],
      ['light', 'Light 2026', 'vscode-light'],
      ['high-contrast', 'Dark High Contrast', 'vscode-high-contrast'],
    ];
    for (const [name, theme, bodyClass] of themes) {
      await steps.run(`ux-a11y-${name}`, `axe-core finds no WCAG A/AA violation in the chat nor in the MCP Servers view (${theme} theme)`, needs, async (s) => {
        // the webview gets the theme's colours and its body class in one update
        const f = await setTheme(run, theme, bodyClass);
        const violations = await axeChat(run.cfg.nodeModules, f);
        await sidebar.screenshot({ path: shot(`ux-chat-${name}.png`) }).catch(() => undefined);
        s.note(`chat: ${violations.length} violations; items: ${await f.locator('[data-item-id]').count()}`);
        // the view's body, which our tree items fill (the pane's header, title and toolbar are VS Code's)
        const body = serversPane(page).locator('.pane-body').first();
        await body.waitFor({ state: 'visible', timeout: T });
        const { kept: inView, note } = await withoutJoinedDescriptions(page, await axeElement(run.cfg.nodeModules, page, body));
        s.note(`servers view: ${inView.length} violations; rows: ${await body.locator('.monaco-list-row').count()}${note ? `; not counted: ${note}` : ''}`);
        const problems = [
          ...(violations.length ? [`in the chat: ${describeViolations(violations)}`] : []),
          ...(inView.length ? [`in the MCP Servers view: ${describeViolations(inView)}`] : []),
        ];
        if (problems.length) throw new Error(`axe-core violations (${name}) ${problems.join(' || ')}`);
      });
    }
  } finally {
    if (userSettings !== undefined) fs.writeFileSync(run.cfg.userSettings, userSettings);
    await collapseServersView(page).catch(() => undefined); // read: folded again (issue 44)
  }
  await trustAndApprovalStep(run, needs);

  // back to the default theme for whatever runs next
  await setTheme(run, 'Light 2026', 'vscode-light').catch(() => undefined);
  await page.setViewportSize({ width: 1500, height: 950 });
}

/** Press Shift+Tab until the focus is on `want` (at most `max` times). */
async function shiftTabTo(page: Page, f: Frame, want: string, max: number): Promise<number> {
  const seen: string[] = [];
  for (let i = 1; i <= max; i++) {
    await page.keyboard.press('Shift+Tab');
    const now = await focused(f);
    seen.push(now);
    if (now === want) return i;
  }
  throw new Error(`Shift+Tab never reached ${want} (the focus went: ${seen.join(' -> ')})`);
}

/**
 * Issue 30: a workspace trust question and a tool approval pending at once. The trust question
 * waits in the banner (its card closed), the approval is pinned whole; the layout figures at
 * 1400x900 and 900x700 (the transcript keeps at least half of the chat at 1400x900, the pinned
 * questions about a third, the approval's Deny in view); then keyboard only: Tab to "Allow once",
 * Enter; Shift+Tab to "Review and trust", Enter opens the card (focus on it), Tab to "Trust
 * workspace", Enter. Runs last: it leaves the workspace's settings changed (trusted).
 */
async function trustAndApprovalStep(run: Run, needs: string[]): Promise<void> {
  const { page, steps, facts, sc, T } = run;
  const shot = (name: string) => path.join(run.cfg.artifacts, name);
  await steps.run('ux-trust-and-approval', 'a trust question and an approval pending: the transcript keeps half the chat at 1400x900, the pinned questions a third; keyboard only through both', needs, async (s) => {
    await page.setViewportSize({ width: 1400, height: 900 });
    // the workspace asks for something new that needs trust: asked again (agent/trustWorkspace)
    const file = path.join(run.cfg.workspace, '.agent-ls', 'settings.json');
    const settings = JSON.parse(fs.readFileSync(file, 'utf8')) as Record<string, unknown>;
    settings['agent'] = { bashTimeout: 31 };
    fs.writeFileSync(file, JSON.stringify(settings, null, 2));
    let f = await run.chatFrame();
    await f.locator(tid('new-session')).click();
    const card = f.locator(`${tid('trust-details')} ${tid('workspace-trust-prompt')}:not([data-answered])`).first();
    await card.waitFor({ state: 'attached', timeout: T }).catch(() => {
      throw new Error(`no workspace trust question after the workspace settings asked for a new setting (facts: ${facts.since(0).slice(-400)})`);
    });
    const banner = f.locator(tid('restricted-banner'));
    await banner.waitFor({ state: 'visible', timeout: T });
    if (await card.isVisible()) throw new Error('the workspace trust card is open before the user asked for it');
    if ((await f.locator(`${tid('pending')} ${tid('workspace-trust-prompt')}`).count()) > 0) throw new Error('the workspace trust question is pinned a second time');
    // an approval (keyboard: one click into the input, type, Enter)
    await until(`${tid('send')} to be enabled`, async () => f.locator(tid('send')).isEnabled(), T);
    await f.locator(tid('prompt-input')).click();
    await page.keyboard.type(sc.prompt);
    const mark = facts.mark();
    await page.keyboard.press('Enter');
    const approval = f.locator(`${tid('pending')} ${tid('approval')}:not([data-answered])`).first();
    await approval.waitFor({ state: 'visible', timeout: T });
    try {
      for (const [w, h] of [[1400, 900], [900, 700]] as const) {
        await page.setViewportSize({ width: w, height: h });
        f = await run.chatFrame();
        await until(`the approval in view at ${w}x${h}`, async () => ((await inViewport(page, approval)) === null ? true : undefined), 5_000).catch(() => undefined);
        const box = async (sel: string) => f.locator(sel).first().boundingBox();
        const [chat, transcript, pending, bannerBox] = [await box('.chat'), await box('.transcript'), await box(tid('pending')), await box(tid('restricted-banner'))];
        if (!chat || !transcript || !pending || !bannerBox) throw new Error(`at ${w}x${h} a part of the chat has no box: ${JSON.stringify({ chat, transcript, pending, bannerBox })}`);
        const pct = (x: number) => Math.round((100 * x) / chat.height);
        s.note(`${w}x${h}: chat ${Math.round(chat.height)} px; transcript ${Math.round(transcript.height)} px (${pct(transcript.height)}%), pinned ${Math.round(pending.height)} px (${pct(pending.height)}%), banner ${Math.round(bannerBox.height)} px (${pct(bannerBox.height)}%)`);
        await page.screenshot({ path: shot(`ux-trust-approval-${w}x${h}.png`) });
        const deny = await inViewport(page, approval.locator('[data-answer="deny"]'));
        if (deny) throw new Error(`at ${w}x${h} the approval's Deny button is not in view: ${deny}`);
        if (pending.height > chat.height * 0.36) throw new Error(`at ${w}x${h} the pinned questions take ${pct(pending.height)}% of the chat (more than about a third)`);
        if (w === 1400 && transcript.height < chat.height / 2) throw new Error(`at ${w}x${h} the transcript is ${pct(transcript.height)}% of the chat (less than half)`);
        if (await card.isVisible()) throw new Error(`at ${w}x${h} the workspace trust card is open (it waits in the banner)`);
      }
    } finally {
      await page.setViewportSize({ width: 1400, height: 900 });
    }
    f = await run.chatFrame();
    // keyboard only: the approval has the focus (this chat had it): Tab to "Allow once", Enter
    if ((await focused(f)) !== 'approval') await approval.focus(); // the resize can take the focus out of the webview
    const allow = await tabTo(page, f, 'answer:allow_once', 3);
    await page.keyboard.press('Enter');
    await facts.waitFor(/^approval allow_once\b/, T, mark);
    await until(`${tid('busy')} to disappear`, async () => (await f.locator(tid('busy')).count()) === 0, T);
    // Shift+Tab to the banner's "Review and trust", Enter: the card opens with the focus on it
    if ((await focused(f)) !== 'prompt-input') await f.locator(tid('prompt-input')).focus();
    // (on the way: the transcript's controls and a row per session of the run in the sessions list)
    const back = await shiftTabTo(page, f, 'banner-trust', 30);
    await page.keyboard.press('Enter');
    await card.waitFor({ state: 'visible', timeout: 10_000 });
    const onCard = await focused(f);
    const [chat, open] = [await f.locator('.chat').boundingBox(), await f.locator(tid('trust-details')).boundingBox()];
    s.note(`keys: Tab x${allow} to "Allow once"; Shift+Tab x${back} to "Review and trust"; the open card: ${open && chat ? Math.round((100 * open.height) / chat.height) : '?'}% of the chat, focus on ${onCard}`);
    await page.screenshot({ path: shot('ux-trust-card-open.png') });
    if (onCard !== 'workspace-trust-prompt') throw new Error(`"Review and trust" opened the card but the focus is on ${onCard}`);
    const trustMark = facts.mark();
    const toTrust = await tabTo(page, f, 'answer:trust', 40);
    const trustButton = await inViewport(page, card.locator('[data-answer="trust"]'));
    await page.keyboard.press('Enter');
    await facts.waitFor(/^workspace-trust trust\b/, T, trustMark);
    await until('the restricted banner to go away', async () => !(await banner.isVisible()), T);
    s.note(`Tab x${toTrust} to "Trust workspace"${trustButton ? ` (not in view: ${trustButton})` : ''}; focus after: ${await focused(f)}`);
  });
}
