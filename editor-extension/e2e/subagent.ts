// A subagent in the real editor (issue 42): the model hands a task to the read-only `explore`
// agent; the chat shows the `agent` call as a card with the child's own tool call (`read_file`)
// nested in it, the agent's name and its tokens, then the parent's answer. One step, in a new
// session, kept short (the e2e is CPU heavy).
//
// Called from driver.ts; waits on the chat's data-testid hooks (CONTRACT.md).

import { type Run, norm, until } from './harness.ts';
import { sendPrompt, tid, waitAssistantText } from './chat.ts';

export async function subagentStep(run: Run, needs: string[]): Promise<void> {
  const { steps, T } = run;
  const sc = run.sc.subagent;
  await steps.run(
    'subagent-card',
    "the model runs the explore agent: its card shows the agent, its own read_file call nested and finished, its tokens; then the answer",
    needs,
    async (s) => {
      const f = await run.chatFrame();
      await f.locator(tid('new-session')).click();
      await sendPrompt(f, sc.prompt, T);
      await waitAssistantText(f, sc.done, T);
      const card = f.locator(`${tid('tool-card')}[data-tool="agent"]`).last();
      const title = norm(await card.locator('summary').first().innerText());
      s.note(`title: ${JSON.stringify(title)}`);
      if (!title.includes(`${sc.agent}: ${sc.description}`)) throw new Error(`the card's title does not name the agent and its task: ${title}`);
      if (!(await card.evaluate((e) => (e as HTMLDetailsElement).open))) await card.locator('summary').first().click();
      const child = card.locator(tid('subagent'));
      await child.waitFor({ state: 'visible', timeout: T });
      const meta = norm(await child.locator(tid('subagent-meta')).innerText());
      s.note(`card: ${JSON.stringify(meta)}`);
      if (!meta.startsWith(sc.agent)) throw new Error(`the card does not name the agent ${sc.agent}: ${meta}`);
      if (!/1 tool call\b/.test(meta) || !/\d[\d,]* tokens/.test(meta)) throw new Error(`the card's facts: ${meta}`);
      const call = child.locator(tid('subagent-call')).first();
      await until('the nested call to finish', async () => (await call.getAttribute('data-status')) === 'done', T);
      const line = norm(await call.innerText());
      s.note(`nested: ${JSON.stringify(line)}`);
      if (!line.includes(sc.tool)) throw new Error(`the nested call is not ${sc.tool}: ${line}`);
    },
  );
}
