// The first prompt can use the tools of an MCP server that is still starting (issue 44 item 1).
// The user settings name a server ("lateknob") that takes 4 s to start; the chat is opened and a
// prompt that needs that server's `add` tool is sent at once. The scripted model
// (tests/extension/e2e_scenario.py) calls `tool_search` for the tool (offered from the first
// request while the server starts), then the tool, then answers with the tool's result: the
// answer must come in that same turn. Whether the search card showed the wait (its progress line)
// is noted, not asserted (on a fast machine the server may be up before the search).
//
// Called from driver.ts before the other chat steps; the turn ends in a new session so that the
// later steps start from an empty chat as before.

import { type Run, norm, until } from './harness.ts';
import { chatSummary, tid } from './chat.ts';
import { runCommand } from './workbench.ts';
import type { FirstPromptScenario } from './types.ts';

export async function firstPromptStep(run: Run, needs: string[]): Promise<void> {
  const { page, steps, facts, T } = run;
  const sc = (run.sc as unknown as { firstPrompt: FirstPromptScenario }).firstPrompt;
  await steps.run(
    'first-prompt-tools',
    'a prompt sent as the chat opens uses the tool of a server still starting (4 s), in the same turn',
    needs,
    async (s) => {
      await runCommand(page, 'Agent: Open Chat');
      const f = await run.chatFrame();
      const mark = facts.mark();
      const input = f.locator(tid('prompt-input'));
      await input.waitFor({ state: 'visible', timeout: T });
      await until(`${tid('send')} to be enabled`, async () => f.locator(tid('send')).isEnabled(), T);
      await input.click();
      await input.fill(sc.prompt);
      await f.locator(tid('send')).click();
      // the search card's progress while it waits for the server (noted: the race may go either way)
      const search = f.locator(`${tid('tool-card')}[data-tool="tool_search"]`).first();
      const progress = await until('the search card to show its wait', async () => {
        const p = search.locator(tid('tool-progress'));
        return (await p.count()) > 0 ? norm((await p.first().textContent()) ?? '') : undefined;
      }, T).catch(() => '');
      s.note(progress ? `search card progress: ${JSON.stringify(progress)}` : 'no wait shown on the search card (the server was up first)');
      const answers = f.locator(`${tid('message')}[data-role="assistant"]`);
      let last = '';
      await until(`the answer with the tool's result ("${sc.done}")`, async () => {
        last = norm((await answers.allTextContents()).join(' | '));
        return last.includes(sc.done) || last.includes(sc.missing);
      }, T * 2).catch(async (e: unknown) => {
        throw new Error(`${(e as Error).message}; ${await chatSummary(f)}; facts since the prompt: ${facts.since(mark)}`);
      });
      if (!last.includes(sc.done)) throw new Error(`the first prompt did not reach the starting server's tool: ${last.slice(-400)}`);
      const card = f.locator(`${tid('tool-card')}[data-tool="${sc.tool}"]`).first();
      const status = await card.getAttribute('data-status');
      s.note(`${sc.tool} card: data-status=${status}`);
      if (status !== 'done') throw new Error(`the ${sc.tool} card is ${JSON.stringify(status)}, expected "done"`);
      await until(`${tid('busy')} to disappear`, async () => (await f.locator(tid('busy')).count()) === 0, T);
      await f.locator(tid('new-session')).click();
      await until('an empty transcript after "New session"', async () => (await f.locator(tid('message')).count()) === 0, T);
    },
  );
}
