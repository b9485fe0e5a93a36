/**
 * What a request costs in AWS, from the synthesized template's settings (each function's
 * memory and architecture, the state machine's type) and public list prices (us-east-1,
 * on-demand, no free tier), for a typical 3-model request and a 4-model, 2-judge one; per
 * million requests and as a share of their provider cost (the catalog's prices).
 *
 *   npx tsx test/bench/aws-cost.ts [--api-memory=MB]
 *
 * --api-memory prices the api function at another memory size (what tuning it would give).
 * Durations are inputs, not measurements: the api function is billed for as long as it
 * waits for the slowest provider, which is what dominates; the figures say which.
 */
import { readFileSync } from 'node:fs';
import { App } from 'aws-cdk-lib';
import { Template } from 'aws-cdk-lib/assertions';
import { GatewayStack } from '../../infra/stack/gateway-stack.js';
import { toPromptLog } from '../../shared/orchestrator/prompt-log.js';
import type { ModelResult } from '../../shared/compare/result.js';
import { MODELS } from '../../shared/catalog/models.js';
import { judgeCallCount } from '../../shared/judging/plan.js';
import { toEvaluation } from '../../shared/judging/evaluation.js';
import { judgeCall } from '../../shared/judging/judge-prompt.js';
import { rankModels } from '../../shared/judging/ranking.js';
import type { Evaluation, Judgment, RankingEntry } from '../../shared/judging/types.js';
import { VERDICT_LIMITS } from '../../shared/judging/verdict.js';
import { inputTokenEstimate } from '../../shared/pricing/bound.js';
import type { PromptRequest } from '../../shared/contract/types.js';
import { validatePromptRequest } from '../../shared/contract/validate.js';
import { TABLES } from '../../shared/storage/tables.js';

/** Public list prices, us-east-1, read 2026-11 (aws.amazon.com/<service>/pricing). */
export const PRICES = {
  /** Lambda, per GB-second of billed duration (1 ms granularity) and per request. */
  lambdaGbSecond: { arm64: 0.0000133334, x86_64: 0.0000166667 },
  lambdaRequest: 0.2 / 1e6,
  /** API Gateway REST API, per request (first 333 million a month). */
  restApiRequest: 3.5 / 1e6,
  /** WAF, per request a web ACL inspects (besides $5 a month for the web ACL and $1 for each of its two rules). */
  wafRequest: 0.6 / 1e6,
  /** DynamoDB on demand: per write request unit (1 KB), per read request unit (4 KB strongly consistent, 8 KB eventually). */
  dynamoWru: 0.625 / 1e6,
  dynamoRru: 0.125 / 1e6,
  /** Step Functions Express: per execution, and per GB-second (64 MB billed, in 100 ms steps). */
  sfnExpressRequest: 1 / 1e6,
  sfnExpressGbSecond: 0.00001667,
  /** S3 Standard: PUT/POST/LIST per request, GET per request. */
  s3Put: 0.005 / 1000,
  s3Get: 0.0004 / 1000,
  /** DynamoDB Standard storage, and point-in-time recovery (of the table's data, its global indexes apart), per GB-month. */
  dynamoStorageGbMonth: 0.25,
  dynamoPitrGbMonth: 0.2,
} as const;

interface FunctionSettings {
  memoryMb: number;
  architecture: 'arm64' | 'x86_64';
}

