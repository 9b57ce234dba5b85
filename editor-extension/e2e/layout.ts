// Issue 44 item 2: nothing clipped or broken at the default width. One step, layout-narrow, in the
// real editor, with everything that used to be cut on screen at once: the chat's header with the
// context meter and the model name, the restricted-workspace banner (the workspace asks for trust
// again), its trust card opened, a pinned approval's reason, and the MCP Servers view with a server
// that fails (its reason and what it said).
//
// At a 300 px side bar (VS Code's default) and a wide one (as wide as the workbench lets it in the
// 1400x900 window), in the dark and the light theme, it asserts on the layout in the page, not on
// looks: no element overflows its box (scrollWidth <= clientWidth), nothing is cut with an
// ellipsis, no word is broken inside (each word's line boxes, Range.getClientRects, lie on one line
// unless the word alone is wider than its box), the banner's whole message is rendered, the open
// trust card shows its command without scrolling and its buttons come after its server list (not
// over it; a card taller than the chat scrolls, its height noted).
// It also checks that the answered approval reads above its tool card (the transcript's order),
// and that the servers view opened by itself when the server failed (the fact `servers-view reveal`).
//
// Screenshots (artifacts/e2e/): layout-<theme>-<width>.png (the side bar: the chat with the open
// card), layout-servers-<theme>-<width>.png (the servers view with the failed server),
// layout-approval-300.png; scripts/screenshots.sh copies some to docs/images/ for the README.
// Called from driver.ts after the ux steps; leaves the workspace trusted and the user settings as
// they were.

import * as fs from 'node:fs';
import * as path from 'node:path';
import type { Frame, Locator, Page } from 'playwright-core';
import { type Run, norm, until } from './harness.ts';
import { tid } from './chat.ts';
import { paneHeight, paneRow, rowLabels, serversPane, setTheme, sideBarWidth } from './workbench.ts';

const BROKEN = 'narrowbroken';
const BROKEN_SAYS = 'NARROW_API_KEY is not set: export it before starting the server';
const REASON = 'The server process exited with code 4 during the MCP handshake.';

/** What the page-side check reports. */
interface Layout {
  problems: string[];
  checked: number;
  words: number;
}

/**
 * Runs in the page (the chat's frame or the workbench): every element under `roots` (CSS selectors)
 * that is drawn and not inline. A problem when an element's content is wider than its box, when it
 * is cut with an ellipsis, or when a word (a run of letters between spaces, "/" and "-") is drawn
 * on more than one line though it fits its box on one.
 */
function checkLayout(roots: string[]): Layout {
  const problems: string[] = [];
  let checked = 0;
  let words = 0;
  const name = (el: Element): string => {
    const id = el.getAttribute('data-testid');
    const cls = typeof el.className === 'string' && el.className ? `.${el.className.trim().split(/\s+/).join('.')}` : '';
    return `${el.tagName.toLowerCase()}${id ? `[data-testid=${id}]` : ''}${cls} "${el.textContent.replace(/\s+/g, ' ').trim().slice(0, 50)}"`;
  };
  const drawn = (el: Element): boolean => el.getClientRects().length > 0 && getComputedStyle(el).visibility !== 'hidden';
  const seen = new Set<Element>();
  for (const sel of roots) {
    for (const root of Array.from(document.querySelectorAll(sel))) {
      for (const el of [root, ...Array.from(root.querySelectorAll('*'))]) {
        if (seen.has(el) || !drawn(el)) continue;
        seen.add(el);
        const cs = getComputedStyle(el);
        if (cs.textOverflow === 'ellipsis' && el.scrollWidth > el.clientWidth + 1) problems.push(`${name(el)} is cut with an ellipsis (${el.scrollWidth} > ${el.clientWidth} px)`);
        if (cs.display === 'inline' || cs.display === 'contents' || el instanceof SVGElement) continue;
        checked++;
        if (el.scrollWidth > el.clientWidth + 1) problems.push(`${name(el)} overflows its box: scrollWidth ${el.scrollWidth} > clientWidth ${el.clientWidth}`);
      }
      // words broken inside: each text node's words, by their line boxes. A run without spaces
      // that is wider than its box must break somewhere (a long path); any other must not break
      // inside a word (a break after "/" or "-" is between words).
      const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
      const measure = (node: Node, start: number, end: number) => {
        const range = document.createRange();
        range.setStart(node, start);
        range.setEnd(node, end);
        const rects = Array.from(range.getClientRects()).filter((r) => r.width > 0.5);
        return { lines: new Set(rects.map((r) => Math.round(r.top))).size, width: rects.reduce((w, r) => w + r.width, 0) };
      };
      for (let node = walker.nextNode(); node; node = walker.nextNode()) {
        const text = node.textContent ?? '';
        const box = node.parentElement?.closest('div, pre, li, p, span.banner-text, button, summary, label, select, [role]') ?? node.parentElement;
        if (!box || !drawn(box)) continue;
        const room = (box as HTMLElement).clientWidth;
        const runs = /\S+/g;
        for (let m = runs.exec(text); m; m = runs.exec(text)) {
          const whole = measure(node, m.index, m.index + m[0].length);
          if (whole.lines === 0) continue;
          words++;
          if (whole.lines < 2 || whole.width > room) continue;
          const parts = /[^/\-\u2010-\u2014]+/g;
          for (let p = parts.exec(m[0]); p; p = parts.exec(m[0])) {
            const part = measure(node, m.index + p.index, m.index + p.index + p[0].length);
            if (part.lines > 1) problems.push(`the word "${p[0]}" is broken over ${part.lines} lines in ${name(box)} (its run "${m[0].slice(0, 40)}" is ${Math.round(whole.width)} px, its box ${room} px)`);
          }
        }
      }
    }
  }
  return { problems, checked, words };
}

