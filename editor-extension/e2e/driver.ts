// End-to-end scenario of the agent-ls extension in a real VS Code (code-server), driven through
// headless Chromium the way a user would: open the chat, send a prompt, watch text stream and a
// tool call card appear, approve the call, read the answer, look at the MCP Servers view, run a
// code action from the lightbulb menu and see its outcome in the chat.
//
//   node editor-extension/e2e/driver.ts CONFIG.json
//
// Started by tests/extension/test_e2e.py, which owns the processes (code-server, the scripted
// LLM, the workspace) and passes their addresses in CONFIG.json (see Config in harness.ts).
// The driver waits on facts (the extension's fact log, data-testid hooks of the webview; see
// editor-extension/CONTRACT.md), never on fixed sleeps. Each step saves a screenshot into
// artifacts/e2e/, and artifacts/e2e/result.json records every step's status, time and error.
// Exit code: 0 when every step passed, 1 when one failed, 2 when the driver itself broke.

import * as fs from 'node:fs';
import type { BrowserContext, Frame, Page } from 'playwright-core';
import {
  type Config,
  FactLog,
  Steps,
  escape,
  escapeRe,
  findChatFrame,
  loadPlaywright,
  log,
  norm,
  openFile,
  quickInput,
  prefixShown,
  runCommand,
  sleep,
  tid,
  until,
} from './harness.ts';
import { fullOutputStep, resumedCardsStep, reviewSteps } from './review.ts';
import { uxSteps } from './ux.ts';

const configPath = process.argv[2];
if (!configPath) {
  process.stderr.write('usage: node driver.ts CONFIG.json\n');
  process.exit(2);
}
const cfg = JSON.parse(fs.readFileSync(configPath, 'utf8')) as Config;
const sc = cfg.scenario;
const facts = new FactLog(cfg.factLog);
const T = cfg.stepTimeoutMs;

