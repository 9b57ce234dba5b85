// The OS sandbox in the real editor (issue 47): the bash card of the full-output step ran in the
// sandbox, and its command also tried to write outside the workspace (refused). The card says
// "sandboxed" on its summary line and names the refused place with "Allow for this workspace";
// the user reaches that button with the keyboard (Tab), presses Enter, the grant comes back
// from the language server (the card now offers "Undo"), and Undo, by keyboard too, removes it.
//
// Called from driver.ts after fullOutputStep; waits on the fact log and the data-testid hooks.

import type { Frame, Locator } from 'playwright-core';
import { type FactLog, type Steps, norm } from './harness.ts';
import { tid } from './chat.ts';

export interface SandboxContext {
  steps: Steps;
  facts: FactLog;
  timeoutMs: number;
  chatFrame: () => Promise<Frame>;
  /** The folder the command tried to write in (the card's refusal names it). */
  refusedFolder: string;
}

/** Tab from the focused element until `target` has the focus (at most `max` presses). */
async function tabTo(f: Frame, target: Locator, max = 40): Promise<void> {
  for (let i = 0; i < max; i++) {
    if (await target.evaluate((el) => el === el.ownerDocument.activeElement)) return;
    await f.page().keyboard.press('Tab');
  }
  throw new Error(`${max} presses of Tab never reached the button`);
}

export async function sandboxStep(ctx: SandboxContext, needs: string[]): Promise<void> {
  const T = ctx.timeoutMs;
  await ctx.steps.run('sandbox-card', 'the bash card is marked sandboxed; its refused write offers "Allow for this workspace" and "Undo", by keyboard', needs, async (s) => {
    const f = await ctx.chatFrame();
    const card = f.locator(`${tid('tool-card')}[data-tool="bash"]`).last();
    const mark = card.locator(tid('tool-sandbox'));
    await mark.waitFor({ state: 'attached', timeout: T });
    const label = norm((await mark.textContent()) ?? '');
    s.note(`mark: ${JSON.stringify(label)}`);
    if (!label.includes('sandboxed')) throw new Error(`the bash card's mark says ${JSON.stringify(label)}, not "sandboxed"`);
    if (!(await card.evaluate((el) => (el as HTMLDetailsElement).open))) await card.locator('summary').click();
    const refusal = card.locator(tid('sandbox-refusals'));
    await refusal.waitFor({ state: 'visible', timeout: T });
    const text = norm((await refusal.textContent()) ?? '');
    if (!text.includes(`Writing in ${ctx.refusedFolder} was refused`)) throw new Error(`the refusal says ${JSON.stringify(text)}`);
    const allow = card.locator(tid('sandbox-allow')).first();
    await card.locator('summary').focus();
    await tabTo(f, allow);
    const mark0 = ctx.facts.mark();
    await f.page().keyboard.press('Enter');
    s.note(await ctx.facts.waitFor(/^sandbox-grant writes .* true$/, T, mark0));
    const undo = card.locator(tid('sandbox-undo'));
    await undo.waitFor({ state: 'visible', timeout: T });
    await card.locator('summary').focus();
    await tabTo(f, undo);
    const mark1 = ctx.facts.mark();
    await f.page().keyboard.press('Enter');
    s.note(await ctx.facts.waitFor(/^sandbox-grant writes .* false$/, T, mark1));
    await card.locator(tid('sandbox-allow')).first().waitFor({ state: 'visible', timeout: T });
  });
}