async function chatLayout(f: Frame, roots: string[]): Promise<Layout> {
  return f.evaluate(checkLayout, roots);
}

async function paneLayout(page: Page, pane: Locator): Promise<Layout> {
  // (the pane is found by its header's text: mark it for the page-side check)
  await pane.evaluate((el) => el.setAttribute('data-layout-check', 'servers'));
  return page.evaluate(checkLayout, ['[data-layout-check="servers"] .pane-body .monaco-list-row']);
}

/** The open trust card (scrolled to its top, as it opens): its command is in view without
 * scrolling, its buttons come after its server list (never over it). Also how much of it shows. */
async function cardLayout(f: Frame): Promise<{ problems: string[]; shown: string }> {
  return f.evaluate(() => {
    const out: string[] = [];
    const details = document.querySelector<HTMLElement>('[data-testid="trust-details"]');
    const card = details?.querySelector<HTMLElement>('[data-testid="workspace-trust-prompt"]');
    if (!details || !card) return { problems: ['no open workspace trust card'], shown: '' };
    details.scrollTop = 0;
    const shown = `${details.clientHeight} of ${details.scrollHeight} px of the card in view (the chat ${document.querySelector('.chat')?.clientHeight ?? '?'} px)`;
    const buttons = card.querySelector('.buttons')?.getBoundingClientRect();
    const entries = Array.from(card.querySelectorAll('[data-testid="trust-entry"], [data-testid="workspace-settings"]')).map((e) => e.getBoundingClientRect());
    const lastBottom = Math.max(...entries.map((r) => r.bottom));
    if (!buttons) out.push('the trust card has no buttons');
    else if (entries.length && buttons.top < lastBottom - 0.5) out.push(`the trust card's buttons (top ${Math.round(buttons.top)}) cover its server list (bottom ${Math.round(lastBottom)})`);
    const cmd = card.querySelector<HTMLElement>('[data-testid="trust-command"]');
    if (cmd) {
      const c = cmd.getBoundingClientRect();
      const d = details.getBoundingClientRect();
      if (c.top < d.top - 0.5 || c.bottom > d.bottom + 0.5) {
        // what else takes the chat's height (to tell why the card had less room)
        const parts = Array.from(document.querySelector('.chat')?.children ?? [])
          .map((e) => [e.getAttribute('data-testid') ?? e.className, Math.round(e.getBoundingClientRect().height)] as const)
          .filter(([, h]) => h > 0)
          .map(([n, h]) => `${n} ${h}`);
        out.push(`the command is not in view in the card (${Math.round(c.top)}..${Math.round(c.bottom)} in ${Math.round(d.top)}..${Math.round(d.bottom)}; the chat: ${parts.join(', ')})`);
      }
    }
    return { problems: out, shown };
  });
}