async function main(): Promise<number> {
  const { chromium } = loadPlaywright(cfg.nodeModules);
  const context: BrowserContext = await chromium.launchPersistentContext(cfg.browserProfile, {
    headless: true,
    executablePath: cfg.chromium,
    viewport: { width: 1500, height: 950 },
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    const steps = new Steps(page, cfg.artifacts, T);
    await scenario(page, steps);
    steps.save({ factLogTail: facts.tail(40) });
    return steps.results.every((r) => r.status === 'passed') ? 0 : 1;
  } finally {
    await context.close().catch(() => undefined);
  }
}

async function scenario(page: Page, steps: Steps): Promise<void> {
  let chat: Frame | undefined;
  /** The chat frame, found again when VS Code re-created the webview. */
  const chatFrame = async (): Promise<Frame> => {
    if (chat === undefined || chat.isDetached()) chat = await findChatFrame(page, T);
    return chat;
  };
  let promptMark = 0;

  await steps.run('workbench', 'code-server serves the workbench', [], async () => {
    await page.goto(`${cfg.url}/?folder=${encodeURIComponent(cfg.workspace)}`, { timeout: T });
    await page.locator('.monaco-workbench').waitFor({ state: 'visible', timeout: T });
    // the status bar is drawn once the workbench has restored its parts
    await page.locator('.part.statusbar').waitFor({ state: 'visible', timeout: T });
  });

  await steps.run('activation', 'the extension activates and its language client runs', ['workbench'], async (s) => {
    await facts.waitFor(/^activated\b/, T);
    await facts.waitFor(/^client-running\b/, T);
    s.note(`facts: ${facts.lines().length} lines`);
  });

  await steps.run('mcp-status', 'the language server reports its MCP servers', ['activation'], async (s) => {
    const line = await facts.waitFor(/^status [1-9]\d* servers?\b/, T);
    s.note(line);
  });

  await steps.run('open-chat', 'command palette "Agent: Open Chat" shows the chat', ['workbench'], async () => {
    await runCommand(page, 'Agent: Open Chat');
    const f = await chatFrame();
    await f.locator(tid('prompt-input')).waitFor({ state: 'visible', timeout: T });
    await f.locator(tid('send')).waitFor({ state: 'visible', timeout: T });
  });

  await steps.run(
    'trust-workspace-server',
    'the workspace trust card lists the server the workspace defines, in full; "Trust workspace"',
    ['open-chat', 'activation'],
    async (s) => {
      const f = await chatFrame();
      const banner = f.locator(tid('restricted-banner'));
      const card = f.locator(tid('workspace-trust-prompt'), { hasText: sc.workspaceServer }).first();
      await card.waitFor({ state: 'visible', timeout: T }).catch(async () => {
        throw new Error(`no ${tid('workspace-trust-prompt')} listing "${sc.workspaceServer}" in the chat; ${await chatSummary(f)}; facts: ${factsSince(0)}`);
      });
      const bannerText = norm((await banner.innerText().catch(() => '')) ?? '');
      s.note(`banner: ${JSON.stringify(bannerText.slice(0, 120))}`);
      if (!/restricted/i.test(bannerText)) throw new Error(`the chat shows no "restricted" banner while the workspace waits for trust (it shows ${JSON.stringify(bannerText)})`);
      const command = norm((await card.locator(tid('trust-command')).first().textContent()) ?? '');
      s.note(`command shown: ${JSON.stringify(command.slice(0, 160))}`);
      if (!command.includes('knob_server') && !command.includes('python')) throw new Error(`the card does not show the server's command line (${JSON.stringify(command)})`);
      for (const answer of ['trust', 'restricted']) {
        if ((await card.locator(`[data-answer="${answer}"]`).count()) === 0) {
          throw new Error(`the workspace trust card has no button data-answer="${answer}"`);
        }
      }
      // the card in full as text (a sidebar shows only part of it), and as the user sees it
      fs.writeFileSync(`${cfg.artifacts}/workspace-trust-card.txt`, `${(await card.innerText()).trim()}\n`);
      await card.locator('[data-answer="trust"]').scrollIntoViewIfNeeded();
      await page.locator('.part.sidebar').first().screenshot({ path: `${cfg.artifacts}/workspace-trust-card.png` }).catch(() => undefined);
      const mark = facts.mark();
      await card.locator('[data-answer="trust"]').click();
      await facts.waitFor(/^workspace-trust trust\b/, T, mark);
      await until('the workspace trust card to show it was answered', async () => (await card.locator('[data-answer]').count()) === 0, T);
      await until('the restricted banner to go away', async () => !(await banner.isVisible()), T);
      // trusting the folder trusted the servers it listed: no second, per-server question
      if ((await f.locator(tid('trust-prompt'), { hasText: sc.workspaceServer }).count()) > 0) {
        throw new Error(`a per-server trust prompt for "${sc.workspaceServer}" appeared after the workspace was trusted`);
      }
    },
  );

  await steps.run('send-prompt', 'type a prompt and send it', ['open-chat', 'activation'], async (s) => {
    const f = await chatFrame();
    promptMark = facts.mark();
    const input = f.locator(tid('prompt-input'));
    await input.click();
    await input.fill(sc.prompt);
    await f.locator(tid('send')).click();
    const user = f.locator(`${tid('message')}[data-role="user"]`, { hasText: sc.prompt }).first();
    await user.waitFor({ state: 'visible', timeout: T });
    await until(`the prompt input to be cleared after sending`, async () => (await input.inputValue()) === '', 5_000);
    const busy = await f.locator(tid('busy')).count();
    s.note(busy > 0 ? 'busy indicator shown' : 'busy indicator not (or no longer) shown right after send');
  });

  await steps.run(
    'stream-and-tool-card',
    'streamed text and a tool call card for the tool that needs approval',
    ['send-prompt'],
    async (s) => {
      const f = await chatFrame();
      const assistant = f.locator(`${tid('message')}[data-role="assistant"]`);
      await until(
        `the model's streamed text "${sc.introText}" in an assistant message`,
        async () => prefixShown((await assistant.allTextContents()).join(' '), sc.introText) === norm(sc.introText).length,
        T,
      ).catch(async (e: unknown) => {
        throw new Error(`${(e as Error).message}; ${await chatSummary(f)}; facts since the prompt: ${factsSince(promptMark)}`);
      });
      const card = f.locator(`${tid('tool-card')}[data-tool="${sc.approvalTool}"]`).first();
      await card.waitFor({ state: 'visible', timeout: T }).catch(async () => {
        throw new Error(
          `no ${tid('tool-card')}[data-tool="${sc.approvalTool}"] appeared; ${await chatSummary(f)}; ` +
            `facts since the prompt: ${factsSince(promptMark)}`,
        );
      });
      const server = await card.getAttribute('data-server');
      if (server !== sc.server) throw new Error(`tool card data-server is ${JSON.stringify(server)}, expected "${sc.server}"`);
      s.note(`tool card: data-status=${await card.getAttribute('data-status')}`);
      const args = card.locator(tid('tool-args'));
      if ((await args.count()) === 0) throw new Error(`the tool card has no ${tid('tool-args')}`);
      const argsText = (await args.first().textContent()) ?? '';
      if (!argsText.includes('42')) throw new Error(`tool-args do not show the argument id "42": ${JSON.stringify(argsText.slice(0, 200))}`);
      const searchCards = await f.locator(`${tid('tool-card')}[data-tool="tool_search"]`).count();
      s.note(`tool_search cards: ${searchCards}`);
    },
  );

  // The final answer streams right after the approval; observe it from the click on.
  let streamObserver: Promise<{ partials: number[]; busyDuring: boolean }> | undefined;

  await steps.run('approve', 'approve the tool call with "Allow once"; the tool runs', ['stream-and-tool-card'], async (s) => {
    const f = await chatFrame();
    const approval = f.locator(tid('approval')).first();
    await approval.waitFor({ state: 'visible', timeout: T }).catch(async () => {
      const asked = facts.has(/^event approval_requested\b/, promptMark);
      throw new Error(
        `no ${tid('approval')} in the chat` +
          (asked ? ' although the server asked for approval (fact "event approval_requested")' : '') +
          `; ${await chatSummary(f)}`,
      );
    });
    for (const answer of ['allow_once', 'allow_session', 'deny']) {
      if ((await approval.locator(`[data-answer="${answer}"]`).count()) === 0) {
        throw new Error(`the approval has no button data-answer="${answer}"`);
      }
    }
    const busy = (await f.locator(tid('busy')).count()) > 0;
    s.note(busy ? 'busy while waiting for approval' : `no ${tid('busy')} while waiting for approval`);
    if (!busy) throw new Error(`no ${tid('busy')} element while the turn waits for the approval`);
    const stop = f.locator(tid('stop'));
    if ((await stop.count()) > 0 && !(await stop.first().isEnabled())) {
      throw new Error(`${tid('stop')} is disabled while the turn runs`);
    }
    const mark = facts.mark();
    streamObserver = observeStream(chatFrame);
    await approval.locator('[data-answer="allow_once"]').click();
    await facts.waitFor(/^approval allow_once\b/, T, mark);
    const card = f.locator(`${tid('tool-card')}[data-tool="${sc.approvalTool}"]`).first();
    await until(
      `the tool card's data-status to become "done"`,
      async () => (await card.getAttribute('data-status')) === 'done' || undefined,
      T,
    ).catch(async (e: unknown) => {
      throw new Error(`${(e as Error).message} (it is ${JSON.stringify(await card.getAttribute('data-status'))})`);
    });
    const result = card.locator(tid('tool-result'));
    await until(
      `the tool result "${sc.toolResult}" in the card's ${tid('tool-result')}`,
      async () => ((await result.allTextContents()).join(' ').includes(sc.toolResult) ? true : undefined),
      T,
    );
    if ((await f.locator(tid('approval')).count()) > 0 && (await f.locator(tid('approval')).first().isVisible())) {
      const buttons = await f.locator(`${tid('approval')} [data-answer]`).evaluateAll((els) =>
        els.filter((e) => !(e as HTMLButtonElement).disabled).length,
      );
      if (buttons > 0) throw new Error('the approval buttons are still active after answering');
    }
  });

  await steps.run('final-answer', 'the final answer streams in and the turn ends', ['approve'], async (s) => {
    if (streamObserver === undefined) throw new Error('internal: no stream observer');
    const { partials, busyDuring } = await streamObserver;
    s.note(`partial renders of the answer seen: ${partials.length} (lengths ${partials.slice(0, 12).join(', ')})`);
    if (partials.length < 2) {
      throw new Error(
        `the answer was not seen streaming: ${partials.length} partial render(s) before the full text ` +
          '(expected it to grow in several steps)',
      );
    }
    if (!busyDuring) throw new Error(`no ${tid('busy')} element while the answer streamed`);
    const f = await chatFrame();
    await until(`${tid('busy')} to disappear once the turn ended`, async () => (await f.locator(tid('busy')).count()) === 0, T);
    await facts.waitFor(/^event turn_finished\b/, T, promptMark);
    const stop = f.locator(tid('stop'));
    if ((await stop.count()) > 0 && (await stop.first().isEnabled())) {
      throw new Error(`${tid('stop')} is still enabled after the turn ended`);
    }
    const errors = await f.locator(`${tid('message')}[data-role="error"]`).allTextContents();
    if (errors.length > 0) throw new Error(`error messages in the chat: ${errors.map((e) => JSON.stringify(norm(e).slice(0, 200))).join('; ')}`);
  });

  await steps.run('view-state', 'the chat keeps its transcript when its view is hidden and shown again', ['final-answer'], async () => {
    await runCommand(page, 'View: Show Explorer');
    await page.locator('.explorer-folders-view, .explorer-viewlet').first().waitFor({ state: 'visible', timeout: T });
    await runCommand(page, 'Agent: Open Chat');
    const f = await chatFrame();
    await f.locator(`${tid('message')}[data-role="user"]`, { hasText: sc.prompt }).first().waitFor({ state: 'visible', timeout: T });
    await until(
      'the final answer in the restored transcript',
      async () => prefixShown((await f.locator(`${tid('message')}[data-role="assistant"]`).allTextContents()).join(' '), sc.finalAnswer) === norm(sc.finalAnswer).length,
      T,
    ).catch(async (e: unknown) => {
      throw new Error(`${(e as Error).message}; ${await chatSummary(f)}`);
    });
    if ((await f.locator(`${tid('tool-card')}[data-tool="${sc.approvalTool}"]`).count()) === 0) {
      throw new Error(`the tool card of ${sc.approvalTool} is gone after hiding and showing the chat`);
    }
  });

  await steps.run(
    'elicitation',
    'a tool asks through a form: approve it for the session, see the defaults, submit',
    ['final-answer'],
    async (s) => {
      const f = await chatFrame();
      const mark = facts.mark();
      await sendPrompt(f, sc.elicitPrompt);
      const approval = f.locator(tid('approval')).filter({ has: f.locator('[data-answer="allow_session"]') }).first();
      await approval.waitFor({ state: 'visible', timeout: T }).catch(async () => {
        throw new Error(`no approval for ${sc.elicitTool}; ${await chatSummary(f)}; facts: ${factsSince(mark)}`);
      });
      await approval.locator('[data-answer="allow_session"]').click();
      await facts.waitFor(/^approval allow_session\b/, T, mark);
      const form = f.locator(tid('elicitation-form')).first();
      await form.waitFor({ state: 'visible', timeout: T }).catch(async () => {
        throw new Error(`no ${tid('elicitation-form')} appeared; ${await chatSummary(f)}; facts: ${factsSince(mark)}`);
      });
      const formText = norm((await form.locator('xpath=..').textContent()) ?? '');
      if (!formText.includes(sc.elicitQuestion)) s.note(`the form does not show the question "${sc.elicitQuestion}": ${formText.slice(0, 120)}`);
      for (const [name, value] of Object.entries(sc.elicitDefaults)) {
        const field = form.locator(`[name="${name}"]`).first();
        if ((await field.count()) === 0) throw new Error(`the form has no field named "${name}"`);
        const v = await field.inputValue();
        if (v !== value) throw new Error(`the form's field "${name}" shows ${JSON.stringify(v)}, expected the schema default ${JSON.stringify(value)}`);
      }
      const ok = form.locator('[name="ok"]').first();
      if ((await ok.count()) === 0) throw new Error('the form has no field named "ok" (a required boolean)');
      await ok.check();
      await form.locator(tid('elicit-submit')).click();
      await facts.waitFor(/^elicit accept\b/, T, mark).catch(() => s.note('no "elicit accept" fact (not in the contract)'));
      const card = f.locator(`${tid('tool-card')}[data-tool="${sc.elicitTool}"]`).last();
      await until(`the ${sc.elicitTool} card to be done with the form's answer`, async () => {
        if ((await card.getAttribute('data-status')) !== 'done') return undefined;
        const r = (await card.locator(tid('tool-result')).allTextContents()).join(' ');
        return r.includes('accept') && r.includes('anon') ? true : undefined;
      }, T).catch(async (e: unknown) => {
        throw new Error(`${(e as Error).message}; ${await chatSummary(f)}`);
      });
      await waitAssistantText(f, sc.elicitFinal);
      await until(`${tid('busy')} to disappear`, async () => (await f.locator(tid('busy')).count()) === 0, T);
    },
  );

  await steps.run('stop', 'the stop button cancels a running answer', ['final-answer'], async (s) => {
    const f = await chatFrame();
    const mark = facts.mark();
    await sendPrompt(f, sc.stopPrompt);
    const assistant = f.locator(`${tid('message')}[data-role="assistant"]`).last();
    await until('the slow answer to start streaming ("w0 w1 w2")', async () => norm((await assistant.textContent()) ?? '').includes('w0 w1 w2'), T);
    const stop = f.locator(tid('stop'));
    if (!(await stop.isEnabled())) throw new Error(`${tid('stop')} is disabled while the answer streams`);
    await stop.click();
    await until(`${tid('busy')} to disappear after Stop`, async () => (await f.locator(tid('busy')).count()) === 0, 10_000);
    if (await stop.isEnabled()) throw new Error(`${tid('stop')} is still enabled after the turn was stopped`);
    const words = async (): Promise<number> => (norm((await assistant.textContent()) ?? '').match(/\bw\d+\b/g) ?? []).length;
    const before = await words();
    await sleep(1200); // the stream sends a word every 0.15 s: a live stream would grow meanwhile
    const after = await words();
    s.note(`words streamed before the stop took effect: ${before}; 1.2 s later: ${after}; facts: ${factsSince(mark)}`);
    if (after > before) throw new Error(`the answer kept growing after Stop (${before} -> ${after} words)`);
    if (before >= 120) throw new Error('the whole slow answer arrived: Stop did not cut it short');
  });

  await steps.run('servers-view', 'the MCP Servers view lists the server, its state and its tools', ['activation'], async (s) => {
    await runCommand(page, 'Agent: Focus on MCP Servers View');
    const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /MCP Servers/i }) }).first();
    await pane.waitFor({ state: 'visible', timeout: T });
    const serverRow = pane
      .locator('.monaco-list-row')
      .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${sc.server}\\s*$`) }) })
      .first();
    await serverRow.waitFor({ state: 'visible', timeout: T }).catch(async () => {
      const rows = await pane.locator('.monaco-list-row').allInnerTexts();
      throw new Error(`no row "${sc.server}" in the MCP Servers view (rows: ${JSON.stringify(rows.slice(0, 10))})`);
    });
    const description = serverRow.locator('.label-description');
    const desc = await until(
      `the server's description "connected · <n> tools"`,
      async () => {
        const d = norm((await description.allInnerTexts()).join(' '));
        return /^connected · [1-9]\d* tools?$/.test(d) ? d : undefined;
      },
      T,
    ).catch(async (e: unknown) => {
      throw new Error(`${(e as Error).message}; the row shows ${JSON.stringify(norm(await serverRow.innerText()))}`);
    });
    s.note(`server row: ${sc.server} — ${desc}`);
    // (the tree is virtualized: look at the second server before the first one's tools push it out)
    if (steps.passed('trust-workspace-server')) {
      const wsRow = pane
        .locator('.monaco-list-row')
        .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRe(sc.workspaceServer)}\\s*$`) }) })
        .first();
      const wsDesc = await until(
        `the trusted workspace server "${sc.workspaceServer}" to be connected in the view`,
        async () => {
          const d = norm((await wsRow.locator('.label-description').allInnerTexts()).join(' '));
          return /^connected · [1-9]\d* tools?$/.test(d) ? d : undefined;
        },
        T,
      ).catch(async (e: unknown) => {
        const rows = await pane.locator('.monaco-list-row').allInnerTexts();
        throw new Error(`${(e as Error).message} (rows: ${JSON.stringify(rows.slice(0, 6).map(norm))})`);
      });
      s.note(`workspace server row: ${sc.workspaceServer} — ${wsDesc}`);
    }
    if ((await serverRow.getAttribute('aria-expanded')) !== 'true') {
      await serverRow.click();
      if ((await serverRow.getAttribute('aria-expanded')) !== 'true') await page.keyboard.press('ArrowRight');
    }
    for (const tool of sc.expectTools) {
      const re = new RegExp(`^\\s*(\\S*__)?${tool}\\s*$`);
      await pane
        .locator('.monaco-list-row')
        .filter({ has: page.locator('.label-name', { hasText: re }) })
        .first()
        .waitFor({ state: 'visible', timeout: T })
        .catch(async () => {
          const rows = await pane.locator('.monaco-list-row .label-name').allInnerTexts();
          throw new Error(`the tool "${tool}" is not listed under "${sc.server}" (rows: ${JSON.stringify(rows.slice(0, 15))})`);
        });
    }
    const status = norm((await page.locator('.part.statusbar').innerText()).replace(/\n/g, ' '));
    s.note(`status bar: ${status}`);
    // collapse it again so the other rows stay in view (the tree is virtualized)
    await serverRow.click();
    if ((await serverRow.getAttribute('aria-expanded')) === 'true') await page.keyboard.press('ArrowLeft');
  });

  await steps.run(
    'server-actions',
    'disable, then enable the workspace server from its context menu in the MCP Servers view',
    ['servers-view', 'trust-workspace-server'],
    async (s) => {
      const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /MCP Servers/i }) }).first();
      const row = pane
        .locator('.monaco-list-row')
        .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRe(sc.workspaceServer)}\\s*$`) }) })
        .first();
      const description = async (): Promise<string> => norm((await row.locator('.label-description').allInnerTexts()).join(' '));
      const menuAction = async (title: string): Promise<void> => {
        await row.click({ button: 'right' });
        const items = page.locator('.context-view .monaco-menu .action-item');
        await until('the context menu', async () => (await items.count()) > 0, T);
        const item = items.filter({ has: page.locator('.action-label', { hasText: new RegExp(`^\\s*(Agent: )?${escapeRe(title)}\\s*$`) }) }).first();
        if ((await item.count()) === 0) {
          const labels = (await items.locator('.action-label').allInnerTexts()).map(norm).filter((t) => t);
          await escape(page);
          throw new Error(`the server's context menu has no "${title}" (it has: ${JSON.stringify(labels)})`);
        }
        // VS Code's menus ignore a click that comes too soon after they opened: click until it closes
        const menu = page.locator('.context-view .monaco-menu').first();
        for (let attempt = 0; attempt < 5 && (await menu.isVisible()); attempt++) {
          await item.click().catch(() => undefined);
          await menu.waitFor({ state: 'hidden', timeout: 1_000 }).catch(() => undefined);
        }
        if (await menu.isVisible()) throw new Error(`clicking "${title}" in the context menu did nothing`);
      };
      await row.waitFor({ state: 'visible', timeout: T });
      await menuAction('Disable Server');
      await until(`"${sc.workspaceServer}" to show as disabled`, async () => /^disabled\b/.test(await description()), T).catch(async (e: unknown) => {
        throw new Error(`${(e as Error).message} (it shows ${JSON.stringify(await description())})`);
      });
      s.note(`after disable: ${await description()}`);
      await menuAction('Enable Server');
      await until(`"${sc.workspaceServer}" to be connected again`, async () => /^connected · [1-9]\d* tools?$/.test(await description()), T).catch(
        async (e: unknown) => {
          throw new Error(`${(e as Error).message} (it shows ${JSON.stringify(await description())})`);
        },
      );
      s.note(`after enable: ${await description()}`);
    },
  );

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
      const shown = await pickCodeAction(page, sc.codeActionTitle, s);
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
        throw new Error(`${(e as Error).message}; ${await chatSummary(f)}; facts since the action: ${factsSince(mark)}`);
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
      await pickCodeAction(page, 'Ask agent', s);
      await facts.waitFor(/^code-action Ask agent/, T, mark);
      const box = page.locator('.quick-input-widget').first();
      const input = box.locator('input').first();
      await input.waitFor({ state: 'visible', timeout: T }).catch(() => {
        throw new Error(`no input box asked for the question; facts: ${factsSince(mark)}`);
      });
      s.note(`input box: ${JSON.stringify(norm((await box.innerText()).slice(0, 160)))}`);
      await input.fill(sc.askQuestion);
      await input.press('Enter');
      await facts.waitFor(new RegExp(`^code-action-question ${escapeRe(sc.askQuestion)}`), T, mark);
      const f = await chatFrame();
      await waitAssistantText(f, sc.askAnswer);
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
    await pickCodeAction(page, 'Ask agent', s);
    const input = page.locator('.quick-input-widget input').first();
    await input.waitFor({ state: 'visible', timeout: T });
    await input.fill(sc.stopPrompt);
    await input.press('Enter');
    const f = await chatFrame();
    const assistant = f.locator(`${tid('message')}[data-role="assistant"]`).last();
    await until('the slow answer of the code action to stream ("w0 w1 w2")', async () => norm((await assistant.textContent()) ?? '').includes('w0 w1 w2'), T)
      .catch(async (e: unknown) => {
        throw new Error(`${(e as Error).message}; ${await chatSummary(f)}; facts: ${factsSince(mark)}`);
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
    s.note(`words before the stop took effect: ${before}; 1.2 s later: ${after}; facts: ${factsSince(mark)}`);
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
    await sendPrompt(f, sc.attachPrompt);
    await waitAssistantText(f, sc.attachSeen);
    await until(`the ${tid('attachment')} chip to be cleared after sending`, async () => (await f.locator(tid('attachment')).count()) === 0, T)
      .catch(() => s.note('the attachment chip stayed after sending'));
    await until(`${tid('busy')} to disappear`, async () => (await f.locator(tid('busy')).count()) === 0, T);
  });

  const reviewCtx = { page, steps, facts, timeoutMs: T, workspace: cfg.workspace, scenario: sc.review, chatFrame, sendPrompt, waitAssistantText, needs: ['final-answer'] };
  await reviewSteps(reviewCtx);
  await fullOutputStep(reviewCtx);

  await steps.run('slash-commands', 'typing "/" lists the MCP prompts', ['open-chat', 'activation'], async (s) => {
    const f = await chatFrame();
    const input = f.locator(tid('prompt-input'));
    await input.click();
    await input.fill('');
    await input.pressSequentially('/');
    const items = f.locator(tid('slash-item'));
    await until(`a ${tid('slash-item')} for the MCP prompt "${sc.slashPrompt}"`, async () => {
      const texts = await items.allTextContents();
      return texts.some((t) => t.includes(sc.slashPrompt)) ? true : undefined;
    }, T).catch(async (e: unknown) => {
      throw new Error(`${(e as Error).message} (items: ${JSON.stringify((await items.allTextContents()).map(norm).slice(0, 8))})`);
    });
    s.note(`items: ${JSON.stringify((await items.allTextContents()).map(norm).slice(0, 6))}`);
    await input.fill('');
    await input.press('Escape');
  });

  await steps.run('sessions', 'start a new session, then resume the first one from the list', ['final-answer'], async (s) => {
    const f = await chatFrame();
    const items = f.locator(tid('session-item'));
    await until(`the sessions list (${tid('sessions')}) to list a session`, async () => (await items.count()) > 0, T);
    const before = await items.evaluateAll((els) => els.map((e) => (e as HTMLElement).dataset['sessionId'] ?? ''));
    s.note(`sessions before: ${before.length}`);
    await f.locator(tid('new-session')).click();
    await until('an empty transcript after "New session"', async () => (await f.locator(tid('message')).count()) === 0, T).catch(async (e: unknown) => {
      throw new Error(`${(e as Error).message}; ${await chatSummary(f)}`);
    });
    for (const id of before) {
      await f.locator(`${tid('session-item')}[data-session-id="${id}"]`).first().click();
      const resumed = await until(
        'the first prompt in the resumed transcript',
        async () => (await f.locator(`${tid('message')}[data-role="user"]`, { hasText: sc.prompt }).count()) > 0,
        5_000,
      ).catch(() => false);
      if (resumed) {
        s.note(`resumed session ${id}`);
        if (steps.passed('ask-agent')) {
          // The resumed "Ask agent" message shows as it did live: the question and its chip,
          // not the selection rendered into the text the model got.
          const users = f.locator(`${tid('message')}[data-role="user"]`);
          const asked = users.filter({ hasText: sc.askQuestion }).first();
          await asked.waitFor({ state: 'visible', timeout: 5_000 }).catch(async () => {
            throw new Error(`the resumed session does not show the question "${sc.askQuestion}"; ${await chatSummary(f)}`);
          });
          const chips = (await asked.locator('.chip').allTextContents()).map(norm);
          const raw = (await users.allTextContents()).filter((t) => t.includes('Selection from'));
          s.note(`resumed question chips: ${JSON.stringify(chips)}`);
          if (!chips.some((c) => c.startsWith(sc.askChipPrefix))) throw new Error(`the resumed question has no selection chip (${JSON.stringify(chips)})`);
          if (raw.length) throw new Error(`resumed user messages show the rendered attachment: ${JSON.stringify(raw[0].slice(0, 120))}`);
        }
        return;
      }
    }
    throw new Error(`no session in the list brought back the prompt "${sc.prompt}"; ${await chatSummary(f)}`);
  });

  await resumedCardsStep(reviewCtx);

  await steps.run('chat-panel', '"Agent: Open Chat in Editor" opens the chat as an editor panel', ['open-chat'], async (s) => {
    const before = await chatFrames(page);
    await runCommand(page, 'Agent: Open Chat in Editor');
    const frames = await until('a second chat (a frame with the prompt input) in the editor area', async () => {
      const now = await chatFrames(page);
      return now.length > before.length ? now : undefined;
    }, T);
    const panel = frames.find((f) => !before.includes(f));
    if (panel === undefined) throw new Error('internal: no new frame');
    await panel.locator(tid('send')).waitFor({ state: 'visible', timeout: T });
    const tabs = (await page.locator('.tabs-container .tab').evaluateAll((els) => els.map((e) => e.getAttribute('aria-label') ?? ''))).filter((t) => t);
    s.note(`editor tabs: ${JSON.stringify(tabs)}; messages in the panel: ${await panel.locator(tid('message')).count()}`);
  });

  await steps.run('settings-restart', 'changing agentLs.server.env restarts the language client', ['activation'], async (s) => {
    // as a user: agentLs.server.* are machine-scoped, so in code-server they live in the Remote
    // (Machine) settings: open that settings.json in the editor, change it, save
    const settings = JSON.parse(fs.readFileSync(cfg.machineSettings, 'utf8')) as Record<string, unknown>;
    settings['agentLs.server.env'] = { AGENT_LS_E2E_RESTART: '1' };
    await runCommand(page, 'Preferences: Open Remote Settings (JSON)', 15_000, 'prefix');
    const editor = page.locator('.editor-group-container.active .monaco-editor[data-uri$="settings.json"]').first();
    await editor.waitFor({ state: 'visible', timeout: T });
    await editor.locator('.view-lines').first().click();
    await page.keyboard.press('Control+A');
    const mark = facts.mark();
    // paste (typing would get auto-closed brackets and auto-indentation added)
    const text = JSON.stringify(settings, null, 2);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: cfg.url });
    await page.evaluate(async (t) => navigator.clipboard.writeText(t), text);
    await page.keyboard.press('Control+V');
    await page.keyboard.press('Control+S');
    const saved = await until('settings.json to be saved with the change', () => {
      const now = fs.readFileSync(cfg.machineSettings, 'utf8');
      return now.includes('AGENT_LS_E2E_RESTART') ? now : undefined;
    }, T);
    try {
      JSON.parse(saved);
    } catch {
      throw new Error(`the edited settings.json is not valid JSON: ${JSON.stringify(saved.slice(-200))}`);
    }
    await facts.waitFor(/^client-running\b/, T, mark).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}; facts since the change: ${factsSince(mark)}`);
    });
    const status = await facts.waitFor(/^status [1-9]\d* servers?\b/, T, mark);
    s.note(`facts since the change: ${factsSince(mark)}; ${status}`);
    await escape(page); // close the settings editor (VS Code shows it as a modal)
    const f = await chatFrame();
    await until(`${tid('send')} to be enabled again`, async () => f.locator(tid('send')).isEnabled(), T);
    const pane = page.locator('.pane', { has: page.locator('.pane-header', { hasText: /MCP Servers/i }) }).first();
    const row = pane
      .locator('.monaco-list-row')
      .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRe(sc.server)}\\s*$`) }) })
      .first();
    await until(`"${sc.server}" connected again in the MCP Servers view after the restart`, async () =>
      /^connected · [1-9]\d* tools?$/.test(norm((await row.locator('.label-description').allInnerTexts()).join(' '))), T);
  });

  // issue 17: keyboard only, the pinned approval at two window sizes, a long trust prompt, axe-core in three themes
  await uxSteps({ page, steps, facts, timeoutMs: T, artifacts: cfg.artifacts, workspace: cfg.workspace, nodeModules: cfg.nodeModules, scenario: sc, chatFrame, needs: ['final-answer'] });

  await escape(page);
  await sleep(100);
}

