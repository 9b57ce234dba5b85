// Acting on the VS Code workbench the way a user does: the command palette and Quick Open, the
// lightbulb's code action menu, the colour theme picker, the MCP Servers view and the side bar.

import * as path from 'node:path';
import type { Frame, Locator, Page } from 'playwright-core';
import { type Run, escape, escapeRe, norm, until } from './harness.ts';

/**
 * Open a quick input with `key` (F1, Control+P) and type `text` into it, as a user does.
 * The workbench briefly makes the quick input inert while it opens or while another widget
 * (a notification toast, a closing menu) still holds focus; a user just presses the key again,
 * and so does this (up to 4 attempts, the last error is thrown).
 */
export async function quickInput(page: Page, key: string, text: string, timeoutMs = 15_000): Promise<Locator> {
  const input = page.locator('.quick-input-widget input').first();
  let last: unknown;
  for (let attempt = 0; attempt < 4; attempt++) {
    try {
      await escape(page);
      await page.keyboard.press(key);
      await input.waitFor({ state: 'visible', timeout: timeoutMs });
      await input.fill(text, { timeout: 5_000 });
      return input;
    } catch (e) {
      last = e;
      await page.waitForTimeout(500);
    }
  }
  throw last instanceof Error ? last : new Error(String(last));
}

/** Run a command from the command palette by its exact label, as a user does (F1, type, pick). */
export async function runCommand(page: Page, label: string, timeoutMs = 15_000, match: 'exact' | 'prefix' = 'exact'): Promise<void> {
  await quickInput(page, 'F1', `>${label}`, timeoutMs);
  // 'prefix': titles VS Code completes, e.g. "Preferences: Open Remote Settings (JSON) (<remote>)"
  const name = new RegExp(`^\\s*${escapeRe(label)}${match === 'exact' ? '\\s*$' : ''}`);
  const row = page
    .locator('.quick-input-list .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: name }) })
    .first();
  try {
    await row.waitFor({ state: 'visible', timeout: timeoutMs });
  } catch {
    const shown = await page.locator('.quick-input-list .monaco-list-row .label-name').allInnerTexts();
    await escape(page);
    throw new Error(
      `the command palette has no command "${label}" (it shows: ${shown.slice(0, 8).map((s) => JSON.stringify(s)).join(', ') || 'nothing'})`,
    );
  }
  await row.click();
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: timeoutMs }).catch(() => undefined);
}