export async function layoutStep(run: Run, needs: string[]): Promise<void> {
  const { page, steps, facts, sc, T } = run;
  const shot = (name: string) => path.join(run.cfg.artifacts, name);
  const sidebar = page.locator('.part.sidebar').first();
  await steps.run('layout-narrow', 'at a 300 px and a wide side bar, dark and light: the header with the meter, the banner, the open trust card, a pinned approval and a failed server read whole (no overflow, no ellipsis, no word broken)', needs, async (s) => {
    await page.setViewportSize({ width: 1400, height: 900 });
    await setTheme(run, 'Dark 2026', 'vscode-dark');
    const startWidth = Math.round((await sidebar.boundingBox())?.width ?? 0);
    const userFile = run.cfg.userSettings;
    const wsFile = path.join(run.cfg.workspace, '.agent-ls', 'settings.json');
    const userBefore = fs.readFileSync(userFile, 'utf8');
    const problems: string[] = [];
    const check = (where: string, l: Layout) => {
      s.note(`${where}: ${l.checked} boxes, ${l.words} words${l.problems.length ? `; ${l.problems.length} problems` : ''}`);
      problems.push(...l.problems.map((p) => `${where}: ${p}`));
    };
    try {
      // a server that fails (what it says on stderr must be quoted), and the workspace asks for trust again
      const settings = JSON.parse(userBefore) as { mcpServers: Record<string, { command?: string } | undefined> };
      const python = settings.mcpServers[sc.server]?.command ?? 'python3';
      settings.mcpServers[BROKEN] = { command: python, args: ['-c', `import sys; sys.stderr.write(${JSON.stringify(`${BROKEN_SAYS}\n`)}); sys.exit(4)`] } as { command: string };
      const mark = facts.mark();
      fs.writeFileSync(userFile, JSON.stringify(settings, null, 2));
      // the servers view (folded) opens by itself on the failed server (no focus taken)
      const revealed = await facts.waitFor(new RegExp(`^servers-view reveal .*server:${BROKEN}\\b`), T, mark);
      s.note(`fact: ${revealed}`);
      // then the workspace asks again (a settings reload waits for that answer: after the server failed)
      const ws = JSON.parse(fs.readFileSync(wsFile, 'utf8')) as Record<string, unknown>;
      ws['agent'] = { ...(ws['agent'] as Record<string, unknown> | undefined), bashTimeout: 33 };
      fs.writeFileSync(wsFile, JSON.stringify(ws, null, 2));
      const pane = serversPane(page);
      const row = paneRow(page, pane, BROKEN);
      await row.waitFor({ state: 'visible', timeout: T });
      if ((await row.getAttribute('aria-expanded')) !== 'true') throw new Error(`the failed server "${BROKEN}" is not open on its reason`);
      // (it opened at the size it had: the user drags it taller to read the failed server's rows)
      s.note(`servers view: ${await paneHeight(page, pane, 460)} px after dragging its sash`);
      const rowsText = async () => rowLabels(pane);
      const said = `It said: “${BROKEN_SAYS}”`;
      await until('the reason and what the server said, wrapped over rows', async () => {
        const all = (await rowsText()).join(' ');
        return all.includes(REASON) && all.includes(said) ? true : undefined;
      }, T).catch(async () => {
        throw new Error(`the servers view does not read "${REASON} ${said}": ${JSON.stringify(await rowsText())}`);
      });

      // the chat: the banner, the trust card waiting under it
      let f = await run.chatFrame();
      const banner = f.locator(tid('restricted-banner'));
      await banner.waitFor({ state: 'visible', timeout: T });
      const cardIn = (frame: Frame) => frame.locator(`${tid('trust-details')} ${tid('workspace-trust-prompt')}:not([data-answered])`).first();
      await cardIn(f).waitFor({ state: 'attached', timeout: T });

      // a pinned approval at 300 px (a new session): its reason reads whole; answered, it reads above its tool card
      await sideBarWidth(page, 300);
      await f.locator(tid('new-session')).click();
      await until('an empty transcript after "New session"', async () => (await f.locator(tid('message')).count()) === 0, T);
      await until(`${tid('send')} to be enabled`, async () => f.locator(tid('send')).isEnabled(), T);
      await f.locator(tid('prompt-input')).click();
      await page.keyboard.type(sc.prompt);
      await page.keyboard.press('Enter');
      const approval = f.locator(`${tid('pending')} ${tid('approval')}:not([data-answered])`).first();
      await approval.waitFor({ state: 'visible', timeout: T });
      const reason = norm(await approval.locator('.reason').first().innerText());
      s.note(`approval reason: ${JSON.stringify(reason)}`);
      check('approval (300 px)', await chatLayout(f, [`${tid('pending')} ${tid('approval')}`]));
      await page.screenshot({ path: shot('layout-approval-300.png'), clip: (await sidebar.boundingBox()) ?? undefined });
      await approval.locator('[data-answer="allow_once"]').click();
      await f.locator(`${tid('message')}[data-role="assistant"]`, { hasText: sc.finalAnswer.slice(0, 20) }).last().waitFor({ state: 'visible', timeout: T });
      await until(`${tid('busy')} to disappear`, async () => (await f.locator(tid('busy')).count()) === 0, T);
      const order = await f.evaluate(() => {
        const answered = Array.from(document.querySelectorAll('.transcript > [data-testid="approval"][data-answered]'));
        const last = answered.at(-1);
        return last ? `${last.textContent.trim()} -> ${last.nextElementSibling?.getAttribute('data-testid') ?? 'nothing'}` : 'no answered approval in the transcript';
      });
      s.note(`transcript: ${order}`);
      if (!/ -> tool-card$/.test(order)) problems.push(`the answered approval does not come right before its tool card: ${order}`);
      const meter = f.locator(tid('context-meter'));
      await meter.waitFor({ state: 'visible', timeout: T }).catch(() => problems.push('no context meter after an answer'));
      s.note(`meter: ${JSON.stringify(norm((await meter.textContent()) ?? ''))}; model: ${JSON.stringify(norm((await f.locator(tid('model')).textContent()) ?? ''))}`);

      for (const [theme, label, bodyClass] of [['dark', 'Dark 2026', 'vscode-dark'], ['light', 'Light 2026', 'vscode-light']] as const) {
        f = await setTheme(run, label, bodyClass);
        for (const want of [300, 1000]) {
          const width = await sideBarWidth(page, want);
          const at = `${theme} ${width} px`;
          // the servers view with the failed server (open by itself)
          await row.scrollIntoViewIfNeeded({ timeout: 2_000 }).catch(() => undefined);
          // its last fix row in view too (the list scrolls: the folder's rows come first)
          await paneRow(page, pane, 'Restart the server').scrollIntoViewIfNeeded({ timeout: 2_000 }).catch(() => undefined);
          check(`servers view (${at})`, await paneLayout(page, pane));
          await pane.screenshot({ path: shot(`layout-servers-${theme}-${want}.png`) });
          // the chat: collapse the servers view (read), open the trust card
          await pane.locator('.pane-header').first().click();
          await until('the servers view to collapse', async () => ((await pane.locator('.pane-header').first().getAttribute('aria-expanded')) === 'false' ? true : undefined), 5_000);
          f = await run.chatFrame();
          if (!(await cardIn(f).isVisible())) await f.locator(tid('banner-trust')).first().click();
          await cardIn(f).waitFor({ state: 'visible', timeout: 5_000 });
          const bannerText = norm(await f.locator(`${tid('restricted-banner')} .banner-text`).first().innerText());
          if (!/until you trust it\.?$/.test(bannerText)) problems.push(`${at}: the banner does not show its whole message: ${JSON.stringify(bannerText)}`);
          check(`chat (${at})`, await chatLayout(f, ['.top', tid('restricted-banner'), tid('trust-details')]));
          const cardCheck = await cardLayout(f);
          problems.push(...cardCheck.problems.map((p) => `${at}: ${p}`));
          const top = await f.locator('.top').boundingBox();
          s.note(`${at}: header ${top ? Math.round(top.height) : '?'} px tall; the card: ${cardCheck.shown}`);
          await sidebar.screenshot({ path: shot(`layout-${theme}-${want}.png`) });
          // close the card again, open the servers view again for the next width
          await f.locator(tid('banner-trust')).first().click();
          await pane.locator('.pane-header').first().click();
          await row.waitFor({ state: 'visible', timeout: 5_000 });
        }
      }
      if (problems.length) throw new Error(`${problems.length} layout problems: ${problems.slice(0, 12).join(' | ')}`);
      // the workspace's new setting: trusted, as the run left it before this step
      f = await run.chatFrame();
      if (!(await cardIn(f).isVisible())) await f.locator(tid('banner-trust')).first().click();
      const trustMark = facts.mark();
      await cardIn(f).locator('[data-answer="trust"]').click();
      await facts.waitFor(/^workspace-trust trust\b/, T, trustMark);
    } finally {
      fs.writeFileSync(userFile, userBefore);
      await sideBarWidth(page, startWidth || 300).catch(() => undefined);
      await setTheme(run, 'Light 2026', 'vscode-light').catch(() => undefined);
    }
  }, 150_000);
}