/**
 * Select the whole code action file and pick `title` from the lightbulb menu (Ctrl+. when no
 * lightbulb shows). Returns whether the lightbulb showed.
 */
async function pickCodeAction(page: Page, title: string, s: { note(text: string): void }): Promise<boolean> {
  const editor = await openFile(page, sc.codeActionFile, T);
  await editor.locator('.view-lines').first().click();
  await page.keyboard.press('Control+A');
  const bulb = page.locator('.lightBulbWidget').first();
  const shown = await until('the lightbulb next to the selection', async () => bulb.isVisible(), T).catch(() => false);
  if (shown) {
    await bulb.click();
  } else {
    s.note('the lightbulb did not show; opened the same menu with Ctrl+. (Quick Fix)');
    await page.keyboard.press('Control+.');
  }
  // the action widget (VS Code's code action menu); its rows carry the action titles
  const rows = page.locator('.action-widget .monaco-list-row');
  await until('the code action menu', async () => (await rows.count()) > 0 && rows.first().isVisible(), T).catch(() => {
    throw new Error(`no code action menu opened (${shown ? 'after clicking the lightbulb' : 'with Ctrl+.; no lightbulb either'})`);
  });
  const item = rows.filter({ hasText: new RegExp(`^\\s*${escapeRe(title)}\\s*$`) }).first();
  await item.waitFor({ state: 'visible', timeout: T }).catch(async () => {
    throw new Error(`the code action menu has no "${title}" (it has: ${JSON.stringify((await rows.allInnerTexts()).map(norm))})`);
  });
  s.note(`menu: ${JSON.stringify((await rows.allInnerTexts()).map(norm))}`);
  await item.click();
  return shown;
}

