/**
 * One judge task in a process of its own, as the judge function runs it in AWS (512 MB):
 * one judge's calls over every ordered pair of BENCH_JUDGE_MODELS answers of
 * BENCH_JUDGE_ANSWER_CHARS characters each, read from a claim-check store, the vendors the
 * simulator (in its own process, answering after BENCH_SIMULATOR_LATENCY_MS). Tells its
 * peak resident memory before and after the task over IPC, then exits.
 */
import { readFileSync } from 'node:fs';
import { carry } from '../../shared/claim-check/carry.js';
import { MemoryClaimCheck } from '../../shared/claim-check/memory.js';
import type { ModelResult } from '../../shared/compare/result.js';
import { loadConfig } from '../../shared/config.js';
import { planJudgeTasks } from '../../shared/judging/plan.js';
import type { GenerateOutput, JudgeEvent } from '../../shared/judging/workflow-types.js';
import { createWorkflowTasks } from '../../shared/workflow-tasks.js';
import { startSimulatorProcess } from './children.js';

/** Chat models whose output limits let each answer be shown whole (131,072 tokens and more). */
const MODELS = [
  'fam_d-4.20-0309-reasoning',
  'fam_d-4.20-0309-non-reasoning',
  'fam_d-4.3',
  'fam_d-3',
  'fam_f-v4-pro',
  'fam_f-v4-flash',
  'fam_g-large',
  'fam_g-medium',
  'fam_g-small',
  'fam_k-8b',
  'fam_l',
];
/** A judge with the context for two such answers, unless BENCH_JUDGE names another. */
const JUDGE = process.env.BENCH_JUDGE ?? 'fam_b-3.1-pro';

function peakMb(): number {
  return Math.round(Number(/VmHWM:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]) / 1024);
}

/** What the process tells, as its 'ready' (its only export: a type, for importing it runs the task). */
export interface JudgeTaskMemory {
  type: 'ready';
  judge: string;
  calls: number;
  completed: number;
  ms: number;
  peakBeforeMb: number;
  peakAfterMb: number;
}

const models = MODELS.slice(0, Number(process.env.BENCH_JUDGE_MODELS ?? MODELS.length));
const answerChars = Number(process.env.BENCH_JUDGE_ANSWER_CHARS ?? 1_000);
const vendors = await startSimulatorProcess(Number(process.env.BENCH_SIMULATOR_LATENCY_MS ?? 0));
try {
  const claimCheck = new MemoryClaimCheck();
  // Into the environment itself: Bedrock's SDK client reads its credentials from there.
  Object.assign(process.env, vendors.vendorEnv);
  const tasks = createWorkflowTasks(loadConfig(process.env), { claimCheck });
  const results: GenerateOutput[] = [];
  for (const [index, modelId] of models.entries()) {
    // Words, each answer its own, so that no two calls' material is alike.
    const result: ModelResult = {
      modelId,
      status: 'completed',
      output: `${index} ${'word '.repeat(answerChars / 5)}`,
      tokensIn: 10,
      tokensOut: answerChars / 4,
      latencyMs: 1_000,
      providerCost: 0.01,
    };
    results.push({ index, modelId, status: 'completed', result: await carry(claimCheck, `bench/results/${index}.json`, result, 0) });
  }
  const now = Date.now();
  const event: JudgeEvent = {
    request: { value: { body: { prompt: 'Write a long essay.', models, judges: [JUDGE], generation_settings: { maxTokens: 200_000 } } } },
    context: { requestId: 'pl_01BENCHJUDGETASK000000000', generateDeadlineAt: now, deadlineAt: now + 120_000, resultInlineBytes: 8_000, judgmentInlineBytes: 500, catalogAt: now },
    item: {
      judge: 0,
      tasks: planJudgeTasks(
        1,
        models.map((_, i) => i),
      ),
    },
    results,
  };
  const peakBeforeMb = peakMb();
  const started = performance.now();
  const output = await tasks.judge(event);
  const measured: JudgeTaskMemory = {
    type: 'ready',
    judge: JUDGE,
    calls: event.item.tasks.length,
    completed: output.judgments?.filter((judgment) => judgment.status === 'completed').length ?? 0,
    ms: Math.round(performance.now() - started),
    peakBeforeMb,
    peakAfterMb: peakMb(),
  };
  process.send?.(measured);
} finally {
  await vendors.close();
}
process.exit(0);