/** Open a workspace file with Quick Open (Ctrl+P), as a user does. Returns the editor. */
export async function openFile(page: Page, relPath: string, timeoutMs = 15_000): Promise<Locator> {
  await quickInput(page, 'Control+P', relPath, timeoutMs);
  const base = path.basename(relPath);
  const row = page
    .locator('.quick-input-list .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: base }) })
    .first();
  await row.waitFor({ state: 'visible', timeout: timeoutMs });
  await row.click();
  const tab = page.locator(`.tabs-container .tab[aria-label*="${base}"]`).first();
  await tab.waitFor({ state: 'visible', timeout: timeoutMs });
  const editor = page.locator('.editor-group-container.active .monaco-editor[data-uri$="' + base + '"]').first();
  await editor.waitFor({ state: 'visible', timeout: timeoutMs });
  return editor;
}

/**
 * Select the whole code action file and pick `title` from the lightbulb menu (Ctrl+. when no
 * lightbulb shows within `bulbMs`, by default the run's timeout). Returns whether the lightbulb showed.
 */
export async function pickCodeAction(run: Run, title: string, s: { note(text: string): void }, file = run.sc.codeActionFile,
  bulbMs = run.T): Promise<boolean> {
  const { page, T } = run;
  const editor = await openFile(page, file, T);
  await editor.locator('.view-lines').first().click();
  await page.keyboard.press('Control+A');
  const bulb = page.locator('.lightBulbWidget').first();
  const shown = await until('the lightbulb next to the selection', async () => bulb.isVisible(), bulbMs).catch(() => false);
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

/** Pick a colour theme with "Preferences: Color Theme" (VS Code stores it in the User setting
 * `workbench.colorTheme`) and wait until the chat's frame has the theme's body class. */
export async function setTheme(run: Run, label: string, bodyClass: string): Promise<Frame> {
  const { page } = run;
  const input = await quickInput(page, 'F1', '>Preferences: Color Theme', run.T);
  const rows = page.locator('.quick-input-list .monaco-list-row');
  await rows.filter({ has: page.locator('.label-name', { hasText: /^\s*Preferences: Color Theme/ }) }).first().click({ timeout: run.T });
  // the theme picker replaces the command palette: wait for it (its list is virtualized and
  // scrolled to the current theme: a given row may not be drawn), then filter it
  await until('the colour theme picker', async () => (/Color Theme/i.test((await input.getAttribute('placeholder')) ?? '') ? true : undefined), run.T);
  await input.fill(label);
  const row = page
    .locator('.quick-input-list .monaco-list-row')
    .filter({ has: page.locator('.label-name', { hasText: new RegExp(`^\\s*${escapeRe(label)}\\s*$`) }) })
    .first();
  await row.waitFor({ state: 'visible', timeout: run.T });
  await row.click();
  await page.locator('.quick-input-widget').waitFor({ state: 'hidden', timeout: run.T }).catch(() => undefined);
  return until(
    `the chat to show the theme ${label} (body.${bodyClass})`,
    async () => {
      const f = await run.chatFrame();
      const cls = await f.evaluate(() => document.body.className).catch(() => '');
      return cls.split(/\s+/).includes(bodyClass) ? f : undefined;
    },
    run.T,
  );
}

/** The MCP Servers view (a pane of the Agent side bar). */
export function serversPane(page: Page): Locator {
  return page.locator('.pane', { has: page.locator('.pane-header', { hasText: /MCP Servers/i }) }).first();
}

/** Fold the MCP Servers view (a click on its header, as a user does), as it starts (issue 44:
 * collapsed while nothing needs the user, so the chat gets the side bar's height). */
export async function collapseServersView(page: Page): Promise<void> {
  const header = serversPane(page).locator('.pane-header').first();
  if ((await header.getAttribute('aria-expanded')) === 'true') await header.click();
}

/** A row of the servers view by its exact label (a server, a tool, a reason, a fix). */
export function paneRow(page: Page, pane: Locator, label: string | RegExp): Locator {
  const name = typeof label === 'string' ? new RegExp(`^\\s*${escapeRe(label)}\\s*$`) : label;
  return pane.locator('.monaco-list-row').filter({ has: page.locator('.label-name', { hasText: name }) }).first();
}

/** The labels of a tree view's rows in the order they are drawn (the list keeps its row elements
 * in no particular order: by their index), whitespace-normalized. */
export async function rowLabels(pane: Locator): Promise<string[]> {
  const rows = await pane.locator('.monaco-list-row').evaluateAll((els) =>
    els
      .map((el) => ({ i: Number(el.getAttribute('data-index') ?? '0'), text: el.querySelector('.label-name')?.textContent ?? '' }))
      .sort((a, b) => a.i - b.i)
      .map((r) => r.text),
  );
  return rows.map(norm);
}

/** A server row's description ("connected · 27 tools"), whitespace-normalized. */
export async function rowDescription(row: Locator): Promise<string> {
  return norm((await row.locator('.label-description').allInnerTexts()).join(' '));
}

/** Drag the sash above a view of the side bar (between it and the view above) so that the view is
 * `height` px tall, as a user does to read a longer list (the MCP Servers view opens at its
 * smallest when it was collapsed); returns the height it got. */
export async function paneHeight(page: Page, pane: Locator, height: number, timeoutMs = 10_000): Promise<number> {
  // the sash lies on the border above the view's header; a view that just opened (revealed, or
  // expanded) is still being laid out: look until its header and a sash line up
  const found = await until('the sash above the view', async () => {
    const header = await pane.locator('.pane-header').first().boundingBox();
    const box = await pane.boundingBox();
    if (!header || !box) return undefined;
    const sash = await page.evaluate((top) => {
      const hit = Array.from(document.querySelectorAll('.part.sidebar .monaco-sash.horizontal'))
        .map((el) => el.getBoundingClientRect())
        .find((r) => r.height > 0 && Math.abs(r.top + r.height / 2 - top) <= 4);
      return hit ? { x: hit.left + hit.width / 2, y: hit.top + hit.height / 2 } : null;
    }, header.y);
    return sash ? { sash, box } : undefined;
  }, timeoutMs).catch(() => undefined);
  if (!found) throw new Error('no sash above the view');
  const { sash, box } = found;
  await page.mouse.move(sash.x, sash.y);
  await page.mouse.down();
  await page.mouse.move(sash.x, sash.y - (height - box.height) / 2, { steps: 4 });
  await page.mouse.move(sash.x, sash.y - (height - box.height), { steps: 4 });
  await page.mouse.up();
  return Math.round((await pane.boundingBox())?.height ?? 0);
}

/** Drag the sash between the side bar and the editor so that the side bar is `width` px wide
 * (the user widens it to read long rows); returns the width it got. */
export async function sideBarWidth(page: Page, width: number): Promise<number> {
  const bar = page.locator('.part.sidebar').first();
  const box = await bar.boundingBox();
  if (!box) throw new Error('no side bar');
  const y = box.y + box.height / 2;
  const x = box.x + box.width;
  await page.mouse.move(x, y);
  await page.mouse.down();
  await page.mouse.move(x + (width - box.width) / 2, y, { steps: 4 });
  await page.mouse.move(box.x + width, y, { steps: 4 });
  await page.mouse.up();
  return Math.round((await bar.boundingBox())?.width ?? 0);
}