/** Every frame that holds a chat (the side bar view, editor panels). */
async function chatFrames(page: Page): Promise<Frame[]> {
  const out: Frame[] = [];
  for (const f of page.frames()) {
    if (f.isDetached()) continue;
    try {
      if ((await f.locator(tid('prompt-input')).count()) > 0) out.push(f);
    } catch {
      // detached meanwhile
    }
  }
  return out;
}

/** Type a prompt into the chat and send it; wait until the user message shows. */
async function sendPrompt(f: Frame, text: string): Promise<void> {
  const input = f.locator(tid('prompt-input'));
  await until(`${tid('send')} to be enabled`, async () => f.locator(tid('send')).isEnabled(), T);
  await input.click();
  await input.fill(text);
  await f.locator(tid('send')).click();
  await f.locator(`${tid('message')}[data-role="user"]`, { hasText: text }).first().waitFor({ state: 'visible', timeout: T });
}

async function waitAssistantText(f: Frame, expected: string): Promise<void> {
  await until(
    `the answer "${expected}" in the chat`,
    async () => (await f.locator(`${tid('message')}[data-role="assistant"]`).allTextContents()).some((t) => norm(t).includes(norm(expected))),
    T,
  ).catch(async (e: unknown) => {
    throw new Error(`${(e as Error).message}; ${await chatSummary(f)}`);
  });
}

