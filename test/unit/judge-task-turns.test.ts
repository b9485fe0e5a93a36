import { afterEach, describe, expect, it, vi } from 'vitest';
import { carry } from '../../shared/claim-check/carry.js';
import { MemoryClaimCheck } from '../../shared/claim-check/memory.js';
import type { ModelResult } from '../../shared/compare/result.js';
import { defuseTags } from '../../shared/judging/defuse.js';
import { VERDICT_SCHEMA } from '../../shared/judging/verdict.js';
import { WorkflowTasks } from '../../shared/judging/workflow-tasks.js';
import { claimKeys, type JudgeEvent } from '../../shared/judging/workflow-types.js';
import { WorkBudget } from '../../shared/judging/material-budget.js';
import { silentLog } from '../../shared/log.js';
import type { ProtocolAdapter } from '../../shared/providers/types.js';
import { gate } from '../support/gate.js';

// Counted where judge-prompt.ts and the judge task call it.
vi.mock('../../shared/judging/defuse.js', async (original) => {
  const actual = await original<typeof import('../../shared/judging/defuse.js')>();
  return { ...actual, defuseTags: vi.fn(actual.defuseTags) };
});

const MODELS = ['fam_c-5.4', 'fam_a-opus-4-6', 'fam_b-3.1-pro'];
const usage = { inputTokens: 10, cachedInputTokens: 0, cacheWriteTokens: 0, outputTokens: 10, reasoningTokens: 0 };

/** One judge's task over three models' answers (6 calls), each 24 KB (within what a judge is shown of it) and claim-checked. */
async function judgeTask(
  adapter: Pick<ProtocolAdapter, 'prepare'>,
  { judge = 'fam_c-5.4-mini', unsharedMaterialChars, history }: { judge?: string; unsharedMaterialChars?: number; history?: string } = {},
) {
  const claimCheck = new MemoryClaimCheck();
  const requestId = 'pl_TURNS';
  const answers = MODELS.map((id, index) => `Answer ${index} from ${id}: ${'words and words '.repeat(1_500)}`);
  const results = await Promise.all(
    MODELS.map(async (modelId, index) => {
      const result = { modelId, status: 'completed', output: answers[index]!, tokensIn: 1, tokensOut: 1, latencyMs: 1, providerCost: 0 } as ModelResult;
      return { index, modelId, status: 'completed' as const, result: await carry(claimCheck, claimKeys.result(requestId, index), result, 1_000) };
    }),
  );
  const tasks = [];
  for (let a = 0; a < MODELS.length; a++) for (let b = 0; b < MODELS.length; b++) if (a !== b) tasks.push({ judge: 0, a, b });
  const event: JudgeEvent = {
    request: { value: { body: { prompt: 'Explain recursion.', models: MODELS, judges: [judge], ...(history ? { history: [{ role: 'user' as const, content: history }] } : {}) } } },
    context: { requestId, generateDeadlineAt: Date.now() + 60_000, deadlineAt: Date.now() + 60_000, resultInlineBytes: 1_000, judgmentInlineBytes: 100_000, catalogAt: Date.now() },
    item: { judge: 0, tasks },
    results,
  };
  const tasksOf = new WorkflowTasks({
    route: () => ({ adapter, endpoint: { baseUrl: 'http://fake.invalid', apiKey: 'k', simulated: true } }),
    claimCheck,
    log: silentLog,
    retry: { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1 },
    unsharedMaterialChars,
  });
  return { answers, output: await tasksOf.judge(event) };
}

const verdict = JSON.stringify({ reasoning: 'A is fuller.', scoreA: 8, scoreB: 4, winner: 'A' });