/** Memory and architecture of the stack's functions, from the synthesized template (by the function's description). */
export function templateSettings(): { api: FunctionSettings; authorizer: FunctionSettings; generate: FunctionSettings; judge: FunctionSettings; express: boolean } {
  const context = (JSON.parse(readFileSync(new URL('../../cdk.json', import.meta.url), 'utf8')) as { context: Record<string, unknown> }).context;
  const app = new App({ context: { ...context, 'aws:cdk:bundling-stacks': [] } });
  const template = Template.fromStack(new GatewayStack(app, 'CostModel', {})).toJSON() as { Resources: Record<string, { Type: string; Properties?: Record<string, any> }> };
  const functions = Object.values(template.Resources).filter((r) => r.Type === 'AWS::Lambda::Function');
  const find = (pattern: RegExp): FunctionSettings => {
    const fn = functions.find((f) => pattern.test(String(f.Properties?.Description ?? '')));
    if (!fn) throw new Error(`no function described as ${pattern}`);
    return { memoryMb: Number(fn.Properties!.MemorySize ?? 128), architecture: (fn.Properties!.Architectures?.[0] ?? 'x86_64') as FunctionSettings['architecture'] };
  };
  const machines = Object.values(template.Resources).filter((r) => r.Type === 'AWS::StepFunctions::StateMachine');
  return {
    api: find(/^POST \/api\/v1\/prompt/),
    authorizer: find(/authorizer/i),
    generate: find(/runs one model/),
    judge: find(/runs one judge's calls/),
    express: machines.every((m) => m.Properties?.StateMachineType === 'EXPRESS'),
  };
}

/** DynamoDB's item size (attribute names and values, UTF-8), close enough as the JSON text's length; write units are 1 KB each, rounded up. */
function writeUnits(item: unknown): number {
  return Math.max(1, Math.ceil(Buffer.byteLength(JSON.stringify(item), 'utf8') / 1024));
}

export interface Scenario {
  label: string;
  models: string[];
  judges: string[];
  inputTokens: number;
  outputTokens: number;
  /** The slowest model's answer, s (the api function waits for it, or for the workflow). */
  generationSeconds: number;
  /** A judge call, s (judged requests only): a judge task, whose calls run side by side, is billed for the longest. */
  judgeSeconds: number;
  /** A judge call's verdict, tokens out (its input is the judge prompt the gateway builds for the scenario's answers). */
  judgeOutputTokens: number;
}

export const SCENARIOS: Scenario[] = [
  {
    label: 'typical: 3 models',
    models: ['fam_c-5.4-mini', 'fam_a-haiku-4-5', 'fam_b-3.5-flash'],
    judges: [],
    inputTokens: 1_000,
    outputTokens: 500,
    generationSeconds: 4,
    judgeSeconds: 0,
    judgeOutputTokens: 0,
  },
  {
    label: 'judged: 4 models, 2 judges',
    models: ['fam_c-5.4-mini', 'fam_a-haiku-4-5', 'fam_b-3.5-flash', 'fam_b-3.1-flash-lite'],
    judges: ['fam_c-5.4-mini', 'fam_b-3.5-flash'],
    inputTokens: 1_000,
    outputTokens: 500,
    generationSeconds: 4,
    judgeSeconds: 3,
    judgeOutputTokens: 200,
  },
];

function providerUsd(modelId: string, tokensIn: number, tokensOut: number): number {
  const model = MODELS.find((m) => m.id === modelId);
  if (!model) throw new Error(`unknown model ${modelId}`);
  return (tokensIn * model.prices.input + tokensOut * model.prices.output) / 1e6;
}

export interface Cost {
  scenario: string;
  providerUsd: number;
  lines: { item: string; usd: number }[];
  totalUsd: number;
  share: number;
  /** What its prompt log costs for each month it is kept (it has no expiry): storage of the item and its index entry, and point-in-time recovery of the item. Not in totalUsd. */
  keptPerMonthUsd: number;
}

/** Global indexes of the prompt-logs table: each holds the keys of every meta item (KEYS_ONLY, shared/storage/tables.ts), written with it. */
const PROMPT_LOG_INDEXES = TABLES.find((table) => table.key === 'promptLogs')!.globalIndexes.length;

/** An index entry of the keys alone (the log's ID, its part, the account's ID): about 100 bytes. */
const INDEX_ENTRY_BYTES = 100;

/**
 * A judged scenario's evaluations and ranking as the gateway makes them: every judge on every
 * pair, both orders completed, its verdict's reasoning as long as its output allows (the
 * verdict cuts it at 1,000 characters), priced at the judge's input (the judge prompt the
 * gateway builds for these answers, as its estimate counts it) and output.
 */
async function judging(
  scenario: Scenario,
  request: PromptRequest,
  results: ModelResult[],
): Promise<{ evaluations: Evaluation[]; ranking: RankingEntry[]; callUsd: Record<string, number> }> {
  const callUsd: Record<string, number> = {};
  const evaluations: Evaluation[] = [];
  const verdict = { winner: 'A' as const, scoreA: 8, scoreB: 6, reasoning: 'x'.repeat(Math.min(VERDICT_LIMITS.reasoningChars, scenario.judgeOutputTokens * 4)) };
  for (const judge of request.judges) {
    const tokensIn = inputTokenEstimate(judgeCall(request, judge, results[0]!.output, results[1]!.output).call);
    callUsd[judge.requestedId] = providerUsd(judge.requestedId, tokensIn, scenario.judgeOutputTokens);
    const judgment: Judgment = {
      status: 'completed',
      verdict,
      tokensIn,
      tokensOut: scenario.judgeOutputTokens,
      latencyMs: scenario.judgeSeconds * 1000,
      providerCost: callUsd[judge.requestedId]!,
    };
    for (let i = 0; i < results.length; i++) {
      for (let j = i + 1; j < results.length; j++) {
        const pair = { judgeModelId: judge.requestedId, a: results[i]!, b: results[j]!, aFirst: judgment, bFirst: judgment, weights: request.judgeWeights };
        evaluations.push({ ...toEvaluation(pair), inRanking: true });
      }
    }
  }
  return { evaluations, ranking: await rankModels(scenario.models, evaluations), callUsd };
}

/** The AWS cost of one request of `scenario`, item by item. */
export async function requestCost(scenario: Scenario, settings: ReturnType<typeof templateSettings>): Promise<Cost> {
  const lambda = (fn: FunctionSettings, seconds: number) =>
    (((fn.memoryMb / 1024) * Math.ceil(seconds * 1000)) / 1000) * PRICES.lambdaGbSecond[fn.architecture] + PRICES.lambdaRequest;
  const judged = scenario.judges.length > 0;
  const n = scenario.models.length;
  const judgeCalls = judged ? judgeCallCount(scenario.judges.length, n) : 0;
  // Judge calls run side by side after generation; the api function waits for the whole workflow.
  const wallSeconds = scenario.generationSeconds + (judged ? scenario.judgeSeconds : 0);
  // Its own work on top (reserve before, settle and logs after the answer): 50 ms, generously.
  const apiSeconds = wallSeconds + 0.05;

  // What the request path writes (shared/credits, shared/storage): the reserve (account
  // update), the settlement's ledger entry, the reservation's close, the prompt log.
  const request = validatePromptRequest({ prompt: 'x'.repeat(scenario.inputTokens * 4), models: scenario.models, ...(judged ? { judges: scenario.judges } : {}) });
  const results: ModelResult[] = scenario.models.map((modelId) => ({
    modelId,
    status: 'completed',
    output: 'x'.repeat(scenario.outputTokens * 4),
    tokensIn: scenario.inputTokens,
    tokensOut: scenario.outputTokens,
    latencyMs: scenario.generationSeconds * 1000,
    providerCost: providerUsd(modelId, scenario.inputTokens, scenario.outputTokens),
  }));
  const { evaluations, ranking, callUsd } = judged ? await judging(scenario, request, results) : { evaluations: [], ranking: undefined, callUsd: {} as Record<string, number> };
  const log = toPromptLog({
    promptLogId: '01JBENCHMARKPROMPTLOG00000',
    accountId: 'acct_01jbenchmark0000000000000',
    request,
    results,
    evaluations,
    ...(ranking ? { ranking } : {}),
    chargedMicro: 1,
    zeroDataRetention: false,
    receivedAt: Date.now(),
  });
  // One item: the meta and the content's JSON bytes (shared/storage/prompt-logs.ts).
  const logItem = { ...log.meta, data: log.content ? JSON.stringify(log.content) : undefined };
  // Its keys written into each index too (a meta item has the byAccount index's keys): 1 unit each.
  const logUnits = writeUnits(logItem) + PROMPT_LOG_INDEXES;
  const wru = 3 + logUnits;
  const logGb = Buffer.byteLength(JSON.stringify(logItem), 'utf8') / 1024 ** 3;
  const keptPerMonthUsd = logGb * (PRICES.dynamoStorageGbMonth + PRICES.dynamoPitrGbMonth) + ((PROMPT_LOG_INDEXES * INDEX_ENTRY_BYTES) / 1024 ** 3) * PRICES.dynamoStorageGbMonth;
  // The authorizer's reads (key, account), strongly consistent (1 RRU each), once per cache miss: counted on every request (its cache only lowers it).
  const rru = 2;

  const providers =
    results.reduce((sum, r) => sum + (r.providerCost ?? 0), 0) + (judged ? (judgeCalls / scenario.judges.length) * scenario.judges.reduce((sum, j) => sum + callUsd[j]!, 0) : 0);

  const lines = [
    { item: `API Gateway REST request`, usd: PRICES.restApiRequest },
    { item: 'WAF: the web ACL on the stage (its $7 a month aside)', usd: PRICES.wafRequest },
    { item: `api function: ${settings.api.memoryMb} MB ${settings.api.architecture}, ${apiSeconds.toFixed(2)} s billed`, usd: lambda(settings.api, apiSeconds) },
    { item: `authorizer: ${settings.authorizer.memoryMb} MB, 30 ms (every request; its cache lowers it)`, usd: lambda(settings.authorizer, 0.03) },
    { item: `DynamoDB: ${wru} WRU (prompt log ${logUnits}, its index entry included), ${rru} RRU`, usd: wru * PRICES.dynamoWru + rru * PRICES.dynamoRru },
  ];
  if (judged) {
    const sfnGbSeconds = ((64 / 1024) * Math.ceil(wallSeconds * 10)) / 10;
    lines.push({ item: `Step Functions Express: 1 execution, ${wallSeconds} s at 64 MB`, usd: PRICES.sfnExpressRequest + sfnGbSeconds * PRICES.sfnExpressGbSecond });
    lines.push({
      item: `generate function: ${n} x ${settings.generate.memoryMb} MB x ${scenario.generationSeconds} s`,
      usd: n * lambda(settings.generate, scenario.generationSeconds),
    });
    // One task a judge (the Judge map's items), its calls side by side: billed for the longest.
    const judges = scenario.judges.length;
    lines.push({
      item: `judge function: ${judges} x ${settings.judge.memoryMb} MB x ${scenario.judgeSeconds} s (one task a judge, ${judgeCalls / judges} calls each)`,
      usd: judges * lambda(settings.judge, scenario.judgeSeconds),
    });
    // Payloads this small travel inline; the claim checks left are the end-of-request delete (one request, priced as a PUT).
    lines.push({ item: 'S3 claim checks: inline payloads, 1 DeleteObjects', usd: PRICES.s3Put });
  }
  const totalUsd = lines.reduce((sum, line) => sum + line.usd, 0);
  return { scenario: scenario.label, providerUsd: providers, lines, totalUsd, share: totalUsd / providers, keptPerMonthUsd };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const settings = templateSettings();
  const memory = process.argv.find((a) => a.startsWith('--api-memory='));
  if (memory) settings.api = { ...settings.api, memoryMb: Number(memory.split('=')[1]) };
  for (const scenario of SCENARIOS) {
    const cost = await requestCost(scenario, settings);
    process.stdout.write(`\n${cost.scenario}: provider $${cost.providerUsd.toFixed(5)} a request\n`);
    for (const line of cost.lines) process.stdout.write(`  ${line.item.padEnd(72)} $${(line.usd * 1e6).toFixed(2)} per million\n`);
    process.stdout.write(`  ${'total AWS'.padEnd(72)} $${(cost.totalUsd * 1e6).toFixed(2)} per million = ${(cost.share * 100).toFixed(2)} % of provider cost\n`);
    process.stdout.write(
      `  ${'its prompt log kept (no expiry), each month'.padEnd(72)} $${(cost.keptPerMonthUsd * 1e6).toFixed(2)} per million = ${((cost.keptPerMonthUsd / cost.providerUsd) * 100).toFixed(2)} % of provider cost a month\n`,
    );
  }
}
