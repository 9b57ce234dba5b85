// The MCP Servers view (a tree in the Agent side bar: each server with its state and tools, a
// context menu per server) and the language client's restart when its Machine settings change.

import * as fs from 'node:fs';
import { type Run, escape, escapeRe, norm, until } from './harness.ts';
import { tid } from './chat.ts';
import { paneHeight, runCommand, serversPane } from './workbench.ts';

/** servers-view and server-actions. */
export async function serversSteps(run: Run): Promise<void> {
  const { page, steps, sc, T } = run;

  await steps.run('servers-view', 'the MCP Servers view lists the server, its state and its tools', ['activation'], async (s) => {
    await runCommand(page, 'Agent: Focus on MCP Servers View');
    const pane = serversPane(page);
    await pane.waitFor({ state: 'visible', timeout: T });
    // issue 44: the view starts collapsed (the chat gets the height) and opens at its smallest: the
    // user drags it to a third of the side bar to read the tool list, as it was before
    const side = (await page.locator('.part.sidebar').first().boundingBox())?.height ?? 900;
    s.note(`servers view: ${Math.round((await pane.boundingBox())?.height ?? 0)} px when opened; ${await paneHeight(page, pane, Math.round(side / 3))} px after dragging its sash`);
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
        `the trusted workspace server "${sc.workspaceServer}" to be connected in the view, marked sandboxed (issue 47)`,
        async () => {
          const d = norm((await wsRow.locator('.label-description').allInnerTexts()).join(' '));
          return /^connected · [1-9]\d* tools? · sandboxed$/.test(d) ? d : undefined;
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
      const pane = serversPane(page);
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
      // (a workspace server runs in the OS sandbox: its row says so, issue 47)
      await until(`"${sc.workspaceServer}" to be connected again`, async () => /^connected · [1-9]\d* tools?( · sandboxed)?$/.test(await description()), T).catch(
        async (e: unknown) => {
          throw new Error(`${(e as Error).message} (it shows ${JSON.stringify(await description())})`);
        },
      );
      s.note(`after enable: ${await description()}`);
    },
  );
}

/** settings-restart: as a user, through "Preferences: Open Remote Settings (JSON)". */
export async function settingsRestartStep(run: Run): Promise<void> {
  const { page, steps, facts, sc, T, chatFrame } = run;

  await steps.run('settings-restart', 'changing agentLs.server.env restarts the language client', ['activation'], async (s) => {
    // as a user: agentLs.server.* are machine-scoped, so in code-server they live in the Remote
    // (Machine) settings: open that settings.json in the editor, change it, save
    const settings = JSON.parse(fs.readFileSync(run.cfg.machineSettings, 'utf8')) as Record<string, unknown>;
    settings['agentLs.server.env'] = { AGENT_LS_E2E_RESTART: '1' };
    await runCommand(page, 'Preferences: Open Remote Settings (JSON)', 15_000, 'prefix');
    const editor = page.locator('.editor-group-container.active .monaco-editor[data-uri$="settings.json"]').first();
    await editor.waitFor({ state: 'visible', timeout: T });
    await editor.locator('.view-lines').first().click();
    await page.keyboard.press('Control+A');
    const mark = facts.mark();
    // paste (typing would get auto-closed brackets and auto-indentation added)
    const text = JSON.stringify(settings, null, 2);
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: run.cfg.url });
    await page.evaluate(async (t) => navigator.clipboard.writeText(t), text);
    await page.keyboard.press('Control+V');
    await page.keyboard.press('Control+S');
    const saved = await until('settings.json to be saved with the change', () => {
      const now = fs.readFileSync(run.cfg.machineSettings, 'utf8');
      return now.includes('AGENT_LS_E2E_RESTART') ? now : undefined;
    }, T);
    try {
      JSON.parse(saved);
    } catch {
      throw new Error(`the edited settings.json is not valid JSON: ${JSON.stringify(saved.slice(-200))}`);
    }
    await facts.waitFor(/^client-running\b/, T, mark).catch((e: unknown) => {
      throw new Error(`${(e as Error).message}; facts since the change: ${facts.since(mark)}`);
    });
    const status = await facts.waitFor(/^status [1-9]\d* servers?\b/, T, mark);
    s.note(`facts since the change: ${facts.since(mark)}; ${status}`);
    await escape(page); // close the settings editor (VS Code shows it as a modal)
    const f = await chatFrame();
    await until(`${tid('send')} to be enabled again`, async () => f.locator(tid('send')).isEnabled(), T);
    const pane = serversPane(page);
    const row = pane
      .locator('.monaco-list-row')
      .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRe(sc.server)}\\s*$`) }) })
      .first();
    await until(`"${sc.server}" connected again in the MCP Servers view after the restart`, async () =>
      /^connected · [1-9]\d* tools?$/.test(norm((await row.locator('.label-description').allInnerTexts()).join(' '))), T);
  });
}