describe('Class: WorkflowTasks, a judge task of large answers', () => {
  afterEach(() => {
    vi.restoreAllMocks();
    vi.mocked(defuseTags).mockClear();
  });

  it('prepares its calls over several turns of the event loop, so that other work runs between them', async () => {
    // Each call's preparation takes 5 ms by the clock: over the 8 ms slice after two.
    let clock = 0;
    vi.spyOn(performance, 'now').mockImplementation(() => clock);
    const events: string[] = [];
    const adapter: Pick<ProtocolAdapter, 'prepare'> = {
      prepare: (call) => {
        expect(call.responseSchema).toBe(VERDICT_SCHEMA);
        clock += 5;
        events.push('prepare');
        return { send: async () => ({ output: verdict, usage, warnings: [] }) };
      },
    };
    const task = judgeTask(adapter);
    setImmediate(() => events.push('another request'));
    const { output } = await task;

    expect(output.judgments?.map((j) => j.status)).toEqual(Array.from({ length: 6 }, () => 'completed'));
    const other = events.indexOf('another request');
    expect(events.filter((e) => e === 'prepare')).toHaveLength(6);
    expect(other).toBeGreaterThan(events.indexOf('prepare'));
    expect(other).toBeLessThan(events.lastIndexOf('prepare'));
  });

  it('defuses each answer once, however many calls show it (4 each here), and shows it defused', async () => {
    const shown: string[] = [];
    const adapter: Pick<ProtocolAdapter, 'prepare'> = {
      prepare: (call) => {
        shown.push(call.prompt);
        return { send: async () => ({ output: verdict, usage, warnings: [] }) };
      },
    };
    const { answers, output } = await judgeTask(adapter);

    expect(output.judgments?.map((j) => j.status)).toEqual(Array.from({ length: 6 }, () => 'completed'));
    const calls = vi.mocked(defuseTags).mock.calls.map(([text]) => text);
    for (const answer of answers) expect(calls.filter((text) => text === answer)).toHaveLength(1);
    // The prompt's frame is built once for the task too.
    expect(calls.filter((text) => text === 'Explain recursion.')).toHaveLength(1);
    for (const answer of answers) expect(shown.filter((prompt) => prompt.includes(`\n${answer}\n`))).toHaveLength(4);
  });

  it.each([
    ['a Bedrock judge, whose bodies the SDK serialises, sends within the material budget: two calls at once here', 'fam_h-lite', 2, undefined],
    ['a Bedrock judge counts all its material, the history too: one call at once here', 'fam_h-lite', 1, 'earlier words '.repeat(5_000)],
    ['a judge whose bodies share the material sends every call at once', 'fam_c-5.4-mini', 6, undefined],
  ])('%s', async (_, judge, most, history) => {
    // Each call shows two answers of about 24,000 characters: a budget of 100,000 holds two calls.
    let inFlight = 0;
    let highest = 0;
    // Calls whose turn the material budget holds back (their work not started).
    let heldBack = 0;
    // Every send is held until no other call can start: each of the 6 is either sent or held back by the budget.
    const allStarted = gate();
    const openOnceAllStarted = () => inFlight + heldBack === 6 && allStarted.open();
    const run = WorkBudget.prototype.run;
    vi.spyOn(WorkBudget.prototype, 'run').mockImplementation(function (this: WorkBudget, units: number, work: () => Promise<unknown>) {
      let started = false;
      let held = false;
      const running = run.call(this, units, () => {
        started = true;
        if (held) heldBack--;
        return work();
      });
      // Work the budget admits starts at once; any other waits for a running call to end.
      if (!started) {
        held = true;
        heldBack++;
        openOnceAllStarted();
      }
      return running;
    } as WorkBudget['run']);
    const adapter: Pick<ProtocolAdapter, 'prepare'> = {
      prepare: () => ({
        send: async () => {
          highest = Math.max(highest, ++inFlight);
          openOnceAllStarted();
          await allStarted.opened;
          inFlight--;
          return { output: verdict, usage, warnings: [] };
        },
      }),
    };
    const { output } = await judgeTask(adapter, { judge, unsharedMaterialChars: 100_000, history });
    expect(output.judgments?.map((j) => j.status)).toEqual(Array.from({ length: 6 }, () => 'completed'));
    expect(highest).toBe(most);
  });
});