/** Watch the assistant text while the final answer streams: the partial lengths seen, and busy. */
async function observeStream(chatFrame: () => Promise<Frame>): Promise<{ partials: number[]; busyDuring: boolean }> {
  const partials: number[] = [];
  let busyDuring = false;
  const full = norm(sc.finalAnswer).length;
  const end = Date.now() + T;
  while (Date.now() < end) {
    try {
      const f = await chatFrame();
      const texts = await f.locator(`${tid('message')}[data-role="assistant"]`).allTextContents();
      const shown = prefixShown(texts.join(' '), sc.finalAnswer);
      if (shown >= full) return { partials, busyDuring };
      if (shown > 0) {
        if ((await f.locator(tid('busy')).count()) > 0) busyDuring = true;
        if (!partials.includes(shown)) partials.push(shown);
      }
    } catch {
      // the frame may be re-created; try again
    }
    await sleep(40);
  }
  throw new Error(`the final answer "${sc.finalAnswer}" did not appear in full within ${T / 1000}s (partials seen: ${partials.join(', ') || 'none'})`);
}

function factsSince(mark: number): string {
  const lines = facts.lines().slice(mark);
  return lines.length ? JSON.stringify(lines.slice(-12)) : '(none)';
}

/** A short description of what the chat shows, for failure messages. */
async function chatSummary(f: Frame): Promise<string> {
  try {
    const items = await f.locator(`${tid('message')}, ${tid('tool-card')}, ${tid('approval')}`).evaluateAll((els) =>
      els.map((e) => {
        const el = e as HTMLElement;
        const id = el.dataset['testid'];
        const attrs = id === 'message' ? `role=${el.dataset['role']}` : id === 'tool-card' ? `tool=${el.dataset['tool']} status=${el.dataset['status']}` : '';
        return `${id}(${attrs}): ${(el.textContent ?? '').replace(/\s+/g, ' ').trim().slice(0, 80)}`;
      }),
    );
    return `the chat shows [${items.join(' | ') || 'nothing'}]`;
  } catch (e) {
    return `the chat could not be read (${e instanceof Error ? e.message.split('\n')[0] : String(e)})`;
  }
}

main().then(
  (code) => process.exit(code),
  (e: unknown) => {
    log(`[e2e] driver error: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}`);
    process.exit(2);
  },
);
